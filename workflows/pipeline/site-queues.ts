// A task queue per site (tuning.siteQueues): the activities that touch a site's scheduler or files —
// admitting a stage to its tenant's quota there (the site's workers know which site a pinned runtime
// means), submitting, watching and cancelling its job, verifying, cataloguing and withdrawing the
// checkpoints it wrote — are scheduled on that site's task queue, whose workers have the site's backend
// and see its filesystem. Placement, migration routing, quota releases and deploy stay on the run's own
// queue. Runs launched without site queues never reach patched(), so their commands (and histories)
// are as before.
import type { ActivityOptions } from '@temporalio/common';
import { hasOwn, own } from '../../contract/own.js';
import type { Runtime } from '../../contract/pipeline.js';
import { shortIo } from './activity-options.js';
import type { PipelineProxies, PipelineRun } from './context.js';
import type { JobStage } from './job-shape.js';
import { PATCHES } from './patches.js';

/** Per run, the queue each stage's latest job went to (the checkpoint stage follows train's). */
const chosen = new WeakMap<PipelineRun, Partial<Record<JobStage, string>>>();

/**
 * The site queue of a stage's job: by the site placement chose, else by the runtime the stage is
 * pinned to; undefined (the run's own queue) when tuning.siteQueues names neither.
 */
export function siteQueueOf(run: PipelineRun, stage: JobStage, runtime: Runtime, placedSite: string | undefined): string | undefined {
  const queues = run.tuning.siteQueues;
  const queue = own(queues, placedSite ?? runtime);
  let byStage = chosen.get(run);
  if (!byStage) chosen.set(run, (byStage = {}));
  // A run recorded before the patch kept every activity on its own queue.
  byStage[stage] = queue !== undefined && run.has(PATCHES.siteQueues) ? queue : undefined;
  return byStage[stage];
}

/** Where the train stage's checkpoints are: the queue its job used, or (a reused stage) its pinned runtime's. */
export function checkpointQueueOf(run: PipelineRun): string | undefined {
  const byStage = chosen.get(run);
  if (byStage && hasOwn(byStage, 'train')) return byStage.train;
  const queue = own(run.tuning.siteQueues, run.spec.stages.train.runtime);
  return queue !== undefined && run.has(PATCHES.siteQueues) ? queue : undefined;
}

/** Activities with `options`, on `queue` when one is given (else the run's own task queue). */
export function onQueue(run: PipelineRun, queue: string | undefined, options?: ActivityOptions): PipelineProxies {
  if (queue === undefined) return options ? run.activities(options) : run.short;
  return run.activities({ ...(options ?? shortIo()), taskQueue: queue });
}
