// `tandem checkpoints <run>`: the checkpoint catalog of a run as operators need it before a restore —
// every checkpoint at home and at each failover site, verified against its manifest (sha256 by default;
// through FirecREST's checksum endpoint for sites reached that way), with why an invalid one is invalid.
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { listCheckpoints, verifyCheckpoint, type Hasher } from '../backends/checkpoints.js';
import { readCatalog, runDirs } from '../activities/run-store.js';
import { recoverySites } from '../activities/recovery-sites.js';
import { loadWorkerConfig } from '../config/worker.js';
import { table } from './runs.js';
import { examples } from './help.js';

export interface CheckpointRow {
  location: string;
  step: number;
  path: string;
  created?: string;
  job?: string;
  files?: number;
  bytes?: number;
  valid: boolean;
  reason?: string;
  catalogued: boolean;
}

export async function checkpointRows(home: string, runKey: string, sites: { name: string; root: string; hasher?: Hasher }[], deep: boolean): Promise<CheckpointRow[]> {
  const catalogued = new Set(readCatalog(runDirs(home, runKey).catalog).map((e) => e.path));
  const rows: CheckpointRow[] = [];
  for (const loc of [{ name: 'home', root: home, hasher: undefined as Hasher | undefined }, ...sites]) {
    for (const c of listCheckpoints(runDirs(loc.root, runKey).checkpoints)) {
      const v = await verifyCheckpoint(c.path, deep, loc.hasher).catch((e: Error) => ({ ok: false as const, reason: `could not verify: ${e.message}` }));
      const m = v.ok ? v.manifest : undefined;
      rows.push({ location: loc.name, step: c.step, path: c.path, created: m?.created, job: m?.job, files: m?.files.length, bytes: m?.files.reduce((t, f) => t + f.size, 0), valid: v.ok, reason: v.ok ? undefined : v.reason, catalogued: catalogued.has(c.path) });
    }
  }
  return rows;
}

const size = (b?: number) => (b === undefined ? '-' : b < 1024 ? `${b} B` : b < 2 ** 20 ? `${(b / 1024).toFixed(1)} KiB` : `${(b / 2 ** 20).toFixed(1)} MiB`);

export function formatCheckpoints(rows: CheckpointRow[]): string {
  if (!rows.length) return 'no checkpoints';
  return table([
    ['LOCATION', 'STEP', 'CREATED', 'JOB', 'FILES', 'SIZE', 'STATUS'],
    ...rows.map((r) => [r.location, String(r.step), r.created ?? '-', r.job ?? '-', r.files === undefined ? '-' : String(r.files), size(r.bytes), r.valid ? `valid${r.catalogued ? ', catalogued' : ''}` : `INVALID: ${r.reason}`]),
  ]);
}

export function registerCheckpointCommands(program: Command): void {
  program
    .command('checkpoints <run>')
    .description("list and verify a run's checkpoints at home and at every site of TANDEM_SITES_FILE")
    .option('--home <dir>', "the worker's TANDEM_HOME (default: $TANDEM_HOME, or .tandem)")
    .option('--quick', 'check sizes only, not sha256 sums')
    .option('--json', 'machine-readable output')
    .addHelpText('after', examples('tandem checkpoints demo-3f2a  # each checkpoint verified against its sha256 sums', 'tandem checkpoints demo-3f2a --quick --json'))
    .action(async (run: string, o: { home?: string; quick?: boolean; json?: boolean }) => {
      // The worker's configuration (config/worker.ts): its home, and its sites with their secrets.
      const config = loadWorkerConfig();
      const home = o.home ? resolve(o.home) : config.home;
      const sites = recoverySites(config.sites?.parsed, config.sites?.secrets ?? {});
      const rows = await checkpointRows(home, run, sites, !o.quick);
      console.log(o.json ? JSON.stringify(rows, null, 2) : formatCheckpoints(rows));
      if (!rows.length && !o.json) console.error(`(looked in ${runDirs(home, run).checkpoints}${sites.length ? ` and at ${sites.map((s) => s.name).join(', ')}` : ''})`);
    });
}
