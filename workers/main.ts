// `npm run worker`: a long-running Tandem worker, configured from the environment by
// config/worker.ts (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TANDEM_TASK_QUEUE, TANDEM_HOME, Slurm through
// TANDEM_SLURM_API, TANDEM_SITES_FILE, TANDEM_QUOTAS_FILE, Kubernetes, migration sites, a prebuilt
// workflow bundle (TANDEM_WORKFLOW_BUNDLE, `tandem bundle`: no bundling at start); see
// docs/configuration.md). A bad configuration is reported all at once, without a stack trace.
import { Runtime } from '@temporalio/worker';
import { createTandemWorker } from './worker.js';
import { activityOptionsFromConfig } from './assembly.js';
import { loadWorkerConfig } from '../config/worker.js';
import { CONFIG_EXIT_CODE, ConfigError } from '../config/errors.js';
import { secretValues } from '../config/worker.js';
import { announce, configureLogger } from '../observe/log.js';
import { bindAddress, runtimeOptions } from '../observe/runtime.js';
import { startMetricsServer } from '../observe/server.js';
import { startTracing } from '../observe/tracing.js';

function load() {
  try {
    return loadWorkerConfig();
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    console.error(e.message);
    process.exit(CONFIG_EXIT_CODE);
  }
}

const config = load();
// ---- observability (observe/): the logger (TANDEM_LOG_FORMAT, secrets redacted), /metrics and the SDK's metrics when TANDEM_METRICS_PORT is set
const logger = configureLogger({ format: config.observe.logFormat, level: config.observe.logLevel ?? 'INFO', secrets: secretValues(process.env, config) });
const served = config.observe.metrics;
Runtime.install(runtimeOptions({ logger, sdkMetrics: served ? bindAddress(served.host, served.sdkPort) : undefined }));
const metricsServer = served ? await startMetricsServer(served) : undefined;
if (metricsServer) announce(`tandem worker: metrics at ${metricsServer.url}, Temporal SDK metrics at http://${bindAddress(served!.host, served!.sdkPort)}/metrics`);
// OpenTelemetry tracing when an OTEL_* variable turns it on (config/worker.ts); flushed on shutdown.
const tracing = config.observe.tracing ? startTracing(config.observe.tracing, 'tandem-worker') : undefined;
if (tracing) announce(`tandem worker: traces to ${config.observe.tracing!.endpoint} as service ${tracing.serviceName}`);
// ----
const { address, home } = config;
// Slurm through FirecREST or slurmrestd when TANDEM_SLURM_API is set (see docs/slurm.md),
// failover sites, quotas, the tenant policy: the activity options a TandemPlugin builds from the same configuration.
const activityOptions = activityOptionsFromConfig(config);
const { recoverySites = [], quotas } = activityOptions;
const { worker, connection } = await createTandemWorker({ ...activityOptions, address, connection: config.connection, oidc: config.oidc, namespace: config.namespace, taskQueue: config.taskQueue, tracing, slots: config.slots, workflowBundle: config.workflowBundle ? { codePath: config.workflowBundle } : undefined });
announce(`tandem worker: polling task queue "${worker.options.taskQueue}" on ${address}, local runtime state in ${home}${recoverySites.length ? `, failover sites ${recoverySites.map((s) => s.name).join(', ')}` : ''}${quotas ? `, quotas at ${Object.keys(quotas.quotas).join(', ')}` : ''}${config.tenantPolicy ? `, tenant policy ${config.tenantPolicy.file}` : ''}`);
try {
  await worker.run();
} finally {
  await connection.close();
  await metricsServer?.close();
  await tracing?.shutdown();
}
