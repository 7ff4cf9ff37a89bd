// A job stage (preprocess, train): reused from a resumed run, or run as jobs where they are placed
// (with job-level retries), or for train with failover, followed across sites (failover.ts).
import { sleep } from '@temporalio/workflow';
import type { Victim } from '../../activities/placement.js';
import type { JobLabels } from '../../contract/job-labels.js';
import { durationMs } from '../../contract/duration.js';
import { failure } from '../../contract/failures.js';
import { watchJob } from './activity-options.js';
import type { PipelineRun } from './context.js';
import { runTrainWithFailover } from './failover.js';
import { runJobAttempts, type JobStageResult } from './job-loop.js';
import { stageJobName } from './job-names.js';
import { stageJob, stageParams, type JobStage } from './job-shape.js';
import { PATCHES } from './patches.js';
import { listenForPreemption, preemptVictims } from './preemption.js';
import { stageRetry } from './retry.js';
import { routedResources } from './routing.js';
import { onQueue, siteQueueOf } from './site-queues.js';

export async function runJobStage(run: PipelineRun, stage: JobStage): Promise<JobStageResult> {
  const { spec, resume } = run;
  const cfg = spec.stages[stage];
  const params = stageParams(spec, stage);
  if (resume?.reuse.includes(stage)) {
    run.startStage(stage);
    Object.assign(run.stages[stage], { attempts: 0 });
    run.record({ kind: 'stage-reused', stage, message: `reused the output of ${resume.from}'s ${stage} stage` });
    return { attempts: 0 };
  }
  const retry = stageRetry(spec, stage);
  const watchOptions = watchJob(durationMs(cfg.resources.walltime), run.tuning.heartbeatTimeoutMs);
  const watch = run.activities(watchOptions);
  const st = run.startStage(stage);
  // Another run's placement may preempt this stage's job (preemption.ts); registering adds no command.
  listenForPreemption(run);
  // Runs that have this patch may fail over across sites when launched with tuning.failover.
  if (stage === 'train' && run.has(PATCHES.failover) && run.tuning.failover) return runTrainWithFailover(run, run.tuning.failover, st, params, retry, watch);
  /** The site queue of the current attempt's job (site-queues.ts); undefined: the run's own queue. */
  let queue: string | undefined;
  return runJobAttempts(run, stage, st, retry, {
    failureNoun: 'attempt',
    site: () => undefined,
    async submit(attempt) {
      const name = stageJobName(run, stage, attempt);
      const placed = cfg.runtime === 'auto' && run.has(PATCHES.placement) ? await place(run, stage, name, attempt) : undefined;
      const site = placed?.site;
      // At a migrating site the partition is the pool the site's share routes this pipeline to.
      const resources = await routedResources(run, stage, attempt, cfg.runtime, site, cfg.resources);
      queue = siteQueueOf(run, stage, cfg.runtime, site);
      await run.quota.hold(stage, cfg.runtime, site, queue === undefined ? undefined : onQueue(run, queue));
      // Summaries label the activities in the Temporal UI's event history (user metadata, not compared on replay).
      const where = `${site ?? cfg.runtime}${resources.partition ? `/${resources.partition}` : ''}`;
      const ref = await onQueue(run, queue).submitJob.executeWithOptions({ summary: `${stage}: submit to ${where}` }, [{ runKey: run.runKey, stage, name, runtime: cfg.runtime, site, command: cfg.command, env: cfg.env, resources, params, kubernetes: cfg.kubernetes, labels: jobLabels(run, stage) }]);
      // Victims stop only once this job is queued at the site, so the room they free goes to it: cancelled
      // first, a victim's resubmission could reach the site's queue ahead of it and take the room back.
      if (placed?.victims.length) await preemptVictims(run, stage, attempt, placed.victims);
      return ref;
    },
    submittedNote: (ref) => `${ref.adopted ? 'adopted existing' : 'submitted'} ${ref.runtime} job ${ref.jobId}${queue === undefined ? '' : ` (site queue ${queue})`}`,
    undo: (ref) => {
      const at = onQueue(run, queue);
      return { id: `cancel-${ref.jobId}`, description: `cancel ${stage} job ${ref.jobId}`, done: `cancelled ${stage} job ${ref.jobId}`, run: () => at.cancelJob(ref) };
    },
    watch: async (ref) => ({ kind: 'ended', status: await (queue === undefined ? watch : onQueue(run, queue, watchOptions)).awaitJob.executeWithOptions({ summary: `${stage}: watch job ${ref.jobId}` }, [{ ref, pollMaxMs: run.tuning.pollMaxMs, run: { tenant: run.spec.tenant, pipeline: run.spec.name, stage } }]) }),
    retryNote: (outcome, failures, delayMs) => ({
      message: `${outcome === 'infrastructure' ? 'infrastructure failure' : 'job failure'}; attempt ${failures + 1}/${retry.maxAttempts} in ${Math.round(delayMs / 1000)}s`,
    }),
  });
}

