// A real single-node Slurm cluster for a test file, started by the project's own script
// (scripts/slurm/cluster.sh) in a private directory with free ports, and stopped by its pid files.
import { execFile } from 'node:child_process';
import { mkdtempSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../../workers/dev-server.js';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../scripts/slurm/cluster.sh', import.meta.url));

export interface Cluster {
  name: string;
  dir: string;
  slurmConf: string;
  restSocket: string;
  restUser: string;
  node: string;
  /** Job output/work area, owned by the REST user that the jobs run as. */
  workDir: string;
  /** Runs a Slurm CLI command (scontrol, squeue, …) against this cluster. */
  cli(cmd: string, args: string[]): Promise<string>;
  down(): Promise<void>;
}

export async function startCluster(name: string, opts: { extraConf?: string } = {}): Promise<Cluster> {
  // Not under the run's private temp dir: the unprivileged job user must be able to reach it.
  const dir = mkdtempSync(join(tmpdir(), `tandem-slurm-${name}-`));
  chmodSync(dir, 0o755);
  const env = { ...process.env, TANDEM_SLURM_EXTRA: opts.extraConf ?? '' };
  let out = '';
  // A free port can be taken by another process between freePort() and slurmctld's bind (other test
  // runs on the same host): such a start is retried on fresh ports, any other failure is reported.
  for (let attempt = 1; ; attempt++) {
    const [ctld, slurmd] = [await freePort(), await freePort()];
    try {
      out = (await run('bash', [SCRIPT, 'up', dir, name, String(ctld), String(slurmd)], { env, timeout: 60_000 })).stdout;
      break;
    } catch (e) {
      await run('bash', [SCRIPT, 'down', dir]).catch(() => undefined);
      const why = (e as { stderr?: string }).stderr ?? (e as Error).message;
      if (attempt < 3 && /Address already in use/.test(why)) continue;
      throw new Error(`could not start Slurm cluster ${name}: ${why}`);
    }
  }
  const kv = Object.fromEntries(out.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  const slurmConf = kv.SLURM_CONF!;
  return {
    name,
    dir,
    slurmConf,
    restSocket: kv.REST_SOCKET!,
    restUser: kv.REST_USER!,
    node: kv.NODE!,
    workDir: kv.WORK_DIR!,
    async cli(cmd, args) {
      return (await run(cmd, args, { env: { ...process.env, SLURM_CONF: slurmConf } })).stdout;
    },
    async down() {
      await run('bash', [SCRIPT, 'down', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
