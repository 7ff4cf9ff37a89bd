export { hybridPipeline, statusQuery, timelineQuery, jobName } from './pipeline.js';
export type { HybridPipelineInput } from './pipeline.js';
export type { PipelineTuning, FailoverTuning } from '../contract/tuning.js';
export { quotaLedger, admitUpdate, releaseUpdate, usageQuery, holdsQuery } from './ledger.js';
export type { LedgerInput, AdmitRequest } from './ledger.js';
export { argoWorkflow, argoStatusQuery, argoResumeSignal, argoStopSignal, argoLock, argoSlice } from './argo/index.js';
export { stagedMigration, migrationPhase1, migrationPhase2, migrationPhase3, migrationStatusQuery, approveSignal, pauseSignal, resumeSignal, rollbackUpdate } from './migration.js';
