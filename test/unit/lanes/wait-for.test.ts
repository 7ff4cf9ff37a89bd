// The tests' polling helper: a query no worker answered in time (the worker process is still bundling,
// or was just killed) is "not yet", not a failed test; any other error still ends the wait.
import { expect, test } from '@jest/globals';
import { waitFor } from '../../helpers.js';

const grpc = (code: number, details: string) => Object.assign(new Error('Failed to query Workflow'), { cause: Object.assign(new Error(`${code} ${details}`), { code, details }) });

test('a DEADLINE_EXCEEDED answer is asked again until a value comes', async () => {
  let calls = 0;
  const v = await waitFor('the answer', () => {
    calls++;
    if (calls < 3) throw grpc(4, 'query timed out before a worker could process it');
    return 42;
  }, 5_000, 1);
  expect(v).toBe(42);
  expect(calls).toBe(3);
});

test('a non-transient error ends the wait at once', async () => {
  let calls = 0;
  await expect(waitFor('the answer', () => {
    calls++;
    throw grpc(9, 'workflow task in failed state');
  }, 5_000, 1)).rejects.toThrow('Failed to query Workflow');
  expect(calls).toBe(1);
});

test('on timeout the last transient answer is named', async () => {
  await expect(waitFor('the answer', () => {
    throw grpc(4, 'query timed out before a worker could process it');
  }, 20, 5)).rejects.toThrow(/timed out after 20 ms waiting for the answer \(last answer: Failed to query Workflow: 4 query timed out/);
});
