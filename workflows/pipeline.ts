// hybridPipeline: preprocess → train → checkpoint → deploy, durable on Temporal. Deterministic code
// only: every side effect is an activity, every undo sits on the saga stack.
import {
  ApplicationFailure,
  CancellationScope,
  defineQuery,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
  TemporalFailure,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { createActivities } from '../activities/index.js';
import type { KubernetesActivities } from '../activities/kubernetes.js';
import type { PlacementActivities } from '../activities/placement.js';
import type { RecoveryActivities } from '../activities/recovery.js';
import type { Deployment, JobRef, JobStatus, ReadinessResult } from '../activities/types.js';
import type { JobRequest } from '../placement/types.js';
import type { Amount } from './ledger.js';
import { durationMs } from '../contract/duration.js';
import { DEFAULT_GRACE_MS, defaultLeaseMs, leaseProblem } from '../contract/failover.js';
import { classifyJobState } from '../contract/outcome.js';
import { FAILURES, NON_RETRYABLE_TYPES } from '../contract/failures.js';
import { STAGES, type PipelineSpec, type RetryOverride, type Runtime, type StageName } from '../contract/pipeline.js';
import type { PipelineResult, PipelineStatus, StageState, TimelineEntry } from '../contract/status.js';
import { SA_SITE, SA_STAGE } from '../contract/search-attributes.js';
import { Saga } from './saga.js';

type Activities = ReturnType<typeof createActivities> & KubernetesActivities & PlacementActivities & RecoveryActivities;

export interface PipelineTuning {
  /** How soon a crashed worker's polling activity is handed to another worker. */
  heartbeatTimeoutMs?: number;
  /** Upper bound of the job-status polling backoff. */
  pollMaxMs?: number;
  /** Cross-site failover of the train stage (the worker must serve the recovery activities). */
  failover?: FailoverTuning;
}

export interface FailoverTuning {
  /** Sites to use, in preference order (default: every site the worker has configured). */
  sites?: string[];
  /** How long a site may stay unobservable before the job is given up there (default 60 s). */
  graceMs?: number;
  /** The job's lease; it must expire well inside the grace window (default: half of it). */
  leaseTtlMs?: number;
  /** Failovers allowed before the stage fails (default 3). */
  maxFailovers?: number;
  /** How often to look for a healthy site when none is (default 30 s)… */
  waitIntervalMs?: number;
  /** … and for how long at most, within spec.deadline (default 30 min). */
  maxWaitMs?: number;
}

/** A run that continues another: it shares that run's data and checkpoints and skips reused stages. */
export interface ResumeInput {
  /** The workflow id of the run being resumed. */
  from: string;
  /** The run directory key of the original (its workflow id, or its own runKey if it was a resume). */
  runKey: string;
  /** Stages that completed in the original and whose outputs are reused as they are. */
  reuse: ('preprocess' | 'train')[];
}

export interface HybridPipelineInput {
  spec: PipelineSpec;
  tuning?: PipelineTuning;
  resume?: ResumeInput;
}

/** Patch ids, newest last; each has recorded histories on both sides in test/histories/. */
export const PATCHES = { searchAttributes: 'tandem-search-attributes', placement: 'tandem-placement', failover: 'tandem-failover', quota: 'tandem-quota', fenceOnFailover: 'tandem-fence-on-failover' } as const;

export const statusQuery = defineQuery<PipelineStatus>('status');
export const timelineQuery = defineQuery<TimelineEntry[]>('timeline');

const QUOTA_DEADLINE_MARGIN_MS = 2000;

const DEFAULT_RETRY = { maxAttempts: 3, initialInterval: '10s', backoffCoefficient: 2, maximumInterval: '5m' } as const;

/** A retry policy for observation failures inside one activity (never a new job). */
const activityRetry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 10, nonRetryableErrorTypes: NON_RETRYABLE_TYPES } as const;

/** Deterministic, and valid as a Slurm job name, Kubernetes object name and file name. */
export function jobName(workflowId: string, stage: StageName, attempt: number): string {
  const id = workflowId.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return `tandem-${id}-${stage}-${attempt}`;
}

function retryDelayMs(retry: Required<RetryOverride>, attempt: number): number {
  const base = durationMs(retry.initialInterval) * retry.backoffCoefficient ** (attempt - 1);
  return Math.min(base, durationMs(retry.maximumInterval));
}

