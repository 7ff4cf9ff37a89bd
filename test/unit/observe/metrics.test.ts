// What the worker makes of the workflows' sink events, a job watch's observations and HTTP requests:
// the right series move, and label values stay bounded (no ids).
import { readFileSync } from 'node:fs';
import { registry, routeLabel, stageOfJobName, observeSlurmRequest } from '../../../observe/metrics.js';
import { recordPipelineEvent, tandemSinks } from '../../../observe/sinks.js';
import { jobWatch } from '../../../observe/activity-metrics.js';
import { inputAttributes } from '../../../observe/interceptor.js';
import { loadObserveConfig } from '../../../config/worker.js';
import { ConfigError } from '../../../config/errors.js';
import { parseExposition, total } from '../../observe/scrape.js';

const snapshot = async () => parseExposition(await registry.metrics());

test('pipeline events become counters and stage histograms', async () => {
  const run = { tenant: 'unit-t', pipeline: 'unit-p' };
  const before = await snapshot();
  recordPipelineEvent({ kind: 'pipeline-started', ...run });
  recordPipelineEvent({ kind: 'stage-completed', ...run, stage: 'train', site: 'zurich', runtime: 'slurm', seconds: 42 });
  recordPipelineEvent({ kind: 'fence', ...run, stage: 'train', site: 'zurich', selfFenced: true });
  recordPipelineEvent({ kind: 'fence', ...run, stage: 'train', site: 'zurich' });
  recordPipelineEvent({ kind: 'compensation', ...run, action: 'cancel' });
  recordPipelineEvent({ kind: 'compensation-failed', ...run, action: 'something-new' });
  recordPipelineEvent({ kind: 'pipeline-failed', ...run, deadline: true });
  const after = await snapshot();
  const moved = (n: string, m: Record<string, string> = {}) => total(after, n, m) - total(before, n, m);
  expect(moved('tandem_pipelines_started_total', run)).toBe(1);
  expect(moved('tandem_pipelines_failed_total', { ...run, reason: 'deadline' })).toBe(1);
  expect(moved('tandem_stage_duration_seconds_count', { stage: 'train', site: 'zurich', runtime: 'slurm', outcome: 'completed' })).toBe(1);
  expect(moved('tandem_stage_duration_seconds_sum', { stage: 'train', site: 'zurich' })).toBe(42);
  expect(moved('tandem_stage_duration_seconds_bucket', { stage: 'train', site: 'zurich', le: '30' })).toBe(0);
  expect(moved('tandem_stage_duration_seconds_bucket', { stage: 'train', site: 'zurich', le: '60' })).toBe(1);
  expect(moved('tandem_fences_total', { site: 'zurich' })).toBe(2);
  expect(moved('tandem_self_fence_resubmits_total', { site: 'zurich' })).toBe(1);
  expect(moved('tandem_compensations_total', { action: 'cancel' })).toBe(1);
  expect(moved('tandem_compensations_failed_total', { action: 'other' })).toBe(1);
});

test('quota gauges are in base units; Argo phases outside the known set fold into "other"', async () => {
  const sinks = tandemSinks();
  const info = {} as never;
  sinks.tandemMetrics.quota.fn(info, { site: 'unit-site', tenant: 'acme', held: { cpus: 8, gpus: 2, memoryMB: 1024 }, quota: { gpus: 4, memoryMB: 2048 } });
  sinks.tandemMetrics.argoNode.fn(info, { type: 'Pod', phase: 'Succeeded', seconds: 3 });
  sinks.tandemMetrics.argoNode.fn(info, { type: 'Weird', phase: 'a-run-id-1234' });
  const s = await snapshot();
  expect(total(s, 'tandem_quota_held', { site: 'unit-site', resource: 'memory_bytes' })).toBe(1024 * 2 ** 20);
  expect(total(s, 'tandem_quota_limit', { site: 'unit-site', resource: 'gpus' })).toBe(4);
  expect(total(s, 'tandem_quota_limit', { site: 'unit-site', resource: 'cpus' })).toBe(0); // no limit: no series
  expect(total(s, 'tandem_argo_nodes_total', { type: 'other', phase: 'other' })).toBe(1);
  expect(sinks.tandemMetrics.quota.callDuringReplay).toBe(true); // a gauge: replay restores it
  expect(sinks.tandemMetrics.pipeline.callDuringReplay).toBe(false); // an event: replay must not count it again
});

