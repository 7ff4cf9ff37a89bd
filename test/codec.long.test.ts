// Payload encryption end to end on the real dev server: a pipeline run with the AES-GCM codec (real
// local jobs, checkpoints and model server) leaves no plaintext spec or env value in the history the
// server holds; the codec server and `temporal workflow show --codec-endpoint` show them decoded; a
// rotated keyring still reads old runs; replay (the SDK's replayer and `tandem runs replay`) works on
// encrypted histories. Failure messages and stack traces are encrypted too (codec/failure-converter.ts):
// a job failing with a canary in its output leaves no canary in any failure on the server, `tandem runs
// show` with the key reads it; without the key the SDK's result shows the "Encoded failure" placeholder and `runs show` names the key to set.
import { execFile } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { AesGcmCodec, clientDataConverter, codecDataConverter, type CodecKey } from '../codec/index.js';
import { startCodecServer, type CodecServer } from '../codec/server.js';
import { bundleWorkflows, createTandemWorker } from '../workers/worker.js';
import { bundleReplayWorkflows, replayHistory } from '../workers/replay.js';
import { findTemporal } from '../workers/temporal-binary.js';
import { TandemClient } from '../sdk/client.js';
import { Runs } from '../sdk/runs.js';
import { LocalServingBackend } from '../backends/local-serving.js';
import { WorkflowFailedError } from '@temporalio/client';
import { address, spec, tempDir, uniqueQueue } from './helpers.js';

const K1: CodecKey = { id: 'k-2024', key: randomBytes(32) };
const K2: CodecKey = { id: 'k-2025', key: randomBytes(32) };
const TOKEN = `tok-${randomBytes(12).toString('hex')}`;
const ENV_SECRET = `env-canary-${randomBytes(6).toString('hex')}`;
const PROMPT_SECRET = `prompt-canary-${randomBytes(6).toString('hex')}`;
const tuning = { pollMaxMs: 500, heartbeatTimeoutMs: 5000 };
const queue = uniqueQueue('codec');
const home = tempDir('codec');

function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', ...env }, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out, err });
    });
  });
}

/** Every Payload in a history's JSON (objects with metadata and data). */
function payloadsIn(v: unknown, out: { path: string; metadata: Record<string, string>; data?: string }[] = [], path = ''): { path: string; metadata: Record<string, string>; data?: string }[] {
  if (Array.isArray(v)) v.forEach((x, i) => payloadsIn(x, out, `${path}[${i}]`));
  else if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (o.metadata && typeof o.metadata === 'object' && 'encoding' in (o.metadata as object)) out.push({ path, ...(o as { metadata: Record<string, string> }) });
    else Object.entries(o).forEach(([k, x]) => payloadsIn(x, out, `${path}.${k}`));
  }
  return out;
}
const b64 = (s: string) => Buffer.from(s).toString('base64');
/** Payloads plain by Temporal's design: search attributes, patch markers, the core's record of a local activity. */
const PLAIN_BY_DESIGN = /\.searchAttributes\.|\.patch-data\.|\.markerRecordedEventAttributes\.details\.data\./;

// The workflow code built with the codec's failure converter, as createTandemWorker builds it when the
// codec is configured (the converter's path is the same whatever the keys).
let codecBundle: ReturnType<typeof bundleWorkflows> | undefined;
const workflowBundle = () => (codecBundle ??= bundleWorkflows({ dataConverter: codecDataConverter({ keys: [K1] }) }));

