// The worker's secrets never reach a job (backends/job-env.ts): a pipeline on the real local runtime
// whose command prints its whole environment, with canary secrets in the worker's environment. The
// canaries must appear nowhere: not in the job's output, its failure message, the workflow history
// (fetched with the client) or `runs export`. The model server is started the same way.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { LocalJobBackend } from '../backends/local-jobs.js';
import { LocalServingBackend } from '../backends/local-serving.js';
import { Runs } from '../sdk/runs.js';
import { address, jobNameOf, spec, startWorker, tempDir, uniqueQueue } from './helpers.js';

const CANARY = `canary-${randomBytes(6).toString('hex')}`;
// What a worker configured for FirecREST and slurmrestd holds (config/worker.ts reads them only when
// TANDEM_SLURM_API selects that API, so they change nothing else here), and an unrelated secret.
const SECRETS = { TANDEM_FIRECREST_CLIENT_SECRET: `${CANARY}-fc`, TANDEM_SLURMRESTD_TOKEN: `${CANARY}-jwt`, AWS_SECRET_ACCESS_KEY: `${CANARY}-aws` };
// The whole environment to stdout, then the lines that would carry a secret again at the end, so
// that they are in the output tail the failure message quotes.
const PRINT_ENV = 'env; echo ---; env | grep canary; echo "SPEC_VAR=$SPEC_VAR"; echo "TANDEM_JOB_ID=$TANDEM_JOB_ID"';

const saved: Record<string, string | undefined> = {};
beforeAll(() => {
  for (const [k, v] of Object.entries(SECRETS)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});
afterAll(() => {
  for (const k of Object.keys(SECRETS)) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

test("a job that prints env shows what its spec and Tandem set, and none of the worker's secrets", async () => {
  const home = tempDir('job-env');
  const w = await startWorker({ taskQueue: uniqueQueue('job-env'), home });
  try {
    const s = spec({ retry: { maxAttempts: 1 }, stages: { train: { runtime: 'local', command: ['/bin/sh', '-c', `${PRINT_ENV}; exit 3`], env: { SPEC_VAR: 'visible' } } } });
    const h = await w.tandem.launch(s, { id: 'job-env-1', tuning: { pollMaxMs: 300 } });
    const err = (await h.result().catch((e: unknown) => e)) as WorkflowFailedError;
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const message = `${err.message}\n${err.cause?.message}\n${(err.cause?.cause as Error | undefined)?.message ?? ''}`;
    // The job ran and its output tail is in the failure: the test would see a leak.
    expect(message).toMatch(/SPEC_VAR=visible/);
    expect(message).not.toContain(CANARY);

    const out = readFileSync(join(new LocalJobBackend(home).jobDir(await jobNameOf(h.workflow, 'train', 1)), 'stdout'), 'utf8');
    expect(out).toMatch(/^SPEC_VAR=visible$/m);
    expect(out).toMatch(/^TANDEM_JOB_ID=\S+$/m);
    expect(out).toMatch(/^PATH=/m); // the allowlist still passes
    expect(out).not.toContain(CANARY);
    expect(out).not.toMatch(/^(TEMPORAL_|NODE_OPTIONS=|TANDEM_TEST_)/m);

    const history = JSON.stringify(await w.tandem.client.workflow.getHandle('job-env-1').fetchHistory());
    expect(history).toContain('SPEC_VAR=visible'); // the tail is recorded, so a leak would be too
    expect(history).not.toContain(CANARY);
    expect(await new Runs(w.tandem).export('job-env-1')).not.toContain(CANARY);
  } finally {
    await w.stop();
  }
});

test("a model server that prints env and exits: its log and the deploy error carry none of the worker's secrets", async () => {
  const home = tempDir('job-env-serve');
  const serving = new LocalServingBackend(home);
  const err = (await serving.deploy({ name: 'env-serve', model: 'm', checkpoint: '/nowhere', command: ['/bin/sh', '-c', `${PRINT_ENV}; exit 1`], env: { SPEC_VAR: 'visible' } }).catch((e: unknown) => e)) as Error;
  expect(err.message).toMatch(/exited before binding a port[\s\S]*SPEC_VAR=visible/);
  expect(err.message).not.toContain(CANARY);
  const log = readFileSync(join(home, 'deployments', 'env-serve', 'server.log'), 'utf8');
  expect(log).toMatch(/^TANDEM_CHECKPOINT=\/nowhere$/m);
  expect(log).not.toContain(CANARY);
  await serving.undeploy('env-serve');
});

test("an Argo pod that prints env, and the audit log of the run: none of the worker's secrets", async () => {
  const home = tempDir('job-env-argo');
  const taskQueue = uniqueQueue('job-env-argo');
  const w = await startWorker({ taskQueue, home });
  const { ArgoClient, prepare, ID_PREFIX } = await import('../argo/client.js');
  const argo = await ArgoClient.connect({ address: address(), taskQueue });
  try {
    const yaml = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: { name: env-canary }
spec:
  entrypoint: main
  templates:
    - name: main
      outputs:
        parameters:
          - { name: env, valueFrom: { path: /tmp/env.txt } }
      container:
        image: alpine:3.20
        command: [sh, -c]
        args: ["env > /tmp/env.txt; env; echo SPEC_VAR=$SPEC_VAR"]
        env: [{ name: SPEC_VAR, value: visible }]
`;
    const { id } = await argo.submit(prepare('env-canary.yaml', { text: yaml }));
    const status = await argo.wait(id);
    expect(status.phase).toBe('Succeeded');
    const all = JSON.stringify(status);
    expect(all).toContain('SPEC_VAR=visible'); // the pod's environment is in its output: a leak would be too
    expect(all).not.toContain(CANARY);
    // Payload data is base64 in the fetched history: read it as text.
    const raw = await argo.client.workflow.getHandle(`${ID_PREFIX}${id}`).fetchHistory();
    const history = JSON.stringify(JSON.parse(JSON.stringify(raw)), (k, v: unknown) => (k === 'data' && typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : v));
    expect(history).toContain('SPEC_VAR=visible');
    expect(history).not.toContain(CANARY);
    // The pipeline's side effects are audited (who, what, where) without environments or secrets.
    const s = spec({ stages: { train: { runtime: 'local', steps: 10, checkpointEvery: 5, env: { SPEC_VAR: 'visible' } } } });
    await (await w.tandem.launch(s, { id: 'job-env-audit', tuning: { pollMaxMs: 300 } })).result();
    const audit = readFileSync(join(home, 'audit.jsonl'), 'utf8');
    expect(audit).toMatch(/"job\.submitted"/);
    expect(audit).not.toContain(CANARY);
    expect(audit).not.toContain('SPEC_VAR');
  } finally {
    await argo.close();
    await w.stop();
    for (const d of new LocalServingBackend(home).list()) await new LocalServingBackend(home).undeploy(d.name);
  }
}, 120_000);
