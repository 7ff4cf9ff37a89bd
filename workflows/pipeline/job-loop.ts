// Submit → watch → classify → retry: the one loop every job stage runs, whether its job stays where
// it was placed (job-stage.ts) or follows the train stage across sites (failover.ts). A driver says
// how to submit and watch, and what happens to a job that is lost or ends for infrastructure.
import { sleep } from '@temporalio/workflow';
import { failure } from '../../contract/failures.js';
import { classifyJobState, type Outcome } from '../../contract/outcome.js';
import type { RetryOverride } from '../../contract/pipeline.js';
import { SA_SITE } from '../../contract/search-attributes.js';
import type { StageState, TimelineEntry } from '../../contract/status.js';
import type { JobRef, JobStatus } from '../../activities/types.js';
import type { Compensation } from '../saga.js';
import type { PipelineRun } from './context.js';
import type { JobStage } from './job-shape.js';
import { counted, jobCancelledNote, jobEndDetail, jobEndNote } from './messages.js';
import { PATCHES } from './patches.js';
import { preemptionOf } from './preemption.js';
import { retryDelayMs } from './retry.js';

export interface JobStageResult {
  ref?: JobRef;
  final?: JobStatus;
  attempts: number;
}

/** A watch that saw the job end. `selfFenced`: it stopped itself because nobody renewed its lease. */
export interface Ended {
  kind: 'ended';
  status: JobStatus;
  selfFenced?: boolean;
}

/** `Lost` is how the driver's watch reports a job it could no longer observe. */
export interface JobDriver<Lost extends { kind: string } = never> {
  /** What the stage's retry policy counts, as the give-up message names it. */
  failureNoun: string;
  /** The site to name in messages, where the job may move between sites. */
  site(): string | undefined;
  /** Everything up to and including the submission of this attempt's job (placement, quota). */
  submit(attempt: number): Promise<JobRef>;
  submittedNote(ref: JobRef): string;
  /** Stops the job should the run fail or be cancelled while it runs. */
  undo(ref: JobRef): Compensation;
  watch(ref: JobRef): Promise<Ended | Lost>;
  /** The job was lost: the driver deals with it, then the loop submits again. */
  onLost?(ref: JobRef, lost: Lost): Promise<void>;
  /** The job stopped itself for want of a lease renewal: resubmitted, not counted as a failure. */
  onSelfFenced?(ref: JobRef): void;
  onSuccess?(ref: JobRef): Promise<void>;
  /** Without it, an infrastructure ending counts against the retry policy like a job failure. */
  onInfrastructure?(ref: JobRef, final: JobStatus): Promise<void>;
  retryNote(outcome: Outcome, failures: number, delayMs: number): Pick<TimelineEntry, 'site' | 'message'>;
}

export async function runJobAttempts<Lost extends { kind: string }>(run: PipelineRun, stage: JobStage, st: StageState, retry: Required<RetryOverride>, driver: JobDriver<Lost>): Promise<JobStageResult> {
  let failures = 0;
  for (let attempt = 1; ; attempt++) {
    st.attempts = attempt;
    const ref = await driver.submit(attempt);
    Object.assign(st, { jobId: ref.jobId, runtime: ref.runtime, site: ref.site, status: 'running' });
    if (run.has(PATCHES.searchAttributes)) run.searchAttribute({ key: SA_SITE, value: ref.site });
    run.record({ kind: ref.adopted ? 'job-adopted' : 'job-submitted', stage, attempt, jobId: ref.jobId, runtime: ref.runtime, site: ref.site, message: driver.submittedNote(ref) });
    const undo = driver.undo(ref);
    run.saga.push(undo);
    const watched = await driver.watch(ref);
    run.saga.discard(undo.id); // an ended job has nothing left to cancel; a lost one the driver stops itself
    if (watched.kind !== 'ended') {
      await driver.onLost!(ref, watched as Lost);
      continue;
    }
    const { status: final, selfFenced } = watched as Ended;
    st.progress = final.progress;
    const outcome = classifyJobState(final.state);
    const site = driver.site();
    run.record({ kind: 'job-finished', stage, attempt, jobId: ref.jobId, state: final.state, ...(site === undefined ? {} : { site }), message: jobEndNote(ref.jobId, final, site) });
    if (selfFenced) {
      driver.onSelfFenced!(ref);
      continue;
    }
    if (outcome === 'success') {
      await driver.onSuccess?.(ref);
      await run.quota.release(stage);
      return { ref, final, attempts: attempt };
    }
    const preempted = outcome === 'cancelled' || outcome === 'infrastructure' ? preemptionOf(run, ref.jobId) : undefined;
    if (preempted && run.has(PATCHES.placementActions)) {
      // Another run's placement stopped it (preemption.ts): an infrastructure ending that is nobody's
      // failure, so it is resubmitted uncounted and the program restores its latest checkpoint.
      run.record({ kind: 'retry-scheduled', stage, attempt, state: 'PREEMPTED', ...(site === undefined ? {} : { site }), message: `preempted by run ${preempted.by}; resubmitting, the job resumes from its latest checkpoint` });
      continue;
    }
    if (outcome === 'cancelled') throw failure('JobCancelled', jobCancelledNote(stage, ref.jobId, site));
    const detail = jobEndDetail(stage, ref.jobId, final, site);
    if (outcome === 'infrastructure' && driver.onInfrastructure) {
      await driver.onInfrastructure(ref, final);
      continue;
    }
    failures++;
    if (failures >= retry.maxAttempts) {
      throw failure(outcome === 'infrastructure' ? 'InfrastructureFailed' : 'JobFailed', `${detail}\n(gave up after ${counted(failures, driver.failureNoun)})`, { details: [final] });
    }
    const delay = retryDelayMs(retry, failures);
    st.status = 'retrying';
    run.record({ kind: 'retry-scheduled', stage, attempt, state: final.state, ...driver.retryNote(outcome, failures, delay) });
    await sleep(delay);
  }
}
