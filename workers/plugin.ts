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
import { tandemSinks } from '../observe/sinks.js';
import { observeActivities } from '../observe/interceptor.js';
import { TRACING_WORKFLOW_MODULE, startTracing, tracingActivityInterceptors, tracingClientInterceptors, tracingSinks, type Tracing } from '../observe/tracing.js';
import { codecDataConverter } from '../codec/index.js';
import { loadWorkerConfig, type WorkerConfig } from '../config/worker.js';
import { slurmBackend } from '../backends/slurm/index.js';
import { recoverySites } from '../activities/recovery-sites.js';
import { tandemActivities, WORKFLOWS_PATH, type TandemActivityOptions } from './worker.js';

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
}

export class TandemPlugin extends SimplePlugin {
  readonly config: WorkerConfig;
  private built?: object;

  constructor(opts: TandemPluginOptions = {}) {
    const config = opts.config ?? loadWorkerConfig();
    // The codec is part of the data converter: a client and a worker must agree on it, which is why
    // the same plugin instance goes on both.
    const codec: DataConverter | undefined = codecDataConverter(config.codec);
    // OpenTelemetry tracing when the configuration's OTEL_* turn it on (observe/tracing.ts: one provider
    // a process). The client's StartWorkflow span is the parent of the run's spans on the worker.
    const tracing = config.observe.tracing ? startTracing(config.observe.tracing, 'tandem-worker') : undefined;
    super({
      name: 'tandem',
      // Activities are built on first use by a worker, never for a client: building them creates the
      // backend clients (Slurm, Kubernetes) the worker owns.
      activities: (existing) => ({ ...existing, ...this.activities() }),
      ...(codec ? { dataConverter: codec } : {}),
      // Activity durations and outcomes for the metrics (observe/); served where the entry point
      // starts observe/server.ts (or scraped from observe/metrics.ts's registry by the embedding).
      // With tracing, the RunActivity span goes outermost and the workflow interceptors are bundled in.
      workerInterceptors: { activity: [...(tracing ? [tracingActivityInterceptors(tracing)] : []), observeActivities], ...(tracing ? { workflowModules: [TRACING_WORKFLOW_MODULE] } : {}) },
      ...(tracing ? { clientInterceptors: { workflow: tracingClientInterceptors(tracing) } } : {}),
      ...(opts.registerWorkflows ? { workflowsPath: WORKFLOWS_PATH } : {}),
      // The backend clients hold no connections between calls (each request opens and closes its
      // own), so a stopped worker leaves nothing open; a worker run again gets freshly built ones.
      runContext: async (next) => {
        try {
          await next();
        } finally {
          this.built = undefined;
          await this.tracing?.flush();
        }
      },
    });
    this.config = config;
    this.tandemOptions = opts;
    this.tracing = tracing;
  }

  /** The process's tracing when the configuration turned it on; `tracing?.shutdown()` at exit sends what is left. */
  readonly tracing?: Tracing;

  private readonly tandemOptions: TandemPluginOptions;

  /**
   * A bundle built with the plugin (bundleWorkflowCode({ plugins: [tandem] })) gets the codec's failure
   * converter, as a worker bundling with the plugin does (it takes it from the data converter): the
   * workflow code's failures are then encoded like the activities'. SimplePlugin has no option for it.
   */
  override configureBundler(options: BundleOptions): BundleOptions {
    const o = super.configureBundler(options);
    const failureConverterPath = codecDataConverter(this.config.codec)?.failureConverterPath;
    return failureConverterPath && !o.failureConverterPath ? { ...o, failureConverterPath } : o;
  }

  /** Also registers the workflows' metric sinks (workflows/observe.ts); SimplePlugin has no option for sinks. */
  override configureWorker(options: WorkerOptions): WorkerOptions {
    const o = super.configureWorker(options);
    return { ...o, sinks: { ...tandemSinks(), ...(this.tracing ? tracingSinks(this.tracing) : {}), ...o.sinks } };
  }

  /** Tandem's activities for this configuration (built once per plugin). */
  activities(): object {
    if (this.tandemOptions.activities) return this.tandemOptions.activities;
    if (!this.built) {
      const c = this.config;
      const o = this.tandemOptions;
      const rest: Omit<TandemActivityOptions, 'home' | 'cluster'> = { backends: o.backends, pollInitialMs: o.pollInitialMs, inventorySources: o.inventorySources, recoverySites: o.recoverySites, quotas: o.quotas, tenantPolicy: o.tenantPolicy };
      this.built = tandemActivities({
        ...rest,
        home: this.tandemOptions.home ?? c.home,
        backends: rest.backends ?? (c.slurm ? { slurm: slurmBackend(c.slurm) } : undefined),
        recoverySites: rest.recoverySites ?? recoverySites(c.sites?.parsed, c.sites?.secrets ?? {}),
        quotas: rest.quotas ?? c.quotas?.parsed,
        tenantPolicy: rest.tenantPolicy ?? c.tenantPolicy?.parsed,
        cluster: c,
        audit: c.audit,
      });
    }
    return this.built;
  }
}

// `tandem/plugin` also keeps the wiring it offered before the plugin existed.
export { WORKFLOWS_PATH, TASK_QUEUE, bundleWorkflows, createTandemWorker, tandemActivities, migrationSites } from './worker.js';
export type { TandemActivityOptions, TandemWorkerOptions } from './worker.js';
