// Tenant quotas across pipelines: each stage books its resources in the site's quotaLedger before it
// submits (real quota activities and ledger on the real dev server, scripted jobs otherwise).
import { WorkflowFailedError } from '@temporalio/client';
import { fakeActivities } from '../fake-activities.js';
import { spec, startWorker, tempDir, temporalClient, uniqueQueue, waitFor } from '../helpers.js';
import { createActivities } from '../../activities/index.js';
import { ledgerId } from '../../activities/quota.js';
import { usageQuery } from '../../workflows/ledger.js';
import { parseQuotasFile } from '../../contract/quotas.js';
import { formatQuotaUsage, quotaUsage } from '../../cli/quotas.js';

const gpuSpec = (tenant: string, gpus: number, extra: object = {}) =>
  spec({ tenant, ...extra, stages: { preprocess: { runtime: 'local' }, train: { runtime: 'local', resources: { gpusPerNode: gpus } } } });

describe('tenant quotas (real server, real ledger)', () => {
  test('two pipelines of one tenant never hold more than its quota: the second trains after the first releases', async () => {
    // Each train stage needs 4 GPUs; the tenant may hold 6 at once.
    const quotas = parseQuotasFile('quotas:\n  local:\n    vision: {gpus: 6}\nretryInterval: 200ms\n');
    const fake = fakeActivities({ blockOn: 'train', blockOnce: true, quotas });
    const taskQueue = uniqueQueue('quota-two');
    const w = await startWorker({ taskQueue, activities: fake.acts });
    const { client, close } = await temporalClient();
    try {
      const first = await w.tandem.launch(gpuSpec('vision', 4), { id: uniqueQueue('quota-first'), tuning: { heartbeatTimeoutMs: 2000 } });
      await fake.blocked; // the first pipeline's training job runs, holding 4 GPUs
      const second = await w.tandem.launch(gpuSpec('vision', 4), { id: uniqueQueue('quota-second') });
      const wait = await waitFor('the second pipeline to wait for quota', async () => (await second.timeline()).find((e) => e.kind === 'quota-wait'));
      expect(wait.message).toMatch(/tenant vision would use 8 gpus at site local, above its quota of 6 \(in use: 4\)/);
      expect(fake.calls.filter((c) => c.startsWith('submitJob:') && c.includes('-train-'))).toHaveLength(1);
      const usage = await client.workflow.getHandle(ledgerId(taskQueue, 'local')).query(usageQuery);
      expect(usage.find((u) => u.tenant === 'vision')).toMatchObject({ gpus: 4, quota: { gpus: 6 } });
      // `tandem quotas` finds the ledger through visibility (eventually consistent) and queries it.
      const listed = await waitFor('the ledger in visibility', async () => ((await quotaUsage(w.tandem)).length ? quotaUsage(w.tandem) : undefined));
      expect(formatQuotaUsage(listed)).toMatch(/^SITE\s+TENANT\s+CPUS\s+GPUS\s+MEMORY MB\nlocal\s+vision\s+1\s+4\/6\s+1024\s*$/);

      // Cancelling the first releases its hold (saga); the second then books and trains.
      await first.cancel();
      await expect(first.result()).rejects.toThrow();
      const comp = (await first.timeline()).filter((e) => e.kind === 'compensation').map((e) => e.message);
      expect(comp).toContain("release train's quota hold at local");
      const done = await second.result();
      expect(done.trainingAttempts).toBe(1);
      const tl = await second.timeline();
      const kinds = tl.map((e) => e.kind);
      // Held before its job was submitted, released when training ended.
      const trainHold = tl.findIndex((e) => e.kind === 'quota' && e.stage === 'train' && /^holding 1 CPU, 4 GPUs, 1024 MB of tenant vision's quota at local \(1 CPU, 4 GPUs, 1024 MB in use of 6 GPUs\)$/.test(e.message));
      expect(trainHold).toBeGreaterThan(kinds.indexOf('quota-wait'));
      expect(trainHold).toBeLessThan(tl.findIndex((e) => e.kind === 'job-submitted' && e.stage === 'train'));
      expect(tl.some((e) => e.kind === 'quota' && e.message === "released train's quota hold at local")).toBe(true);
      expect((await client.workflow.getHandle(ledgerId(taskQueue, 'local')).query(usageQuery)).find((u) => u.tenant === 'vision')).toMatchObject({ gpus: 0 });
    } finally {
      await close();
      await w.stop();
    }
  });

  test('a stage bigger than its tenant\'s whole quota fails at once, before anything is submitted', async () => {
    const quotas = parseQuotasFile('quotas:\n  "*":\n    small: {gpus: 2}\n');
    const fake = fakeActivities({ quotas });
    const w = await startWorker({ taskQueue: uniqueQueue('quota-never'), activities: fake.acts });
    try {
      const h = await w.tandem.launch(gpuSpec('small', 4), { id: uniqueQueue('quota-never') });
      const err = await h.result().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(String((err as WorkflowFailedError).cause?.message)).toMatch(/stage train failed: train: the stage needs 4 gpus, more than tenant small's whole quota of 2 at site local/);
      expect(fake.calls.some((c) => c.startsWith('submitJob:') && c.includes('-train-'))).toBe(false);
    } finally {
      await w.stop();
    }
  });

  test('waiting for quota stops at the deadline with a clear reason', async () => {
    const quotas = parseQuotasFile('quotas:\n  local:\n    busy: {cpus: 1}\nretryInterval: 300ms\n');
    const fake = fakeActivities({ quotas, blockOn: 'train' });
    const w = await startWorker({ taskQueue: uniqueQueue('quota-deadline'), activities: fake.acts });
    try {
      // preprocess (1 CPU) holds the whole quota while the other pipeline trains… so train waits.
      const holder = await w.tandem.launch(spec({ tenant: 'busy', stages: { preprocess: { runtime: 'local' }, train: { runtime: 'local' } } }), { id: uniqueQueue('quota-holder'), tuning: { heartbeatTimeoutMs: 2000 } });
      await fake.blocked;
      const deadline = new Date(Date.now() + 4000).toISOString();
      const late = await w.tandem.launch(spec({ tenant: 'busy', deadline, stages: { preprocess: { runtime: 'local' }, train: { runtime: 'local' } } }), { id: uniqueQueue('quota-late') });
      const err = await late.result().catch((e: unknown) => e);
      expect(String((err as WorkflowFailedError).cause?.message)).toMatch(/no room in tenant busy's quota at local before the deadline/);
      await holder.cancel();
    } finally {
      await w.stop();
    }
  });

  test("a worker's quota activities book at the site of the stage's runtime", async () => {
    const acts = createActivities({ home: tempDir('quota-acts'), quotas: parseQuotasFile('quotas:\n  local:\n    t: {gpus: 1}\n') });
    // Neither answer needs the ledger (nor an activity context): no quota, or a stage above the whole quota.
    const ask = (tenant: string) => acts.admitQuota({ holdId: 'h', tenant, stage: 'train', runtime: 'local', cpus: 1, gpus: 2, memoryMB: 1 });
    expect(await ask('t')).toMatchObject({ admitted: false, never: true, site: 'local', reason: "the stage needs 2 gpus, more than tenant t's whole quota of 1 at site local" });
    expect(await ask('other')).toEqual({ admitted: true, managed: false, site: 'local' });
    await expect(acts.admitQuota({ holdId: 'h', tenant: 't', stage: 'train', runtime: 'slurm', cpus: 1, gpus: 0, memoryMB: 1 })).rejects.toThrow(/runtime "slurm", but this worker has no such backend/);
  });

  test('quotas file errors name the field', () => {
    expect(() => parseQuotasFile('quotas:\n  Zurich:\n    a: {gpus: 1}\n', 'q.yaml')).toThrow(/q\.yaml.*quotas\.Zurich/s);
    expect(() => parseQuotasFile('quotas:\n  zurich:\n    a: {gpu: 1}\n', 'q.yaml')).toThrow(/gpu/);
    expect(() => parseQuotasFile('quotas: {}\nretryInterval: soon\n', 'q.yaml')).toThrow(/retryInterval.*duration/s);
  });
});
