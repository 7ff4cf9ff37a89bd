// The tenant policy (contract/tenant-policy.ts) on the real dev server and the real local runtime:
// the SDK refuses a launch before anything starts; a run started with client.workflow.start (no SDK,
// so no check) is refused by the worker's activities with TenantPolicyDenied before any job or run
// directory exists; an allowed run completes.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createTandemWorker } from '../workers/worker.js';
import { TandemClient } from '../sdk/client.js';
import { LocalServingBackend } from '../backends/local-serving.js';
import { runDirs } from '../activities/run-store.js';
import { TenantPolicyError, parseTenantPolicy } from '../contract/tenant-policy.js';
import { loadTenantPolicyConfig } from '../config/worker.js';
import type { PipelineSpec } from '../contract/pipeline.js';
import { address, spec, tempDir, uniqueQueue, workflowBundle } from './helpers.js';

const POLICY = `tenants:
  team-a:
    sites: [local]
    maxGpusPerJob: 0
  team-b:
    sites: [zurich]
`;
const tuning = { pollMaxMs: 300 };

let home: string;
let taskQueue: string;
let tandem: TandemClient;
let stop: () => Promise<void>;

beforeAll(async () => {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') }); // as test/helpers.ts startWorker does
  } catch {
    /* already installed */
  }
  home = tempDir('tenant-policy');
  const file = join(home, 'tenant-policy.yaml');
  writeFileSync(file, POLICY);
  // As workers/main.ts and `tandem dev` load it: TANDEM_TENANT_POLICY through config/worker.ts.
  const loaded = loadTenantPolicyConfig({ TANDEM_TENANT_POLICY: file });
  taskQueue = uniqueQueue('tenant-policy');
  const { worker, connection } = await createTandemWorker({ address: address(), taskQueue, home, tenantPolicy: loaded?.parsed, workflowBundle: await workflowBundle() });
  const running = worker.run();
  tandem = await TandemClient.connect({ address: address(), taskQueue });
  stop = async () => {
    await tandem.close();
    worker.shutdown();
    await running;
    await connection.close();
  };
});

afterAll(async () => {
  for (const d of new LocalServingBackend(home).list()) await new LocalServingBackend(home).undeploy(d.name);
  await stop?.();
});

const policy = parseTenantPolicy(POLICY);
/** What the local runtime left in the worker's home: run `id`'s directory, and every job (the refused
 *  tests run before the allowed one, so there must be none at all). */
const leftBehind = (id: string) => ({ runDir: existsSync(runDirs(home, id).root), jobs: existsSync(join(home, 'jobs')) ? readdirSync(join(home, 'jobs')) : [] });

test('the SDK refuses a launch the policy does not allow, before any workflow exists', async () => {
  const s = spec({ tenant: 'team-b', stages: { train: { runtime: 'local' } } });
  const err = await tandem.launch(s, { id: 'tp-sdk-refused', tenantPolicy: policy }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(TenantPolicyError);
  expect((err as TenantPolicyError).issues).toEqual([{ path: 'stages.train.runtime', message: 'tenant "team-b" may not use site "local" (runtime local runs there; allowed: zurich)' }]);
  expect((err as Error).message).toMatch(/^spec: refused by the tenant policy\n {2}- stages\.train\.runtime: tenant "team-b" may not use site "local"/);
  await expect(tandem.client.workflow.getHandle('tp-sdk-refused').describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  expect(leftBehind('tp-sdk-refused')).toEqual({ runDir: false, jobs: [] });
});

test('runs started without the SDK are refused by the worker with TenantPolicyDenied, leaving nothing behind', async () => {
  const site = spec({ tenant: 'team-b', stages: { train: { runtime: 'local' } } });
  const gpus = spec({ tenant: 'team-a', stages: { train: { resources: { gpusPerNode: 1 } } } }); // runtime auto: refused at placement
  // A refused variable the schema would stop at the SDK, put in after validation as a hand-made client could.
  const env: PipelineSpec = spec({ tenant: 'team-a', stages: { preprocess: { runtime: 'local' } } });
  env.stages.preprocess.env = { LD_PRELOAD: '/tmp/evil.so' };
  const cases = [
    { id: 'tp-direct-site', spec: site, want: /^stage preprocess failed: refused by the tenant policy:\n {2}- stages\.train\.runtime: tenant "team-b" may not use site "local" \(runtime local runs there; allowed: zurich\)$/ }, // checked whole, at preprocess's placement
    { id: 'tp-direct-gpus', spec: gpus, want: /stages\.train\.resources\.gpusPerNode: tenant "team-a" may ask for at most 0 GPUs per job; this one asks for 1/ },
    { id: 'tp-direct-env', spec: env, want: /stages\.preprocess\.env\.LD_PRELOAD: tenant "team-a" may not set LD_PRELOAD/ },
  ];
  await Promise.all(
    cases.map(async (c) => {
      const h = await tandem.client.workflow.start('hybridPipeline', { taskQueue, workflowId: c.id, args: [{ spec: c.spec, tuning }] });
      const err = (await h.result().catch((e: unknown) => e)) as WorkflowFailedError;
      expect(err).toBeInstanceOf(WorkflowFailedError);
      const cause = err.cause as Error & { type?: string; cause?: Error & { type?: string } };
      expect(cause.type).toBe('TenantPolicyDenied'); // the run's failure keeps the activity's type
      expect(cause.message).toMatch(c.want);
      const status = (await h.query('status')) as { phase: string; stages: Record<string, { status: string; attempts?: number }> };
      expect(status.phase).toBe('failed');
      expect(status.stages.preprocess.status).toBe('failed');
      expect(status.stages.train.status).toBe('pending');
      expect(leftBehind(c.id)).toEqual({ runDir: false, jobs: [] });
    }),
  );
  // The policy alone refused them: without it (site "local" unnamed) the same worker runs local jobs.
  expect(new LocalServingBackend(home).list()).toEqual([]);
});

test('an allowed spec runs to completion, placed on the tenant\'s site', async () => {
  const s = spec({ tenant: 'team-a', stages: { preprocess: { samples: 200 }, train: { steps: 20, checkpointEvery: 10 } } });
  const h = await tandem.launch(s, { id: 'tp-allowed', tuning, tenantPolicy: policy });
  const result = await h.result();
  expect(result).toMatchObject({ pipeline: 'test', checkpoint: { step: 20 }, trainingAttempts: 1 });
  const placed = (await h.timeline()).filter((e) => e.kind === 'placement');
  expect(placed.map((e) => e.site)).toEqual(['local', 'local']);
});
