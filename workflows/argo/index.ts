// Entry point of the Argo interpreter for bundling (workflows/index.ts re-exports it).
export { argoWorkflow, argoStatusQuery, argoResumeSignal, argoStopSignal } from './interpreter.js';
export { argoLock, lockStateQuery } from './lock.js';
export type { ArgoRunInput, ArgoStatus, ArgoNode } from '../../argo/lang/types.js';
export type { LockState, LockRequest } from './lock.js';
