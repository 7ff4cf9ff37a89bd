// Helpers for Tandem's built-in stage programs, which read their parameters from the environment.
import { renameSync, writeFileSync } from 'node:fs';

export function requireEnv(name: string): string {
  const v = process.env[name];
  if (!v) {
    console.error(`error: ${name} is not set (this program is started by Tandem's local runtime)`);
    process.exit(2);
  }
  return v;
}

export function numberEnv(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n)) {
    console.error(`error: ${name}=${v} is not a number`);
    process.exit(2);
  }
  return n;
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(value));
  renameSync(`${path}.tmp`, path);
}
