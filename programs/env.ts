// The job side of the job contract: Tandem's built-in stage programs read what Tandem gives them
// (TANDEM_DATA_DIR, TANDEM_CHECKPOINT_DIR, TANDEM_PROGRESS_FILE, TANDEM_JOB_ID, TANDEM_SITE, the stage
// parameters as TANDEM_<NAME>, …) through these helpers only. This is not worker configuration: the
// worker's TANDEM_* and TEMPORAL_* variables are read by config/worker.ts and never by a job.
import { renameSync, writeFileSync } from 'node:fs';

/** A variable Tandem may set for the job; undefined when it did not. */
export function optionalEnv(name: string): string | undefined {
  return process.env[name];
}

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
