// Wires Tandem's workflows and activities into a Temporal worker.
import { NativeConnection, Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { createActivities, type ActivityConfig } from '../activities/index.js';

export const TASK_QUEUE = 'tandem';
export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface TandemWorkerOptions extends ActivityConfig {
  address: string;
  namespace?: string;
  taskQueue?: string;
  /** A prebuilt bundle (tests and benchmarks share one); built from workflows/ otherwise. */
  workflowBundle?: WorkflowBundleWithSourceMap;
  /** Replaces the real activities (workflow tests, benchmarks). */
  activities?: object;
  heartbeatThrottleMs?: number;
}

export function bundleWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger });
}

const quietLogger = { trace() {}, debug() {}, info() {}, warn: (m: string) => console.warn(m), error: (m: string) => console.error(m), log() {} };

export async function createTandemWorker(opts: TandemWorkerOptions): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address: opts.address });
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace ?? 'default',
    taskQueue: opts.taskQueue ?? TASK_QUEUE,
    workflowBundle: opts.workflowBundle ?? (await bundleWorkflows()),
    activities: opts.activities ?? createActivities(opts),
    // Heartbeats carry training progress; a short throttle keeps `tandem status` and the CLI bar live.
    maxHeartbeatThrottleInterval: opts.heartbeatThrottleMs ?? 1000,
  });
  return { worker, connection };
}
