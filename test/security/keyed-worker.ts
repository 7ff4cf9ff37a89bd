// The keyed worker both encryption-policy suites run against (encryption-policy.test.ts: the worker's
// refusals; encryption-cli.long.test.ts: the CLI's side): Tandem's worker holding one codec key, started
// before the file's tests and stopped after them, and clients with any keys (or none).
import { randomBytes } from 'node:crypto';
import { clientDataConverter, codecDataConverter, workerDataConverter, type CodecKey } from '../../codec/index.js';
import { bundleWorkflows, createTandemWorker } from '../../workers/worker.js';
import { TandemClient } from '../../sdk/client.js';
import { address, sharedBundle, spec, tempDir, uniqueQueue } from '../helpers.js';

/** The worker's key, and another key under the same id (a client with the wrong key). */
export const K: CodecKey = { id: 'k-worker', key: randomBytes(32) };
export const WRONG: CodecKey = { id: 'k-worker', key: randomBytes(32) };
export const queue = uniqueQueue('encryption-policy');
export const home = tempDir('encryption-policy');

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

export const client = (keys?: CodecKey[]) => TandemClient.connect({ address: address(), taskQueue: queue, dataConverter: keys ? codecDataConverter({ keys }) : clientDataConverter(undefined) });
// A run that would take a while (its preprocess sleeps): a refused one must not get that far.
export const slow = (name: string) => spec({ name, tenant: 'acme', stages: { preprocess: { runtime: 'local', command: ['/bin/sh', '-c', 'sleep 30'] }, train: { runtime: 'local', steps: 2, checkpointEvery: 1 } } });
