// The secrets canary (issue [security] item 5): a real `tandem worker` process (workers/main.ts, the
// production entry point, JSON logs at DEBUG) holds canary secrets in every backend it is configured
// for — the FirecREST client secret of its training site, the FirecREST client secret and the
// slurmrestd token of its failover sites file, and an unrelated secret in its environment. It runs a
// pipeline through FirecREST, a failing job that prints its whole environment, an Argo workflow whose
// pod does the same, and a failover (NODE_FAIL at the first site, resumed at the other). Then
// the workflow histories, the worker's own log, the CLI's output (runs show / export, argo get / logs,
// audit list), the job outputs and the audit log must contain no canary anywhere.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { WorkflowFailedError } from '@temporalio/client';
import { TandemClient } from '../../sdk/client.js';
import { ArgoClient, prepare, ID_PREFIX } from '../../argo/client.js';
import type { PipelineTuning } from '../../contract/tuning.js';
import { address, jobNameOf, spec, stopLocalDeployments, uniqueQueue, waitFor } from '../helpers.js';
import { startSite, type TestSite } from '../recovery/sites.js';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const CANARY = `canary-${randomBytes(6).toString('hex')}`;
const SECRETS = {
  TANDEM_FIRECREST_CLIENT_SECRET: `${CANARY}-fc`, // the training site's (lugano) client secret
  TANDEM_CANARY_SITES_FC: `${CANARY}-fc`, // the same secret, as the sites file names it for lugano
  TANDEM_CANARY_SITES_JWT: `${CANARY}-jwt`, // zurich's slurmrestd token (sent; rest_auth/local ignores it)
  AWS_SECRET_ACCESS_KEY: `${CANARY}-aws`, // unrelated to Tandem: must not reach jobs either
};
const PRINT_ENV = 'env; echo ---; env | grep canary; echo "SPEC_VAR=$SPEC_VAR"';

let zurich: TestSite;
let lugano: TestSite;
let worker: ChildProcess;
let workerOut: string[] = [];
let home: string;
let taskQueue: string;
let oldUmask: number;
let workerEnv: NodeJS.ProcessEnv;
let failed: TestSite | undefined;
const cliOut: string[] = [];

const exited = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

function tandemCli(args: string[]): Promise<string> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', TSX, 'cli/main.ts', ...args], { encoding: 'utf8', env: workerEnv, timeout: 60_000 }, (error, out, err) => {
      const text = `$ tandem ${args.join(' ')}\n${out}${err}${error && !err ? String(error.message) : ''}`;
      cliOut.push(text);
      resolve(text);
    });
  });
}

