// The two-site failover test bed: zurich and lugano, two real Slurm clusters side by side, each with
// its own slurmrestd, and the recovery activities' view of them. An outage stops a site's daemons
// through its pid files (a real outage: the controller, the node daemon and the REST API go away);
// `revive` brings them back on the same ports with the same state.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { JobBackend } from '../../backends/types.js';
import type { RecoverySite } from '../../activities/recovery.js';
import { recoverySite } from '../../activities/recovery-sites.js';
import type { SiteConfig } from '../../contract/sites.js';
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
  /** The site's sites-file entry (its secret in TANDEM_TEST_CLIENT_SECRET for FirecREST). */
  config: SiteConfig;
  root: string;
  outage(): Promise<void>;
  revive(): Promise<void>;
}

/** A site reached through slurmrestd, or (`api: 'firecrest'`) through the spec-validating FirecREST gateway,
 *  whose checksum endpoint then verifies checkpoints and whose /status/systems reports health. */
export async function startSite(name: string, api: 'slurmrestd' | 'firecrest' = 'slurmrestd', opts: { clientSecret?: string } = {}): Promise<TestSite> {
  const client = { ...CLIENT, ...(opts.clientSecret ? { clientSecret: opts.clientSecret } : {}) };
  const cluster = await startCluster(name);
  let gateway: FirecrestGateway | undefined;
  let firecrest: TestSite['firecrest'];
  // The same construction a worker's sites file gets (activities/recovery-sites.ts), with short timeouts.
  const common = { name, workDir: cluster.workDir, statusIntervalMs: 300, timeoutMs: 3000 };
  let config: SiteConfig = { ...common, api: 'slurmrestd', socket: cluster.restSocket, retries: 1 };
  if (api === 'firecrest') {
    try {
      const executor = new SlurmExecutor({ name, slurmConf: cluster.slurmConf, restSocket: cluster.restSocket, restUser: cluster.restUser });
      gateway = new FirecrestGateway({ systems: [executor], tokens: { ...client, lifetimeS: 300, minRemainingS: 30 } });
      const { baseUrl, tokenUrl } = await gateway.listen();
      firecrest = { baseUrl, tokenUrl };
      config = { ...common, api: 'firecrest', url: baseUrl, tokenUrl, clientId: client.clientId, clientSecretEnv: 'TANDEM_TEST_CLIENT_SECRET', retries: 3 };
    } catch (e) {
      await cluster.down().catch(() => undefined); // a bed that cannot start leaves no daemons behind
      throw e;
    }
  }
  const site = recoverySite(config, { TANDEM_TEST_CLIENT_SECRET: client.clientSecret });
  const { backend, root } = site;
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
    site,
    config,
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

/** zurich (slurmrestd) and lugano (FirecREST gateway), started together; if either fails, neither is left running. */
export async function startTwoSites(): Promise<[TestSite, TestSite]> {
  const started = await Promise.allSettled([startSite('zurich'), startSite('lugano', 'firecrest')]);
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (!failed) return started.map((r) => (r as PromiseFulfilledResult<TestSite>).value) as [TestSite, TestSite];
  for (const r of started) {
    if (r.status !== 'fulfilled') continue;
    await r.value.gateway?.close().catch(() => undefined);
    await r.value.cluster.down().catch(() => undefined);
  }
  throw failed.reason;
}

/**
 * The two-site bed for a whole suite: started before its tests (umask 0, since jobs run as the
 * clusters' unprivileged user; see test/slurm/pipeline.long.test.ts), handed to `use`, stopped after them.
 */
export function useTwoSites(use: (zurich: TestSite, lugano: TestSite) => void): void {
  let sites: [TestSite, TestSite] | undefined;
  let oldUmask: number;
  beforeAll(async () => {
    oldUmask = process.umask(0);
    sites = await startTwoSites();
    use(...sites);
  }, 120_000);
  afterAll(async () => {
    process.umask(oldUmask);
    if (!sites) return;
    const [zurich, lugano] = sites;
    await lugano.gateway?.close();
    await Promise.all([zurich.cluster.down(), lugano.cluster.down()]);
  });
}
