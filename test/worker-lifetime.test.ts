// createTandemWorker's run wrapper on a real Temporal dev server: what the activities hold open between
// calls (placement's inventory sources: a Kubernetes watch, say) is let go of when the worker's run
// ends, not before; a second run(), which the SDK refuses, closes nothing; and a close that fails is
// logged, never the run's result.
import { jest } from '@jest/globals';
import type { InventorySource } from '../activities/placement.js';
import { createTandemWorker } from '../workers/worker.js';
import { address, tempDir, uniqueQueue, workflowBundle } from './helpers.js';

function heldSource(opts: { fail?: boolean } = {}) {
  let closed = 0;
  const source: InventorySource = {
    name: 'held',
    gather: async () => ({ sites: [], running: [] }),
    close: () => {
      closed++;
      if (opts.fail) throw new Error('watch would not stop');
    },
  };
  return { source, closed: () => closed };
}

async function workerWith(source: InventorySource) {
  const { worker, connection } = await createTandemWorker({ address: address(), taskQueue: uniqueQueue('lifetime'), home: tempDir('lifetime'), inventorySources: [source], workflowBundle: await workflowBundle(), observe: false });
  return { worker, connection };
}

test('the activities close when the run ends, once, and a second run() closes nothing', async () => {
  const held = heldSource();
  const { worker, connection } = await workerWith(held.source);
  try {
    const running = worker.run();
    // Running: nothing closed yet.
    await new Promise((r) => setTimeout(r, 200));
    expect(worker.getState()).toBe('RUNNING');
    expect(held.closed()).toBe(0);
    worker.shutdown();
    await running;
    expect(held.closed()).toBe(1);
    // The SDK refuses a second run of one Worker; the wrapper must not close (or count) again.
    await expect(worker.run()).rejects.toThrow();
    expect(held.closed()).toBe(1);
  } finally {
    await connection.close();
  }
});

test("a close that fails is logged and the run still ends as the worker's own", async () => {
  const held = heldSource({ fail: true });
  const { worker, connection } = await workerWith(held.source);
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    const running = worker.run();
    await new Promise((r) => setTimeout(r, 200));
    worker.shutdown();
    await expect(running).resolves.toBeUndefined();
    expect(held.closed()).toBe(1);
    expect(warn.mock.calls.map((c) => String(c[0])).join('\n')).toMatch(/closing the activities' watches failed: .*watch would not stop/);
  } finally {
    warn.mockRestore();
    await connection.close();
  }
});
