// Every metric a Tandem worker exports (prom-client), with its help text, in one registry of its own
// (not prom-client's global one, so an embedding program's metrics and Tandem's stay apart).
//
// Conventions (https://prometheus.io/docs/practices/naming/): base units (seconds, bytes), counters end
// in `_total`, and labels have bounded values only: tenants, pipeline names, stages, sites, runtimes,
// states, phases, activity types — never a workflow id, run id, job id or path (those are in the logs).
// Values outside a known set are folded into "other" by `bounded()`, so a misbehaving caller cannot
// grow a series per run.
import { Counter, Gauge, Histogram, Registry, Summary, collectDefaultMetrics } from 'prom-client';
import { tandemVersion } from '../config/version.js';

export const registry = new Registry();
// Node's own process metrics (CPU, memory, event-loop lag, GC) under the same endpoint.
collectDefaultMetrics({ register: registry, prefix: 'tandem_' });

/** Durations from milliseconds (an HTTP call) to days (a queued Slurm job, a training stage). */
const DURATION_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 12 * 3600, 24 * 3600, 72 * 3600];
/** HTTP requests and placement decisions: milliseconds to tens of seconds. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Checkpoint sizes, 1 KiB … 1 TiB in factors of 8. */
const SIZE_BUCKETS = Array.from({ length: 11 }, (_, i) => 1024 * 8 ** i);

const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) => new Counter<L>({ name, help, labelNames, registers: [registry] });
const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[]) => new Gauge<L>({ name, help, labelNames, registers: [registry] });
const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) => new Histogram<L>({ name, help, labelNames, buckets, registers: [registry] });

