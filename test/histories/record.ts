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

const HERE = fileURLToPath(new URL('.', import.meta.url));
const scenarios: Record<string, FakeScript> = {
  'hybridPipeline-happy': {},
  'hybridPipeline-train-retry': { jobStates: { train: ['NODE_FAIL', 'COMPLETED'] } },
  'hybridPipeline-deploy-gate-fails': { failGate: true },
};

Runtime.install({ logger: new DefaultLogger('WARN') });
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
      // The same JSON as `temporal workflow show --output json` and the Web UI's export.
      writeFileSync(join(HERE, `${name}.json`), JSON.stringify(JSON.parse(historyToJSON(history)), null, 1) + '\n');
      console.log(`recorded ${name}.json (${history.events?.length} events)`);
    });
    await tandem.close();
    await connection.close();
  }
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
