// hybridPipeline: preprocess → train → checkpoint → deploy, durable on Temporal. Deterministic code
// only: every side effect is an activity, every undo sits on the saga stack. The stages themselves
// are in pipeline/; this is their order, the queries, and what a failure turns into.
import { ApplicationFailure, defineQuery, isCancellation, setHandler, TemporalFailure } from '@temporalio/workflow';
import { failure, wrapFailure } from '../contract/failures.js';
import { refuseUnreadableInput } from '../contract/refused-payload.js';
import { STAGES } from '../contract/pipeline.js';
import type { PipelineResult, PipelineStatus, TimelineEntry } from '../contract/status.js';
import { runCheckpointStage } from './pipeline/checkpoint.js';
import { PipelineRun, type HybridPipelineInput } from './pipeline/context.js';
import { runDeployStage } from './pipeline/deploy.js';
import { runJobStage } from './pipeline/job-stage.js';
import { errorMessage } from './pipeline/messages.js';

export type { HybridPipelineInput, ResumeInput } from './pipeline/context.js';
export { jobName } from './pipeline/identity.js';
export { PATCHES } from './pipeline/patches.js';

export const statusQuery = defineQuery<PipelineStatus>('status');
export const timelineQuery = defineQuery<TimelineEntry[]>('timeline');

export async function hybridPipeline(input: HybridPipelineInput): Promise<PipelineResult> {
  // A keyed worker's refusal of plaintext or undecryptable input (contract/refused-payload.ts): no
  // commands for any valid input, so recorded histories replay unchanged.
  refuseUnreadableInput(input, 'hybridPipeline');
  const run = new PipelineRun(input);
  const { spec, status, stages } = run;
  setHandler(statusQuery, () => status);
  setHandler(timelineQuery, () => run.timeline);

  run.record({ kind: 'pipeline-started', message: `pipeline ${spec.name} for tenant ${spec.tenant} (qos ${spec.qos})` });
  try {
    const result = await run.untilDeadline(() => runStages(run));
    status.phase = 'completed';
    status.result = result;
    status.stage = undefined;
    run.record({ kind: 'pipeline-completed', message: `model ${result.model} serving at ${result.endpoint}` });
    return result;
  } catch (err) {
    // A cancellation the deadline timer caused is the deadline's failure, not the user's cancel.
    const deadline = isCancellation(err) ? run.deadlineReached : undefined;
    const cancelled = !deadline && isCancellation(err);
    const stage = status.stage;
    const reason = deadline ? deadline.message : errorMessage(err);
    if (stage && stages[stage].status !== 'completed') {
      stages[stage].status = cancelled ? 'cancelled' : 'failed';
      stages[stage].error = reason;
      stages[stage].finishedAt = run.now();
      if (!cancelled) run.record({ kind: 'stage-failed', stage, message: reason });
    }
    status.phase = 'compensating';
    const undone: string[] = [];
    await run.saga.compensate((c, error) => {
      if (!error) undone.push(c.done ?? c.description);
      run.record({ kind: error ? 'compensation-failed' : 'compensation', message: error ? `${c.description} failed: ${errorMessage(error)}` : c.description });
    });
    for (const s of STAGES) if (stages[s].status === 'completed' && (s === 'checkpoint' || s === 'deploy')) stages[s].status = 'compensated';
    status.phase = cancelled ? 'cancelled' : 'failed';
    if (deadline) {
      // What the run did about it, in one line: "deadline … reached during train; cancelled train job 42; released quota hold …".
      const message = [deadline.message, ...(undone.length ? undone : ['nothing to undo'])].join('; ');
      status.error = message;
      run.record({ kind: 'pipeline-failed', stage, message });
      throw failure('DeadlineExceeded', message, { details: [{ deadline: deadline.deadline, stage: deadline.stage, compensated: undone }] });
    }
    status.error = errorMessage(err);
    run.record({ kind: cancelled ? 'pipeline-cancelled' : 'pipeline-failed', stage, message: cancelled ? 'cancelled; compensations done' : `failed at ${stage}: ${errorMessage(err)}` });
    // Bugs (non-Temporal errors) propagate unchanged so the workflow task retries after a fix.
    if (cancelled || !(err instanceof TemporalFailure)) throw err;
    // The cause's type (a job's, an activity's, the deadline's) is what callers match on.
    const cause = err instanceof ApplicationFailure ? err : err.cause instanceof ApplicationFailure ? err.cause : undefined;
    throw wrapFailure(`stage ${stage ?? '(none)'} failed: ${errorMessage(err)}`, err, cause?.type);
  }
}

/** The four stages in order; a failure or cancellation anywhere is the caller's to compensate. */
async function runStages(run: PipelineRun): Promise<PipelineResult> {
  const { spec } = run;
  await runJobStage(run, 'preprocess');
  run.finishStage('preprocess', 'data set ready');

  const train = await runJobStage(run, 'train');
  run.finishStage('train', train.final ? `trained ${train.final.progress?.step ?? spec.stages.train.steps} steps in ${train.attempts} attempt(s)` : 'reused');

  const ckpt = await runCheckpointStage(run);
  run.finishStage('checkpoint', `catalogued step ${ckpt.step} (${ckpt.path})`);

  const { model, deployment, ready } = await runDeployStage(run, ckpt);
  run.finishStage('deploy', `ready: /health 200, /v1/models lists ${model}, smoke completion ok`);

  return { pipeline: spec.name, model, endpoint: deployment.endpoint, checkpoint: { path: ckpt.path, step: ckpt.step }, completion: ready.completion, trainingAttempts: train.attempts };
}