export const metrics = {
  // ---- pipelines (workflow sinks: observe/sinks.ts)
  pipelinesStarted: counter('tandem_pipelines_started_total', 'Pipeline runs started, by tenant and pipeline name.', ['tenant', 'pipeline']),
  pipelinesCompleted: counter('tandem_pipelines_completed_total', 'Pipeline runs that completed (model serving, smoke test passed).', ['tenant', 'pipeline']),
  pipelinesFailed: counter('tandem_pipelines_failed_total', 'Pipeline runs that failed (after their compensations ran); reason is failed or deadline.', ['tenant', 'pipeline', 'reason']),
  pipelinesCancelled: counter('tandem_pipelines_cancelled_total', 'Pipeline runs cancelled by a user (after their compensations ran).', ['tenant', 'pipeline']),
  stageDuration: histogram('tandem_stage_duration_seconds', 'Wall time of a pipeline stage from start to completion or failure, in workflow time; site "none" where the stage has no job.', ['stage', 'site', 'runtime', 'outcome'], DURATION_BUCKETS),
  stageRetries: counter('tandem_stage_retries_total', 'Job retries scheduled by a stage retry policy.', ['stage']),
  failovers: counter('tandem_failovers_total', 'Training failovers away from a site (tuning.failover).', ['from_site']),
  fences: counter('tandem_fences_total', 'Fencing actions on a training job at a site: cancel at the old site, lease revoked, or the job stopped itself.', ['site']),
  selfFenceResubmits: counter('tandem_self_fence_resubmits_total', 'Training jobs that stopped themselves because their lease was not renewed, and were resubmitted.', ['site']),
  preemptions: counter('tandem_preemptions_total', 'Preemption entries in run timelines (this run preempted another, or was preempted).', ['stage']),
  compensations: counter('tandem_compensations_total', 'Saga compensations that ran successfully, by action (cancel, release, withdraw, rollback, teardown, ...).', ['action']),
  compensationsFailed: counter('tandem_compensations_failed_total', 'Saga compensations that failed (the remaining ones still ran).', ['action']),
  quotaWaits: counter('tandem_quota_waits_total', 'Stages that had to wait for a tenant quota at a site.', ['tenant', 'site']),
  argoNodes: counter('tandem_argo_nodes_total', 'Argo workflow nodes that reached a final phase, by node type and phase.', ['type', 'phase']),
  argoNodeDuration: histogram('tandem_argo_node_duration_seconds', 'Duration of Argo Pod nodes from start to final phase, in workflow time.', ['phase'], DURATION_BUCKETS),
  quotaHeld: gauge('tandem_quota_held', 'Resources a tenant holds at a site (its ledger after the last admit or release); resource is cpus, gpus or memory_bytes.', ['tenant', 'site', 'resource']),
  quotaLimit: gauge('tandem_quota_limit', 'The tenant\'s quota at a site (TANDEM_QUOTAS_FILE); absent for resources without a limit.', ['tenant', 'site', 'resource']),

  // ---- jobs (activities/index.ts awaitJob)
  jobTransitions: counter('tandem_job_transitions_total', 'Job state changes a watch observed (from SUBMITTED on its first observation).', ['stage', 'runtime', 'from', 'to']),
  queueWait: histogram('tandem_stage_queue_wait_seconds', 'Time a stage\'s job waited in its backend\'s queue: from the watch being scheduled (right after submission) to the first running or final state observed.', ['stage', 'site', 'runtime'], DURATION_BUCKETS),

  // ---- placement (activities/placement.ts)
  placementDecisions: counter('tandem_placement_decisions_total', 'Placement decisions, by outcome (start, preempt, reserve, reject) and queue-order policy.', ['outcome', 'policy']),
  placementLatency: histogram('tandem_placement_decision_seconds', 'Time to decide a placement, gathering the inventory included.', ['policy'], LATENCY_BUCKETS),
  inventoryUnavailable: counter('tandem_placement_inventory_unavailable_total', 'Inventory sources placement could not read (their sites were left out of the decision).', ['source']),

  // ---- checkpoints (activities/index.ts catalogCheckpoint)
  checkpointAge: histogram('tandem_checkpoint_age_seconds', 'Age of the checkpoint the checkpoint stage catalogued, at cataloguing.', ['site'], DURATION_BUCKETS),
  checkpointSize: histogram('tandem_checkpoint_size_bytes', 'Size of the checkpoint the checkpoint stage catalogued.', ['site'], SIZE_BUCKETS),
  checkpointVerifyFailures: counter('tandem_checkpoint_verify_failures_total', 'Checkpoints skipped because verification failed (newer than the one catalogued).', ['site']),

  // ---- serving (activities: deployModel, awaitReadiness, Kubernetes serving)
  deploymentRevisions: counter('tandem_deployment_revisions_total', 'Model deployment revisions rolled out, adopted or rolled back.', ['runtime', 'action']),
  gateResults: counter('tandem_gate_results_total', 'Readiness gate results of model deployments (health, models, completion).', ['gate', 'result']),

  // ---- Slurm APIs (backends/slurm/firecrest-client.ts, slurmrestd-client.ts)
  slurmRequests: counter('tandem_slurm_requests_total', 'HTTP requests to FirecREST or slurmrestd, by API, method, route and status (HTTP code, or "error" for transport failures).', ['api', 'method', 'route', 'status']),
  slurmRequestDuration: histogram('tandem_slurm_request_duration_seconds', 'Latency of HTTP requests to FirecREST or slurmrestd.', ['api', 'method', 'route'], LATENCY_BUCKETS),
  slurmObservationFailures: counter('tandem_slurm_observation_failures_total', 'Requests that could not observe the cluster (401/408/424/429/5xx, timeouts, refused): never a job failure.', ['api', 'status']),

  // ---- running now (observe/in-flight.ts)
  trainingStep: gauge('tandem_training_step', 'The last step a running training job reported to its watch on this worker; the series goes when the job ends. Runs of one pipeline at one site at once share a series.', ['tenant', 'pipeline', 'stage', 'site']),
  trainingSteps: gauge('tandem_training_steps', 'The step count a running training job trains to (its total), beside tandem_training_step.', ['tenant', 'pipeline', 'stage', 'site']),
  trainingLoss: gauge('tandem_training_loss', 'The last training loss a running training job reported to its watch on this worker; the series goes when the job ends.', ['tenant', 'pipeline', 'stage', 'site']),

  // ---- activities (observe/interceptor.ts)
  activityDuration: histogram('tandem_activity_duration_seconds', 'Duration of activity executions on this worker, by activity type and outcome (completed, failed, cancelled).', ['activity', 'outcome'], DURATION_BUCKETS),
};

/** The visibility counts behind the two gauges below (observe/in-flight.ts sets it from the worker's connection). */
type InFlightReader = () => Promise<{ byStatus: Map<string, number>; stages: Map<string, number> }> | undefined;
let inFlight: InFlightReader | undefined;
export function setInFlightReader(r: InFlightReader | undefined): void {
  inFlight = r;
}

/** Pipelines of the worker's task queue by status, read from visibility at scrape time; a failed read leaves them out of that scrape. */
export const pipelinesByStatus = new Gauge({
  name: 'tandem_pipelines',
  help: "Pipeline runs on this worker's task queue by status, from Temporal visibility (status Running: in flight). Every worker of the queue reports the same: use max().",
  labelNames: ['status'],
  registers: [registry],
  async collect() {
    this.reset();
    const c = await inFlight?.()?.catch(() => undefined);
    if (c) for (const [status, n] of c.byStatus) this.set({ status }, n);
  },
});

/** Running pipelines of the worker's task queue by the stage they are in. */
export const stagesRunning = new Gauge({
  name: 'tandem_stages_running',
  help: "Running pipeline runs of this worker's task queue by the stage they are in (the TandemStage search attribute), from Temporal visibility. Every worker of the queue reports the same: use max().",
  labelNames: ['stage'],
  registers: [registry],
  async collect() {
    this.reset();
    const c = await inFlight?.()?.catch(() => undefined);
    if (c) for (const [stage, n] of c.stages) this.set({ stage }, n);
  },
});