async function startWorkerWith(keys: CodecKey[]) {
  const { worker, connection } = await createTandemWorker({ address: address(), taskQueue: queue, home, workflowBundle: await workflowBundle(), dataConverter: codecDataConverter({ keys }) });
  const running = worker.run();
  const tandem = await TandemClient.connect({ address: address(), taskQueue: queue, dataConverter: codecDataConverter({ keys }) });
  return {
    tandem,
    stop: async () => {
      await tandem.close();
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

const pipeline = (name: string) =>
  spec({
    name,
    tenant: 'acme',
    stages: {
      preprocess: { env: { API_TOKEN: ENV_SECRET } },
      train: { steps: 20, checkpointEvery: 10, env: { WANDB_API_KEY: ENV_SECRET } },
      deploy: { smokePrompt: PROMPT_SECRET },
    },
  });

let plain: { client: Client; close: () => Promise<void> };
let codecServer: CodecServer;
beforeAll(async () => {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    /* installed by another suite in this process */
  }
  const connection = await Connection.connect({ address: address() });
  plain = { client: new Client({ connection }), close: () => connection.close() };
  codecServer = await startCodecServer({ keys: { keys: [K1, K2] }, origins: ['http://localhost:8233'], auth: { token: TOKEN } });
});
afterAll(async () => {
  await codecServer?.close();
  await plain?.close();
  for (const d of new LocalServingBackend(home).list()) await new LocalServingBackend(home).undeploy(d.name);
});

describe('payload encryption', () => {
  test('an encrypted run: nothing plain on the server; the codec server and the Temporal CLI decode it; a rotated keyring reads it; replay works', async () => {
    // Run 1, under key k-2024.
    const w1 = await startWorkerWith([K1]);
    let id1: string;
    try {
      const h = await w1.tandem.launch(pipeline('codec-one'), { id: `codec-one-${randomBytes(3).toString('hex')}`, tuning });
      id1 = h.id;
      expect(await h.result()).toMatchObject({ pipeline: 'codec-one', checkpoint: { step: 20 } });
    } finally {
      await w1.stop();
    }

    // The history as the server holds it, fetched without a codec: every payload encrypted with k-2024,
    // no env value or prompt anywhere, the spec's fields nowhere in clear.
    const raw = await plain.client.workflow.getHandle(id1).fetchHistory();
    const json = historyToJSON(raw);
    expect(json).not.toContain(ENV_SECRET);
    expect(json).not.toContain(PROMPT_SECRET);
    expect(json).not.toContain('checkpointEvery');
    // Plain by Temporal's design, and free of spec data: search attributes (the server indexes them:
    // tenant, pipeline, stage, site), the SDK's patch markers (patch ids) and the core's own record of a
    // local activity (its type, attempt and times; the result beside it is encrypted).
    const all = payloadsIn(JSON.parse(json));
    const byDesign = all.filter((p) => PLAIN_BY_DESIGN.test(p.path));
    expect(byDesign.map((p) => Buffer.from(p.data ?? '', 'base64').toString()).join('\n')).not.toMatch(/canary|stages|env/);
    const payloads = all.filter((p) => !byDesign.includes(p));
    expect(payloads.length).toBeGreaterThan(10);
    for (const p of payloads) {
      expect(p.metadata.encoding).toBe(b64('binary/encrypted'));
      expect(p.metadata['encryption-key-id']).toBe(b64('k-2024'));
    }

    // The codec server decodes the workflow's input: the spec with its env values.
    const started = JSON.parse(json).events[0].workflowExecutionStartedEventAttributes.input;
    const dec = await fetch(`${codecServer.url}/decode`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}`, 'X-Namespace': 'default' }, body: JSON.stringify(started) });
    expect(dec.status).toBe(200);
    const decoded = ((await dec.json()) as { payloads: { data: string }[] }).payloads.map((p) => Buffer.from(p.data, 'base64').toString());
    expect(JSON.parse(decoded[0]!)).toMatchObject({ spec: { name: 'codec-one', stages: { preprocess: { env: { API_TOKEN: ENV_SECRET } } } } });

    // The real Temporal CLI with --codec-endpoint shows the decoded payloads; without it, it cannot.
    const temporal = findTemporal()!;
    const show = (extra: string[]) => run(temporal, ['workflow', 'show', '--address', address(), '--namespace', 'default', '-w', id1, '--output', 'json', ...extra]);
    // (`--output json` keeps payload data base64: the decoded payloads are json/plain, read them.)
    const shown = (out: string) => payloadsIn(JSON.parse(out)).map((p) => `${Buffer.from(p.metadata.encoding!, 'base64').toString()} ${Buffer.from(p.data ?? '', 'base64').toString()}`).join('\n');
    const withCodec = await show(['--codec-endpoint', codecServer.url, '--codec-auth', `Bearer ${TOKEN}`]);
    expect(withCodec.code).toBe(0);
    expect(shown(withCodec.out)).toContain(ENV_SECRET);
    expect(shown(withCodec.out)).toContain(PROMPT_SECRET);
    expect(shown(withCodec.out)).not.toContain('binary/encrypted');
    const without = await show([]);
    expect(without.code).toBe(0);
    expect(shown(without.out)).not.toContain(ENV_SECRET);
    expect(shown(without.out)).toContain('binary/encrypted');
    const wrongAuth = await show(['--codec-endpoint', codecServer.url, '--codec-auth', 'Bearer nope']);
    expect(`${wrongAuth.out}${wrongAuth.err}`).not.toContain(ENV_SECRET);

    // Rotation: a worker and client with k-2024 kept for decryption and k-2025 new read run 1 (a query
    // replays its history on the worker; the client decodes its result) and encrypt run 2 with k-2025.
    const w2 = await startWorkerWith([K1, K2]);
    let id2: string;
    try {
      const old = await w2.tandem.get(id1);
      expect(await old.status()).toMatchObject({ phase: 'completed' });
      // `tandem runs show` reads the history through the client's codec: the stages' activities with
      // their decoded inputs (the env value in clear, for the operator who holds the key).
      const shownRun = await new Runs(w2.tandem).show(id1);
      expect(shownRun.input?.spec.name).toBe('codec-one');
      expect(shownRun.activities.length).toBeGreaterThan(5);
      expect(await old.result()).toMatchObject({ pipeline: 'codec-one' });
      const h2 = await w2.tandem.launch(pipeline('codec-two'), { id: `codec-two-${randomBytes(3).toString('hex')}`, tuning });
      id2 = h2.id;
      await h2.result();
    } finally {
      await w2.stop();
    }
    const json2 = historyToJSON(await plain.client.workflow.getHandle(id2).fetchHistory());
    expect(json2).not.toContain(ENV_SECRET);
    expect(new Set(payloadsIn(JSON.parse(json2)).filter((p) => !PLAIN_BY_DESIGN.test(p.path)).map((p) => p.metadata['encryption-key-id']))).toEqual(new Set([b64('k-2025')]));
    // Without the old key, run 1 cannot be read, and the error names the key id it needs.
    await expect(new AesGcmCodec({ keys: [K2] }).decode([{ metadata: Object.fromEntries(Object.entries(started.payloads[0].metadata as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64')])), data: Buffer.from(started.payloads[0].data, 'base64') }])).rejects.toThrow(/key id "k-2024", which this codec does not know/);

    // Replay: with the keyring both encrypted histories replay deterministically; without it, the
    // replay fails (never a false "deterministic").
    const bundle = await bundleReplayWorkflows();
    for (const id of [id1, id2]) {
      const h = await plain.client.workflow.getHandle(id).fetchHistory();
      expect(await replayHistory(h, { workflowBundle: bundle, workflowId: id, dataConverter: codecDataConverter({ keys: [K1, K2] }) })).toMatchObject({ deterministic: true });
    }
    const noKeys = await replayHistory(raw, { workflowBundle: bundle, workflowId: id1, timeoutMs: 30_000 });
    expect(noKeys.deterministic).toBe(false);
    expect(noKeys.failed).toBeDefined();

    // `tandem runs replay <id>` with the keyring file, as an operator runs it.
    const ring = join(home, 'keyring');
    writeFileSync(ring, `# rotated\n${K1.id}: ${K1.key.toString('base64')}\n${K2.id}: ${K2.key.toString('base64')}\n`);
    chmodSync(ring, 0o600);
    const cli = await run(process.execPath, ['bin/tandem.js', 'runs', 'replay', id1], { TEMPORAL_ADDRESS: address(), TANDEM_CODEC_KEYS_FILE: ring });
    expect(cli).toMatchObject({ code: 0, out: expect.stringMatching(new RegExp(`${id1}: deterministic`)) });
    const cliNoKey = await run(process.execPath, ['bin/tandem.js', 'runs', 'replay', id1], { TEMPORAL_ADDRESS: address(), TANDEM_CODEC_KEYS_FILE: '' });
    expect(cliNoKey.code).not.toBe(0);
  });
  test('failure messages and stack traces are encrypted: no canary in any failure on the server; runs show decodes it with the key; without it, the SDK a placeholder and runs show a clear error', async () => {
    const CANARY = `fail-canary-${randomBytes(6).toString('hex')}`;
    const w = await startWorkerWith([K1]);
    let id: string;
    try {
      const failing = spec({ name: 'codec-fail', tenant: 'acme', retry: { maxAttempts: 1 }, stages: { preprocess: { runtime: 'local', command: ['/bin/sh', '-c', `echo "${CANARY} at the end" >&2; exit 3`] } } });
      const h = await w.tandem.launch(failing, { id: `codec-fail-${randomBytes(3).toString('hex')}`, tuning });
      id = h.id;
      // The client with the key reads the workflow's failure in clear (the SDK decodes encodedAttributes).
      const err = await h.result().then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(String((err as WorkflowFailedError).cause?.message)).toContain(CANARY);
    } finally {
      await w.stop();
    }

    // The raw history: every failure carries the placeholder, an empty stack trace and encrypted
    // attributes; the canary is nowhere (not in messages, stack traces, details or payloads).
    const json = historyToJSON(await plain.client.workflow.getHandle(id).fetchHistory());
    expect(json).not.toContain(CANARY);
    const failures: { message?: string; stackTrace?: string; encodedAttributes?: { metadata: Record<string, string> } }[] = [];
    const walk = (v: unknown, key = ''): void => {
      if (Array.isArray(v)) v.forEach((x) => walk(x));
      else if (v && typeof v === 'object') {
        if (key === 'failure' || key === 'cause') failures.push(v as (typeof failures)[number]);
        Object.entries(v).forEach(([k, x]) => walk(x, k));
      }
    };
    walk(JSON.parse(json));
    expect(failures.length).toBeGreaterThan(0);
    for (const f of failures) {
      expect(f.message).toBe('Encoded failure');
      expect(f.stackTrace ?? '').toBe('');
      expect(f.encodedAttributes?.metadata.encoding).toBe(b64('binary/encrypted'));
    }

    // `tandem runs show` (the SDK's Runs and the CLI) with the key: the job's failure decoded.
    const keyed = await TandemClient.connect({ address: address(), taskQueue: queue, dataConverter: codecDataConverter({ keys: [K1] }) });
    try {
      const report = await new Runs(keyed).show(id);
      expect(report.status).toBe('Failed');
      expect(report.failure).toContain(CANARY);
      expect(report.stages.find((st) => st.name === 'preprocess')?.status).toBe('failed');
    } finally {
      await keyed.close();
    }
    const ring = join(home, 'keyring-fail');
    writeFileSync(ring, `${K1.id}: ${K1.key.toString('base64')}\n`);
    chmodSync(ring, 0o600);
    const shown = await run(process.execPath, ['bin/tandem.js', 'runs', 'show', id], { TEMPORAL_ADDRESS: address(), TANDEM_CODEC_KEYS_FILE: ring });
    expect(shown).toMatchObject({ code: 0, out: expect.stringMatching(/Failure {4}preprocess job \S+ ended FAILED: exit code 3/) });
    expect(shown.out).not.toContain('Encoded failure');

    // Without the key: the SDK's result shows the placeholder; `runs show` says which key is missing.
    const keyless = await TandemClient.connect({ address: address(), taskQueue: queue, dataConverter: clientDataConverter(undefined) });
    try {
      const err = await (await keyless.get(id)).result().then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(String((err as WorkflowFailedError).cause?.message)).toMatch(/^Encoded failure \(binary\/encrypted: this client has no codec key/);
      // `show` reads the spec too, which it cannot without the key: one sentence naming what to set
      // (docs/security.md, encryption policy), never the placeholder's skeleton of pending stages.
      const shown = await new Runs(keyless).show(id).then(() => undefined, (e: unknown) => e as Error);
      expect(shown?.message).toMatch(/this client has no codec key: set TANDEM_CODEC_KEYS_FILE/);
      expect(shown?.message).not.toContain(CANARY);
    } finally {
      await keyless.close();
    }
    const noKey = await run(process.execPath, ['bin/tandem.js', 'runs', 'show', id], { TEMPORAL_ADDRESS: address(), TANDEM_CODEC_KEYS_FILE: '' });
    expect(noKey.code).not.toBe(0);
    expect(noKey.err).toMatch(/this client has no codec key: set TANDEM_CODEC_KEYS_FILE/);
    expect(noKey.err).not.toMatch(/\n\s+at /); // no stack trace
    expect(`${noKey.out}${noKey.err}`).not.toContain(CANARY);

    // Replay of the encrypted failed run, with the key.
    const h = await plain.client.workflow.getHandle(id).fetchHistory();
    expect(await replayHistory(h, { workflowBundle: await bundleReplayWorkflows(), workflowId: id, dataConverter: codecDataConverter({ keys: [K1] }) })).toMatchObject({ deterministic: true });
  });
});
