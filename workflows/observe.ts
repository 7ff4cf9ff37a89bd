// What workflows tell the worker's metrics (observe/sinks.ts), through Temporal's workflow sinks: a
// sink call is fire-and-forget, returns nothing to the workflow and adds no command to its history,
// so recorded histories replay unchanged; the worker registers the sinks with callDuringReplay false,
// so a replayed run does not count its past again. Only small, plain events cross: no ids, the worker
// turns them into bounded label values.
import { inWorkflowContext, proxySinks, type Sinks } from '@temporalio/workflow';
import type { TimelineEntry } from '../contract/status.js';

/** A timeline entry of a pipeline run, with what the metrics label it by. */
export interface PipelineEvent {
  kind: TimelineEntry['kind'];
  tenant: string;
  pipeline: string;
  stage?: string;
  site?: string;
  runtime?: string;
  state?: string;
  /** For stage-completed / stage-failed: the stage's duration in workflow time. */
  seconds?: number;
  /** For compensations: the first word of the undo's id ("cancel", "release", "rollback", …). */
  action?: string;
  /** For fences: whether the job stopped itself (lease not renewed) and is resubmitted. */
  selfFenced?: boolean;
  /** For pipeline-failed: a deadline's failure rather than a stage's. */
  deadline?: boolean;
}

export interface TandemSinks extends Sinks {
  tandemMetrics: {
    pipeline(e: PipelineEvent): void;
    argoNode(e: { type: string; phase: string; seconds?: number }): void;
    quota(e: { site: string; tenant: string; held: { cpus: number; gpus: number; memoryMB: number }; quota: Partial<{ cpus: number; gpus: number; memoryMB: number }> }): void;
  };
}

const sinks = proxySinks<TandemSinks>().tandemMetrics;
// The pure modules that report (the Argo node model, the ledger's bookkeeping) are also unit-tested
// outside any workflow, where there is no one to tell.
const tandemMetrics: TandemSinks['tandemMetrics'] = {
  pipeline: (e) => (inWorkflowContext() ? sinks.pipeline(e) : undefined),
  argoNode: (e) => (inWorkflowContext() ? sinks.argoNode(e) : undefined),
  quota: (e) => (inWorkflowContext() ? sinks.quota(e) : undefined),
};

/** Seconds from an ISO time to now (workflow time). */
export const secondsSince = (iso: string | undefined): number | undefined => (iso ? Math.max(0, (Date.now() - Date.parse(iso)) / 1000) : undefined);

/** A worker without the sinks (a replayer, a test worker) drops the call; so does a failing sink. */
export function observePipeline(e: PipelineEvent): void {
  tandemMetrics.pipeline(e);
}

export function observeArgoNode(type: string, phase: string, startedAt?: string): void {
  tandemMetrics.argoNode({ type, phase, seconds: type === 'Pod' ? secondsSince(startedAt) : undefined });
}

export function observeQuota(site: string, tenant: string, held: { cpus: number; gpus: number; memoryMB: number }, quota: Partial<{ cpus: number; gpus: number; memoryMB: number }> | undefined): void {
  tandemMetrics.quota({ site, tenant, held, quota: quota ?? {} });
}
