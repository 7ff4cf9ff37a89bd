// The two-site failover test bed: zurich and lugano, two real Slurm clusters side by side, each with
// its own slurmrestd, and the recovery activities' view of them. An outage stops a site's daemons
// through its pid files (a real outage: the controller, the node daemon and the REST API go away);
// `revive` brings them back on the same ports with the same state.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SlurmrestdJobBackend } from '../../backends/slurm/slurmrestd-backend.js';
import { FirecrestJobBackend } from '../../backends/slurm/firecrest-backend.js';
import type { JobBackend } from '../../backends/types.js';
import { firecrestHasher, firecrestHealth, slurmrestdHealth, type RecoverySite } from '../../activities/recovery.js';
import { firecrestSource, slurmrestdSource } from '../../activities/placement-sources.js';
import { startCluster, type Cluster } from '../slurm/cluster.js';
import { FirecrestGateway } from '../slurm/gateway/server.js';
import { SlurmExecutor } from '../slurm/gateway/executor.js';
import { CLIENT } from '../slurm/firecrest-bed.js';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../scripts/slurm/cluster.sh', import.meta.url));

export interface TestSite {
  cluster: Cluster;
  backend: JobBackend;
  /** Set when the site is reached through the FirecREST gateway. */
  gateway?: FirecrestGateway;
  firecrest?: { baseUrl: string; tokenUrl: string };
  site: RecoverySite;
  root: string;
  outage(): Promise<void>;
  revive(): Promise<void>;
}

/** A site reached through slurmrestd, or (`api: 'firecrest'`) through the spec-validating FirecREST gateway,
 *  whose checksum endpoint then verifies checkpoints and whose /status/systems reports health. */
export async function startSite(name: string, api: 'slurmrestd' | 'firecrest' = 'slurmrestd'): Promise<TestSite> {
  const cluster = await startCluster(name);
  let backend: JobBackend;
  let site: Pick<RecoverySite, 'health' | 'hasher' | 'inventory'>;
  let gateway: FirecrestGateway | undefined;
  let firecrest: TestSite['firecrest'];
  if (api === 'firecrest') {
    const executor = new SlurmExecutor({ name, slurmConf: cluster.slurmConf, restSocket: cluster.restSocket, restUser: cluster.restUser });
    gateway = new FirecrestGateway({ systems: [executor], tokens: { ...CLIENT, lifetimeS: 300, minRemainingS: 30 } });
    const { baseUrl, tokenUrl } = await gateway.listen();
    firecrest = { baseUrl, tokenUrl };
    const fc = new FirecrestJobBackend({ site: name, system: name, workDir: cluster.workDir, statusIntervalMs: 300, firecrest: { baseUrl, credentials: { tokenUrl, ...CLIENT }, timeoutMs: 3000, backoff: { attempts: 4, initialMs: 50, maxMs: 500 } } });
    backend = fc;
    site = { health: firecrestHealth(fc.client, name), hasher: firecrestHasher(fc.client, name), inventory: firecrestSource(fc, name) };
  } else {
    const rest = new SlurmrestdJobBackend({ site: name, workDir: cluster.workDir, statusIntervalMs: 300, rest: { socketPath: cluster.restSocket, timeoutMs: 3000, backoff: { attempts: 2, initialMs: 100, maxMs: 500 } } });
    backend = rest;
    site = { health: slurmrestdHealth(rest.client), inventory: slurmrestdSource(rest) };
  }
  const root = join(cluster.workDir, 'tandem');
  mkdirSync(root, { recursive: true });
  chmodSync(root, 0o777);
  const conf = readFileSync(cluster.slurmConf, 'utf8');
  const port = (key: string) => /^(\w+)=(\d+)$/m.exec(conf.split('\n').find((l) => l.startsWith(`${key}=`)) ?? '')?.[2];
  const ports = [port('SlurmctldPort'), port('SlurmdPort')];
  return {
    cluster,
    backend,
    gateway,
    firecrest,
    root,
    site: { name, backend, root, ...site },
    async outage() {
      // The site goes dark: REST API, node daemon and controller are killed (munge stays: it is not Slurm).
      for (const d of ['slurmrestd', 'slurmd', 'slurmctld']) {
        const f = join(cluster.dir, 'run', `${d}.pid`);
        if (!existsSync(f)) continue;
        const pid = Number(readFileSync(f, 'utf8').trim());
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    },
    async revive() {
      await run('bash', [SCRIPT, 'up', cluster.dir, name, ports[0]!, ports[1]!], { timeout: 60_000 });
    },
  };
}
