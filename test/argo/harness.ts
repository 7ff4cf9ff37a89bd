// A real Temporal worker running the Argo interpreter with the local execution target, and an
// ArgoClient bound to its task queue: one per test file.
import { join } from 'node:path';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { createArgoActivities, type ArgoActivityConfig } from '../../activities/argo/index.js';
import { ArgoClient } from '../../argo/client.js';
import { address, sharedBundle, tempDir, uniqueQueue } from '../helpers.js';
import { tandemSinks } from '../../observe/sinks.js';

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

export async function startArgoHarness(name: string, config: Partial<ArgoActivityConfig> = {}): Promise<{ client: ArgoClient; home: string; stop: () => Promise<void> }> {
  const taskQueue = uniqueQueue(name);
  const home = config.home ?? tempDir(`${name}-home`);
  const connection = await NativeConnection.connect({ address: address() });
  const worker = await Worker.create({
    sinks: tandemSinks({ record: false }), // workflows/observe.ts calls them; this worker serves no metrics
    connection,
    taskQueue,
    workflowBundle: await sharedBundle('argo', () => bundleWorkflowCode({ workflowsPath: join(process.cwd(), 'workflows/argo/index.ts'), logger: quiet })),
    activities: createArgoActivities({ home, pollInitialMs: 20, pollMaxMs: 200, ...config }),
  });
  const running = worker.run();
  const client = await ArgoClient.connect({ address: address(), taskQueue });
  return {
    client,
    home,
    stop: async () => {
      await client.close();
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
