// A plugin worker gets Tandem's worker slots (workers/slots.ts), as `tandem worker` does, unless the
// team's Worker sizes its own.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkerOptions } from '@temporalio/worker';
import { loadWorkerConfig } from '../../../config/worker.js';
import { TandemPlugin } from '../../../workers/plugin.js';
import { ActivitySlots } from '../../../workers/slots.js';

const home = mkdtempSync(join(tmpdir(), 'tandem-plugin-slots-'));
const base: WorkerOptions = { taskQueue: 'q', activities: {} };

test('the plugin sizes a Worker that sizes nothing itself from TANDEM_WORKER_*', () => {
  const plugin = new TandemPlugin({ config: loadWorkerConfig({ TANDEM_HOME: home, TANDEM_WORKER_MAX_ACTIVITIES: '7', TANDEM_WORKER_MAX_WATCHES: '70', TANDEM_WORKER_MAX_CACHED_WORKFLOWS: '30' }), activities: {}, metrics: false });
  const o = plugin.configureWorker(base);
  const slots = o.tuner && 'activityTaskSlotSupplier' in o.tuner ? o.tuner.activityTaskSlotSupplier : undefined;
  expect(slots).toBeInstanceOf(ActivitySlots);
  expect((slots as ActivitySlots).bounds).toEqual({ maxActivities: 7, maxWatches: 70 });
  expect(o.maxCachedWorkflows).toBe(30);
  expect(o.tuner && 'workflowTaskSlotSupplier' in o.tuner && o.tuner.workflowTaskSlotSupplier).toEqual({ type: 'fixed-size', numSlots: 30 });
});

test("a Worker's own cache size is kept and caps its workflow-task slots; 0 (no cache) caps nothing", () => {
  const plugin = new TandemPlugin({ config: loadWorkerConfig({ TANDEM_HOME: home }), activities: {}, metrics: false });
  const workflowSlots = (o: WorkerOptions) => (o.tuner && 'workflowTaskSlotSupplier' in o.tuner ? o.tuner.workflowTaskSlotSupplier : undefined);
  const small = plugin.configureWorker({ ...base, maxCachedWorkflows: 9 });
  expect(small.maxCachedWorkflows).toBe(9);
  expect(workflowSlots(small)).toEqual({ type: 'fixed-size', numSlots: 9 });
  const none = plugin.configureWorker({ ...base, maxCachedWorkflows: 0 });
  expect(none.maxCachedWorkflows).toBe(0);
  expect(workflowSlots(none)).toEqual({ type: 'fixed-size', numSlots: 40 });
});

test("a Worker's own sizing is kept", () => {
  const plugin = new TandemPlugin({ config: loadWorkerConfig({ TANDEM_HOME: home }), activities: {}, metrics: false });
  const o = plugin.configureWorker({ ...base, maxConcurrentActivityTaskExecutions: 3, maxCachedWorkflows: 9 });
  expect(o.tuner).toBeUndefined();
  expect(o.maxConcurrentActivityTaskExecutions).toBe(3);
  expect(o.maxCachedWorkflows).toBe(9);
});
