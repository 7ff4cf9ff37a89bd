// A job stage as the other parts of Tandem see it: the placement engine, the quota ledger and the
// stage's program. Pure, so that the shapes are unit-tested without a Temporal server.
import { durationMs } from '../../contract/duration.js';
import type { PipelineSpec } from '../../contract/pipeline.js';
import type { JobRequest } from '../../placement/types.js';
import type { Amount } from '../ledger.js';

/** The stages that run as batch jobs (checkpoint and deploy do not). */
export type JobStage = 'preprocess' | 'train';

/** The stage as the placement engine sees it; `nowMs` is workflow time, so a replay places the same job. */
export function stageJob(spec: PipelineSpec, stage: JobStage, name: string, nowMs: number): JobRequest {
  const r = spec.stages[stage].resources;
  return {
    id: name,
    type: stage === 'train' ? (r.gpusPerNode > 0 ? 'ai-training' : 'hpc-mpi') : 'hybrid',
    tenant: spec.tenant,
    qos: spec.qos,
    priority: spec.priority,
    submit: nowMs / 1000,
    count: r.nodes * r.tasksPerNode,
    per: { cpus: r.cpusPerTask, gpus: r.gpusPerNode / r.tasksPerNode, memoryMB: r.memoryMB / r.tasksPerNode },
    // Slurm puts tasksPerNode ranks on each of `nodes` nodes: never more on one.
    maxPerNode: r.tasksPerNode,
    walltime: durationMs(r.walltime) / 1000,
    deadline: spec.deadline ? Date.parse(spec.deadline) / 1000 : undefined,
    checkpointable: stage === 'train',
  };
}

/** What a stage's job holds while it runs, as the quota ledger counts it. */
export function stageAmount(spec: PipelineSpec, stage: JobStage): Amount {
  const r = spec.stages[stage].resources;
  return { cpus: r.nodes * r.tasksPerNode * r.cpusPerTask, gpus: r.nodes * r.gpusPerNode, memoryMB: r.nodes * r.memoryMB };
}

/** The parameters the stage's program reads (programs/), named as it names them. */
export function stageParams(spec: PipelineSpec, stage: JobStage): Record<string, string | number> {
  if (stage === 'preprocess') {
    const pre = spec.stages.preprocess;
    return { samples: pre.samples, features: pre.features, seed: pre.seed };
  }
  const tr = spec.stages.train;
  return { steps: tr.steps, checkpoint_every: tr.checkpointEvery, learning_rate: tr.learningRate, step_delay_ms: tr.stepDelayMs };
}