/** `tandem_build_info{version, node} 1`: which Tandem and Node a worker runs, to join on in dashboards. */
export const buildInfo = gauge('tandem_build_info', 'Always 1; the labels say which Tandem version and Node.js version this process runs.', ['version', 'node']);
buildInfo.set({ version: tandemVersion(), node: process.versions.node }, 1);

export type TandemMetrics = typeof metrics;

/** Every metric name this module exports, for the dashboard consistency test and the README. */
export function metricNames(): string[] {
  return registry.getMetricsAsArray().map((m) => (m as unknown as { name: string }).name);
}

/** Every series name a scrape shows: histograms as `_bucket`, `_sum`, `_count`, summaries as themselves, `_sum`, `_count`. */
export function seriesNames(): Set<string> {
  const out = new Set<string>();
  for (const m of registry.getMetricsAsArray()) {
    const name = (m as unknown as { name: string }).name;
    if (m instanceof Histogram) for (const s of ['_bucket', '_sum', '_count']) out.add(name + s);
    else if (m instanceof Summary) for (const s of ['', '_sum', '_count']) out.add(name + s);
    else out.add(name);
  }
  return out;
}

/** A label value from a known set, or "other": labels stay bounded whatever a caller passes. */
export function bounded(value: string | undefined, known: readonly string[], fallback = 'none'): string {
  if (value === undefined || value === '') return fallback;
  return known.includes(value) ? value : 'other';
}

/** A free-form label value (site, tenant, pipeline name): operator-chosen, so bounded by configuration;
 *  cut to a sane length and stripped of anything that is not a name character. */
export function nameLabel(value: string | undefined, fallback = 'none'): string {
  if (value === undefined || value === '') return fallback;
  return value.replace(/[^A-Za-z0-9_.:/-]/g, '_').slice(0, 64);
}

/**
 * A `site` label: the site's name, never an address. A URL (the deploy stage's endpoint, whose random
 * port made a new series every run) becomes its runtime (`local`, `kubernetes`), else `endpoint`.
 */
export function siteLabel(value: string | undefined, runtime?: string): string {
  if (value && /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return runtime === 'local' || runtime === 'kubernetes' || runtime === 'slurm' ? runtime : 'endpoint';
  return nameLabel(value);
}

const STAGE_NAMES = ['preprocess', 'train', 'checkpoint', 'deploy'] as const;
export const stageLabel = (stage: string | undefined) => bounded(stage, STAGE_NAMES);
export const runtimeLabel = (runtime: string | undefined) => bounded(runtime, ['local', 'slurm', 'kubernetes', 'auto']);

/** The stage a job belongs to, from its deterministic name (`tandem-…-<stage>-<attempt>`). */
export function stageOfJobName(name: string): string {
  const m = /-(preprocess|train)-\d+$/.exec(name);
  return m ? m[1]! : 'other';
}

/** An HTTP route without its identifiers: `/compute/daint/jobs/4711` → `/compute/daint/jobs/{id}`. */
export function routeLabel(path: string): string {
  return path
    .split('?')[0]!
    .split('/')
    .map((seg) => (/^\d+$/.test(seg) || /^[0-9a-f-]{16,}$/i.test(seg) ? '{id}' : seg))
    .join('/')
    .slice(0, 80);
}

/** One HTTP request to a Slurm API, however it ended (`status` undefined: a transport failure). */
export function observeSlurmRequest(api: 'firecrest' | 'slurmrestd', method: string, path: string, startedAt: number, status: number | undefined, observationFailure: boolean): void {
  const route = routeLabel(path);
  const s = status === undefined ? 'error' : String(status);
  metrics.slurmRequests.inc({ api, method, route, status: s });
  metrics.slurmRequestDuration.observe({ api, method, route }, (performance.now() - startedAt) / 1000);
  if (observationFailure) metrics.slurmObservationFailures.inc({ api, status: s });
}

/** `tandem_quota_held` / `tandem_quota_limit` in base units: memory in bytes, not MB. */
export function setQuota(site: string, tenant: string, held: { cpus: number; gpus: number; memoryMB: number }, quota: Partial<{ cpus: number; gpus: number; memoryMB: number }>): void {
  const labels = { tenant: nameLabel(tenant), site: nameLabel(site) };
  metrics.quotaHeld.set({ ...labels, resource: 'cpus' }, held.cpus);
  metrics.quotaHeld.set({ ...labels, resource: 'gpus' }, held.gpus);
  metrics.quotaHeld.set({ ...labels, resource: 'memory_bytes' }, held.memoryMB * 2 ** 20);
  for (const [k, resource] of [['cpus', 'cpus'], ['gpus', 'gpus'], ['memoryMB', 'memory_bytes']] as const) {
    const v = quota[k];
    if (v !== undefined) metrics.quotaLimit.set({ ...labels, resource }, k === 'memoryMB' ? v * 2 ** 20 : v);
  }
}