export async function hybridPipeline({ spec, tuning = {}, resume }: HybridPipelineInput): Promise<PipelineResult> {
  const { workflowId } = workflowInfo();
  // Where this run's data and checkpoints live: its own id, or the original's when resuming.
  const runKey = resume?.runKey ?? workflowId;
  const heartbeatTimeout = tuning.heartbeatTimeoutMs ?? 30_000;
  const pollMaxMs = tuning.pollMaxMs ?? 64_000;
  const timeline: TimelineEntry[] = [];
  const stages = Object.fromEntries(STAGES.map((s) => [s, { status: 'pending', attempts: 0 } as StageState])) as Record<StageName, StageState>;
  const status: PipelineStatus = { workflowId, pipeline: spec.name, tenant: spec.tenant, phase: 'running', stages, resumedFrom: resume?.from };
  setHandler(statusQuery, () => status);
  setHandler(timelineQuery, () => timeline);

  const now = () => new Date().toISOString(); // workflow time: deterministic on replay
  const record = (e: Omit<TimelineEntry, 'at'>) => timeline.push({ at: now(), ...e });
  const saga = new Saga();

  const short = proxyActivities<Activities>({ startToCloseTimeout: '2m', retry: activityRetry });

  function checkDeadline(stage: StageName): void {
    if (spec.deadline && Date.now() > Date.parse(spec.deadline)) {
      throw ApplicationFailure.create({ ...FAILURES.JobFailed, type: 'DeadlineExceeded', message: `deadline ${spec.deadline} passed before stage ${stage} could start` });
    }
  }

  function startStage(stage: StageName): StageState {
    checkDeadline(stage);
    status.stage = stage;
    const st = stages[stage];
    st.status = 'running';
    st.attempts = Math.max(st.attempts, 1);
    st.startedAt = now();
    if (patched(PATCHES.searchAttributes)) upsertSearchAttributes([{ key: SA_STAGE, value: stage }]);
    record({ kind: 'stage-started', stage, message: `${stage} started` });
    return st;
  }

  function finishStage(stage: StageName, message: string): void {
    stages[stage].status = 'completed';
    stages[stage].finishedAt = now();
    record({ kind: 'stage-completed', stage, message });
  }

  /** The stage as the placement engine sees it. */
  function stageJob(stage: 'preprocess' | 'train', name: string): JobRequest {
    const r = spec.stages[stage].resources;
    return {
      id: name,
      type: stage === 'train' ? (r.gpusPerNode > 0 ? 'ai-training' : 'hpc-mpi') : 'hybrid',
      tenant: spec.tenant,
      qos: spec.qos,
      priority: spec.priority,
      submit: Date.now() / 1000,
      count: r.nodes * r.tasksPerNode,
      per: { cpus: r.cpusPerTask, gpus: r.gpusPerNode / r.tasksPerNode, memoryMB: r.memoryMB / r.tasksPerNode },
      // Slurm puts tasksPerNode ranks on each of `nodes` nodes: never more on one.
      maxPerNode: r.tasksPerNode,
      walltime: durationMs(r.walltime) / 1000,
      deadline: spec.deadline ? Date.parse(spec.deadline) / 1000 : undefined,
      checkpointable: stage === 'train',
    };
  }

  /** What a stage's job holds while it runs, as the quota ledger counts it. */
  function amountOf(stage: 'preprocess' | 'train'): Amount {
    const r = spec.stages[stage].resources;
    return { cpus: r.nodes * r.tasksPerNode * r.cpusPerTask, gpus: r.nodes * r.gpusPerNode, memoryMB: r.nodes * r.memoryMB };
  }

  /** The site whose quota ledger holds each stage's resources (only stages with a quota there). */
  const holds: Partial<Record<'preprocess' | 'train', string>> = {};
  const holdIdOf = (stage: 'preprocess' | 'train') => `${workflowId}/${stage}`;

  /**
   * Books the stage's resources against its tenant's quota at the site its job goes to, waiting (with
   * backoff, within the deadline) while the tenant's other stages hold the rest. A hold that moves to
   * another site (placement, failover) is released at the old one.
   */
  async function holdQuota(stage: 'preprocess' | 'train', runtime: Runtime, site?: string): Promise<void> {
    if (!patched(PATCHES.quota)) return;
    const holdId = holdIdOf(stage);
    const amount = amountOf(stage);
    const waitStart = Date.now();
    for (let round = 0; ; round++) {
      const r = await short.admitQuota({ holdId, tenant: spec.tenant, stage, runtime, site, ...amount });
      if (r.admitted) {
        if (holds[stage] && holds[stage] !== r.site) await releaseQuota(stage);
        if (r.managed && !holds[stage]) {
          holds[stage] = r.site;
          saga.push({ id: `release-${holdId}@${r.site}`, description: `release ${stage}'s quota hold at ${r.site}`, run: () => short.releaseQuota({ site: r.site, holdId }).then(() => undefined) });
          record({ kind: 'quota', stage, site: r.site, message: `holding ${amounts(amount)} of tenant ${spec.tenant}'s quota at ${r.site} (${amounts(r.usage)} in use of ${amounts(r.quota)})` });
        }
        return;
      }
      const waited = Math.round((Date.now() - waitStart) / 1000);
      if (r.never) throw ApplicationFailure.create({ ...FAILURES.QuotaExceeded, message: `${stage}: ${r.reason}` });
      // Give up a little before the deadline, so that the run fails with this reason rather than
      // with the execution timeout the SDK sets at the deadline.
      const left = spec.deadline ? Date.parse(spec.deadline) - QUOTA_DEADLINE_MARGIN_MS - Date.now() : Infinity;
      if (left <= 0) throw ApplicationFailure.create({ ...FAILURES.QuotaExceeded, message: `${stage}: no room in tenant ${spec.tenant}'s quota at ${r.site} before the deadline ${spec.deadline} (waited ${waited}s): ${r.reason}` });
      if (round === 0) record({ kind: 'quota-wait', stage, site: r.site, message: `waiting for quota at ${r.site}: ${r.reason}` });
      await sleep(Math.min(r.retryIntervalMs * 2 ** round, r.retryIntervalMs * 10, left));
    }
  }

  async function releaseQuota(stage: 'preprocess' | 'train'): Promise<void> {
    const site = holds[stage];
    if (!site) return;
    delete holds[stage];
    const holdId = holdIdOf(stage);
    await short.releaseQuota({ site, holdId });
    saga.discard(`release-${holdId}@${site}`);
    record({ kind: 'quota', stage, site, message: `released ${stage}'s quota hold at ${site}` });
  }

  /** Asks the placement engine where the job fits (recorded in history and the timeline); a job no
   *  site can ever run fails here, before anything is submitted. */
  async function place(stage: 'preprocess' | 'train', name: string, attempt: number): Promise<string | undefined> {
    const { decision, unavailable } = await short.placeJob({ job: stageJob(stage, name) });
    const where = 'placement' in decision && decision.placement ? ` on ${decision.placement.site}/${decision.placement.cluster}/${decision.placement.partition}` : '';
    record({ kind: 'placement', stage, attempt, site: 'placement' in decision ? decision.placement?.site : undefined, message: `${decision.kind}${where}: ${decision.explanation}${unavailable.length ? ` (unobserved: ${unavailable.map((u) => u.source).join(', ')})` : ''}` });
    if (decision.kind === 'reject') throw ApplicationFailure.create({ type: 'PlacementRejected', nonRetryable: true, message: `no configured site can run the ${stage} stage: ${decision.explanation}` });
    return 'placement' in decision ? decision.placement?.site : undefined;
  }

  /** Submit → await → classify, with job-level retries per the stage's policy. */
  async function runJobStage(stage: 'preprocess' | 'train', params: Record<string, string | number>): Promise<{ ref?: JobRef; final?: JobStatus; attempts: number }> {
    const cfg = spec.stages[stage];
    if (resume?.reuse.includes(stage)) {
      startStage(stage);
      Object.assign(stages[stage], { attempts: 0 });
      record({ kind: 'stage-reused', stage, message: `reused the output of ${resume.from}'s ${stage} stage` });
      return { attempts: 0 };
    }
    const retry = { ...DEFAULT_RETRY, ...spec.retry, ...cfg.retry } as Required<RetryOverride>;
    const walltime = durationMs(cfg.resources.walltime);
    const watch = proxyActivities<Activities>({
      // The job's walltime bounds one watch; the margin covers queueing on a busy site.
      startToCloseTimeout: walltime + 3_600_000,
      heartbeatTimeout,
      retry: { initialInterval: '1s', maximumInterval: '30s', nonRetryableErrorTypes: NON_RETRYABLE_TYPES }, // unlimited: the job is watched until it ends
    });
    const st = startStage(stage);
    // Runs that have this patch may fail over across sites when launched with tuning.failover.
    if (stage === 'train' && patched(PATCHES.failover) && tuning.failover) return runTrainWithFailover(tuning.failover, st, params, retry, watch);
    for (let attempt = 1; ; attempt++) {
      st.attempts = attempt;
      const name = jobName(workflowId, stage, attempt);
      const site = cfg.runtime === 'auto' && patched(PATCHES.placement) ? await place(stage, name, attempt) : undefined;
      await holdQuota(stage, cfg.runtime, site);
      const ref = await short.submitJob({ runKey, stage, name, runtime: cfg.runtime, site, command: cfg.command, env: cfg.env, resources: cfg.resources, params, kubernetes: cfg.kubernetes });
      Object.assign(st, { jobId: ref.jobId, runtime: ref.runtime, site: ref.site, status: 'running' });
      if (patched(PATCHES.searchAttributes)) upsertSearchAttributes([{ key: SA_SITE, value: ref.site }]);
      record({ kind: ref.adopted ? 'job-adopted' : 'job-submitted', stage, attempt, jobId: ref.jobId, runtime: ref.runtime, site: ref.site, message: `${ref.adopted ? 'adopted existing' : 'submitted'} ${ref.runtime} job ${ref.jobId}` });
      const undoId = `cancel-${ref.jobId}`;
      saga.push({ id: undoId, description: `cancel ${stage} job ${ref.jobId}`, run: () => short.cancelJob(ref) });
      const final = await watch.awaitJob({ ref, pollMaxMs });
      saga.discard(undoId); // a finished job has nothing left to cancel
      st.progress = final.progress;
      const outcome = classifyJobState(final.state);
      record({ kind: 'job-finished', stage, attempt, jobId: ref.jobId, state: final.state, message: `job ${ref.jobId} ended ${final.state}${final.reason ? ` (${final.reason})` : ''}` });
      if (outcome === 'success') {
        await releaseQuota(stage);
        return { ref, final, attempts: attempt };
      }
      const detail = `${stage} job ${ref.jobId} ended ${final.state}${final.reason ? `: ${final.reason}` : ''}${final.tail ? `\n--- last output ---\n${final.tail}` : ''}`;
      if (outcome === 'cancelled') throw ApplicationFailure.create({ ...FAILURES.JobCancelled, message: `${stage} job ${ref.jobId} was cancelled outside Tandem` });
      if (attempt >= retry.maxAttempts) {
        const f = outcome === 'infrastructure' ? FAILURES.InfrastructureFailed : FAILURES.JobFailed;
        throw ApplicationFailure.create({ ...f, message: `${detail}\n(gave up after ${attempt} attempt${attempt > 1 ? 's' : ''})`, details: [final] });
      }
      const delay = retryDelayMs(retry, attempt);
      st.status = 'retrying';
      record({ kind: 'retry-scheduled', stage, attempt, state: final.state, message: `${outcome === 'infrastructure' ? 'infrastructure failure' : 'job failure'}; attempt ${attempt + 1}/${retry.maxAttempts} in ${Math.round(delay / 1000)}s` });
      await sleep(delay);
    }
  }

  /**
   * The train stage across sites: choose a healthy site, stage the data and restore the newest valid
   * checkpoint there, submit under a lease, watch with a grace window; on NODE_FAIL / PREEMPTED /
   * BOOT_FAIL / LOST or a site unreachable beyond the grace window, fence the old job and fail over.
   * Job failures retry on the same site per the stage's policy; failovers are bounded separately.
   */
  async function runTrainWithFailover(fo: FailoverTuning, st: StageState, params: Record<string, string | number>, retry: Required<RetryOverride>, watch: typeof short): Promise<{ ref?: JobRef; final?: JobStatus; attempts: number }> {
    const cfg = spec.stages.train;
    const graceMs = fo.graceMs ?? DEFAULT_GRACE_MS;
    const leaseTtlMs = fo.leaseTtlMs ?? defaultLeaseMs(graceMs);
    const maxFailovers = fo.maxFailovers ?? 3;
    const waitIntervalMs = fo.waitIntervalMs ?? 30_000;
    const maxWaitMs = fo.maxWaitMs ?? 30 * 60_000;
    // The old job must be stopped (lease expired, plus the fence's 2 s SIGKILL grace) before the grace
    // window ends and a replacement may start elsewhere.
    const leaseIssue = leaseProblem(graceMs, leaseTtlMs);
    if (leaseIssue) throw ApplicationFailure.create({ ...FAILURES.InvalidRequest, message: leaseIssue });
    const staging = proxyActivities<Activities>({ startToCloseTimeout: '30m', heartbeatTimeout, retry: activityRetry });
    const fences = new CancellationScope();
    let failovers = 0;
    let leaseRestarts = 0;
    let jobFailures = 0;
    let exclude: string[] = [];
    let site: string | undefined;

    const failOver = (from: string, why: string) => {
      failovers++;
      if (failovers > maxFailovers) {
        throw ApplicationFailure.create({ ...FAILURES.InfrastructureFailed, message: `train: ${why}; gave up after ${maxFailovers} failover${maxFailovers === 1 ? '' : 's'}` });
      }
      record({ kind: 'failover', stage: 'train', site: from, message: `${why}; failover ${failovers}/${maxFailovers} away from ${from}` });
      exclude = [from];
      site = undefined;
    };

    async function chooseSite(attempt: number): Promise<string> {
      const waitStart = Date.now();
      // Healthy sites are ranked by placement on their live inventories (activities/recovery.ts).
      const job = stageJob('train', jobName(workflowId, 'train', attempt));
      for (let round = 0; ; round++) {
        let choice = await short.chooseSite({ exclude, sites: fo.sites, job });
        // Nothing else is healthy: the site that failed may still be the best place to resume.
        if (!choice.site && exclude.length) choice = await short.chooseSite({ exclude: [], sites: fo.sites, job });
        if (choice.site) {
          record({ kind: 'site-choice', stage: 'train', site: choice.site, message: `chose ${choice.site}: ${choice.probes.join('; ')}` });
          return choice.site;
        }
        const waited = Date.now() - waitStart;
        const deadline = spec.deadline ? Date.parse(spec.deadline) : Infinity;
        if (waited >= maxWaitMs || Date.now() + waitIntervalMs > deadline) {
          throw ApplicationFailure.create({ ...FAILURES.InfrastructureFailed, message: `no healthy site for the train stage after waiting ${Math.round(waited / 1000)}s (${choice.probes.join('; ')})${Date.now() + waitIntervalMs > deadline ? `; deadline ${spec.deadline}` : ''}` });
        }
        if (round === 0) record({ kind: 'site-wait', stage: 'train', message: `no healthy site (${choice.probes.join('; ')}); waiting, checking every ${Math.round(waitIntervalMs / 1000)}s` });
        await sleep(waitIntervalMs);
      }
    }

    try {
      for (let attempt = 1; ; attempt++) {
        st.attempts = attempt;
        const at = site ?? (await chooseSite(attempt));
        site = at;
        const staged = await staging.stageSite({ runKey, site: at });
        for (const k of staged.skipped) record({ kind: 'restore', stage: 'train', site: k.source, message: `skipped checkpoint ${k.path} at ${k.source}: ${k.reason}` });
        for (const u of staged.unreadable) record({ kind: 'restore', stage: 'train', message: `could not read checkpoints at ${u}` });
        record({
          kind: 'restore',
          stage: 'train',
          attempt,
          site: at,
          message: staged.step === undefined ? `no valid checkpoint anywhere: ${at} starts from step 0` : `resuming at ${at} from step ${staged.step} (${staged.source === at ? 'already there' : `copied from ${staged.source}, ${staged.bytes} bytes, verified`})${staged.staleCopiesRemoved ? `; removed ${staged.staleCopiesRemoved} unfinished copies` : ''}`,
        });
        const name = jobName(workflowId, 'train', attempt);
        await holdQuota('train', 'slurm', at);
        const ref = await short.submitAt({ site: at, leaseTtlMs, runKey, stage: 'train', name, runtime: 'slurm', command: cfg.command, env: cfg.env, resources: cfg.resources, params, kubernetes: cfg.kubernetes });
        Object.assign(st, { jobId: ref.jobId, runtime: ref.runtime, site: ref.site, status: 'running' });
        if (patched(PATCHES.searchAttributes)) upsertSearchAttributes([{ key: SA_SITE, value: ref.site }]);
        record({ kind: ref.adopted ? 'job-adopted' : 'job-submitted', stage: 'train', attempt, jobId: ref.jobId, runtime: ref.runtime, site: ref.site, message: `${ref.adopted ? 'adopted existing' : 'submitted'} slurm job ${ref.jobId} at ${ref.site} (lease ${Math.round(leaseTtlMs / 1000)}s)` });
        const undoId = `cancel-${ref.site}-${ref.jobId}`;
        saga.push({ id: undoId, description: `cancel train job ${ref.jobId} at ${ref.site}`, run: () => short.fenceJob({ ref }).then(() => undefined) });
        const w = await watch.watchAt({ ref, pollMaxMs, graceMs, leaseTtlMs, runKey });
        saga.discard(undoId);
        if (w.kind === 'unreachable') {
          if (w.progress) st.progress = w.progress;
          const why = `site ${at} unreachable for ${Math.round(w.forMs / 1000)}s while job ${ref.jobId} was ${w.lastState ?? 'unobserved'} at step ${w.progress?.step ?? '?'} (${w.error})`;
          const fence = await short.fenceJob({ ref });
          record({ kind: 'fence', stage: 'train', site: at, jobId: ref.jobId, message: fence.detail });
          if (!fence.fenced) {
            // The lease has already stopped the job; cancel its record once the site answers again.
            fences.run(() => staging.fenceWhenReachable({ ref })).then(
              (r) => record({ kind: 'fence', stage: 'train', site: at, jobId: ref.jobId, message: r.detail }),
              () => undefined,
            );
          }
          failOver(at, why);
          continue;
        }
        const final = w.status;
        st.progress = final.progress;
        const outcome = classifyJobState(final.state);
        record({ kind: 'job-finished', stage: 'train', attempt, jobId: ref.jobId, state: final.state, site: at, message: `job ${ref.jobId} at ${at} ended ${final.state}${final.reason ? ` (${final.reason})` : ''}` });
        if (w.selfFenced) {
          // Its site answered all along: nobody renewed the lease (the watch was between workers for
          // longer than the lease). The site is fine; resume there from the newest checkpoint.
          leaseRestarts++;
          if (leaseRestarts > maxFailovers) throw ApplicationFailure.create({ ...FAILURES.InfrastructureFailed, message: `train: job ${ref.jobId} at ${at} stopped itself ${leaseRestarts} times because its lease was not renewed; is a worker watching it? (lease ${Math.round(leaseTtlMs / 1000)}s, heartbeat timeout ${Math.round(heartbeatTimeout / 1000)}s)` });
          record({ kind: 'fence', stage: 'train', site: at, jobId: ref.jobId, message: `job ${ref.jobId} stopped itself: its lease was not renewed while ${at} answered; resubmitting at ${at} (${leaseRestarts}/${maxFailovers})` });
          continue;
        }
        if (outcome === 'success') {
          const home = await staging.collectCheckpoint({ runKey, site: at, keep: spec.stages.checkpoint.keep, keepEvery: spec.stages.checkpoint.keepEvery });
          record({ kind: 'restore', stage: 'train', site: at, message: `brought step ${home.step} home from ${at}${home.copied ? ' (verified copy)' : ' (already there)'}` });
          await releaseQuota('train');
          return { ref, final, attempts: attempt };
        }
        if (outcome === 'cancelled') throw ApplicationFailure.create({ ...FAILURES.JobCancelled, message: `train job ${ref.jobId} at ${at} was cancelled outside Tandem` });
        const detail = `train job ${ref.jobId} at ${at} ended ${final.state}${final.reason ? `: ${final.reason}` : ''}${final.tail ? `\n--- last output ---\n${final.tail}` : ''}`;
        if (outcome === 'infrastructure') {
          if (patched(PATCHES.fenceOnFailover)) {
            // An ended job can come back (a site that requeues after NODE_FAIL): revoke its lease and cancel it.
            const fence = await short.fenceJob({ ref, runKey });
            record({ kind: 'fence', stage: 'train', site: at, jobId: ref.jobId, message: `${fence.detail}; lease revoked` });
          }
          failOver(at, `job ${ref.jobId} ended ${final.state} at ${at}${final.reason ? ` (${final.reason})` : ''}`);
          continue;
        }
        jobFailures++;
        if (jobFailures >= retry.maxAttempts) throw ApplicationFailure.create({ ...FAILURES.JobFailed, message: `${detail}\n(gave up after ${jobFailures} failed job${jobFailures > 1 ? 's' : ''})`, details: [final] });
        const delay = retryDelayMs(retry, jobFailures);
        st.status = 'retrying';
        record({ kind: 'retry-scheduled', stage: 'train', attempt, state: final.state, site: at, message: `job failure; retrying at ${at} (${jobFailures + 1}/${retry.maxAttempts}) in ${Math.round(delay / 1000)}s` });
        await sleep(delay);
      }
    } finally {
      fences.cancel(); // background fences stop with the stage; the lease has stopped those jobs already
    }
  }

  record({ kind: 'pipeline-started', message: `pipeline ${spec.name} for tenant ${spec.tenant} (qos ${spec.qos})` });
  try {
    const pre = spec.stages.preprocess;
    await runJobStage('preprocess', { samples: pre.samples, features: pre.features, seed: pre.seed });
    finishStage('preprocess', 'data set ready');

    const tr = spec.stages.train;
    const train = await runJobStage('train', { steps: tr.steps, checkpoint_every: tr.checkpointEvery, learning_rate: tr.learningRate, step_delay_ms: tr.stepDelayMs });
    finishStage('train', train.final ? `trained ${train.final.progress?.step ?? tr.steps} steps in ${train.attempts} attempt(s)` : 'reused');

    startStage('checkpoint');
    const { verify, keep, keepEvery } = spec.stages.checkpoint;
    const ckpt = await short.catalogCheckpoint({ runKey, verify, keep, keepEvery });
    saga.push({ id: `withdraw-${ckpt.path}`, description: `withdraw checkpoint step ${ckpt.step} from the catalog`, run: () => short.withdrawCheckpoint({ runKey, path: ckpt.path }) });
    for (const s of ckpt.skipped) record({ kind: 'stage-started', stage: 'checkpoint', message: `skipped invalid checkpoint ${s.path}: ${s.reason}` });
    finishStage('checkpoint', `catalogued step ${ckpt.step} (${ckpt.path})`);

    const dep = spec.stages.deploy;
    const st = startStage('deploy');
    const model = dep.model ?? spec.name;
    const deployActs = proxyActivities<Activities>({
      // Starting a server or applying a Deployment takes seconds; the timeout is how long a worker
      // that died mid-call holds the stage up before another worker retries it.
      startToCloseTimeout: '1m',
      retry: { ...activityRetry, maximumAttempts: dep.retry?.maxAttempts ?? spec.retry?.maxAttempts ?? 3 },
    });
    const name = `${spec.name}-${workflowId}`.toLowerCase().replace(/[^a-z0-9-]+/g, '-').slice(0, 60).replace(/-+$/, '');
    const readinessTimeout = durationMs(dep.readinessTimeout);
    const gate = proxyActivities<Activities>({ startToCloseTimeout: readinessTimeout + 30_000, heartbeatTimeout, retry: { ...activityRetry, maximumAttempts: 3 } });
    const announce = (d: Deployment) => {
      Object.assign(st, { runtime: d.runtime, jobId: d.name, site: d.endpoint });
      record({ kind: d.adopted ? 'job-adopted' : 'job-submitted', stage: 'deploy', runtime: d.runtime, message: `serving ${model} at ${d.endpoint}` });
    };
    let deployment: Deployment;
    let ready: ReadinessResult;
    if (dep.runtime === 'kubernetes') {
      // A new revision of a vLLM Deployment: the previous one keeps serving until this one is ready,
      // and a failed rollout or gate rolls back to it (old histories never take this branch).
      const rev = await deployActs.k8sApplyServing({ runKey, pipeline: spec.name, name, model, checkpoint: ckpt.path, env: dep.env, kubernetes: dep.kubernetes });
      saga.push({ id: `undeploy-${name}`, description: `tear down deployment ${name}`, run: () => short.k8sTeardownServing({ namespace: rev.namespace, name }).then(() => undefined) });
      const rollout = proxyActivities<Activities>({ startToCloseTimeout: '30m', heartbeatTimeout, retry: { initialInterval: '1s', maximumInterval: '30s', nonRetryableErrorTypes: NON_RETRYABLE_TYPES } });
      try {
        deployment = await rollout.k8sAwaitRollout(rev);
        announce(deployment);
        ready = await gate.k8sGateServing({ deployment, prompt: dep.smokePrompt, timeoutMs: readinessTimeout });
      } catch (err) {
        if (!isCancellation(err)) {
          await CancellationScope.nonCancellable(() => rollout.k8sRollbackServing(rev));
          record({ kind: 'compensation', stage: 'deploy', message: `rolled back ${name} to its previous revision` });
          saga.discard(`undeploy-${name}`); // the previous revision serves again: keep it
        }
        throw err;
      }
    } else {
      deployment = await deployActs.deployModel({ runKey, name, runtime: dep.runtime, model, checkpoint: ckpt.path, command: dep.command, env: dep.env });
      saga.push({ id: `undeploy-${deployment.name}`, description: `tear down deployment ${deployment.name}`, run: () => short.undeployModel({ runtime: deployment.runtime, name: deployment.name }) });
      announce(deployment);
      ready = await gate.awaitReadiness({ deployment, prompt: dep.smokePrompt, timeoutMs: readinessTimeout });
    }
    finishStage('deploy', `ready: /health 200, /v1/models lists ${model}, smoke completion ok`);

    const result: PipelineResult = { pipeline: spec.name, model, endpoint: deployment.endpoint, checkpoint: { path: ckpt.path, step: ckpt.step }, completion: ready.completion, trainingAttempts: train.attempts };
    status.phase = 'completed';
    status.result = result;
    status.stage = undefined;
    record({ kind: 'pipeline-completed', message: `model ${model} serving at ${deployment.endpoint}` });
    return result;
  } catch (err) {
    const cancelled = isCancellation(err);
    const stage = status.stage;
    if (stage && stages[stage].status !== 'completed') {
      stages[stage].status = cancelled ? 'cancelled' : 'failed';
      stages[stage].error = errorMessage(err);
      stages[stage].finishedAt = now();
      if (!cancelled) record({ kind: 'stage-failed', stage, message: errorMessage(err) });
    }
    status.phase = 'compensating';
    await saga.compensate((c, error) => {
      record({ kind: error ? 'compensation-failed' : 'compensation', message: error ? `${c.description} failed: ${errorMessage(error)}` : c.description });
    });
    for (const s of STAGES) if (stages[s].status === 'completed' && (s === 'checkpoint' || s === 'deploy')) stages[s].status = 'compensated';
    status.phase = cancelled ? 'cancelled' : 'failed';
    status.error = errorMessage(err);
    record({ kind: cancelled ? 'pipeline-cancelled' : 'pipeline-failed', stage, message: cancelled ? 'cancelled; compensations done' : `failed at ${stage}: ${errorMessage(err)}` });
    // Bugs (non-Temporal errors) propagate unchanged so the workflow task retries after a fix.
    if (cancelled || !(err instanceof TemporalFailure)) throw err;
    const cause = err instanceof ApplicationFailure ? err : err.cause instanceof ApplicationFailure ? err.cause : undefined;
    throw ApplicationFailure.create({ type: cause?.type ?? 'StageFailed', nonRetryable: true, message: `stage ${stage ?? '(none)'} failed: ${errorMessage(err)}`, cause: err });
  }
}

function amounts(a: Partial<Amount>): string {
  const n = (v: number, unit: string) => `${v} ${unit}${v === 1 ? '' : 's'}`;
  const parts = [a.cpus && n(a.cpus, 'CPU'), a.gpus && n(a.gpus, 'GPU'), a.memoryMB && `${a.memoryMB} MB`].filter(Boolean);
  return parts.length ? parts.join(', ') : 'nothing';
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    // An ActivityFailure's own message is generic; the cause carries what went wrong.
    const cause = err.cause instanceof Error ? err.cause.message : undefined;
    return cause ?? err.message;
  }
  return String(err);
}
