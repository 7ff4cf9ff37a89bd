// Tandem's side of the Argo benches (conformance, node-tree oracle): a Temporal dev server and a local
// worker with the Argo interpreter's workflows and activities, and a client; `stop()` ends all three.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { startDevServer } from '../../workers/dev-server.js';
import { createArgoActivities } from '../../activities/argo/index.js';
import { ArgoClient } from '../../argo/client.js';
import { tandemSinks } from '../../observe/sinks.js';

export async function startTandemSide(dir: string, taskQueue: string): Promise<{ client: ArgoClient; stop: () => Promise<void> }> {
  const server = await startDevServer({ dbFile: join(dir, 'temporal.db'), startTimeoutMs: 90_000 });
  const connection = await NativeConnection.connect({ address: server.address });
  const worker = await Worker.create({
    sinks: tandemSinks({ record: false }), // workflows/observe.ts calls them; this worker serves no metrics
    connection,
    taskQueue,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL('../../workflows/argo/index.ts', import.meta.url)), logger: { trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => console.error(m), log() {} } }),
    activities: createArgoActivities({ home: join(dir, 'home') }),
    maxConcurrentActivityTaskExecutions: 8,
  });
  const running = worker.run();
  const client = await ArgoClient.connect({ address: server.address, taskQueue });
  return {
    client,
    async stop() {
      await client.close();
      worker.shutdown();
      await running;
      await connection.close();
      await server.stop();
    },
  };
}
