// One worker process of bench:scale (bench/scale.ts starts two, as test:scale starts one per host):
// Tandem's own worker (createTandemWorker: its sinks, activity interceptor and slot settings) with the
// no-op backends of test/fake-activities.ts and the bare baseline's `noop`, configured from the
// environment the way `npm run worker` is (config/worker.ts: TEMPORAL_* for mTLS, TANDEM_TASK_QUEUE,
// TANDEM_WORKER_* for its slots and cache).
//   SCALE_BUNDLE   the prebuilt workflow bundle (both processes run the same code)
//   SCALE_BLOCK    "train": every train watch runs until cancelled, heartbeating at the real watches' cadence
//                  (a third of the default heartbeat timeout): the memory run's running pipelines
// It prints "worker ready <pid>" once polling, and drains and exits on SIGTERM.
import { Context } from '@temporalio/activity';
import { Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWorkerConfig } from '../config/worker.js';
import { TUNING_DEFAULTS, watchHeartbeatMs } from '../contract/tuning.js';
import { fakeActivities } from '../test/fake-activities.js';
import { createTandemWorker } from '../workers/worker.js';

Runtime.install({ telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
const { SCALE_BUNDLE, SCALE_BLOCK } = process.env;
if (!SCALE_BUNDLE) throw new Error('SCALE_BUNDLE must be set');
const home = mkdtempSync(join(tmpdir(), 'tandem-bench-scale-worker-'));
const cfg = loadWorkerConfig({ ...process.env, TANDEM_HOME: home });
const { address, ...connection } = cfg.connection;
const fake = fakeActivities();
if (SCALE_BLOCK === 'train') {
  const watch = fake.acts.awaitJob;
  fake.acts.awaitJob = async (input) => {
    if (!input.ref.name.includes('-train-')) return watch(input);
    const ctx = Context.current();
    for (;;) {
      ctx.heartbeat({ state: 'RUNNING', progress: { step: 1, total: 10 } });
      await ctx.sleep(watchHeartbeatMs(TUNING_DEFAULTS.heartbeatTimeoutMs)); // throws CancelledFailure once cancelled
    }
  };
}
const { worker, connection: conn } = await createTandemWorker({
  address,
  connection,
  namespace: cfg.namespace,
  taskQueue: cfg.taskQueue,
  home,
  workflowBundle: { codePath: SCALE_BUNDLE },
  activities: { ...fake.acts, noop: async (i: number) => i },
  slots: cfg.slots,
});
process.once('SIGTERM', () => worker.shutdown());
console.log(`worker ready ${process.pid}`);
await worker.run();
await conn.close();
rmSync(home, { recursive: true, force: true });
