// The quota ledger entity workflow on the real dev server: concurrent admits never exceed a quota,
// validators reject without booking, releases free capacity, and state survives continue-as-new.
import { fileURLToPath } from 'node:url';
import { Client, Connection, WorkflowUpdateFailedError } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { admitUpdate, releaseUpdate, usageQuery, quotaLedger } from '../../workflows/ledger.js';
import { address, uniqueQueue, waitFor } from '../helpers.js';
import { tandemSinks } from '../../observe/sinks.js';

const workflowsPath = fileURLToPath(new URL('../../workflows/ledger.ts', import.meta.url));

describe('quotaLedger (real server)', () => {
  let client: Client;
  let connection: Connection;
  let native: NativeConnection;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = uniqueQueue('ledger');

  beforeAll(async () => {
    const workflowBundle = await bundleWorkflowCode({ workflowsPath, logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never });
    native = await NativeConnection.connect({ address: address() });
    worker = await Worker.create({
    sinks: tandemSinks({ record: false }), connection: native, taskQueue, workflowBundle });
    running = worker.run();
    connection = await Connection.connect({ address: address() });
    client = new Client({ connection });
  });

  afterAll(async () => {
    worker.shutdown();
    await running;
    await connection.close();
    await native.close();
  });

  const admit = (tenant: string, gpus: number, holdId: string) => ({ holdId, tenant, cpus: 4 * gpus, gpus, memoryMB: 1000 * gpus });

  test('concurrent admits: exactly as many as fit the quota are accepted; release frees capacity', async () => {
    const h = await client.workflow.start(quotaLedger, { taskQueue, workflowId: uniqueQueue('ledger-zurich'), args: [{ site: 'zurich', quotas: { a: { gpus: 8 } }, holds: {} }] });
    const results = await Promise.allSettled(Array.from({ length: 5 }, (_, k) => h.executeUpdate(admitUpdate, { args: [admit('a', 3, `p${k}`)] })));
    const ok = results.filter((r) => r.status === 'fulfilled');
    expect(ok).toHaveLength(2); // 3 + 3 = 6 ≤ 8; a third would be 9
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused).toHaveLength(3);
    expect(refused[0].reason).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String(refused[0].reason.cause?.message)).toMatch(/tenant a would use 9 gpus at site zurich, above its quota of 8/);
    expect(await h.query(usageQuery)).toEqual([{ tenant: 'a', cpus: 24, gpus: 6, memoryMB: 6000, quota: { gpus: 8 } }]);
    // Re-admitting an existing hold is idempotent (a retried activity).
    const admitted = ok.map((r) => (r as PromiseFulfilledResult<{ holdId: string }>).value.holdId);
    await h.executeUpdate(admitUpdate, { args: [admit('a', 3, admitted[0])] });
    expect((await h.query(usageQuery))[0].gpus).toBe(6);
    expect(await h.executeUpdate(releaseUpdate, { args: [{ holdId: admitted[0] }] })).toEqual({ released: true, hold: { tenant: 'a', cpus: 12, gpus: 3, memoryMB: 3000 } });
    expect(await h.executeUpdate(releaseUpdate, { args: [{ holdId: admitted[0] }] })).toEqual({ released: false });
    await h.executeUpdate(admitUpdate, { args: [admit('a', 5, 'big')] });
    expect((await h.query(usageQuery))[0].gpus).toBe(8);
    await h.terminate();
  });

  test('holds survive continue-as-new', async () => {
    const workflowId = uniqueQueue('ledger-lugano');
    const h = await client.workflow.start(quotaLedger, { taskQueue, workflowId, args: [{ site: 'lugano', quotas: { b: { cpus: 10 } }, holds: {}, maxOpsPerRun: 2 }] });
    const firstRun = (await h.describe()).runId;
    await h.executeUpdate(admitUpdate, { args: [{ holdId: 'x', tenant: 'b', cpus: 4, gpus: 0, memoryMB: 0 }] });
    await h.executeUpdate(admitUpdate, { args: [{ holdId: 'y', tenant: 'b', cpus: 4, gpus: 0, memoryMB: 0 }] });
    const latest = client.workflow.getHandle(workflowId);
    await waitFor('continue-as-new', async () => ((await latest.describe()).runId !== firstRun ? true : undefined), 20_000);
    expect((await latest.query(usageQuery))[0]).toMatchObject({ tenant: 'b', cpus: 8 });
    await expect(latest.executeUpdate(admitUpdate, { args: [{ holdId: 'z', tenant: 'b', cpus: 4, gpus: 0, memoryMB: 0 }] })).rejects.toThrow(WorkflowUpdateFailedError);
    await latest.terminate();
  });
});
