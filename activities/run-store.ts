// A run's directories (data, checkpoints) under a home, keyed by the run key, and its checkpoint
// catalog. Shared by the pipeline's activities, the recovery activities and `tandem checkpoints`.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { failure } from '../contract/failures.js';
import type { CatalogEntry } from './types.js';

export function runDirs(home: string, runKey: string) {
  // New run keys are safe ids already (contract/run-id.ts, checked by the SDK); keys of older runs are
  // still mapped as before. Defence in depth: a key whose directory would not be a child of
  // <home>/runs ("", ".", "..") is refused, never used.
  const safe = runKey.replace(/[^A-Za-z0-9._-]+/g, '_');
  const runs = resolve(home, 'runs');
  const root = join(home, 'runs', safe);
  if (dirname(resolve(root)) !== runs) {
    throw failure('InvalidRequest', `run key ${JSON.stringify(runKey)} does not name a directory under ${runs}`);
  }
  return { root, data: join(root, 'data'), checkpoints: join(root, 'checkpoints'), catalog: join(root, 'catalog.json') };
}

export function readCatalog(file: string): CatalogEntry[] {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as CatalogEntry[]) : [];
}

export function writeCatalog(file: string, entries: CatalogEntry[]): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(entries, null, 2));
  renameSync(`${file}.tmp`, file);
}
