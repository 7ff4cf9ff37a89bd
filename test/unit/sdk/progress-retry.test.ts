// PipelineHandle.progress() on a loaded worker: a query the worker did not answer in time comes back as
// DEADLINE_EXCEEDED ("query timed out before a worker could process it", once seen ending a stream in
// CI). The stream asks again on its next poll; a non-transient answer, or too many transient ones in a
// row, is thrown. The workflow handle is a scripted stand-in (no server): what is under test is how
// the stream treats the answers, which a real server cannot be made to give on demand.
import { ServiceError } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { PipelineHandle, PROGRESS_TRANSIENT_TRIES, askAgainWhenTransient } from '../../../sdk/client.js';

const grpc = (code: number, details: string) => new ServiceError('Failed to query Workflow', { cause: Object.assign(new Error(`${code} ${details}`), { code, details }) });
const timedOut = () => grpc(4, 'DEADLINE_EXCEEDED: query timed out before a worker could process it');

/** A handle whose 'status' query gives each of `answers` in turn (an Error is thrown), then the last forever. */
function scripted(answers: (Error | object)[]) {
  let i = 0;
  const calls: string[] = [];
  const handle = {
    workflowId: 'p',
    query: async (name: string) => {
      calls.push(name);
      if (name === 'timeline') return [];
      const a = answers[Math.min(i++, answers.length - 1)]!;
      if (a instanceof Error) throw a;
      return a;
    },
    result: async () => undefined,
  } as unknown as WorkflowHandle;
  return { handle: new PipelineHandle(handle), calls };
}
const done = { phase: 'completed', stage: 'done', stages: {} };

test('a query that timed out on a busy worker is asked again, and the stream ends with the final status', async () => {
  const { handle } = scripted([timedOut(), grpc(14, 'UNAVAILABLE'), timedOut(), done]);
  const events = [];
  for await (const e of handle.progress(1)) events.push(e);
  expect(events).toEqual([{ type: 'done', status: done }]);
});

test('a non-transient answer ends the stream at once, with that error', async () => {
  const { handle, calls } = scripted([grpc(5, 'NOT_FOUND: workflow not found'), done]);
  const stream = handle.progress(1);
  await expect(stream.next()).rejects.toThrow('Failed to query Workflow');
  expect(calls.filter((c) => c === 'status')).toHaveLength(1);
});

test(`past ${PROGRESS_TRANSIENT_TRIES} transient answers in a row the last one is thrown`, async () => {
  const { handle, calls } = scripted([timedOut()]);
  await expect(handle.progress(1).next()).rejects.toThrow(ServiceError);
  expect(calls.filter((c) => c === 'status')).toHaveLength(PROGRESS_TRANSIENT_TRIES);
});

test('askAgainWhenTransient reads the code through the SDK\'s wrapping and passes results through', async () => {
  let n = 0;
  await expect(askAgainWhenTransient(async () => (++n < 3 ? Promise.reject(grpc(8, 'RESOURCE_EXHAUSTED')) : 'ok'), 1)).resolves.toBe('ok');
  expect(n).toBe(3);
  await expect(askAgainWhenTransient(() => Promise.reject(new Error('plain')), 1)).rejects.toThrow('plain');
});
