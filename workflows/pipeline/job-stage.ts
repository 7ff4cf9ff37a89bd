// A job stage (preprocess, train): reused from a resumed run, or run as jobs where they are placed
// (with job-level retries), or for train with failover, followed across sites (failover.ts).
import { patched } from '@temporalio/workflow';
import { durationMs } from '../../contract/duration.js';
import { failure } from '../../contract/failures.js';
import { watchJob } from './activity-options.js';
import type { PipelineRun } from './context.js';
import { runTrainWithFailover } from './failover.js';
import { jobName } from './identity.js';
import { runJobAttempts, type JobStageResult } from './job-loop.js';
import { stageJob, stageParams, type JobStage } from './job-shape.js';
import { PATCHES } from './patches.js';
import { stageRetry } from './retry.js';

export async function runJobStage(run: PipelineRun, stage: JobStage): Promise<JobStageResult> {
  const { spec, resume, short } = run;
  const cfg = spec.stages[stage];
  const params = stageParams(spec, stage);
  if (resume?.reuse.includes(stage)) {
    run.startStage(stage);
    Object.assign(run.stages[stage], { attempts: 0 });
    run.record({ kind: 'stage-reused', stage, message: `reused the output of ${resume.from}'s ${stage} stage` });
    return { attempts: 0 };
  }
  const retry = stageRetry(spec, stage);
  const watch = run.activities(watchJob(durationMs(cfg.resources.walltime), run.tuning.heartbeatTimeoutMs));
  const st = run.startStage(stage);
  // Runs that have this patch may fail over across sites when launched with tuning.failover.
  if (stage === 'train' && patched(PATCHES.failover) && run.tuning.failover) return runTrainWithFailover(run, run.tuning.failover, st, params, retry, watch);
  return runJobAttempts(run, stage, st, retry, {
    failureNoun: 'attempt',
    site: () => undefined,
    async submit(attempt) {
      const name = jobName(run.workflowId, stage, attempt);
      const site = cfg.runtime === 'auto' && patched(PATCHES.placement) ? await place(run, stage, name, attempt) : undefined;
      await run.quota.hold(stage, cfg.runtime, site);
      return short.submitJob({ runKey: run.runKey, stage, name, runtime: cfg.runtime, site, command: cfg.command, env: cfg.env, resources: cfg.resources, params, kubernetes: cfg.kubernetes });
    },
    submittedNote: (ref) => `${ref.adopted ? 'adopted existing' : 'submitted'} ${ref.runtime} job ${ref.jobId}`,
    undo: (ref) => ({ id: `cancel-${ref.jobId}`, description: `cancel ${stage} job ${ref.jobId}`, run: () => short.cancelJob(ref) }),
    watch: async (ref) => ({ kind: 'ended', status: await watch.awaitJob({ ref, pollMaxMs: run.tuning.pollMaxMs }) }),
    retryNote: (outcome, failures, delayMs) => ({
      message: `${outcome === 'infrastructure' ? 'infrastructure failure' : 'job failure'}; attempt ${failures + 1}/${retry.maxAttempts} in ${Math.round(delayMs / 1000)}s`,
    }),
  });
}

/** Asks the placement engine where the job fits (recorded in history and the timeline); a job no
 *  site can ever run fails here, before anything is submitted. */
async function place(run: PipelineRun, stage: JobStage, name: string, attempt: number): Promise<string | undefined> {
  const { decision, unavailable } = await run.short.placeJob({ job: stageJob(run.spec, stage, name, Date.now()) });
  const where = 'placement' in decision && decision.placement ? ` on ${decision.placement.site}/${decision.placement.cluster}/${decision.placement.partition}` : '';
  run.record({ kind: 'placement', stage, attempt, site: 'placement' in decision ? decision.placement?.site : undefined, message: `${decision.kind}${where}: ${decision.explanation}${unavailable.length ? ` (unobserved: ${unavailable.map((u) => u.source).join(', ')})` : ''}` });
  if (decision.kind === 'reject') throw failure('PlacementRejected', `no configured site can run the ${stage} stage: ${decision.explanation}`);
  return 'placement' in decision ? decision.placement?.site : undefined;
}
