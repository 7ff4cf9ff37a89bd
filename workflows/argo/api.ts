// What clients and recorded histories see of the interpreter besides its input and result: its
// status query, its signals, and the patch ids its command sequence depends on.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { ArgoStatus } from '../../argo/lang/types.js';

/** patched() ids of the interpreter: runs recorded before a change replay without it. */
export const ARGO_PATCHES = { memoize: 'argo-memoize', sync: 'argo-sync', podNames: 'argo-pod-names', parallelism: 'argo-parallelism-queue', loopOutputs: 'argo-loop-outputs', outputPaths: 'argo-output-paths', templateFailFast: 'argo-template-fail-fast', daemonScope: 'argo-daemon-scope', loopAggregate: 'argo-loop-aggregate', loopNodes: 'argo-loop-nodes', dagOmitted: 'argo-dag-omitted', suspendSupplied: 'argo-suspend-supplied', lifecycleHooks: 'argo-lifecycle-hooks', inFlight: 'argo-in-flight', fanOut: 'argo-fan-out', displayName: 'argo-display-name', childrenAtOnce: 'argo-children-at-once', sliceItems: 'argo-slice-items', loopChecks: 'argo-loop-checks' } as const;

/** Resumes suspended nodes (all, or those whose name contains `node`), optionally supplying outputs. */
export interface ResumeRequest {
  node?: string;
  parameters?: Record<string, string>;
}

export const argoStatusQuery = defineQuery<ArgoStatus>('argo.status');
export const argoResumeSignal = defineSignal<[ResumeRequest?]>('argo.resume');
/** Stops the workflow: running nodes are cancelled, the exit handler still runs. */
export const argoStopSignal = defineSignal<[{ message?: string }?]>('argo.stop');
