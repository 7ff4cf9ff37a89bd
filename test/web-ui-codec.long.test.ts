// The Temporal Web UI shows encrypted payloads decoded, through the codec server, and only then. A dev
// server of its own with the Web UI on a loopback port and `--ui-codec-endpoint` pointed at an
// in-process `tandem codec-server` (codec/server.ts); a short pipeline runs encrypted (AES-GCM, real
// local jobs); headless Chromium loads the workflow's page: the browser calls the codec server
// cross-origin (the CORS preflight included) and the decoded input, a marker that exists only inside the
// encrypted spec, is in the DOM. The same server restarted on the same database without the codec
// endpoint shows the same page with the payloads still encrypted and no marker. The screenshots are
// test artefacts (test/artifacts/web-ui-codec/, paths printed); docs/img/web-ui-codec.png is one.
//
// Chromium: test/chromium.ts (Debian's chromium; on CI a missing browser fails the suite).
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { codecDataConverter, type CodecKey } from '../codec/index.js';
import { startCodecServer, type CodecServer } from '../codec/server.js';
import { bundleWorkflows, createTandemWorker } from '../workers/worker.js';
import { freePort, startDevServer, type DevServer } from '../workers/dev-server.js';
import { TandemClient } from '../sdk/client.js';
import { LocalServingBackend } from '../backends/local-serving.js';
import { spec, tempDir, uniqueQueue } from './helpers.js';
import { browserTest, chromium, warnIfNoChromium } from './chromium.js';

// The Web UI is a single-page app: its API and codec calls take longer than a static page.
const WINDOW = { timeoutMs: 90_000, window: '1400,1000' };

warnIfNoChromium('test/web-ui-codec.long.test.ts');
const ARTIFACTS = join(process.cwd(), 'test', 'artifacts', 'web-ui-codec');

const KEY: CodecKey = { id: 'ui-2025', key: randomBytes(32) };
// Only inside the encrypted spec (an env value): not in search attributes, ids or anything plain.
const MARKER = `ui-marker-${randomBytes(5).toString('hex')}`;
const home = tempDir('web-ui-codec');
const dbFile = join(home, 'temporal.db');

/** The workflow's page as the SPA renders it: the DOM after its API and codec calls, and a screenshot. */
async function page(uiUrl: string, workflowId: string, name: string): Promise<{ dom: string; png: string }> {
  const url = `${uiUrl}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`;
  // Virtual time runs the SPA's timers fast but waits for pending network fetches (API, codec).
  const budget = '--virtual-time-budget=15000';
  const dom = await chromium([budget, '--dump-dom', url], WINDOW);
  writeFileSync(join(ARTIFACTS, `${name}.html`), dom);
  const png = join(ARTIFACTS, `${name}.png`);
  await chromium([budget, `--screenshot=${png}`, url], WINDOW);
  console.log(`web-ui-codec: ${name}: ${png}`);
  return { dom, png };
}

let codecServer: CodecServer;
let server: DevServer | undefined;
let uiPort: number;
/** Every decode request the browser made (method and origin), to show the codec server was used. */
const calls: string[] = [];

beforeAll(async () => {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    /* installed by another suite in this process */
  }
  mkdirSync(ARTIFACTS, { recursive: true });
  uiPort = await freePort();
  // The codec server only answers the UI's origin; its log records the browser's calls. The dev
  // server's UI has no login, so it forwards no token: no authentication, asked for (loopback only).
  codecServer = await startCodecServer({ keys: { keys: [KEY] }, auth: { none: true }, origins: [`http://127.0.0.1:${uiPort}`, `http://localhost:${uiPort}`], log: (l) => void (/^POST \/decode 200/.test(l) && calls.push('decode')) });
});
afterAll(async () => {
  await server?.stop();
  await codecServer?.close();
  for (const d of new LocalServingBackend(home).list()) await new LocalServingBackend(home).undeploy(d.name);
});

describe('the Temporal Web UI with the codec server', () => {
  browserTest('shows the encrypted input decoded with --ui-codec-endpoint, and still encrypted without it', async () => {
    server = await startDevServer({ dbFile, ui: true, uiPort, uiCodecEndpoint: codecServer.url });
    const dataConverter = codecDataConverter({ keys: [KEY] });
    const queue = uniqueQueue('web-ui-codec');
    const { worker, connection } = await createTandemWorker({ address: server.address, taskQueue: queue, home, workflowBundle: await bundleWorkflows({ dataConverter }), dataConverter });
    const running = worker.run();
    const tandem = await TandemClient.connect({ address: server.address, taskQueue: queue, dataConverter });
    const id = `web-ui-codec-${randomBytes(3).toString('hex')}`;
    try {
      const h = await tandem.launch(spec({ name: 'web-ui-codec', tenant: 'acme', stages: { preprocess: { runtime: 'local', env: { UI_MARKER: MARKER } }, train: { runtime: 'local', steps: 4, checkpointEvery: 2 } } }), { id, tuning: { pollMaxMs: 500 } });
      expect(await h.result()).toMatchObject({ pipeline: 'web-ui-codec' });
    } finally {
      await tandem.close();
      worker.shutdown();
      await running;
      await connection.close();
    }
    // As the server holds it: encrypted, no marker.
    const conn = await Connection.connect({ address: server.address });
    try {
      expect(historyToJSON(await new Client({ connection: conn }).workflow.getHandle(id).fetchHistory())).not.toContain(MARKER);
    } finally {
      await conn.close();
    }

    const decoded = await page(server.uiUrl!, id, 'with-codec');
    expect(decoded.dom).toContain(MARKER);
    expect(calls.length).toBeGreaterThan(0);
    expect(statSync(decoded.png).size).toBeGreaterThan(10_000);

    // The same history, the same UI, no codec endpoint: the page loads (the run is there) and the
    // payloads stay encrypted.
    await server.stop();
    server = await startDevServer({ dbFile, ui: true, uiPort });
    const before = calls.length;
    const plain = await page(server.uiUrl!, id, 'without-codec');
    expect(plain.dom).toContain(id);
    expect(plain.dom).toContain('hybridPipeline');
    expect(plain.dom).not.toContain(MARKER);
    expect(calls.length).toBe(before);
  });
});