/** What marks the job as this run's (its Slurm comment): placement preempts only jobs that carry it. */
function jobLabels(run: PipelineRun, stage: JobStage): JobLabels {
  return { run: run.workflowId, stage, priority: run.spec.priority, checkpointable: stage === 'train' };
}

/** A reservation is waited for in steps of at least this long, so a reservation that keeps sliding
 *  (its blockers outlive their estimates) re-places at a bounded rate… */
const RESERVATION_RECHECK_MIN_MS = 5_000;
/** … and of at most this long, so that blockers that end before their time limits (most do) free the
 *  job early instead of leaving the room idle until the estimate: about 12 placements an hour. */
const RESERVATION_RECHECK_MAX_MS = 5 * 60_000;

/**
 * Asks the placement engine where the job fits (recorded in history and the timeline); a job no site
 * can ever run fails here, before anything is submitted. Since PATCHES.placementActions the decision
 * is carried out: a reservation is waited for with a workflow timer and the job placed afresh when it
 * fires (never past spec.deadline: placed then, the engine rejects a job that can no longer finish),
 * and a preemption names its victims (other runs' checkpointable jobs), which the caller stops once
 * the job is submitted.
 * A timer rather than Slurm's --begin: every runtime has one, the re-placement sees what really
 * ended (estimates are only estimates) and may choose another site, and no pending job holds the
 * site's queue or the tenant's quota meanwhile.
 */
async function place(run: PipelineRun, stage: JobStage, name: string, attempt: number): Promise<{ site?: string; victims: Victim[] }> {
  if (!run.has(PATCHES.placementActions)) return { site: await placeOnce(run, stage, name, attempt), victims: [] };
  let last = '';
  for (;;) {
    const { decision, unavailable, summary, victims } = await run.short.placeJob.executeWithOptions({ summary: `${stage}: place attempt ${attempt}` }, [{ job: stageJob(run.spec, stage, name, Date.now()), run: run.workflowId }]);
    const site = 'placement' in decision ? decision.placement?.site : undefined;
    const text = summary ?? decision.explanation;
    // A reservation re-checked unchanged is not news: the timeline says it once.
    const key = `${decision.kind}/${site}/${decision.kind === 'reserve' ? decision.at : ''}`;
    if (key !== last) run.record({ kind: 'placement', stage, attempt, site, message: `${text}${unavailable.length ? ` (unobserved: ${unavailable.map((u) => u.source).join(', ')})` : ''}` });
    last = key;
    if (decision.kind === 'reject') throw failure('PlacementRejected', `no configured site can run the ${stage} stage: ${text}`);
    if (decision.kind === 'reserve') {
      const deadline = run.spec.deadline ? Date.parse(run.spec.deadline) : Infinity;
      const gap = Math.min(decision.at * 1000, deadline) - Date.now();
      await sleep(Math.min(RESERVATION_RECHECK_MAX_MS, Math.max(RESERVATION_RECHECK_MIN_MS, gap)));
      continue;
    }
    return { site, victims: decision.kind === 'preempt' ? (victims ?? []) : [] };
  }
}

/** Placement before PATCHES.placementActions: recorded, and the job submitted whatever was decided. */
async function placeOnce(run: PipelineRun, stage: JobStage, name: string, attempt: number): Promise<string | undefined> {
  const { decision, unavailable } = await run.short.placeJob({ job: stageJob(run.spec, stage, name, Date.now()) });
  const where = 'placement' in decision && decision.placement ? ` on ${decision.placement.site}/${decision.placement.cluster}/${decision.placement.partition}` : '';
  run.record({ kind: 'placement', stage, attempt, site: 'placement' in decision ? decision.placement?.site : undefined, message: `${decision.kind}${where}: ${decision.explanation}${unavailable.length ? ` (unobserved: ${unavailable.map((u) => u.source).join(', ')})` : ''}` });
  if (decision.kind === 'reject') throw failure('PlacementRejected', `no configured site can run the ${stage} stage: ${decision.explanation}`);
  return 'placement' in decision ? decision.placement?.site : undefined;
}
