// In-memory stand-ins for the pipeline's activities: they record every call so workflow tests can
// assert order, and each can be scripted to fail or to block until cancelled.
import { Context } from '@temporalio/activity';
import type { TandemActivities } from '../activities/index.js';
import type { JobRef, JobStatus } from '../contract/outcome.js';
import type { RecoveryActivities } from '../activities/recovery.js';
import { createQuotaActivities } from '../activities/quota.js';
import { failure } from '../contract/failures.js';
import type { QuotasFile } from '../contract/quotas.js';
import type { Routing } from '../contract/routing.js';

export interface FakeScript {
  /** Final job states per stage, consumed one per attempt (default COMPLETED). */
  jobStates?: Partial<Record<'preprocess' | 'train', JobStatus['state'][]>>;
  /** Make awaitJob for this stage block (heartbeating) until cancelled. */
  blockOn?: 'preprocess' | 'train';
  /** Block only the first job of that stage (other pipelines on the same fake run through). */
  blockOnce?: boolean;
  /** Make placement reject this stage's job. */
  rejectPlacement?: 'preprocess' | 'train';
  /** Make the readiness gate fail (every time, or only the first N times). */
  failGate?: boolean | number;
  /** The failover path's watch results, one per train job, before jobStates.train: a job that stopped
   *  itself (lease not renewed) or a site that stopped answering. */
  trainWatch?: ('self-fenced' | 'unreachable')[];
  /** fenceJob finds the site unreachable. */
  fenceFails?: boolean;
  /** Tenant quotas: holds go through the real quota activities and ledger (site "local"). */
  quotas?: QuotasFile;
  /** The site every job would run at is migrating with this routing (staged migration, Phase 2). */
  siteRouting?: { site: string; routing: Routing };
}

