#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader, so `npx tandem` works from a checkout.
import { register } from 'node:module';
register('tsx/esm', import.meta.url);
await import('../cli/main.ts');
