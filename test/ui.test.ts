// `tandem ui`, the read-only web view, against a real pipeline run (real jobs on the local runtime,
// real checkpoints) and a real Argo DAG run on the real dev server: the HTML the server sends, and the
// page as headless Chromium renders it (Debian's `chromium`; scripts/ui/install-chromium.sh).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ArgoClient, prepare } from '../argo/client.js';
import type { ArgoStatus } from '../argo/lang/types.js';
import { runDirs } from '../activities/run-store.js';
import { listCheckpoints, verifyCheckpoint } from '../backends/checkpoints.js';
import { LocalServingBackend } from '../backends/local-serving.js';
import { startUiServer, type UiServer } from '../ui/server.js';
import { address, spec, startWorker, tempDir, uniqueQueue, waitFor } from './helpers.js';

const HOSTILE = `<script>alert(1)</script><img src=x onerror=alert(2)> & more`;
const DAG = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: ui-dag-}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: A, template: echo, arguments: {parameters: [{name: msg, value: "${HOSTILE}"}]}}
      - {name: B, template: fail, depends: A}
      - {name: C, template: echo, depends: "B.Failed", arguments: {parameters: [{name: msg, value: c}]}}
      - {name: D, template: echo, depends: A, arguments: {parameters: [{name: msg, value: d}]}}
      - {name: E, template: echo, depends: "C && D", arguments: {parameters: [{name: msg, value: e}]}}
  - name: echo
    inputs: {parameters: [{name: msg}]}
    script:
      image: alpine
      command: [sh]
      source: |
        echo "{{inputs.parameters.msg}}"
  - name: fail
    container: {image: alpine, command: [sh, -c, "echo failing; exit 3"]}
