// A Tandem worker process for the chaos matrix (it gets SIGKILLed): the usual activities plus the
// recovery activities over the sites described in TANDEM_CHAOS_SITES (JSON: name, api, root, workDir,
// restSocket | baseUrl + tokenUrl + client credentials in TANDEM_CHAOS_CLIENT_ID/_SECRET).
import { Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { createTandemWorker } from '../../workers/worker.js';
import { createActivities } from '../../activities/index.js';
import { createRecoveryActivities, firecrestHasher, firecrestHealth, slurmrestdHealth, type RecoverySite } from '../../activities/recovery.js';
import { FirecrestJobBackend } from '../../backends/slurm/firecrest-backend.js';
import { SlurmrestdJobBackend } from '../../backends/slurm/slurmrestd-backend.js';

export interface SiteDescriptor {
  name: string;
  api: 'slurmrestd' | 'firecrest';
  root: string;
  workDir: string;
  restSocket?: string;
  baseUrl?: string;
  tokenUrl?: string;
}

export function recoverySite(d: SiteDescriptor, env: NodeJS.ProcessEnv = process.env): RecoverySite {
  if (d.api === 'firecrest') {
    const credentials = { tokenUrl: d.tokenUrl!, clientId: env.TANDEM_CHAOS_CLIENT_ID!, clientSecret: env.TANDEM_CHAOS_CLIENT_SECRET! };
    const b = new FirecrestJobBackend({ site: d.name, system: d.name, workDir: d.workDir, statusIntervalMs: 300, firecrest: { baseUrl: d.baseUrl!, credentials, timeoutMs: 3000, backoff: { attempts: 6, initialMs: 50, maxMs: 500 } } });
    return { name: d.name, backend: b, root: d.root, health: firecrestHealth(b.client, d.name), hasher: firecrestHasher(b.client, d.name) };
  }
  const b = new SlurmrestdJobBackend({ site: d.name, workDir: d.workDir, statusIntervalMs: 300, rest: { socketPath: d.restSocket!, timeoutMs: 3000, backoff: { attempts: 2, initialMs: 100, maxMs: 500 } } });
  return { name: d.name, backend: b, root: d.root, health: slurmrestdHealth(b.client) };
}

if (process.argv[1]?.endsWith('worker.ts')) {
  Runtime.install({ telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
  const home = process.env.TANDEM_HOME!;
  const sites = (JSON.parse(process.env.TANDEM_CHAOS_SITES!) as SiteDescriptor[]).map((d) => recoverySite(d));
  const { worker, connection } = await createTandemWorker({
    address: process.env.TEMPORAL_ADDRESS!,
    taskQueue: process.env.TANDEM_TASK_QUEUE,
    home,
    activities: { ...createActivities({ home }), ...createRecoveryActivities({ home, sites, healthTimeoutMs: 3000 }) },
  });
  console.log('worker ready');
  try {
    await worker.run();
  } finally {
    await connection.close();
  }
}
