// One bundle of the migration workflows and one client per test file; each scenario gets a worker on
// its own task queue serving the given activities (an in-memory site, a Kubernetes site, …).
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Worker, bundleWorkflowCode, DefaultLogger, type WorkflowBundle } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import type { MigrationPlan } from '../../contract/migration.js';
import { stagedMigration } from '../../workflows/migration.js';
import { address, sharedBundle, uniqueQueue } from '../helpers.js';
import { tandemSinks } from '../../observe/sinks.js';

export type StartMigration = (plan: MigrationPlan) => Promise<WorkflowHandle<typeof stagedMigration>>;

export function useMigrationWorkers(): <T>(activities: object, fn: (start: StartMigration) => Promise<T>) => Promise<T> {
  let bundle: WorkflowBundle;
  let client: Client;
  let clientConn: Connection;
  beforeAll(async () => {
    bundle = await sharedBundle('migration', () => bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL('../../workflows/migration.ts', import.meta.url)), logger: new DefaultLogger('ERROR') }));
    clientConn = await Connection.connect({ address: address() });
    client = new Client({ connection: clientConn });
  });
  afterAll(() => clientConn?.close());
  return async (activities, fn) => {
    const taskQueue = uniqueQueue('migration');
    const connection = await NativeConnection.connect({ address: address() });
    const worker = await Worker.create({
    sinks: tandemSinks({ record: false }), connection, taskQueue, workflowBundle: bundle, activities });
    try {
      return await worker.runUntil(fn((plan) => client.workflow.start(stagedMigration, { taskQueue, workflowId: uniqueQueue('mig'), args: [{ plan }] })));
    } finally {
      await connection.close();
    }
  };
}
