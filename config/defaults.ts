// Every default of the worker, the CLI and the SDK, in one place. Pipeline tuning defaults (heartbeat
// timeout, poll ceiling, failover windows) are part of the sandbox-safe contract and stay in
// contract/tuning.ts; they are re-exported here so that the consistency checks below see both.
// Plain constants only: backends and activities import this module, so it must not read the
// environment (config/worker.ts does that) or import anything above contract/.
import { fileURLToPath } from 'node:url';
import { TUNING_DEFAULTS, watchHeartbeatMs } from '../contract/tuning.js';
import { defaultLeaseMs, leasePollCapMs } from '../contract/failover.js';

export { TUNING_DEFAULTS };

export const DEFAULTS = {
  /** TEMPORAL_ADDRESS: the Temporal frontend the CLI, the SDK and `npm run worker` connect to. */
  temporalAddress: '127.0.0.1:7233',
  /** TEMPORAL_NAMESPACE. */
  namespace: 'default',
  /** TANDEM_TASK_QUEUE: the queue Tandem's workflows and activities are served on. */
  taskQueue: 'tandem',
  /** TANDEM_HOME: local runtime state (jobs, run directories, deployments); relative to the cwd. */
  home: '.tandem',
  /** TANDEM_SLURM_SITE: the site name of the Slurm backend configured by TANDEM_SLURM_API. */
  slurmSite: 'slurm',
  /** TANDEM_SLURMRESTD_API_VERSION. */
  slurmrestdApiVersion: '0.0.38',
  /** TANDEM_K8S_SERVICE_TYPE: how vLLM deployments are exposed. */
  k8sServiceType: 'ClusterIP' as 'ClusterIP' | 'LoadBalancer',
  /**
   * TANDEM_ARGO_SCHEMA: Argo's JSON schema, used by `tandem argo lint|submit`. A copy ships in templates/
   * (Argo's api/jsonschema/schema.json, Apache-2.0: templates/argo-schema.LICENSE), so the installed
   * package finds it; templates/ sits beside config/ in the checkout and in dist/ alike.
   */
  argoSchemaFile: fileURLToPath(new URL('../templates/argo-schema.json', import.meta.url)),

  /** `tandem dev`: frontend and Web UI ports of the embedded Temporal dev server. */
  devPort: 7233,
  devUiPort: 8233,
  /** `tandem ui`: Tandem's own read-only web view, on 127.0.0.1 (beside the Temporal Web UI's 8233). */
  uiPort: 8234,
  /**
   * `tandem argo executor-plugin serve --temporal-unreachable-limit`: how long Temporal may stay
   * unreachable for one plugin node (answered Running with a requeue meanwhile) before the node fails.
   */
  pluginUnreachableLimitMs: 15 * 60_000,
  /** `… serve --watch-every`: how often the plugin reads the Argo workflows of its unfinished runs. */
  pluginWatchEveryMs: 5000,
  /** How long to wait for a started dev server's frontend to answer. */
  devServerStartTimeoutMs: 60_000,
  /** The SDK's connect timeout (a dead address fails fast with a hint). */
  connectTimeoutMs: 5000,
  /** `tandem runs replay`: how long one history may replay before it counts as failed (a malformed history can stall the replayer). */
  replayTimeoutMs: 300_000,

  /** Request timeout of the FirecREST and slurmrestd HTTP clients. */
  httpTimeoutMs: 30_000,
  /** Request timeout of the OAuth2 token endpoint (client credentials). */
  tokenTimeoutMs: 15_000,
  /** Timeout of one Slurm CLI call (scontrol, sinfo, sbatch) made for staged migration. */
  slurmCommandTimeoutMs: 30_000,
  /** How long a local model server may take to write its endpoint file. */
  localServingBindTimeoutMs: 30_000,

  /**
   * The worker's maxHeartbeatThrottleInterval. Heartbeats carry training progress; a short throttle
   * keeps `tandem status` and the CLI progress bar live.
   */
  heartbeatThrottleMs: 1000,
  // One workflow activation's wall time before the SDK fails it (Temporal's default 5 s). It is a wall
  // clock: on a worker whose cores are busy with a hundred Argo pods (or another user's build), an
  // ordinary activation passed 5 s, failed, and the SDK's timeout inside an async hook then crashed
  // the worker ("async hook stack has become corrupted"). A workflow that really loops is still
  // stopped, a minute later.
  isolateExecutionTimeoutMs: 60_000,
  /** How often the Kubernetes rollout activities heartbeat during their long waits. */
  k8sHeartbeatMs: 1000,
  /** First pause of the job-status polling backoff (it doubles up to the tuning's pollMaxMs). */
  pollInitialMs: 200,
  /**
   * While a job runs, the watch activities poll (and report its progress) at least this often, whatever
   * the backoff has reached. Their heartbeats do not depend on it: they come every third of the
   * heartbeat timeout however long the poll gap is (activities/poll.ts, contract/tuning.ts watchHeartbeatMs).
   */
  runningPollMs: 1000,

  /** A worker's concurrent activity executions (TANDEM_WORKER_MAX_ACTIVITIES; Temporal's default). */
  workerMaxActivities: 100,
  /**
   * A worker's long waits at once, beside those (TANDEM_WORKER_MAX_WATCHES; workers/slots.ts): jobs
   * watched to their end, rollouts, readiness gates. Each is a poll loop and a heartbeat, a few tens of
   * KB; past the bound the worker takes no more activity tasks.
   */
  workerMaxWatches: 500,
  /** A worker's concurrent workflow tasks (TANDEM_WORKER_MAX_WORKFLOW_TASKS; Temporal's default). */
  workerMaxWorkflowTasks: 40,
  /**
   * Workflows a worker keeps in memory between their tasks (TANDEM_WORKER_MAX_CACHED_WORKFLOWS). The
   * bound on its memory: a pipeline beyond it is evicted and replayed when its next task comes.
   */
  workerMaxCachedWorkflows: 1000,
} as const;

