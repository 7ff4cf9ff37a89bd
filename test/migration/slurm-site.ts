// A ten-node Slurm site for migration tests: the node names n1..n10 of one real cluster, three of them
// (n1, n2, n10) backed by real slurmd daemons on this host, the rest configured but absent (FUTURE),
// which is all partition membership needs. Built on the [slurm] test bed (test/slurm/cluster.ts).
import { Client, Connection } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../workers/dev-server.js';
import { address } from '../helpers.js';
import { startCluster, type Cluster } from '../slurm/cluster.js';
import { SlurmAdmin } from '../../backends/slurm-admin.js';

const run = promisify(execFile);

export interface MigrationSite {
  cluster: Cluster;
  admin: SlurmAdmin;
  name: string;
  down(): Promise<void>;
}

export async function startMigrationSite(name = 'mig'): Promise<MigrationSite> {
  const host = hostname().split('.')[0];
  const [p2, p3, p10] = [await freePort(), await freePort(), await freePort()];
  // Per-node pid files: several slurmd share this host (the later SlurmdPidFile wins, as Slurm says).
  const pidDir = mkdtempSync(join(tmpdir(), 'tandem-mig-pids-'));
  const extraConf = [
    `SlurmdPidFile=${pidDir}/slurmd-%n.pid`,
    `NodeName=${name}-n2 NodeHostname=${host} NodeAddr=127.0.0.1 Port=${p2} CPUs=2 RealMemory=4000 State=UNKNOWN`,
    `NodeName=${name}-n[3-9] NodeHostname=${host} NodeAddr=127.0.0.1 Port=${p3} CPUs=2 RealMemory=4000 State=FUTURE`,
    `NodeName=${name}-n10 NodeHostname=${host} NodeAddr=127.0.0.1 Port=${p10} CPUs=2 RealMemory=4000 State=UNKNOWN`,
    `PartitionName=batch Nodes=${name}-n[1-10] MaxTime=INFINITE State=UP`,
  ].join('\n');
  const cluster = await startCluster(name, { extraConf });
  const env = { ...process.env, SLURM_CONF: cluster.slurmConf };
  for (const n of ['n2', 'n10']) await run('slurmd', ['-f', cluster.slurmConf, '-N', `${name}-${n}`], { env });
  const admin = new SlurmAdmin({ slurmConf: cluster.slurmConf, workDir: cluster.workDir });
  for (let i = 0; i < 100; i++) {
    const out = await run('sinfo', ['-h', '-N', '-n', `${name}-n2,${name}-n10`, '-o', '%T'], { env }).then((r) => r.stdout);
    if (out.trim().split('\n').filter((s) => /^(idle|mixed|allocated)/.test(s)).length === 2) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    cluster,
    admin,
    name,
    async down() {
      await cluster.down().catch(() => undefined);
      // cluster.sh stops the daemons it knows by their default pid files; ours are per node.
      for (const f of existsSync(pidDir) ? readdirSync(pidDir).filter((f) => /^slurmd-.*\.pid$/.test(f)) : []) {
        const pid = Number(readFileSync(join(pidDir, f), 'utf8'));
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          /* already gone */
        }
      }
    },
  };
}

/**
 * A migration site and a Temporal client for one test file: started before its tests, stopped after.
 * The returned object's fields are set once beforeAll has run.
 */
export function useMigrationSite(name: string): { site: MigrationSite; client: Client } {
  const bed = {} as { site: MigrationSite; client: Client; conn?: Connection };
  beforeAll(async () => {
    bed.site = await startMigrationSite(name);
    bed.conn = await Connection.connect({ address: address() });
    bed.client = new Client({ connection: bed.conn });
  }, 120_000);
  afterAll(async () => {
    await bed.conn?.close();
    await bed.site?.down();
  });
  return bed;
}
