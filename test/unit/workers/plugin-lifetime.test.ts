// Workers given the same TandemPlugin share its activities (one kept inventory): what those hold open
// (placement's Kubernetes watches) closes when the last of them stops, not when the first does, and a
// worker run again closes what it reopened.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker, WorkerOptions } from '@temporalio/worker';
import { loadWorkerConfig } from '../../../config/worker.js';
import type { InventorySource } from '../../../activities/placement.js';
import { TandemPlugin } from '../../../workers/plugin.js';

const home = mkdtempSync(join(tmpdir(), 'tandem-plugin-lifetime-'));
const base: WorkerOptions = { taskQueue: 'q' };

function bed() {
  let closed = 0;
  const source: InventorySource = { name: 'held', gather: async () => ({ sites: [], running: [] }), close: () => void closed++ };
  const plugin = new TandemPlugin({ config: loadWorkerConfig({ TANDEM_HOME: home }), home, inventorySources: [source], metrics: false });
  return { plugin, closed: () => closed };
}

/** A worker run the test ends: runWorker's next() resolves (or rejects) when told. */
function run(plugin: TandemPlugin) {
  let end!: (e?: Error) => void;
  const done = plugin.runWorker({} as Worker, () => new Promise<void>((res, rej) => (end = (e) => (e ? rej(e) : res()))));
  return { done, stop: () => end(), fail: (e: Error) => end(e) };
}

test('two Workers with one plugin get the same activities; the first to stop closes nothing the other uses', async () => {
  const b = bed();
  const one = b.plugin.configureWorker(base).activities as Record<string, unknown>;
  const two = b.plugin.configureWorker(base).activities as Record<string, unknown>;
  expect(typeof one.placeJob).toBe('function');
  expect(two.placeJob).toBe(one.placeJob);
  const a = run(b.plugin);
  const c = run(b.plugin);
  a.stop();
  await a.done;
  expect(b.closed()).toBe(0);
  c.stop();
  await c.done;
  expect(b.closed()).toBe(1);
});

test('a worker run again closes again at its stop, and a run that fails closes too', async () => {
  const b = bed();
  b.plugin.configureWorker(base);
  const first = run(b.plugin);
  first.stop();
  await first.done;
  expect(b.closed()).toBe(1);
  const again = run(b.plugin);
  again.fail(new Error('worker crashed'));
  await expect(again.done).rejects.toThrow('worker crashed');
  expect(b.closed()).toBe(2);
});
