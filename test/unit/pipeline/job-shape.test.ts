// A job stage as the placement engine, the quota ledger and the stage's program see it.
import { PipelineSpecSchema, type PipelineSpecInput } from '../../../contract/pipeline.js';
import { stageAmount, stageJob, stageParams } from '../../../workflows/pipeline/job-shape.js';

const spec = (input: Partial<PipelineSpecInput> = {}) => PipelineSpecSchema.parse({ name: 'demo', ...input });
const NOW = Date.parse('2030-01-01T00:00:00Z');

describe('stageJob', () => {
  test('a GPU train stage is an AI training job, one slot per task', () => {
    const s = spec({ tenant: 'lab', qos: 'gold', priority: 7, stages: { train: { resources: { nodes: 2, tasksPerNode: 4, cpusPerTask: 3, gpusPerNode: 4, memoryMB: 8192, walltime: '2h' } } } });
    expect(stageJob(s, 'train', 'job-1', NOW)).toEqual({
      id: 'job-1',
      type: 'ai-training',
      tenant: 'lab',
      qos: 'gold',
      priority: 7,
      submit: NOW / 1000,
      count: 8,
      per: { cpus: 3, gpus: 1, memoryMB: 2048 },
      maxPerNode: 4,
      walltime: 7200,
      deadline: undefined,
      checkpointable: true,
    });
  });

  test('a CPU-only train stage is an MPI job; preprocess is hybrid and not checkpointable', () => {
    const s = spec();
    expect(stageJob(s, 'train', 'j', NOW)).toMatchObject({ type: 'hpc-mpi', checkpointable: true });
    expect(stageJob(s, 'preprocess', 'j', NOW)).toMatchObject({ type: 'hybrid', checkpointable: false });
  });

  test('the deadline and submit time are in seconds', () => {
    const s = spec({ deadline: '2030-01-01T01:00:00Z' });
    const job = stageJob(s, 'train', 'j', NOW + 1500);
    expect(job.deadline).toBe(NOW / 1000 + 3600);
    expect(job.submit).toBe(NOW / 1000 + 1.5);
  });
});

test('stageAmount counts what the whole job holds', () => {
  const s = spec({ stages: { preprocess: { resources: { nodes: 3, tasksPerNode: 2, cpusPerTask: 4, gpusPerNode: 1, memoryMB: 1000 } } } });
  expect(stageAmount(s, 'preprocess')).toEqual({ cpus: 24, gpus: 3, memoryMB: 3000 });
});

test('stageParams names the parameters as the programs read them', () => {
  const s = spec({ stages: { preprocess: { samples: 500, features: 4, seed: 1 }, train: { steps: 100, checkpointEvery: 10, learningRate: 0.1, stepDelayMs: 5 } } });
  expect(stageParams(s, 'preprocess')).toEqual({ samples: 500, features: 4, seed: 1 });
  expect(stageParams(s, 'train')).toEqual({ steps: 100, checkpoint_every: 10, learning_rate: 0.1, step_delay_ms: 5 });
});
