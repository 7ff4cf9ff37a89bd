// TandemPlugin: Tandem added to a Temporal the team already runs, through the SDK's plugin API. The
// same instance goes on the Client (payload codec), the Worker (Tandem's activities, codec, and the
// lifetime of the backend clients it built) and the bundler when workflows are pre-bundled.
//
//   const tandem = new TandemPlugin();                       // configuration from TANDEM_* / TEMPORAL_*
//   const client = new Client({ connection, plugins: [tandem] });
//   const worker = await Worker.create({ connection, taskQueue: 'tandem', workflowsPath: require.resolve('./workflows'), plugins: [tandem] });
//   // ./workflows.ts:  export * from 'tandem/workflows';   (next to the team's own workflows)
import { SimplePlugin } from '@temporalio/plugin';
import type { DataConverter } from '@temporalio/common';
import type { BundleOptions, WorkerOptions } from '@temporalio/worker';
import { startTracing, tracingClientInterceptors, type Tracing } from '../observe/tracing.js';
import { startMetricsServer, type MetricsServer } from '../observe/server.js';
import { codecDataConverter } from '../codec/index.js';
import { loadWorkerConfig, type WorkerConfig } from '../config/worker.js';
import { tandemActivities, WORKFLOWS_PATH, type TandemActivityOptions } from './worker.js';
import { activityOptionsFromConfig, withWorkerParts, workerParts, type TandemWorkerParts } from './assembly.js';
import { slotOptions } from './slots.js';
import { addInFlightSource } from '../observe/in-flight.js';
import { DEFAULTS } from '../config/defaults.js';
import { closeActivities } from '../activities/lifetime.js';

export interface TandemPluginOptions extends Omit<TandemActivityOptions, 'home' | 'cluster'> {
  /**
   * The validated worker configuration (config/worker.ts). Default: loadWorkerConfig() from the
   * environment, which reports every bad variable or file line at once.
   */
  config?: WorkerConfig;
  /** TANDEM_HOME, when not from `config`. */
  home?: string;
  /**
   * Register Tandem's workflows as the worker's whole workflow module (a worker that runs only
   * Tandem). Leave false when the worker has workflows of its own: re-export `tandem/workflows` from
   * its workflows module instead.
   */
  registerWorkflows?: boolean;
  /** Replaces the activities Tandem would build (tests, or an embedding that wires its own). */
  activities?: object;
  /** The heartbeat throttle (training progress); default the one `tandem worker` uses. A maxHeartbeatThrottleInterval on the Worker wins. */
  heartbeatThrottleMs?: number;
  /**
   * Where the plugin serves Tandem's /metrics while a worker with it runs: default TANDEM_METRICS_HOST /
   * TANDEM_METRICS_PORT from `config`, as `tandem worker` does (port 0: a free one, see `metricsUrl`);
   * false: not served (an embedding that already has a Prometheus endpoint serves `registry` from `tandem/observe`).
   */
  metrics?: { host: string; port: number } | false;
}

/** One /metrics server per address in a process, however many workers (or plugins) share it. */
const servers = new Map<string, { server: Promise<MetricsServer>; users: number }>();

async function acquireMetricsServer(at: { host: string; port: number }): Promise<{ server: MetricsServer; release: () => Promise<void> }> {
  const key = `${at.host}:${at.port}`;
  let entry = at.port === 0 ? undefined : servers.get(key);
  if (!entry) {
    entry = { server: startMetricsServer(at), users: 0 };
    if (at.port !== 0) servers.set(key, entry);
  }
  entry.users++;
  const e = entry;
  const server = await e.server.catch((err: unknown) => {
    servers.delete(key);
    throw err;
  });
  return {
    server,
    release: async () => {
      if (--e.users > 0) return;
      if (servers.get(key) === e) servers.delete(key);
      await server.close();
    },
  };
}

export class TandemPlugin extends SimplePlugin {
  readonly config: WorkerConfig;
  private built?: object;
  /** Workers running with this plugin now: the shared activities close when the last one stops. */
  private runs = 0;
  /** The worker parts Tandem's own worker has (workers/assembly.ts): throttle, sinks, interceptors. */
  readonly parts: TandemWorkerParts;
  /** http://host:port/metrics while a worker with this plugin runs and metrics are configured. */
  metricsUrl?: string;

