// Entry point of the Argo interpreter for bundling (workflows/index.ts re-exports it).
export { argoWorkflow } from './interpreter.js';
export { argoStatusQuery, argoResumeSignal, argoStopSignal } from './api.js';
export { argoLock, lockStateQuery } from './lock.js';
export { argoSlice } from './fanout.js';
export type { ArgoRunInput, ArgoStatus, ArgoNode } from '../../argo/lang/types.js';
export type { LockState, LockRequest } from './lock.js';
