// The train stage across sites: choose a healthy site, stage the data and restore the newest valid
// checkpoint there, submit under a lease, watch with a grace window; on NODE_FAIL / PREEMPTED /
// BOOT_FAIL / LOST or a site unreachable beyond the grace window, fence the old job and fail over.
// Job failures retry on the same site per the stage's policy; failovers are bounded separately.
import { CancellationScope, sleep } from '@temporalio/workflow';
import type { WatchAtResult } from '../../activities/recovery.js';
import { leaseProblem } from '../../contract/failover.js';
import { failure } from '../../contract/failures.js';
import type { RetryOverride } from '../../contract/pipeline.js';
import type { StageState } from '../../contract/status.js';
import type { CompiledFailover } from '../../contract/tuning.js';
import { staging as stagingOptions, type PipelineActivities } from './activity-options.js';
import type { PipelineRun } from './context.js';
import { runJobAttempts, type JobStageResult } from './job-loop.js';
import { stageJobName } from './job-names.js';
import { stageJob } from './job-shape.js';
import { PATCHES } from './patches.js';

type Unreachable = Exclude<WatchAtResult, { kind: 'ended' }>;

export async function runTrainWithFailover(run: PipelineRun, fo: CompiledFailover, st: StageState, params: Record<string, string | number>, retry: Required<RetryOverride>, watch: PipelineActivities): Promise<JobStageResult> {
  const { spec, runKey, short } = run;
  const cfg = spec.stages.train;
  const { graceMs, leaseTtlMs, maxFailovers, waitIntervalMs, maxWaitMs } = fo;
  const { heartbeatTimeoutMs, pollMaxMs } = run.tuning;
  // The old job must be stopped (lease expired, plus the fence's 2 s SIGKILL grace) before the grace
  // window ends and a replacement may start elsewhere.
  const leaseIssue = leaseProblem(graceMs, leaseTtlMs);
  if (leaseIssue) throw failure('InvalidRequest', leaseIssue);
  const staging = run.activities(stagingOptions(heartbeatTimeoutMs));
  const fences = new CancellationScope();
  let failovers = 0;
  let leaseRestarts = 0;
  let exclude: string[] = [];
  /** The site to use next; unset after a failover, so that the next attempt chooses again. */
  let site: string | undefined;
  /** The site of the current attempt. */
  let at = '';

  const failOver = (from: string, why: string) => {
    failovers++;
    if (failovers > maxFailovers) {
      throw failure('InfrastructureFailed', `train: ${why}; gave up after ${maxFailovers} failover${maxFailovers === 1 ? '' : 's'}`);
    }
    run.record({ kind: 'failover', stage: 'train', site: from, message: `${why}; failover ${failovers}/${maxFailovers} away from ${from}` });
    exclude = [from];
    site = undefined;
  };

  async function chooseSite(attempt: number): Promise<string> {
    const waitStart = Date.now();
    // Healthy sites are ranked by placement on their live inventories (activities/recovery.ts).
    const job = stageJob(spec, 'train', stageJobName(run, 'train', attempt), Date.now());
    for (let round = 0; ; round++) {
      let choice = await short.chooseSite({ exclude, sites: fo.sites, job });
      // Nothing else is healthy: the site that failed may still be the best place to resume.
      if (!choice.site && exclude.length) choice = await short.chooseSite({ exclude: [], sites: fo.sites, job });
      if (choice.site) {
        run.record({ kind: 'site-choice', stage: 'train', site: choice.site, message: `chose ${choice.site}: ${choice.probes.join('; ')}` });
        return choice.site;
      }
      const waited = Date.now() - waitStart;
      const deadline = spec.deadline ? Date.parse(spec.deadline) : Infinity;
      if (waited >= maxWaitMs || Date.now() + waitIntervalMs > deadline) {
        throw failure('InfrastructureFailed', `no healthy site for the train stage after waiting ${Math.round(waited / 1000)}s (${choice.probes.join('; ')})${Date.now() + waitIntervalMs > deadline ? `; deadline ${spec.deadline}` : ''}`);
      }
      if (round === 0) run.record({ kind: 'site-wait', stage: 'train', message: `no healthy site (${choice.probes.join('; ')}); waiting, checking every ${Math.round(waitIntervalMs / 1000)}s` });
      await sleep(waitIntervalMs);
    }
  }

  /** Brings the run's data and newest valid checkpoint to the site, reporting what it found where. */
  async function stageAt(attempt: number): Promise<void> {
    const staged = await staging.stageSite({ runKey, site: at });
    for (const k of staged.skipped) run.record({ kind: 'restore', stage: 'train', site: k.source, message: `skipped checkpoint ${k.path} at ${k.source}: ${k.reason}` });
    for (const u of staged.unreadable) run.record({ kind: 'restore', stage: 'train', message: `could not read checkpoints at ${u}` });
    run.record({
      kind: 'restore',
      stage: 'train',
      attempt,
      site: at,
      message: staged.step === undefined ? `no valid checkpoint anywhere: ${at} starts from step 0` : `resuming at ${at} from step ${staged.step} (${staged.source === at ? 'already there' : `copied from ${staged.source}, ${staged.bytes} bytes, verified`})${staged.staleCopiesRemoved ? `; removed ${staged.staleCopiesRemoved} unfinished copies` : ''}`,
    });
  }

  try {
    return await runJobAttempts<Unreachable>(run, 'train', st, retry, {
      failureNoun: 'failed job',
      site: () => at,
      async submit(attempt) {
        at = site ?? (await chooseSite(attempt));
        site = at;
        await stageAt(attempt);
        const name = stageJobName(run, 'train', attempt);
        await run.quota.hold('train', 'slurm', at);
        return short.submitAt({ site: at, leaseTtlMs, runKey, stage: 'train', name, runtime: 'slurm', command: cfg.command, env: cfg.env, resources: cfg.resources, params, kubernetes: cfg.kubernetes });
      },
      submittedNote: (ref) => `${ref.adopted ? 'adopted existing' : 'submitted'} slurm job ${ref.jobId} at ${ref.site} (lease ${Math.round(leaseTtlMs / 1000)}s)`,
      undo: (ref) => ({ id: `cancel-${ref.site}-${ref.jobId}`, description: `cancel train job ${ref.jobId} at ${ref.site}`, done: `cancelled train job ${ref.jobId} at ${ref.site}`, run: () => short.fenceJob({ ref }).then(() => undefined) }),
      watch: (ref) => watch.watchAt({ ref, pollMaxMs, graceMs, leaseTtlMs, runKey }),
      async onLost(ref, w) {
        if (w.progress) st.progress = w.progress;
        const why = `site ${at} unreachable for ${Math.round(w.forMs / 1000)}s while job ${ref.jobId} was ${w.lastState ?? 'unobserved'} at step ${w.progress?.step ?? '?'} (${w.error})`;
        const from = at;
        const fence = await short.fenceJob({ ref });
        run.record({ kind: 'fence', stage: 'train', site: from, jobId: ref.jobId, message: fence.detail });
        if (!fence.fenced) {
          // The lease has already stopped the job; cancel its record once the site answers again.
          fences.run(() => staging.fenceWhenReachable({ ref })).then(
            (r) => run.record({ kind: 'fence', stage: 'train', site: from, jobId: ref.jobId, message: r.detail }),
            () => undefined,
          );
        }
        failOver(from, why);
      },
      onSelfFenced(ref) {
        // Its site answered all along: nobody renewed the lease (the watch was between workers for
        // longer than the lease). The site is fine; resume there from the newest checkpoint.
        leaseRestarts++;
        if (leaseRestarts > maxFailovers) throw failure('InfrastructureFailed', `train: job ${ref.jobId} at ${at} stopped itself ${leaseRestarts} times because its lease was not renewed; is a worker watching it? (lease ${Math.round(leaseTtlMs / 1000)}s, heartbeat timeout ${Math.round(heartbeatTimeoutMs / 1000)}s)`);
        run.record({ kind: 'fence', stage: 'train', site: at, jobId: ref.jobId, message: `job ${ref.jobId} stopped itself: its lease was not renewed while ${at} answered; resubmitting at ${at} (${leaseRestarts}/${maxFailovers})` });
      },
      async onSuccess() {
        const home = await staging.collectCheckpoint({ runKey, site: at, keep: spec.stages.checkpoint.keep, keepEvery: spec.stages.checkpoint.keepEvery });
        run.record({ kind: 'restore', stage: 'train', site: at, message: `brought step ${home.step} home from ${at}${home.copied ? ' (verified copy)' : ' (already there)'}` });
      },
      async onInfrastructure(ref, final) {
        if (run.has(PATCHES.fenceOnFailover)) {
          // An ended job can come back (a site that requeues after NODE_FAIL): revoke its lease and cancel it.
          const fence = await short.fenceJob({ ref, runKey });
          run.record({ kind: 'fence', stage: 'train', site: at, jobId: ref.jobId, message: `${fence.detail}; lease revoked` });
        }
        failOver(at, `job ${ref.jobId} ended ${final.state} at ${at}${final.reason ? ` (${final.reason})` : ''}`);
      },
      retryNote: (_outcome, failures, delayMs) => ({ site: at, message: `job failure; retrying at ${at} (${failures + 1}/${retry.maxAttempts}) in ${Math.round(delayMs / 1000)}s` }),
    });
  } finally {
    fences.cancel(); // background fences stop with the stage; the lease has stopped those jobs already
  }
}
