// A run's directories (data, checkpoints) under a home, keyed by the run key, and its checkpoint
// catalog. Shared by the pipeline's activities, the recovery activities and `tandem checkpoints`.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CatalogEntry } from './types.js';

export function runDirs(home: string, runKey: string) {
  const safe = runKey.replace(/[^A-Za-z0-9._-]+/g, '_');
  const root = join(home, 'runs', safe);
  return { root, data: join(root, 'data'), checkpoints: join(root, 'checkpoints'), catalog: join(root, 'catalog.json') };
}

export function readCatalog(file: string): CatalogEntry[] {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as CatalogEntry[]) : [];
}

export function writeCatalog(file: string, entries: CatalogEntry[]): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(entries, null, 2));
  renameSync(`${file}.tmp`, file);
}
