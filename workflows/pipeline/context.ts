// One run of the pipeline: its spec and tuning, where its files live, what its queries report, and
// the saga of undos. Every stage runner works through it instead of closing over the entry function.
import { CancellationScope, patched, proxyActivities, proxyLocalActivities, sleep, upsertSearchAttributes, workflowInfo, type ActivityInterfaceFor } from '@temporalio/workflow';
import type { ActivityOptions, SearchAttributeUpdatePair } from '@temporalio/common';
import { failure } from '../../contract/failures.js';
import { STAGES, type PipelineSpec, type StageName } from '../../contract/pipeline.js';
import { SA_STAGE } from '../../contract/search-attributes.js';
import type { PipelineStatus, StageState, TimelineEntry } from '../../contract/status.js';
import { compileTuning, type CompiledTuning, type PipelineTuning } from '../../contract/tuning.js';
import { Saga } from '../saga.js';
import { observeTimeline } from './metrics.js';
import { localBookkeeping, shortIo, type PipelineActivities } from './activity-options.js';

/** The activities as the workflow calls them (each also `.executeWithOptions`, e.g. to add a summary). */
export type PipelineProxies = ActivityInterfaceFor<PipelineActivities>;
import { LEAN_COVERS, PATCHES, type PatchId } from './patches.js';
import { QuotaHolds } from './quota-hold.js';

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

export class PipelineRun {
  readonly spec: PipelineSpec;
  readonly tuning: CompiledTuning;
  readonly resume?: ResumeInput;
  readonly workflowId: string;
  /** Where this run's data and checkpoints live: its own id, or the original's when resuming. */
  readonly runKey: string;
  readonly timeline: TimelineEntry[] = [];
  readonly stages: Record<StageName, StageState>;
  readonly status: PipelineStatus;
  readonly saga = new Saga();
  readonly short: PipelineProxies;
  /**
   * Short bookkeeping (migration routing, quota admission on the run's own queue): local activities
   * since PATCHES.leanHistory, the `short` activities before it.
   */
  readonly bookkeeping: PipelineProxies;
  /** Since PATCHES.leanHistory: one marker stands for the patches before it, and unchanged search attributes are not upserted again. */
  readonly lean: boolean;
  readonly quota: QuotaHolds;
  /** The search attributes this run upserted, by key (the last value). */
  private readonly upserted = new Map<string, unknown>();
  /** Set when the deadline timer fired and cancelled the stages (see untilDeadline). */
  deadlineReached?: { deadline: string; stage?: StageName; message: string };

  constructor({ spec, tuning = {}, resume }: HybridPipelineInput) {
    this.spec = spec;
    this.tuning = compileTuning(tuning);
    this.resume = resume;
    this.workflowId = workflowInfo().workflowId;
    this.runKey = resume?.runKey ?? this.workflowId;
    this.stages = Object.fromEntries(STAGES.map((s) => [s, { status: 'pending', attempts: 0 } as StageState])) as Record<StageName, StageState>;
    this.status = { workflowId: this.workflowId, pipeline: spec.name, tenant: spec.tenant, phase: 'running', stages: this.stages, resumedFrom: resume?.from };
    this.short = this.activities(shortIo());
    // Asked once, in the first workflow task: a run recorded before it replays without it throughout.
    this.lean = patched(PATCHES.leanHistory);
    this.bookkeeping = this.lean ? (proxyLocalActivities<PipelineActivities>(localBookkeeping()) as PipelineProxies) : this.short;
    this.quota = new QuotaHolds(this);
  }

  /** patched(id), or true without a marker when the run has PATCHES.leanHistory and it covers `id`. */
  has(id: PatchId): boolean {
    return (this.lean && LEAN_COVERS.has(id)) || patched(id);
  }

  /**
   * Upserts one search attribute. Since PATCHES.leanHistory a value the run already set is not upserted
   * again (an event and a visibility write for nothing: e.g. the train job at the site preprocess ran at).
   */
  searchAttribute(pair: SearchAttributeUpdatePair): void {
    if (this.lean && this.upserted.has(pair.key.name) && this.upserted.get(pair.key.name) === pair.value) return;
    this.upserted.set(pair.key.name, pair.value);
    upsertSearchAttributes([pair]);
  }

  activities(options: ActivityOptions): PipelineProxies {
    return proxyActivities<PipelineActivities>(options);
  }

  /** Workflow time: deterministic on replay. */
  now(): string {
    return new Date().toISOString();
  }

  record(e: Omit<TimelineEntry, 'at'>): void {
    this.timeline.push({ at: this.now(), ...e });
    observeTimeline(this, e); // metrics (a sink call: no command, replays unchanged)
  }

  /**
   * Runs the stages until spec.deadline: at the deadline a workflow timer cancels them where they are
   * (a job being watched, a retry's pause, a quota wait) and records why, so that the caller's saga
   * cancels the job and releases its holds before the run fails with DeadlineExceeded. Runs recorded
   * before the timer existed replay without it (the server's execution timeout ended them).
   */
  async untilDeadline<T>(stages: () => Promise<T>): Promise<T> {
    const deadline = this.spec.deadline;
    if (!deadline || !this.has(PATCHES.deadlineTimer)) return stages();
    const leftMs = Date.parse(deadline) - Date.now();
    if (leftMs <= 0) return stages(); // past it by its first workflow task: startStage refuses the first stage
    const work = new CancellationScope();
    const timer = new CancellationScope();
    void timer
      .run(() => sleep(leftMs))
      .then(
        () => {
          const stage = this.status.stage;
          const running = stage && this.stages[stage].status !== 'completed';
          const message = `deadline ${deadline} reached ${running ? `during ${stage}` : stage ? `after ${stage}` : 'before the first stage'}`;
          this.deadlineReached = { deadline, stage, message };
          this.record({ kind: 'deadline', stage, message: `${message}; stopping the run and compensating` });
          work.cancel();
        },
        () => undefined, // the stages ended first (or the run was cancelled): no deadline to enforce
      );
    try {
      return await work.run(stages);
    } finally {
      timer.cancel();
    }
  }

  private checkDeadline(stage: StageName): void {
    if (this.spec.deadline && Date.now() > Date.parse(this.spec.deadline)) {
      throw failure('DeadlineExceeded', `deadline ${this.spec.deadline} passed before stage ${stage} could start`);
    }
  }

  startStage(stage: StageName): StageState {
    this.checkDeadline(stage);
    this.status.stage = stage;
    const st = this.stages[stage];
    st.status = 'running';
    st.attempts = Math.max(st.attempts, 1);
    st.startedAt = this.now();
    if (this.has(PATCHES.searchAttributes)) this.searchAttribute({ key: SA_STAGE, value: stage });
    this.record({ kind: 'stage-started', stage, message: `${stage} started` });
    return st;
  }

  finishStage(stage: StageName, message: string): void {
    this.stages[stage].status = 'completed';
    this.stages[stage].finishedAt = this.now();
    this.record({ kind: 'stage-completed', stage, message });
  }
}