beforeAll(async () => {
  oldUmask = process.umask(0); // jobs run as the clusters' unprivileged user and write under TANDEM_HOME
  [zurich, lugano] = await Promise.all([startSite('zurich'), startSite('lugano', 'firecrest', { clientSecret: SECRETS.TANDEM_CANARY_SITES_FC })]);
  // Readable by the clusters' unprivileged job user, unlike the test run's private temp folder.
  home = mkdtempSync(join(tmpdir(), 'tandem-canary-'));
  chmodSync(home, 0o777);
  mkdirSync(join(home, 'conf'), { recursive: true });
  const sitesFile = join(home, 'conf', 'sites.yaml');
  const entry = (s: TestSite) => {
    const { config } = s;
    if (config.api === 'firecrest') return { ...config, clientSecretEnv: 'TANDEM_CANARY_SITES_FC' };
    return { ...config, tokenEnv: 'TANDEM_CANARY_SITES_JWT' };
  };
  writeFileSync(sitesFile, stringify({ sites: [entry(zurich), entry(lugano)] }));
  taskQueue = uniqueQueue('canary');
  const fc = lugano.firecrest!;
  workerEnv = {
    ...process.env,
    ...SECRETS,
    NODE_OPTIONS: '',
    TEMPORAL_ADDRESS: address(),
    TANDEM_TASK_QUEUE: taskQueue,
    TANDEM_HOME: home,
    TANDEM_LOG_FORMAT: 'json',
    TANDEM_LOG_LEVEL: 'DEBUG',
    TANDEM_SITES_FILE: sitesFile,
    TANDEM_SLURM_API: 'firecrest',
    TANDEM_SLURM_SITE: 'lugano',
    TANDEM_FIRECREST_URL: fc.baseUrl,
    TANDEM_FIRECREST_TOKEN_URL: fc.tokenUrl,
    TANDEM_FIRECREST_SYSTEM: 'lugano',
    TANDEM_FIRECREST_CLIENT_ID: lugano.config.api === 'firecrest' ? lugano.config.clientId : '',
    TANDEM_SLURM_WORKDIR: lugano.cluster.workDir,
    TANDEM_SLURM_STATUS_INTERVAL_MS: '300',
  };
  workerOut = [];
  worker = spawn(process.execPath, ['--import', TSX, 'workers/main.ts'], { env: workerEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const s of [worker.stdout!, worker.stderr!]) s.on('data', (d: Buffer) => (workerOut.push(d.toString()), process.env.TANDEM_TEST_VERBOSE && process.stderr.write(`[worker] ${d}`)));
  await waitFor('the worker to poll', () => (workerOut.join('').includes('polling task queue') ? true : undefined), 90_000, 200);
}, 240_000);

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    worker.kill('SIGINT');
    await Promise.race([exited(worker), new Promise((r) => setTimeout(r, 20_000))]);
    if (worker.exitCode === null) worker.kill('SIGKILL');
  }
  process.umask(oldUmask);
  await failed?.cluster.cli('scontrol', ['update', `nodename=${failed.cluster.node}`, 'state=resume']).catch(() => undefined);
  await lugano?.gateway?.close();
  await Promise.all([zurich?.cluster.down(), lugano?.cluster.down()]);
  if (home) await stopLocalDeployments(home); // the runs' model servers, before their directories go
  if (home) rmSync(home, { recursive: true, force: true });
});

/** Every file under a folder, as text (job outputs, checkpoints' manifests, the audit log, run state). */
function filesUnder(dir: string, out: { path: string; text: string }[] = []): { path: string; text: string }[] {
  let entries: string[] = [];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = join(dir, e);
    let st;
    try {
      st = statSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) filesUnder(p, out);
    else if (st.isFile() && st.size < 5_000_000) out.push({ path: p, text: readFileSync(p, 'latin1') });
  }
  return out;
}

/** Histories as text with payload data decoded from base64, so a leak inside a payload is visible. */
const historyText = (raw: unknown) => JSON.stringify(JSON.parse(JSON.stringify(raw)), (k, v: unknown) => (k === 'data' && typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : v));

