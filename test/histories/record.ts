// Records workflow histories as replay fixtures: `npm run histories:record`. Each scenario runs on a
// fresh real dev server with scripted activities; the JSON lands in test/histories/ and
// test/replay.test.ts replays every file there on each test run. Files named *.before-<patch>.json were
// recorded before that patch and must keep replaying (patched() guards the change).
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { startDevServer } from '../../workers/dev-server.js';
import { createTandemWorker } from '../../workers/worker.js';
import { TandemClient } from '../../sdk/client.js';
import { validatePipelineSpec } from '../../spec/parse.js';
import { fakeActivities, type FakeScript } from '../fake-activities.js';
import { createArgoActivities } from '../../activities/argo.js';
import { ArgoClient, prepare } from '../../argo/client.js';
import { admitUpdate, releaseUpdate } from '../../workflows/ledger.js';
import type { temporal } from '@temporalio/proto';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const scenarios: Record<string, FakeScript> = {
  'hybridPipeline-happy': {},
  'hybridPipeline-train-retry': { jobStates: { train: ['NODE_FAIL', 'COMPLETED'] } },
  'hybridPipeline-deploy-gate-fails': { failGate: true },
};

Runtime.install({ logger: new DefaultLogger('WARN') });
// The same JSON as `temporal workflow show --output json` and the Web UI's export.
function save(name: string, history: temporal.api.history.v1.IHistory): void {
  writeFileSync(join(HERE, `${name}.json`), JSON.stringify(JSON.parse(historyToJSON(history)), null, 1) + '\n');
  console.log(`recorded ${name}.json (${history.events?.length} events)`);
}
const ARGO_DAG = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: recorded-argo}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: echo, arguments: {parameters: [{name: msg, value: one}]}}
      - {name: b, template: echo, depends: a, arguments: {parameters: [{name: msg, value: "{{tasks.a.outputs.result}}-two"}]}}
      - {name: c, template: echo, depends: "a && b", when: "'{{tasks.b.outputs.result}}' == 'one-two'", arguments: {parameters: [{name: msg, value: three}]}}
  - name: echo
    inputs: {parameters: [{name: msg}]}
    script: {image: alpine, command: [sh], source: 'echo "{{inputs.parameters.msg}}"'}
`;
const dir = mkdtempSync(join(tmpdir(), 'tandem-record-'));
const server = await startDevServer({ dbFile: join(dir, 'temporal.db') });
try {
  for (const [name, script] of Object.entries(scenarios)) {
    const fake = fakeActivities(script);
    const taskQueue = `record-${name}`;
    const { worker, connection } = await createTandemWorker({ address: server.address, taskQueue, home: dir, activities: fake.acts });
    const tandem = await TandemClient.connect({ address: server.address, taskQueue });
    await worker.runUntil(async () => {
      const h = await tandem.launch(validatePipelineSpec({ name: 'recorded', retry: { initialInterval: '100ms' } }), { id: name });
      await h.result().catch(() => undefined);
      const history = await h.workflow.fetchHistory();
      save(name, history);
    });
    await tandem.close();
    await connection.close();
  }
  // An Argo DAG run on the local runtime, and a quota ledger after two updates.
  {
    const taskQueue = 'record-argo';
    const { worker, connection } = await createTandemWorker({ address: server.address, taskQueue, home: dir, activities: createArgoActivities({ home: dir }) });
    const argo = await ArgoClient.connect({ address: server.address, taskQueue });
    await worker.runUntil(async () => {
      const { id } = await argo.submit(prepare('recorded-argo.yaml', { text: ARGO_DAG }));
      await argo.wait(id);
      save('argoWorkflow-dag', await argo.client.workflow.getHandle(`argo-${id}`).fetchHistory());
      const ledger = await argo.client.workflow.start('quotaLedger', { taskQueue, workflowId: 'recorded-ledger', args: [{ site: 'zurich', quotas: { research: { gpus: 8 } }, holds: {} }] });
      await ledger.executeUpdate(admitUpdate, { args: [{ holdId: 'p1', tenant: 'research', cpus: 4, gpus: 4, memoryMB: 1024 }] });
      await ledger.executeUpdate(releaseUpdate, { args: [{ holdId: 'p1' }] });
      save('quotaLedger-admit-release', await ledger.fetchHistory());
      await ledger.terminate('recorded');
    });
    await argo.close();
    await connection.close();
  }
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