`;

let home: string;
let w: Awaited<ReturnType<typeof startWorker>>;
let argo: ArgoClient;
let ui: UiServer;
let runId: string;
let argoId: string;
let argoStatus: ArgoStatus;
const get = async (path: string, init?: RequestInit) => {
  const res = await fetch(`${ui.url}${path}`, init);
  return { status: res.status, headers: res.headers, html: await res.text() };
};

beforeAll(async () => {
  home = tempDir('ui-home');
  const taskQueue = uniqueQueue('ui');
  w = await startWorker({ taskQueue, home });
  argo = await ArgoClient.connect({ address: address(), taskQueue });
  runId = `ui-run-${randomBytes(3).toString('hex')}`;
  // 200 steps with a checkpoint every 20: ten loss points, of which retention keeps three checkpoints.
  const h = await w.tandem.launch(spec({ name: 'ui-demo', tenant: 'ui-team', stages: { train: { steps: 200, checkpointEvery: 20 } } }), { id: runId, tuning: { pollMaxMs: 300 } });
  const { id } = await argo.submit(prepare('ui-dag.yaml', { text: DAG }));
  argoId = `argo-${id}`;
  [, argoStatus] = await Promise.all([h.result(), argo.wait(id)]);
  ui = await startUiServer({ tandem: w.tandem, argo, home, port: 0, temporalUi: 'http://127.0.0.1:8233' });
}, 90_000);

afterAll(async () => {
  await ui?.close();
  for (const d of new LocalServingBackend(home).list()) await new LocalServingBackend(home).undeploy(d.name);
  await argo?.close();
  await w?.stop();
});

describe('the HTML the view serves', () => {
  test('the runs list has both runs, filters by tenant and status, and escapes what it echoes', async () => {
    // Visibility is eventually consistent: wait until the listing has caught up with both runs.
    const all = await waitFor('both runs listed', async () => {
      const page = await get('/');
      return page.html.includes(`href="/runs/${runId}"`) && page.html.includes(`href="/runs/${argoId}"`) ? page : undefined;
    });
    expect(all.status).toBe(200);
    expect(all.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(all.html).toContain(`href="/runs/${runId}"`);
    expect(all.html).toContain(`href="/runs/${argoId}"`);
    const team = await waitFor('the completed run listed', async () => {
      const page = await get('/?tenant=ui-team&status=completed');
      return page.html.includes(`>${runId}</a>`) ? page : undefined;
    });
    expect(team.html).not.toContain(argoId);
    expect((await get('/?status=failed&tenant=ui-team')).html).not.toContain(runId);
    const hostile = await get(`/?tenant=${encodeURIComponent('"><script>x</script>')}`);
    expect(hostile.html).toContain('value="&quot;&gt;&lt;script&gt;x&lt;/script&gt;"');
    expect(hostile.html).not.toContain('<script>');
    expect((await get('/?status=sideways')).status).toBe(400);
  });

  test('a pipeline run: the Gantt of its stages, the loss curve from its checkpoints and job output, verified checkpoints', async () => {
    const { status, html } = await get(`/runs/${runId}`);
    expect(status).toBe(200);
    expect(html).toContain('<svg xmlns="http://www.w3.org/2000/svg" class="tandem-timeline"');
    for (const s of ['preprocess', 'train', 'checkpoint', 'deploy']) expect(html).toContain(`font-weight="bold">${s}</text>`);
    expect(html).toMatch(/<title>train: completed, [\d.]+ (ms|s)<\/title>/);
    expect(html).toContain('<span class="status s-Completed">Completed</span>');
    expect(html).toContain(`href="http://127.0.0.1:8233/namespaces/default/workflows/${runId}/`);
    // The curve has every checkpoint step: the three checkpoints retention kept, and the seven it
    // removed, from the train job's own output — with the values the checkpoints recorded.
    const steps = [...html.matchAll(/<circle class="point" data-series="loss" data-step="(\d+)"/g)].map((m) => Number(m[1]));
    expect(steps).toEqual([20, 40, 60, 80, 100, 120, 140, 160, 180, 200]);
    const kept = listCheckpoints(runDirs(home, runId).checkpoints);
    expect(kept.map((c) => c.step)).toEqual([200, 180, 160]);
    const last = await verifyCheckpoint(kept[0]!.path);
    if (!last.ok) throw new Error(last.reason);
    expect(html).toContain(`step 200: held-out loss ${last.manifest.metrics!.validLoss!.toFixed(4)} (checkpoint)`);
    expect(html).toMatch(/step 20: training loss [\d.]+ \(job output\)/);
    expect(html.match(/<span class="s-completed">valid<\/span>/g)).toHaveLength(3);
    // The SVG alone, for reports.
    const svg = await fetch(`${ui.url}/runs/${runId}/timeline.svg`);
    expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
  });

  test('an Argo run: the DAG with every node and its phase, dependencies as edges, outputs and logs escaped', async () => {
    const { html } = await get(`/runs/${argoId}`);
    expect(html).toContain('class="tandem-dag"');
    const drawn = Object.fromEntries([...html.matchAll(/<g class="node" data-id="([^"]+)" data-phase="([^"]+)"/g)].map((m) => [m[1], m[2]]));
    expect(drawn).toEqual(Object.fromEntries(Object.values(argoStatus.nodes).map((n) => [n.id, n.phase])));
    const id = (name: string) => Object.values(argoStatus.nodes).find((n) => n.displayName === name)!.id;
    expect(argoStatus.nodes[id('B')]!.phase).toBe('Failed');
    const edges = [...html.matchAll(/data-from="([^"]+)" data-to="([^"]+)"/g)].map((m) => `${m[1]}>${m[2]}`).sort();
    const dag = Object.values(argoStatus.nodes).find((n) => n.type === 'DAG')!.id;
    expect(edges).toEqual([`${dag}>${id('A')}`, `${id('A')}>${id('B')}`, `${id('A')}>${id('D')}`, `${id('B')}>${id('C')}`, `${id('C')}>${id('E')}`, `${id('D')}>${id('E')}`].sort());
    // A's output is the hostile text, in its outputs and in its pod log: escaped, never markup.
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; &amp; more');
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).toContain('<pre class="log">failing');
  });

  test('read-only, unknown runs are a clear 404, and a token is enforced when set', async () => {
    expect((await get('/', { method: 'POST' })).status).toBe(405);
    const missing = await get(`/runs/${encodeURIComponent('<b>nope</b>')}`);
    expect(missing.status).toBe(404);
    expect(missing.html).toContain('no run with id &quot;&lt;b&gt;nope&lt;/b&gt;&quot;');
    const locked = await startUiServer({ tandem: w.tandem, port: 0, token: 's3cret-token' });
    try {
      expect((await fetch(`${locked.url}/`)).status).toBe(401);
      expect((await fetch(`${locked.url}/`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
      expect((await fetch(`${locked.url}/`, { headers: { authorization: 'Bearer s3cret-token' } })).status).toBe(200);
      const viaQuery = await fetch(`${locked.url}/?token=s3cret-token`);
      expect(viaQuery.status).toBe(200);
      const cookie = viaQuery.headers.get('set-cookie')!.split(';')[0]!;
      expect((await fetch(`${locked.url}/runs/${runId}`, { headers: { cookie } })).status).toBe(200);
    } finally {
      await locked.close();
    }
  });
});

// Headless Chromium: the page as a browser renders it. On CI a missing chromium fails the suite.
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const ON_CI = !!process.env.CI;
if (!CHROMIUM && !ON_CI) console.warn('test/ui.test.ts: the browser tests are skipped: no chromium here (install it with scripts/ui/install-chromium.sh); on CI they fail instead');
const browserTest = CHROMIUM || ON_CI ? test : test.skip;
const ARTIFACTS = join(process.cwd(), 'test', 'artifacts', 'ui');

/** One bounded chromium run: killed with its whole process group if it outlives `timeoutMs`. */
function chromium(args: string[], opts: { timeoutMs?: number; window?: string } = {}): Promise<string> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  if (!CHROMIUM) throw new Error('chromium is not installed (scripts/ui/install-chromium.sh; Debian package "chromium")');
  const profile = tempDir('chromium-profile');
  const flags = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check', '--disable-extensions', '--hide-scrollbars', `--user-data-dir=${profile}`, `--window-size=${opts.window ?? '1280,900'}`];
  return new Promise((resolve, reject) => {
    const p = spawn(CHROMIUM, [...flags, ...args], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => {
      try {
        process.kill(-p.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
      reject(new Error(`chromium did not finish within ${timeoutMs} ms: ${err.slice(-2000)}`));
    }, timeoutMs);
    p.on('error', reject);
    p.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`chromium exited ${code}: ${err.slice(-2000)}`));
    });
  });
}

