#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader, so `npx tandem` works from a checkout.
import { register } from 'tsx/esm/api';
register();
await import('../cli/main.ts');