export function fakeActivities(script: FakeScript = {}) {
  const calls: string[] = [];
  const refs: JobRef[] = [];
  const states = { preprocess: [...(script.jobStates?.preprocess ?? [])], train: [...(script.jobStates?.train ?? [])] };
  const stageOf = (name: string) => (name.includes('-preprocess-') ? 'preprocess' : 'train');
  let started: () => void = () => {};
  let blockedJob: string | undefined;
  const blocked = new Promise<void>((r) => (started = r));

  const acts: TandemActivities = {
    ...createQuotaActivities(script.quotas, () => 'local'),
    // Jobs here run on the local runtime: no Slurm site, so never a migrating one unless scripted (not recorded in calls).
    async siteRouting() {
      return script.siteRouting;
    },
    async placeJob({ job }) {
      calls.push(`placeJob:${job.id}`);
      if (script.rejectPlacement && job.id.includes(`-${script.rejectPlacement}-`)) {
        return { decision: { kind: 'reject', jobId: job.id, reason: 'gpus', explanation: 'needs 8 GPUs per node; the largest node has 0' }, unavailable: [] };
      }
      return { decision: { kind: 'start', jobId: job.id, explanation: 'fits on local/host/local now', price: 1, placement: { site: 'local', cluster: 'host', partition: 'local', nodes: [{ node: 'host', slots: job.count, cpus: job.per.cpus, gpus: 0, memoryMB: job.per.memoryMB }], nvlinkDomains: 0, ibIslands: 1 } }, unavailable: [] };
    },
    async submitJob(input) {
      calls.push(`submitJob:${input.name}`);
      const ref: JobRef = { runtime: 'local', jobId: input.name, name: input.name, site: 'local', adopted: false };
      refs.push(ref);
      return ref;
    },
    async awaitJob({ ref }) {
      calls.push(`awaitJob:${ref.jobId}`);
      const stage = stageOf(ref.name);
      if (script.blockOn === stage && (!script.blockOnce || (blockedJob ??= ref.jobId) === ref.jobId)) {
        started();
        const ctx = Context.current();
        for (;;) {
          ctx.heartbeat({ state: 'RUNNING', progress: { step: 1, total: 10 } });
          await ctx.sleep(100); // throws CancelledFailure once the workflow is cancelled
        }
      }
      const state = states[stage].shift() ?? 'COMPLETED';
      return { jobId: ref.jobId, state, progress: stage === 'train' ? { step: 10, total: 10 } : undefined, reason: state === 'COMPLETED' ? undefined : 'scripted', tail: state === 'COMPLETED' ? undefined : 'Traceback: scripted failure' };
    },
    async cancelJob(ref) {
      calls.push(`cancelJob:${ref.jobId}`);
    },
    async catalogCheckpoint({ runKey }) {
      calls.push('catalogCheckpoint');
      return { runKey, path: '/ckpt/step-00000010', step: 10, job: 'j', site: 'local', created: '2026-01-01T00:00:00Z', skipped: [], removed: [] };
    },
    async withdrawCheckpoint() {
      calls.push('withdrawCheckpoint');
    },
    async deployModel(input) {
      calls.push('deployModel');
      return { runtime: 'local', name: input.name, endpoint: 'http://127.0.0.1:1', model: input.model, checkpoint: input.checkpoint, adopted: false };
    },
    async awaitReadiness() {
      calls.push('awaitReadiness');
      const gateCalls = calls.filter((c) => c === 'awaitReadiness').length;
      if (script.failGate === true || (typeof script.failGate === 'number' && gateCalls <= script.failGate)) throw failure('GateFailed', 'failed gate "models" (/v1/models answered 200 listing [])');
      return { completion: 'positive (p=0.9)', models: ['test'] };
    },
    async undeployModel() {
      calls.push('undeployModel');
    },
  };
  // The failover path (tuning.failover): two sites, the train job's states consumed as above.
  let checkpointStep: number | undefined;
  const watches = [...(script.trainWatch ?? [])];
  const recovery: RecoveryActivities = {
    async chooseSite({ exclude, sites = ['zurich', 'lugano'] }) {
      calls.push(`chooseSite:${exclude.join('+')}`);
      const site = sites.find((s) => !exclude.includes(s));
      return { site, probes: sites.map((s) => `${s}: ${exclude.includes(s) ? 'excluded' : 'healthy (scripted)'}`) };
    },
    async stageSite({ site }) {
      calls.push(`stageSite:${site}`);
      return { step: checkpointStep, source: checkpointStep === undefined ? undefined : 'zurich', copied: checkpointStep !== undefined, bytes: checkpointStep === undefined ? 0 : 1024, skipped: [], unreadable: [], staleCopiesRemoved: 0 };
    },
    async submitAt(input) {
      calls.push(`submitAt:${input.site}:${input.name}`);
      const ref: JobRef = { runtime: 'slurm', jobId: String(refs.length + 1), name: input.name, site: input.site, adopted: false };
      refs.push(ref);
      return ref;
    },
    async watchAt({ ref }) {
      calls.push(`watchAt:${ref.site}:${ref.jobId}`);
      const scripted = watches.shift();
      checkpointStep = 5;
      if (scripted === 'unreachable') return { kind: 'unreachable', forMs: 8000, error: 'connect ECONNREFUSED (scripted)', lastState: 'RUNNING', progress: { step: 5, total: 10 } };
      if (scripted === 'self-fenced') return { kind: 'ended', selfFenced: true, status: { jobId: ref.jobId, state: 'PREEMPTED', exitCode: 75, progress: { step: 5, total: 10 }, reason: 'self-fenced: its lease expired' } };
      const state = states.train.shift() ?? 'COMPLETED';
      checkpointStep = 5;
      return { kind: 'ended', status: { jobId: ref.jobId, state, progress: { step: state === 'COMPLETED' ? 10 : 5, total: 10 }, reason: state === 'COMPLETED' ? undefined : 'scripted' } };
    },
    async fenceJob({ ref, runKey }) {
      calls.push(`fenceJob:${ref.site}:${ref.jobId}${runKey ? ':revoke' : ''}`);
      if (script.fenceFails) return { fenced: false, detail: `site ${ref.site} did not answer (scripted); its lease stops the job` };
      return { fenced: true, detail: `cancelled job ${ref.jobId} at ${ref.site}` };
    },
    async fenceWhenReachable({ ref }) {
      calls.push(`fenceWhenReachable:${ref.jobId}`);
      return { fenced: true, detail: 'cancelled' };
    },
    async collectCheckpoint({ site }) {
      calls.push(`collectCheckpoint:${site}`);
      return { path: '/ckpt/step-00000010', step: 10, copied: true, skipped: [] };
    },
  };
  return { acts: { ...acts, ...recovery }, calls, refs, blocked };
}
