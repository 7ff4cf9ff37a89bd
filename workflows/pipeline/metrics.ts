// What a pipeline run's timeline tells the worker's metrics: every entry goes through record()
// (context.ts), which hands it here; the durations are computed in workflow time, so they are the
// same on every worker. Only a sink call (workflows/observe.ts): no command, histories replay as recorded.
import type { PipelineSpec, StageName } from '../../contract/pipeline.js';
import type { StageState, TimelineEntry } from '../../contract/status.js';
import { observePipeline } from '../observe.js';

/** The parts of a PipelineRun the metrics read (structural: context.ts imports this module). */
export interface ObservedRun {
  spec: Pick<PipelineSpec, 'name' | 'tenant' | 'stages'>;
  stages: Record<StageName, StageState>;
  deadlineReached?: unknown;
}

/** The compensation's verb, from its description ("cancel train job 42" → cancel). */
const ACTIONS: Record<string, string> = { cancel: 'cancel', release: 'release', withdraw: 'withdraw', tear: 'teardown', undo: 'rollback', rolled: 'rollback', roll: 'rollback' };

export function observeTimeline(run: ObservedRun, e: Omit<TimelineEntry, 'at'>): void {
  const st = e.stage ? run.stages[e.stage] : undefined;
  const ended = e.kind === 'stage-completed' || e.kind === 'stage-failed';
  const seconds = ended && st?.startedAt ? Math.max(0, (Date.parse(st.finishedAt ?? new Date().toISOString()) - Date.parse(st.startedAt)) / 1000) : undefined;
  observePipeline({
    kind: e.kind,
    tenant: run.spec.tenant,
    pipeline: run.spec.name,
    stage: e.stage,
    site: e.site ?? (ended ? st?.site : undefined),
    runtime: e.runtime ?? st?.runtime ?? (e.stage ? (run.spec.stages[e.stage] as { runtime?: string } | undefined)?.runtime : undefined),
    state: e.state,
    seconds,
    action: e.kind.startsWith('compensation') ? ACTIONS[e.message.split(' ')[0]!.toLowerCase()] ?? 'other' : undefined,
    // failover.ts: "job … stopped itself: its lease was not renewed …; resubmitting"
    selfFenced: e.kind === 'fence' ? /stopped itself/.test(e.message) : undefined,
    deadline: e.kind === 'pipeline-failed' ? run.deadlineReached !== undefined : undefined,
  });
}