  constructor(opts: TandemPluginOptions = {}) {
    const config = opts.config ?? loadWorkerConfig();
    // The codec is part of the data converter: a client and a worker must agree on it, which is why
    // the same plugin instance goes on both.
    const codec: DataConverter | undefined = codecDataConverter(config.codec);
    // OpenTelemetry tracing when the configuration's OTEL_* turn it on (observe/tracing.ts: one provider
    // a process). The client's StartWorkflow span is the parent of the run's spans on the worker.
    const tracing = config.observe.tracing ? startTracing(config.observe.tracing, 'tandem-worker') : undefined;
    const metricsAt = opts.metrics === false ? undefined : (opts.metrics ?? config.observe.metrics);
    super({
      name: 'tandem',
      // Activities are built on first use by a worker, never for a client: building them creates the
      // backend clients (Slurm, Kubernetes) the worker owns.
      activities: (existing) => ({ ...existing, ...this.activities() }),
      ...(codec ? { dataConverter: codec } : {}),
      ...(tracing ? { clientInterceptors: { workflow: tracingClientInterceptors(tracing) } } : {}),
      ...(opts.registerWorkflows ? { workflowsPath: WORKFLOWS_PATH } : {}),
      // The backend clients hold no connections between calls (each request opens and closes its
      // own); placement's Kubernetes watches are closed below once the last worker running with this
      // plugin stops, so stopped workers leave nothing open. Workers given the same plugin share its
      // activities (one kept inventory); a worker that stops does not close what another still uses,
      // and one run again reopens the watches at its first decision.
      // /metrics is served while a worker runs (one server per address, shared by the workers on it).
      runContext: async (next) => {
        const served = metricsAt ? await acquireMetricsServer(metricsAt) : undefined;
        this.metricsUrl = served?.server.url ?? this.metricsUrl;
        this.runs++;
        try {
          await next();
        } finally {
          if (--this.runs === 0) {
            // What the activities held open between calls (placement's Kubernetes watches) ends with the last run.
            await closeActivities(this.built).catch((e: unknown) => console.warn(`tandem plugin: closing the activities' watches failed: ${String((e as Error)?.message ?? e)}`));
            this.metricsUrl = undefined;
          }
          await served?.release();
          await this.tracing?.flush();
        }
      },
    });
    this.config = config;
    this.tandemOptions = opts;
    this.tracing = tracing;
    this.parts = workerParts({ dataConverter: codec, heartbeatThrottleMs: opts.heartbeatThrottleMs, tracing });
  }

  /** The process's tracing when the configuration turned it on; `tracing?.shutdown()` at exit sends what is left. */
  readonly tracing?: Tracing;

  private readonly tandemOptions: TandemPluginOptions;

  /**
   * A bundle built with the plugin (bundleWorkflowCode({ plugins: [tandem] })) gets the codec's failure
   * converter, as a worker bundling with the plugin does (it takes it from the data converter): the
   * workflow code's failures are then encoded like the activities'. SimplePlugin has no option for it.
   * With tracing, its workflow interceptors are bundled in too.
   */
  override configureBundler(options: BundleOptions): BundleOptions {
    const o = super.configureBundler(options);
    const failureConverterPath = codecDataConverter(this.config.codec)?.failureConverterPath;
    const modules = this.parts.workflowInterceptorModules.filter((m) => !o.workflowInterceptorModules?.includes(m));
    return {
      ...o,
      ...(failureConverterPath && !o.failureConverterPath ? { failureConverterPath } : {}),
      ...(modules.length ? { workflowInterceptorModules: [...(o.workflowInterceptorModules ?? []), ...modules] } : {}),
    };
  }

  /** The worker parts of Tandem's own worker (workers/assembly.ts) on top of what SimplePlugin sets. */
  override configureWorker(options: WorkerOptions): WorkerOptions {
    const o = withWorkerParts(super.configureWorker(options), this.parts);
    // Tandem's worker slots (TANDEM_WORKER_*, long waits apart from short calls: workers/slots.ts), unless
    // the team's Worker sizes its own (a tuner, or any of Temporal's concurrency options).
    if (o.tuner === undefined && o.maxConcurrentActivityTaskExecutions === undefined && o.maxConcurrentWorkflowTaskExecutions === undefined && o.maxConcurrentLocalActivityExecutions === undefined && o.maxConcurrentNexusTaskExecutions === undefined) {
      // A cache size the Worker sets is kept, and caps the workflow-task slots as Temporal's own options do.
      const slots = slotOptions({ ...this.config.slots, ...(o.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: o.maxCachedWorkflows } : {}) });
      o.tuner = slots.tuner;
      o.maxCachedWorkflows = slots.maxCachedWorkflows;
    }
    // The "running now" gauges (tandem_pipelines, tandem_stages_running) from this worker's connection,
    // as createTandemWorker sets them: counted from visibility for its namespace and task queue.
    if (this.tandemOptions.metrics !== false && o.connection) addInFlightSource({ service: o.connection.workflowService, namespace: o.namespace ?? DEFAULTS.namespace, taskQueue: o.taskQueue });
    return o;
  }

  /** Tandem's activities for this configuration (built once, shared by every Worker given this plugin). */
  activities(): object {
    if (this.tandemOptions.activities) return this.tandemOptions.activities;
    if (!this.built) {
      const o = this.tandemOptions;
      this.built = tandemActivities(
        activityOptionsFromConfig(this.config, { home: o.home, backends: o.backends, pollInitialMs: o.pollInitialMs, inventorySources: o.inventorySources, recoverySites: o.recoverySites, quotas: o.quotas, tenantPolicy: o.tenantPolicy }),
      );
    }
    return this.built;
  }
}

// `tandem/plugin` also keeps the wiring it offered before the plugin existed.
export { WORKFLOWS_PATH, TASK_QUEUE, bundleWorkflows, createTandemWorker, tandemActivities, migrationSites } from './worker.js';
export type { TandemActivityOptions, TandemWorkerOptions } from './worker.js';
