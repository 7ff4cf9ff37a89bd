#!/usr/bin/env node
// The `tandem` command. Installed as a package it runs the compiled CLI (dist/) with node alone. In a
// checkout (the TypeScript sources beside this file) it runs the sources through tsx, so that a stale
// dist/ from an earlier `npm run build` is never what a developer or the test suite exercises.
import { existsSync, readFileSync } from 'node:fs';

const args = process.argv.slice(2);
// `tandem --version` alone needs nothing but package.json: answer before loading the CLI.
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  console.log(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
  process.exit(0);
}
const source = new URL('../cli/main.ts', import.meta.url);
const compiled = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  console.error('tandem: dist/ is missing; run `npm run build` first');
  process.exit(2);
}
