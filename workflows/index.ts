export { hybridPipeline, statusQuery, timelineQuery, jobName } from './pipeline.js';
export type { HybridPipelineInput, PipelineTuning } from './pipeline.js';
