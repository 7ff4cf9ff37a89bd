// The one assembly of a Tandem worker: what `createTandemWorker` (and so `tandem worker`, `npm run
// worker`, `tandem dev`), the `TandemPlugin` on a team's own Worker, and the replayer
// (workers/replay.ts) all put on a Temporal worker — the heartbeat throttle that keeps training
// progress live, the workflows' metric sinks, the activity interceptors (metrics, log attributes,
// tracing, keep-alive heartbeats), the workflow interceptor modules tracing bundles, the payload codec, and the activities
// built from the validated configuration. A difference between Tandem's own worker and a plugin
// worker can only come from here (or from the slots, which both take from workers/slots.ts), so there is none.
import type { DataConverter } from '@temporalio/common';
import type { ActivityInterceptorsFactory, WorkerOptions } from '@temporalio/worker';
import { DEFAULTS } from '../config/defaults.js';
import type { WorkerConfig } from '../config/worker.js';
import { tandemSinks } from '../observe/sinks.js';
import { observeActivities } from '../observe/interceptor.js';
import { keepAlive } from './keepalive.js';
import { TRACING_WORKFLOW_MODULE, tracingActivityInterceptors, tracingSinks, type Tracing } from '../observe/tracing.js';
import { slurmBackend } from '../backends/slurm/index.js';
import { recoverySites } from '../activities/recovery-sites.js';
import type { ActivityConfig } from '../activities/index.js';
import type { ClusterConfig } from '../config/worker.js';

/** The activities' options (workers/worker.ts `TandemActivityOptions`, the same shape). */
type TandemActivityOptions = ActivityConfig & { cluster?: ClusterConfig };

export interface WorkerPartsOptions {
  /** Payload encryption (codec/): the worker's data converter; none without codec keys. */
  dataConverter?: DataConverter;
  /** Heartbeats carry training progress: the worker sends one at most this often. Default DEFAULTS.heartbeatThrottleMs. */
  heartbeatThrottleMs?: number;
  /** Metrics (observe/): record the workflows' sink calls and the activities' durations; default true. */
  observe?: boolean;
  /** OpenTelemetry tracing (observe/tracing.ts), as the process started it. */
  tracing?: Tracing;
}

/** What a Tandem worker adds to Temporal's WorkerOptions (activities aside: `tandemActivities`). */
export interface TandemWorkerParts {
  dataConverter?: DataConverter;
  maxHeartbeatThrottleInterval: number;
  sinks: NonNullable<WorkerOptions['sinks']>;
  /** Tracing's RunActivity span outermost, so the metrics interceptor's work is inside it. */
  activityInterceptors: ActivityInterceptorsFactory[];
  /** Bundled into the workflow code (tracing's workflow interceptors); a prebuilt bundle must carry them. */
  workflowInterceptorModules: string[];
  /** How long one workflow activation may run before the SDK fails it (DEFAULTS.isolateExecutionTimeoutMs). */
  isolateExecutionTimeout: number;
}

export function workerParts(o: WorkerPartsOptions = {}): TandemWorkerParts {
  const observe = o.observe !== false;
  return {
    ...(o.dataConverter ? { dataConverter: o.dataConverter } : {}),
    maxHeartbeatThrottleInterval: o.heartbeatThrottleMs ?? DEFAULTS.heartbeatThrottleMs,
    // Registered even with metrics off (doing nothing): a workflow's sink call is otherwise an
    // "unregistered sink" error in the worker's log.
    sinks: { ...tandemSinks({ record: observe }), ...(o.tracing ? tracingSinks(o.tracing) : {}) },
    // Keep-alive innermost (workers/keepalive.ts): a lost short task is retried after its heartbeat timeout.
    activityInterceptors: [...(o.tracing ? [tracingActivityInterceptors(o.tracing)] : []), ...(observe ? [observeActivities] : []), keepAlive],
    workflowInterceptorModules: o.tracing ? [TRACING_WORKFLOW_MODULE] : [],
    isolateExecutionTimeout: DEFAULTS.isolateExecutionTimeoutMs,
  };
}

/** Worker options the SDK reads (1.24: they override its defaults) but leaves out of WorkerOptions' public type. */
interface SdkOnlyOptions {
  isolateExecutionTimeout?: number | string;
}

/** The SDK's isolate timeout as a WorkerOptions part (see SdkOnlyOptions). */
export function isolateTimeout(ms: number | string): Partial<WorkerOptions> {
  return { isolateExecutionTimeout: ms } as SdkOnlyOptions as Partial<WorkerOptions>;
}

/**
 * The parts on options a worker was given (the plugin's configureWorker): the team's own sinks and
 * interceptors are kept (theirs win a name clash; Tandem's activity interceptors run inside theirs),
 * a throttle or isolate timeout they set themselves is theirs.
 */
export function withWorkerParts(options: WorkerOptions, parts: TandemWorkerParts): WorkerOptions {
  const interceptors = options.interceptors ?? {};
  const modules = [...(interceptors.workflowModules ?? []), ...parts.workflowInterceptorModules.filter((m) => !interceptors.workflowModules?.includes(m))];
  return {
    ...options,
    maxHeartbeatThrottleInterval: options.maxHeartbeatThrottleInterval ?? parts.maxHeartbeatThrottleInterval,
    // A team's debugMode (a breakpoint may hold an activation) keeps the SDK's unlimited timeout.
    ...(options.debugMode ? {} : isolateTimeout((options as SdkOnlyOptions).isolateExecutionTimeout ?? parts.isolateExecutionTimeout)),
    sinks: { ...parts.sinks, ...options.sinks },
    interceptors: { ...interceptors, activity: [...(interceptors.activity ?? []), ...parts.activityInterceptors], ...(modules.length ? { workflowModules: modules } : {}) },
  };
}

/**
 * The activity options a validated configuration (config/worker.ts) gives: Slurm through
 * TANDEM_SLURM_API, failover sites, quotas, the tenant policy, Kubernetes and migration sites, the
 * audit log. What `overrides` names wins (tests, an embedding wiring its own backends).
 */
export function activityOptionsFromConfig(config: WorkerConfig, overrides: Partial<TandemActivityOptions> = {}): TandemActivityOptions {
  return {
    ...overrides,
    home: overrides.home ?? config.home,
    backends: overrides.backends ?? (config.slurm ? { slurm: slurmBackend(config.slurm) } : undefined),
    recoverySites: overrides.recoverySites ?? recoverySites(config.sites?.parsed, config.sites?.secrets ?? {}),
    quotas: overrides.quotas ?? config.quotas?.parsed,
    tenantPolicy: overrides.tenantPolicy ?? config.tenantPolicy?.parsed,
    cluster: overrides.cluster ?? config,
    audit: overrides.audit ?? config.audit,
    localIsolation: overrides.localIsolation ?? config.localIsolation,
  };
}
