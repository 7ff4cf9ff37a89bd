// The wording of a job's end, shared by the single-site and failover paths, and of failures.
import { ApplicationFailure } from '@temporalio/common';
import { wrapFailure } from '../../../contract/failures.js';
import { amounts, counted, errorMessage, jobCancelledNote, jobEndDetail, jobEndNote } from '../../../workflows/pipeline/messages.js';

describe("a job's end", () => {
  const failed = { state: 'FAILED' as const, reason: 'exit 1', tail: 'Traceback …' };

  test('names the site only where the job may move', () => {
    expect(jobEndNote('42', failed)).toBe('job 42 ended FAILED (exit 1)');
    expect(jobEndNote('42', failed, 'alps')).toBe('job 42 at alps ended FAILED (exit 1)');
    expect(jobEndNote('42', { state: 'COMPLETED' })).toBe('job 42 ended COMPLETED');
    expect(jobCancelledNote('train', '42')).toBe('train job 42 was cancelled outside Tandem');
    expect(jobCancelledNote('train', '42', 'alps')).toBe('train job 42 at alps was cancelled outside Tandem');
  });

  test("the failure detail carries the job's last output", () => {
    expect(jobEndDetail('preprocess', '42', failed)).toBe('preprocess job 42 ended FAILED: exit 1\n--- last output ---\nTraceback …');
    expect(jobEndDetail('train', '42', { state: 'NODE_FAIL' }, 'alps')).toBe('train job 42 at alps ended NODE_FAIL');
  });

  test('counts in the singular and plural', () => {
    expect(counted(1, 'attempt')).toBe('1 attempt');
    expect(counted(3, 'failed job')).toBe('3 failed jobs');
  });
});

test('amounts lists what is held, or says nothing is', () => {
  expect(amounts({ cpus: 4, gpus: 1, memoryMB: 2048 })).toBe('4 CPUs, 1 GPU, 2048 MB');
  expect(amounts({ cpus: 1 })).toBe('1 CPU');
  expect(amounts({ cpus: 0, gpus: 0, memoryMB: 0 })).toBe('nothing');
});

test("errorMessage prefers the cause's message (an ActivityFailure's own is generic)", () => {
  expect(errorMessage(new Error('Activity task failed', { cause: new Error('no such partition') }))).toBe('no such partition');
  expect(errorMessage(new Error('plain'))).toBe('plain');
  expect(errorMessage('a string')).toBe('a string');
});

describe('wrapFailure', () => {
  test("keeps the cause's type, even one outside the table, and is never retried", () => {
    const cause = ApplicationFailure.create({ type: 'SomeoneElsesError', message: 'x' });
    const f = wrapFailure('stage train failed: x', cause, cause.type);
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f).toMatchObject({ type: 'SomeoneElsesError', nonRetryable: true, message: 'stage train failed: x' });
    expect(f.cause).toBe(cause);
  });

  test('an untyped cause becomes StageFailed', () => {
    expect(wrapFailure('m', new Error('x')).type).toBe('StageFailed');
    expect(wrapFailure('m', new Error('x'), null).type).toBe('StageFailed');
  });
});