describe('the pages in headless Chromium', () => {
  browserTest('the run page renders its timeline and loss curve; the Argo page its DAG with the right nodes and phases', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const runDom = await chromium(['--dump-dom', `${ui.url}/runs/${runId}`]);
    expect(runDom).toContain('class="tandem-timeline"');
    expect(runDom.match(/<circle class="point" data-series="loss"/g)).toHaveLength(10);
    const argoDom = await chromium(['--dump-dom', `${ui.url}/runs/${argoId}`]);
    const phases = [...argoDom.matchAll(/<g class="node" data-id="[^"]+" data-phase="([^"]+)"/g)].map((m) => m[1]).sort();
    expect(phases).toEqual(Object.values(argoStatus.nodes).map((n) => n.phase).sort());
    expect(argoDom).not.toMatch(/<script|<img/);
    // The whole run page (timeline, stages, loss curve, checkpoints) is about 1800 pixels tall.
    for (const [name, path, window] of [['run', `/runs/${runId}`, '1280,1800'], ['argo', `/runs/${argoId}`, '1280,900'], ['list', '/', '1280,900']] as const) {
      const file = join(ARTIFACTS, `${name}.png`);
      await chromium([`--screenshot=${file}`, `${ui.url}${path}`], { window });
      expect(readFileSync(file).subarray(1, 4).toString()).toBe('PNG');
      expect(statSync(file).size).toBeGreaterThan(10_000);
    }
  }, 90_000);
});
