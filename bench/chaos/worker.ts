// A Tandem worker process for the chaos matrix (it gets SIGKILLed): the usual activities plus the
// recovery activities over the sites described in TANDEM_CHAOS_SITES (JSON: name, api, root, workDir,
// restSocket | baseUrl + tokenUrl + client credentials in TANDEM_CHAOS_CLIENT_ID/_SECRET).
import { Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { createTandemWorker } from '../../workers/worker.js';
import { createActivities } from '../../activities/index.js';
import { createRecoveryActivities } from '../../activities/recovery.js';
import { recoverySite } from '../../activities/recovery-sites.js';
import type { SiteConfig } from '../../contract/sites.js';

export interface SiteDescriptor {
  name: string;
  api: 'slurmrestd' | 'firecrest';
  root: string;
  workDir: string;
  restSocket?: string;
  baseUrl?: string;
  tokenUrl?: string;
}

/** The same site configuration a sites file gives (contract/sites.ts), with the chaos bed's short timeouts. */
export function siteConfig(d: SiteDescriptor): SiteConfig {
  const common = { name: d.name, workDir: d.workDir, root: d.root, statusIntervalMs: 300, timeoutMs: 3000 };
  // Through FirecREST the gateway injects faults: retry more before an observation counts as failed.
  if (d.api === 'firecrest') return { ...common, api: 'firecrest', url: d.baseUrl!, tokenUrl: d.tokenUrl!, clientId: process.env.TANDEM_CHAOS_CLIENT_ID!, clientSecretEnv: 'TANDEM_CHAOS_CLIENT_SECRET', retries: 5 };
  return { ...common, api: 'slurmrestd', socket: d.restSocket!, retries: 1 };
}

if (process.argv[1]?.endsWith('worker.ts')) {
  Runtime.install({ telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
  const home = process.env.TANDEM_HOME!;
  const sites = (JSON.parse(process.env.TANDEM_CHAOS_SITES!) as SiteDescriptor[]).map((d) => recoverySite(siteConfig(d), process.env));
  const { worker, connection } = await createTandemWorker({
    address: process.env.TEMPORAL_ADDRESS!,
    taskQueue: process.env.TANDEM_TASK_QUEUE,
    home,
    // The supervisor bundles the workflows once: a restarted worker is back in seconds, not after a rebuild.
    workflowBundle: process.env.TANDEM_WORKFLOW_BUNDLE ? { codePath: process.env.TANDEM_WORKFLOW_BUNDLE } : undefined,
    activities: { ...createActivities({ home }), ...createRecoveryActivities({ home, sites, healthTimeoutMs: 3000 }) },
  });
  console.log('worker ready');
  try {
    await worker.run();
  } finally {
    await connection.close();
  }
}
