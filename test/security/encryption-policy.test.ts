// The encryption policy (docs/security.md): Tandem's worker with keys (workerDataConverter, as
// createTandemWorker builds it from TANDEM_CODEC_*) refuses a run whose input is plaintext or encrypted
// with a key it does not have — the run fails at once, non-retryable, with the reason in clear (never a
// run stuck Running on a failing workflow task). The CLI's side (no key, or the wrong one): its
// commands say so: encryption-cli.long.test.ts (about 16 CLI processes, minutes under load).
import { randomBytes } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { clientDataConverter, codecDataConverter, workerDataConverter, type CodecKey } from '../../codec/index.js';
import { bundleWorkflows, createTandemWorker } from '../../workers/worker.js';
import { TandemClient } from '../../sdk/client.js';
import { address, sharedBundle, spec, tempDir, uniqueQueue } from '../helpers.js';

const K: CodecKey = { id: 'k-worker', key: randomBytes(32) };
const WRONG: CodecKey = { id: 'k-worker', key: randomBytes(32) };
const OTHER: CodecKey = { id: 'k-elsewhere', key: randomBytes(32) };
const queue = uniqueQueue('encryption-policy');
const home = tempDir('encryption-policy');
let stop: () => Promise<void>;

beforeAll(async () => {
  const dataConverter = workerDataConverter({ keys: [K] })!;
  const workflowBundle = await sharedBundle('tandem-codec', () => bundleWorkflows({ dataConverter }));
  const { worker, connection } = await createTandemWorker({ address: address(), taskQueue: queue, home, workflowBundle, dataConverter });
  const running = worker.run();
  stop = async () => {
    worker.shutdown();
    await running;
    await connection.close();
  };
});
afterAll(async () => stop?.());

const client = (keys?: CodecKey[]) => TandemClient.connect({ address: address(), taskQueue: queue, dataConverter: keys ? codecDataConverter({ keys }) : clientDataConverter(undefined) });
// A run that would take a while (its preprocess sleeps): a refused one must not get that far.
const slow = (name: string) => spec({ name, tenant: 'acme', stages: { preprocess: { runtime: 'local', command: ['/bin/sh', '-c', 'sleep 30'] }, train: { runtime: 'local', steps: 2, checkpointEvery: 1 } } });

async function refusedWith(keys: CodecKey[] | undefined, reason: RegExp) {
  const tandem = await client(keys);
  try {
    const h = await tandem.launch(slow('refused'), { id: `refused-${randomBytes(3).toString('hex')}` });
    const err = await h.result().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause as { type?: string; message: string };
    expect(cause.type).toBe('PayloadRefused');
    expect(cause.message).toMatch(reason);
    expect(cause.message).toMatch(/hybridPipeline: this worker refuses the run's input/);
    return h.id;
  } finally {
    await tandem.close();
  }
}

test('a plaintext run fails at once, in clear, naming what to set', async () => {
  await refusedWith(undefined, /a payload is not encrypted \(json\/plain\).*TANDEM_CODEC_KEYS_FILE/);
});

test('a run encrypted with another key (same id, or an unknown id) fails at once, not stuck Running', async () => {
  await refusedWith([WRONG], /key id "k-worker" does not decrypt.*the client's key is not this worker's/);
  await refusedWith([OTHER], /key id "k-elsewhere", which this codec does not know/);
});