test('no canary secret in histories, worker logs, CLI output, job outputs or the audit log', async () => {
  const tandem = await TandemClient.connect({ address: address(), taskQueue });
  const argo = await ArgoClient.connect({ address: address(), taskQueue });
  const ids: string[] = [];
  try {
    // 1. A pipeline trained through FirecREST (lugano), its job environment printed into its output.
    const ok = spec({ stages: { preprocess: { runtime: 'local', samples: 100 }, train: { runtime: 'slurm', steps: 20, checkpointEvery: 10, env: { SPEC_VAR: 'visible' } }, deploy: { runtime: 'local' } } });
    const okId = `canary-ok-${randomBytes(2).toString('hex')}`;
    ids.push(okId);
    await (await tandem.launch(ok, { id: okId })).result();

    // 2. A failing Slurm job (through FirecREST) that prints its whole environment.
    const badId = `canary-fail-${randomBytes(2).toString('hex')}`;
    ids.push(badId);
    const bad = spec({ retry: { maxAttempts: 1 }, stages: { preprocess: { runtime: 'local', samples: 100 }, train: { runtime: 'slurm', command: ['/bin/sh', '-c', `${PRINT_ENV}; exit 3`], env: { SPEC_VAR: 'visible' } } } });
    const err = await (await tandem.launch(bad, { id: badId })).result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const failure = `${(err as Error).message}\n${(err as WorkflowFailedError).cause?.message}\n${((err as WorkflowFailedError).cause?.cause as Error | undefined)?.message ?? ''}`;
    expect(failure).toMatch(/exit|status 3|FAILED/i);
    cliOut.push(`failure of ${badId}: ${failure}`);

    // 3. An Argo workflow whose pod prints its environment.
    const yaml = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: { generateName: canary-argo- }
spec:
  entrypoint: main
  templates:
    - name: main
      container:
        image: alpine:3.20
        command: [sh, -c]
        args: ["${PRINT_ENV.replace(/"/g, '\\"')}"]
        env: [{ name: SPEC_VAR, value: visible }]
`;
    const { id: argoName } = await argo.submit(prepare('canary-argo.yaml', { text: yaml }));
    const argoStatus = await argo.wait(argoName);
    expect(argoStatus.phase).toBe('Succeeded');
    expect(JSON.stringify(argoStatus)).toContain('SPEC_VAR=visible');

    // 4. A failover: NODE_FAIL at zurich mid-training; lugano (FirecREST, the canary secret) resumes.
    const foId = `canary-fo-${randomBytes(2).toString('hex')}`;
    ids.push(foId);
    const tuning: PipelineTuning = { failover: { sites: ['zurich', 'lugano'] } };
    const fo = spec({ stages: { preprocess: { runtime: 'local', samples: 100 }, train: { runtime: 'slurm', steps: 100, checkpointEvery: 10, stepDelayMs: 150, env: { SPEC_VAR: 'visible' } }, deploy: { runtime: 'local' } } });
    const h = await tandem.launch(fo, { id: foId, tuning });
    const job1 = await jobNameOf(h.workflow, 'train', 1);
    // Placement picks the first site; whichever it is, its node fails and the other site resumes.
    const progress = (site: TestSite) => {
      try {
        return (JSON.parse(readFileSync(join(site.cluster.workDir, `${job1}.progress.json`), 'utf8')) as { step: number }).step;
      } catch {
        return 0;
      }
    };
    const first = await waitFor('training to pass step 25 at its first site', () => [zurich, lugano].find((s) => progress(s) >= 25), 180_000, 300);
    failed = first;
    await first.cluster.cli('scontrol', ['update', `nodename=${first.cluster.node}`, 'state=down', 'reason=canary-node-fail']);
    const result = await h.result();
    expect(result.checkpoint.step).toBe(100);
    const timeline = await h.timeline();
    expect(timeline.map((e) => e.kind)).toContain('failover');

    // ---- where a secret could leak ----
    const places: { where: string; text: string }[] = [];
    for (const id of ids) places.push({ where: `history of ${id}`, text: historyText(await tandem.client.workflow.getHandle(id).fetchHistory()) });
    places.push({ where: `history of Argo ${argoName}`, text: historyText(await argo.client.workflow.getHandle(`${ID_PREFIX}${argoName}`).fetchHistory()) });
    for (const id of ids) {
      await tandemCli(['runs', 'show', id]);
      await tandemCli(['runs', 'export', id]);
    }
    await tandemCli(['runs', 'list']);
    await tandemCli(['argo', 'get', argoName]);
    await tandemCli(['argo', 'logs', argoName]);
    const auditOut = await tandemCli(['audit', 'list']);
    expect(auditOut).toMatch(/job\.submitted/); // the audit log is there and was read
    places.push({ where: 'CLI output', text: cliOut.join('\n') });
    const log = workerOut.join('');
    expect(log).toMatch(/^\{.*"workflowId"/m); // JSON log lines with their context
    places.push({ where: "the worker's log", text: log });
    for (const s of [lugano, zurich]) for (const f of filesUnder(s.cluster.workDir)) places.push({ where: f.path, text: f.text });
    for (const f of filesUnder(home)) if (!f.path.endsWith('sites.yaml')) places.push({ where: f.path, text: f.text });

    // The legs really produced output that would carry a leak: the environment dumps are there.
    const all = places.map((p) => p.text).join('\n');
    expect(all).toMatch(/SPEC_VAR=visible/);
    expect(places.filter((p) => /^PATH=/m.test(p.text)).length).toBeGreaterThan(0);
    const leaks = places.filter((p) => p.text.includes(CANARY)).map((p) => `${p.where}: …${p.text.slice(Math.max(0, p.text.indexOf(CANARY) - 80), p.text.indexOf(CANARY) + 40)}…`);
    console.log(`[canary] ${places.length} places checked (${(all.length / 1e6).toFixed(1)} MB): ${leaks.length} leaks`);
    expect(leaks).toEqual([]);
  } finally {
    await argo.close();
    await tandem.close();
  }
}, 600_000);