test('a job watch counts each transition once, and the queue wait when the job leaves the queue', async () => {
  const before = await snapshot();
  let now = 1_000_000;
  const w = jobWatch({ name: 'tandem-wf-abc123-train-2', runtime: 'slurm', site: 'unit-watch' }, { scheduledAtMs: now, now: () => now });
  w.observe('PENDING');
  w.observe('PENDING');
  now += 90_000;
  w.observe('RUNNING');
  w.observe('COMPLETED');
  // A re-attached watch continues from the state its previous attempt heartbeated: nothing new to count.
  jobWatch({ name: 'tandem-wf-abc123-train-2', runtime: 'slurm', site: 'unit-watch' }, { lastState: 'COMPLETED', scheduledAtMs: 0 }).observe('COMPLETED');
  const after = await snapshot();
  const moved = (n: string, m: Record<string, string> = {}) => total(after, n, m) - total(before, n, m);
  expect(moved('tandem_job_transitions_total', { stage: 'train', runtime: 'slurm' })).toBe(3);
  expect(moved('tandem_job_transitions_total', { from: 'SUBMITTED', to: 'PENDING' })).toBe(1);
  expect(moved('tandem_stage_queue_wait_seconds_sum', { site: 'unit-watch' })).toBe(90);
  expect(moved('tandem_stage_queue_wait_seconds_count', { site: 'unit-watch' })).toBe(1);
});

test('label helpers keep ids out of labels', async () => {
  expect(routeLabel('/compute/daint/jobs/4711')).toBe('/compute/daint/jobs/{id}');
  expect(routeLabel('/slurm/v0.0.41/job/123?x=1')).toBe('/slurm/v0.0.41/job/{id}');
  expect(stageOfJobName('tandem-wf-1-a1b2c3-preprocess-1')).toBe('preprocess');
  expect(stageOfJobName('something-else')).toBe('other');
  expect(inputAttributes([{ ref: { site: 'zurich', name: 'tandem-x-train-3' } }])).toEqual({ site: 'zurich', stage: 'train', jobAttempt: 3 });
  observeSlurmRequest('firecrest', 'GET', '/compute/daint/jobs/98765', performance.now(), 503, true);
  const s = await snapshot();
  expect(total(s, 'tandem_slurm_observation_failures_total', { api: 'firecrest', status: '503' })).toBe(1);
  expect([...s.keys()].some((k) => k.includes('98765'))).toBe(false);
});

describe('TANDEM_METRICS_* and TANDEM_LOG_* (config/worker.ts)', () => {
  test('off unless a port is set; loopback and the next port for the SDK by default', () => {
    expect(loadObserveConfig({})).toEqual({ metrics: undefined, metricsHost: '127.0.0.1', logFormat: 'text', logLevel: undefined });
    expect(loadObserveConfig({ TANDEM_METRICS_PORT: '9464', TANDEM_LOG_FORMAT: 'json', TANDEM_LOG_LEVEL: 'debug' })).toEqual({ metrics: { host: '127.0.0.1', port: 9464, sdkPort: 9465 }, metricsHost: '127.0.0.1', logFormat: 'json', logLevel: 'DEBUG' });
    expect(loadObserveConfig({ TANDEM_METRICS_PORT: '9464', TANDEM_METRICS_SDK_PORT: '9000', TANDEM_METRICS_HOST: '::1' }).metrics).toEqual({ host: '::1', port: 9464, sdkPort: 9000 });
  });

  test('bad values are named, all at once', () => {
    const bad = () => loadObserveConfig({ TANDEM_METRICS_PORT: '99999', TANDEM_METRICS_HOST: 'not a host', TANDEM_LOG_FORMAT: 'xml' });
    expect(bad).toThrow(ConfigError);
    const message = (() => { try { bad(); } catch (e) { return (e as Error).message; } })()!;
    for (const v of ['TANDEM_METRICS_PORT=99999', 'TANDEM_METRICS_HOST=not a host', 'TANDEM_LOG_FORMAT=xml']) expect(message).toContain(v);
    expect(() => loadObserveConfig({ TANDEM_METRICS_PORT: '9464', TANDEM_METRICS_SDK_PORT: '9464' })).toThrow(/must differ from TANDEM_METRICS_PORT/);
    expect(() => loadObserveConfig({ TANDEM_METRICS_SDK_PORT: '9465' })).toThrow(/needs TANDEM_METRICS_PORT/);
  });
});

test('the deploy stage\'s site is its runtime, never its endpoint URL (a random port made a new series every run)', async () => {
  const run = { tenant: 'unit-t', pipeline: 'unit-site-url' };
  const before = await snapshot();
  for (const port of [41935, 36775]) recordPipelineEvent({ kind: 'stage-completed', ...run, stage: 'deploy', site: `http://127.0.0.1:${port}`, runtime: 'local', seconds: 1 });
  recordPipelineEvent({ kind: 'stage-completed', ...run, stage: 'deploy', site: 'https://chat.example/v1', seconds: 1 });
  const after = await snapshot();
  const moved = (m: Record<string, string>) => total(after, 'tandem_stage_duration_seconds_count', m) - total(before, 'tandem_stage_duration_seconds_count', m);
  expect(moved({ stage: 'deploy', site: 'local', runtime: 'local' })).toBe(2);
  expect(moved({ stage: 'deploy', site: 'endpoint' })).toBe(1);
  expect([...after.keys()].filter((k) => k.startsWith('tandem_stage_duration_seconds_count{') && /site="[a-z]+:\/\//.test(k))).toEqual([]);
});

test('tandem_build_info names the package version and Node.js version', async () => {
  const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  expect(total(await snapshot(), 'tandem_build_info', { version, node: process.versions.node })).toBe(1);
});
