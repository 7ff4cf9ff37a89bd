// The FirecREST test bed: a real Slurm cluster behind the spec-validating gateway and its token endpoint.
import { FirecrestGateway, type FaultConfig } from './gateway/server.js';
import { SlurmExecutor } from './gateway/executor.js';
import { FirecrestJobBackend } from '../../backends/slurm/firecrest-backend.js';
import type { FirecrestOptions } from '../../backends/slurm/firecrest-client.js';
import type { SlurmBackendOptions } from '../../backends/slurm/job-backend.js';
import { startCluster, type Cluster } from './cluster.js';

export const CLIENT = { clientId: 'tandem-ci', clientSecret: 's3cret-client-value-never-logged' };

export interface Bed {
  cluster: Cluster;
  gateway: FirecrestGateway;
  executor: SlurmExecutor;
  baseUrl: string;
  tokenUrl: string;
  firecrest(over?: Partial<FirecrestOptions>): FirecrestOptions;
  backend(over?: Partial<SlurmBackendOptions> & { firecrest?: Partial<FirecrestOptions> }): FirecrestJobBackend;
  close(): Promise<void>;
}

export async function startBed(name: string, opts: { lifetimeS?: number; minRemainingS?: number; faults?: FaultConfig } = {}): Promise<Bed> {
  const cluster = await startCluster(name);
  let gateway: FirecrestGateway;
  let executor: SlurmExecutor;
  let urls: { baseUrl: string; tokenUrl: string };
  try {
    executor = new SlurmExecutor({ name, slurmConf: cluster.slurmConf, restSocket: cluster.restSocket, restUser: cluster.restUser });
    gateway = new FirecrestGateway({ systems: [executor], tokens: { ...CLIENT, lifetimeS: opts.lifetimeS ?? 300, minRemainingS: opts.minRemainingS ?? 30 }, faults: opts.faults });
    urls = await gateway.listen();
  } catch (e) {
    await cluster.down(); // a bed that cannot start leaves no daemons behind
    throw e;
  }
  const { baseUrl, tokenUrl } = urls;
  const firecrest = (over: Partial<FirecrestOptions> = {}): FirecrestOptions => ({ baseUrl, credentials: { tokenUrl, ...CLIENT }, backoff: { attempts: 8, initialMs: 50, maxMs: 1000 }, ...over });
  return {
    cluster,
    gateway,
    executor,
    baseUrl,
    tokenUrl,
    firecrest,
    backend: (over = {}) => new FirecrestJobBackend({ site: name, system: name, workDir: cluster.workDir, statusIntervalMs: 250, ...over, firecrest: firecrest(over.firecrest) }),
    async close() {
      await gateway.close();
      await cluster.down();
    },
  };
}
