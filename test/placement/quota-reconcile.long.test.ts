// Quota holds that outlive their run: a run terminated by Temporal (so no compensation runs) has its
// hold released by the site's ledger within LEDGER_RECONCILE_MS, while live runs keep theirs; an
// operator can release a hold by hand with `tandem quotas release`. Real dev server, real quota
// activities and ledger; the jobs are scripted (test/fake-activities.ts): no real job is needed to
// hold quota, and a terminated run never cancels its job anyway.
import { execFile } from 'node:child_process';
import { fakeActivities } from '../fake-activities.js';
import { address, spec, startWorker, temporalClient, uniqueQueue, waitFor } from '../helpers.js';
import { ledgerId } from '../../activities/quota.js';
import { parseQuotasFile } from '../../contract/quotas.js';
import { holdsQuery, LEDGER_RECONCILE_MS } from '../../workflows/ledger.js';
import { quotaUsage } from '../../cli/quotas.js';

const quotas = parseQuotasFile('quotas:\n  local:\n    vision: {gpus: 8}\n');
const trainSpec = () => spec({ tenant: 'vision', stages: { preprocess: { runtime: 'local' }, train: { runtime: 'local', resources: { gpusPerNode: 4 } } } });

// Asynchronous on purpose: a synchronous spawn would starve the in-process test worker.
function tandem(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', TEMPORAL_ADDRESS: address() }, timeout: 60_000 }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out, err });
    });
  });
}

describe('quota holds of closed runs (real server, real ledger)', () => {
  test('a terminated run (no compensation) has its hold released by the ledger; a running one keeps its hold', async () => {
    const fake = fakeActivities({ blockOn: 'train', quotas });
    const taskQueue = uniqueQueue('quota-reconcile');
    const w = await startWorker({ taskQueue, activities: fake.acts });
    const { client, close } = await temporalClient();
    try {
      const ledger = client.workflow.getHandle(ledgerId(taskQueue, 'local'));
      const [gone, live] = [uniqueQueue('quota-terminated'), uniqueQueue('quota-live')];
      const runs = [await w.tandem.launch(trainSpec(), { id: gone }), await w.tandem.launch(trainSpec(), { id: live })];
      await waitFor('both train holds', async () => {
        const holds = await ledger.query(holdsQuery).catch(() => undefined);
        return holds?.[`${gone}/train`] && holds[`${live}/train`] ? true : undefined;
      }, 60_000);
      expect((await ledger.query(holdsQuery))[`${gone}/train`]).toMatchObject({ tenant: 'vision', gpus: 4, holder: gone });

      await runs[0]!.workflow.terminate('test: no compensation runs');
      await waitFor('the ledger to release the terminated run\'s hold', async () => (!((await ledger.query(holdsQuery))[`${gone}/train`]) ? true : undefined), 3 * LEDGER_RECONCILE_MS, 500);
      expect(fake.calls.filter((c) => c.startsWith('cancelJob:'))).toEqual([]); // released by the ledger, not by a saga
      // The same reconciliation asked about the live run and kept its hold.
      expect((await ledger.query(holdsQuery))[`${live}/train`]).toMatchObject({ gpus: 4, holder: live });
      await runs[1]!.cancel();
      await runs[1]!.result().catch(() => undefined);
    } finally {
      await close();
      await w.stop();
    }
  });

  test('tandem quotas release frees a hold by hand, says what it released, and names an unknown hold clearly', async () => {
    const fake = fakeActivities({ blockOn: 'train', quotas });
    const taskQueue = uniqueQueue('quota-release');
    const w = await startWorker({ taskQueue, activities: fake.acts });
    const { client, close } = await temporalClient();
    try {
      const id = uniqueQueue('quota-held');
      const run = await w.tandem.launch(trainSpec(), { id });
      await fake.blocked;
      const ledger = client.workflow.getHandle(ledgerId(taskQueue, 'local'));
      await waitFor('the train hold', async () => (await ledger.query(holdsQuery))[`${id}/train`]);
      await waitFor('the ledger in visibility', async () => ((await quotaUsage(w.tandem)).length ? true : undefined));

      const unknown = await tandem(['quotas', 'release', 'no-such-run/train', '--task-queue', taskQueue]);
      expect(unknown).toMatchObject({ code: 2, out: '', err: `tandem: no quota hold "no-such-run/train" at any site; holds: ${id}/train (local)\n` });

      const r = await tandem(['quotas', 'release', `${id}/train`, '--site', 'local', '--task-queue', taskQueue]);
      expect(r).toMatchObject({ code: 0, err: '' });
      expect(r.out).toBe(`released quota hold ${id}/train at local: 1 CPU, 4 GPUs, 1024 MB of tenant vision's quota; held by ${id} (still running: its job now runs outside the quota)\n`);
      expect((await ledger.query(holdsQuery))[`${id}/train`]).toBeUndefined();

      const again = await tandem(['quotas', 'release', `${id}/train`, '--site', 'local', '--task-queue', taskQueue, '--json']);
      expect(again).toMatchObject({ code: 2, err: `tandem: no quota hold "${id}/train" at site local; nothing is held\n` });
      const noLedger = await tandem(['quotas', 'release', `${id}/train`, '--site', 'lugano', '--task-queue', taskQueue]);
      expect(noLedger).toMatchObject({ code: 2, err: `tandem: no quota ledger for site "lugano" on task queue ${taskQueue} (it starts with the first stage that holds quota there)\n` });

      // The run's own release at the end is idempotent: its saga still runs cleanly.
      await run.cancel();
      await run.result().catch(() => undefined);
      expect((await run.timeline()).filter((e) => e.kind === 'compensation-failed')).toEqual([]);
    } finally {
      await close();
      await w.stop();
    }
  });
});
