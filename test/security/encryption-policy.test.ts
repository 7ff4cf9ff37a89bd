// The encryption policy (docs/security.md): Tandem's worker with keys (workerDataConverter, as
// createTandemWorker builds it from TANDEM_CODEC_*) refuses a run whose input is plaintext or encrypted
// with a key it does not have — the run fails at once, non-retryable, with the reason in clear (never a
// run stuck Running on a failing workflow task). The CLI's side (no key, or the wrong one): its
// commands say so: encryption-cli.long.test.ts (about 16 CLI processes, minutes under load).
import { randomBytes } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import type { CodecKey } from '../../codec/index.js';
import { client, slow, WRONG } from './keyed-worker.js';

const OTHER: CodecKey = { id: 'k-elsewhere', key: randomBytes(32) };

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

