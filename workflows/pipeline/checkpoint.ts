// The checkpoint stage: the newest valid checkpoint of the run enters the catalog (withdrawn again
// if a later stage fails), and retention prunes the rest.
import type { PipelineRun } from './context.js';
import { checkpointQueueOf, onQueue } from './site-queues.js';

export async function runCheckpointStage(run: PipelineRun): Promise<{ path: string; step: number }> {
  const { spec, runKey, saga } = run;
  run.startStage('checkpoint');
  // The checkpoints are where training wrote them: on its site's queue when it had one (site-queues.ts).
  const short = onQueue(run, checkpointQueueOf(run));
  const { verify, keep, keepEvery } = spec.stages.checkpoint;
  const ckpt = await short.catalogCheckpoint({ runKey, verify, keep, keepEvery });
  saga.push({ id: `withdraw-${ckpt.path}`, description: `withdraw checkpoint step ${ckpt.step} from the catalog`, done: `withdrew checkpoint step ${ckpt.step} from the catalog`, run: () => short.withdrawCheckpoint({ runKey, path: ckpt.path }) });
  for (const s of ckpt.skipped) run.record({ kind: 'stage-started', stage: 'checkpoint', message: `skipped invalid checkpoint ${s.path}: ${s.reason}` });
  return ckpt;
}
