// Entry point of the Argo interpreter for bundling (workflows/index.ts re-exports it).
export { argoWorkflow, argoStatusQuery, argoResumeSignal, argoStopSignal } from './interpreter.js';
export type { ArgoRunInput, ArgoStatus, ArgoNode } from './types.js';
