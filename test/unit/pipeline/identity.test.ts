// Names the pipeline derives from its run: they must be stable (backends adopt a job by its name after
// a worker crash) and valid for Slurm, Kubernetes and the file system.
import { deploymentName, holdIdOf, jobName } from '../../../workflows/pipeline/identity.js';

describe('jobName', () => {
  test('is the run, stage and attempt, in a name every backend accepts', () => {
    expect(jobName('demo-run', 'train', 2)).toBe('tandem-demo-run-train-2');
    expect(jobName('My_Run/42', 'preprocess', 1)).toBe('tandem-my-run-42-preprocess-1');
  });

  test('drops leading and trailing separators and keeps 40 characters of the id', () => {
    expect(jobName('--Run--', 'train', 1)).toBe('tandem-run-train-1');
    const name = jobName('x'.repeat(100), 'train', 3);
    expect(name).toBe(`tandem-${'x'.repeat(40)}-train-3`);
    expect(name).toMatch(/^[a-z0-9-]+$/);
  });

  test('is the same on every call (replay, resubmission)', () => {
    expect(jobName('Run 7', 'train', 1)).toBe(jobName('Run 7', 'train', 1));
  });
});

describe('deploymentName', () => {
  test('joins pipeline and run in a Kubernetes object name', () => {
    expect(deploymentName('demo', 'Run_1')).toBe('demo-run-1');
  });

  test('is at most 60 characters and never ends with a dash', () => {
    const name = deploymentName('demo', `${'a'.repeat(54)}/bcdef`);
    expect(name.length).toBeLessThanOrEqual(60);
    expect(name).toBe(`demo-${'a'.repeat(54)}`);
    expect(deploymentName('demo', 'x'.repeat(54) + '!!!!')).not.toMatch(/-$/);
  });
});

test('a quota hold is named for the run and stage, not the site or attempt', () => {
  expect(holdIdOf('run-1', 'train')).toBe('run-1/train');
  expect(holdIdOf('run-1', 'preprocess')).toBe('run-1/preprocess');
});
