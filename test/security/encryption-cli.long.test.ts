// The encryption policy from the CLI (docs/security.md): against a keyed worker, `tandem` without the
// key, or with the wrong one, says so and what to set — no stack trace, exit non-zero — in status, runs
// show, runs replay (fetched, and an exported file); runs export needs no key and keeps the ciphertext.
// The worker's refusal of plaintext and wrong-key runs: encryption-policy.test.ts.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { address, waitFor } from '../helpers.js';
import { client, home, K, queue, slow, WRONG } from './keyed-worker.js';

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', TEMPORAL_ADDRESS: address(), TANDEM_TASK_QUEUE: queue, TANDEM_CODEC_KEYS_FILE: '', TANDEM_CODEC_KEY: '', TANDEM_CODEC_KEY_ID: '', ...env }, timeout: 120_000 }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out, err });
    });
  });
}

test('the CLI without the key, or with the wrong one: a clear message and no stack trace in status, runs show, runs replay', async () => {
  const tandem = await client([K]);
  const id = `encrypted-${randomBytes(3).toString('hex')}`;
  try {
    const h = await tandem.launch(slow('encrypted'), { id });
    await waitFor('the run to reach its preprocess job', async () => ((await h.status()).stage === 'preprocess' ? true : undefined), 60_000);
    // Exporting needs no key: the file holds the payloads as stored, encrypted.
    const exported = await cli(['runs', 'export', id, '--out', join(home, 'export.json')], {});
    expect(exported.code).toBe(0);
    expect(readFileSync(join(home, 'export.json'), 'utf8')).toContain(Buffer.from('binary/encrypted').toString('base64'));
    const ring = join(home, 'wrong.keyring');
    writeFileSync(ring, `${WRONG.id}: ${WRONG.key.toString('base64')}\n`);
    chmodSync(ring, 0o600);
    for (const [env, what] of [[{}, /payloads are encrypted and this client has no codec key: set TANDEM_CODEC_KEYS_FILE/], [{ TANDEM_CODEC_KEYS_FILE: ring }, /cannot be decrypted with this client's key: .*key id "k-worker" does not decrypt.*set TANDEM_CODEC_KEYS_FILE/]] as const) {
      for (const args of [['status', id], ['runs', 'show', id], ['runs', 'replay', id], ['runs', 'replay', '--file', join(home, 'export.json'), '--workflow-id', id]]) {
        const r = await cli(args, env);
        expect({ args, env, ok: r.code !== 0, said: what.test(r.err + r.out), stack: /^\s+at /m.test(r.err), out: (r.err + r.out).slice(0, 600) }).toMatchObject({ args, env, ok: true, said: true, stack: false });
      }
    }
  } finally {
    // Its sleeping job is stopped by the run's compensation.
    const h = await tandem.get(id);
    await h.cancel().catch(() => undefined);
    await h.result().catch(() => undefined);
    await tandem.close();
  }
}, 300_000);