/** DEFAULTS with its literal types widened, so tests can check other values. */
export type Defaults = { -readonly [K in keyof typeof DEFAULTS]: (typeof DEFAULTS)[K] extends number ? number : (typeof DEFAULTS)[K] extends string ? string : (typeof DEFAULTS)[K] };

/**
 * Problems with the defaults themselves, as one line each (none: []). The worker refuses to start with
 * inconsistent defaults, and a unit test keeps them consistent; `tuning` lets tests check other values.
 */
export function defaultsProblems(d: Defaults = DEFAULTS, tuning: { heartbeatTimeoutMs: number; pollMaxMs: number; failover: { graceMs: number } } = TUNING_DEFAULTS): string[] {
  const problems: string[] = [];
  // Temporal times an activity out when no heartbeat reaches the server within the heartbeat timeout;
  // a throttled heartbeat may be sent up to one throttle interval late, so keep several per timeout.
  const wellBelow = tuning.heartbeatTimeoutMs / 3;
  if (d.heartbeatThrottleMs > wellBelow) problems.push(`heartbeatThrottleMs (${d.heartbeatThrottleMs} ms) must be at most a third of the heartbeat timeout (${tuning.heartbeatTimeoutMs} ms)`);
  // The watch activities heartbeat on their own schedule, not once per poll: the poll backoff (up to
  // pollMaxMs, beyond the heartbeat timeout by default) does not bound their heartbeats, the cadence does.
  const watchEvery = watchHeartbeatMs(tuning.heartbeatTimeoutMs);
  if (watchEvery > wellBelow) problems.push(`the watch activities' heartbeat cadence (${watchEvery} ms) must be at most a third of the heartbeat timeout (${tuning.heartbeatTimeoutMs} ms)`);
  if (watchEvery < d.heartbeatThrottleMs) problems.push(`the watch activities' heartbeat cadence (${watchEvery} ms, a third of the heartbeat timeout ${tuning.heartbeatTimeoutMs} ms) must not be finer than heartbeatThrottleMs (${d.heartbeatThrottleMs} ms), which would hold them back`);
  // A job under the default failover lease is observed, and its lease renewed, several times per TTL.
  const leaseTtlMs = defaultLeaseMs(tuning.failover.graceMs);
  const leaseGap = Math.min(tuning.pollMaxMs, leasePollCapMs(leaseTtlMs));
  if (leaseGap > leaseTtlMs / 3) problems.push(`the longest poll gap under the default failover lease (${leaseGap} ms) must be at most a third of the lease (${leaseTtlMs} ms)`);
  if (d.k8sHeartbeatMs > wellBelow) problems.push(`k8sHeartbeatMs (${d.k8sHeartbeatMs} ms) must be at most a third of the heartbeat timeout (${tuning.heartbeatTimeoutMs} ms)`);
  // An observation that hangs for a whole HTTP timeout must not by itself miss the heartbeat deadline.
  if (d.httpTimeoutMs > tuning.heartbeatTimeoutMs) problems.push(`httpTimeoutMs (${d.httpTimeoutMs} ms) must not exceed the heartbeat timeout (${tuning.heartbeatTimeoutMs} ms)`);
  if (d.tokenTimeoutMs > d.httpTimeoutMs) problems.push(`tokenTimeoutMs (${d.tokenTimeoutMs} ms) must not exceed httpTimeoutMs (${d.httpTimeoutMs} ms)`);
  if (d.pollInitialMs > d.runningPollMs) problems.push(`pollInitialMs (${d.pollInitialMs} ms) must not exceed runningPollMs (${d.runningPollMs} ms)`);
  if (d.devPort === d.devUiPort) problems.push(`devPort and devUiPort must differ (both ${d.devPort})`);
  return problems;
}
