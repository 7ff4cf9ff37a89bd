// `tandem ui`, the read-only web view, against a real pipeline run (real jobs on the local runtime,
// real checkpoints) and a real Argo DAG run on the real dev server: the HTML the server sends, and the
// page as headless Chromium renders it (Debian's `chromium`; scripts/ui/install-chromium.sh).
import { request } from 'node:http';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ArgoClient, prepare } from '../argo/client.js';
import type { ArgoStatus } from '../argo/lang/types.js';
import { runDirs } from '../activities/run-store.js';
import { listCheckpoints, verifyCheckpoint } from '../backends/checkpoints.js';
import { LocalServingBackend } from '../backends/local-serving.js';
import { startUiServer, type UiServer } from '../ui/server.js';
import { esc } from '../ui/html.js';
import { Runs } from '../sdk/runs.js';
import { address, spec, startWorker, tempDir, uniqueQueue, waitFor } from './helpers.js';
import { ARTIFACTS, browserTest, chromium, CHROMIUM, warnIfNoChromium } from './chromium.js';

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
// A steps workflow that fails in its second group: Failed in Argo, though its Temporal run completed.
const STEPS = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: ui-steps-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: first, template: ok}
    - - {name: second, template: boom}
  - name: ok
    container: {image: alpine, command: [sh, -c, "true"]}
  - name: boom
    container: {image: alpine, command: [sh, -c, "exit 4"]}
`;

let home: string;
let w: Awaited<ReturnType<typeof startWorker>>;
let argo: ArgoClient;
let ui: UiServer;
let runId: string;
let argoId: string;
let argoStatus: ArgoStatus;
let stepsId: string;
let stepsStatus: ArgoStatus;
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
  const steps = await argo.submit(prepare('ui-steps.yaml', { text: STEPS }));
  stepsId = `argo-${steps.id}`;
  [, argoStatus, stepsStatus] = await Promise.all([h.result(), argo.wait(id), argo.wait(steps.id)]);
  ui = await startUiServer({ tandem: w.tandem, argo, home, port: 0, noAuth: true, temporalUi: 'http://127.0.0.1:8233' });
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
    // Prototype names are not statuses, and a malformed %-encoding is the client's error: 400s, not 500s.
    expect((await get('/?status=constructor')).status).toBe(400);
    expect((await get('/runs/%E0%A4%A')).status).toBe(400);
    // DNS rebinding: a request naming another host is refused on the loopback-bound view.
    const rebound = await new Promise<number>((ok, fail) => request(`${ui.url}/`, { headers: { host: 'evil.example:80' } }, (r) => { r.resume(); ok(r.statusCode ?? 0); }).on('error', fail).end());
    expect(rebound).toBe(421);
    // Another site's page fetching the view (its Origin) is refused even on loopback without a token.
    expect((await fetch(`${ui.url}/`, { headers: { origin: 'http://evil.example' } })).status).toBe(403);
  });

  test('the runs list: a pipeline column and filter, relative start times, and pages linked newest to oldest', async () => {
    const byPipeline = await waitFor('the run listed by its pipeline', async () => {
      const page = await get('/?pipeline=ui-demo');
      return page.html.includes(`>${runId}</a>`) ? page : undefined;
    });
    expect(byPipeline.html).not.toContain(argoId);
    expect(byPipeline.html).toContain('value="ui-demo"');
    expect(byPipeline.html).toContain(`<a href="/?pipeline=ui-demo">ui-demo</a>`);
    expect((await get('/?pipeline=no-such-pipeline')).html).not.toContain(runId);
    expect(byPipeline.html).toMatch(/<time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z" title="[^"]+">(\d+ (s|min|h) ago|just now)<\/time>/);
    // One run a page: the first page links to the next, which holds another run; a forged token is a 400.
    const paged = await startUiServer({ tandem: w.tandem, port: 0, pageSize: 1 });
    try {
      const first = await (await fetch(`${paged.url}/`)).text();
      const ids = (html: string) => [...html.matchAll(/<a class="run" href="\/runs\/([^"]+)">/g)].map((m) => decodeURIComponent(m[1]!));
      expect(ids(first)).toHaveLength(1);
      const next = /<a class="next" href="([^"]+)">/.exec(first)![1]!.replace(/&amp;/g, '&');
      const second = await (await fetch(`${paged.url}${next}`)).text();
      expect(ids(second)).toHaveLength(1);
      expect(ids(second)[0]).not.toBe(ids(first)[0]);
      expect(second).toContain('<a class="first" href="/">« newest</a>');
      expect((await fetch(`${paged.url}/?page=not*a*token`)).status).toBe(400);
    } finally {
      await paged.close();
    }
  });

  test('a job attempt\'s output: linked from the run page, stdout and stderr escaped, a 404 for an attempt that never ran', async () => {
    const { html } = await get(`/runs/${runId}`);
    expect(html).toContain(`<a class="logs" href="/runs/${runId}/logs/train/1">output</a>`);
    expect(html).toContain(`<a class="logs" href="/runs/${runId}/logs/preprocess/1">output</a>`);
    // The finished training's last progress, from its watch's result.
    expect(html).toMatch(/<span class="progress" data-step="200" data-total="200">.*step 200\/200 · loss [\d.]+/);
    const logs = await get(`/runs/${runId}/logs/train/1`);
    expect(logs.status).toBe(200);
    expect(logs.html).toContain('<pre class="log stdout">');
    expect(logs.html).toMatch(/train: step 200\/200 loss=[\d.]+/);
    expect(logs.html).not.toContain('http-equiv="refresh"'); // closed: no reload
    expect((await get(`/runs/${runId}/logs/train/7`)).status).toBe(404);
    expect((await get(`/runs/${runId}/logs/train/x`)).status).toBe(400);
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

  test('the Gantt splits each job attempt into queue wait and run time from the states its watch recorded in the history', async () => {
    const { html } = await get(`/runs/${runId}`);
    const report = await new Runs(w.tandem).show(runId);
    const watches = report.activities.filter((a) => a.type === 'awaitJob');
    expect(watches.map((a) => a.stage)).toEqual(['preprocess', 'train']);
    for (const watch of watches) {
      // What the watch saw: local jobs start at submission, so the first state it observed is RUNNING —
      // no queued state, hence a zero-length queue wait; the run segment spans the watch to its end. A
      // job that ends before the watch's first poll (preprocess, on a loaded machine) is seen only ended.
      const observed = (watch.result as { observed: { state: string; at: number }[] }).observed;
      expect([['RUNNING', 'COMPLETED'], ['COMPLETED']]).toContainEqual(observed.map((o) => o.state));
      const row = new RegExp(`<g class="attempt" data-stage="${watch.stage}" data-job="([^"]+)" data-split="observed">([\\s\\S]*?)</g>`).exec(html);
      expect(row).not.toBeNull();
      expect(row![1]).toBe((watch.input as { ref: { jobId: string } }).ref.jobId);
      const seg = (kind: string) => /data-from="(\d+)" data-to="(\d+)"/.exec(new RegExp(`<rect class="${kind}"[^>]*>`).exec(row![2]!)![0])!.slice(1).map(Number);
      const [q0, q1] = seg('queue');
      const [r0, r1] = seg('run');
      expect([q0, q1]).toEqual([watch.scheduledAt!.getTime(), watch.scheduledAt!.getTime()]);
      expect([r0, r1]).toEqual([watch.scheduledAt!.getTime(), watch.closedAt!.getTime()]);
      expect(row![2]).toContain('<title>queue wait 0 ms (no queued state observed)</title>');
      expect(row![2]).toMatch(/<title>running [\d.]+ (ms|s), ended COMPLETED<\/title>/);
    }
    // The run neither failed over nor compensated: nothing is marked.
    expect(html).not.toContain('<g class="marker"');
  });

  test('the deployment section: the revision rolled out and its readiness gates, from the deploy stage\'s recorded results', async () => {
    const { html } = await get(`/runs/${runId}`);
    const report = await new Runs(w.tandem).show(runId);
    const deployed = report.activities.find((a) => a.type === 'deployModel')!.result as { name: string; endpoint: string };
    const ready = report.activities.find((a) => a.type === 'awaitReadiness')!.result as { completion: string; models: string[] };
    expect(html).toContain(`<span class="revision">${deployed.name}</span>`);
    expect(html).toContain(`<td>${deployed.endpoint}</td>`);
    expect(html).toContain('<td>rolled out</td>');
    const gates = [...html.matchAll(/data-gate="(\w+)" data-result="([\w ]+)"/g)].map((m) => [m[1], m[2]]);
    expect(gates).toEqual([['health', 'passed'], ['models', 'passed'], ['completion', 'passed']]);
    expect(html).toContain(`/v1/models lists ${ready.models.join(', ')}`);
    expect(html).toContain(esc(`smoke completion: ${JSON.stringify(ready.completion)}`));
    expect(html).not.toContain('<h3>Rollback</h3>');
  });

  test('a run still going: the Gantt splits the watched job from its last heartbeat; cancelled, its compensations are marked', async () => {
    const id = `ui-live-${randomBytes(3).toString('hex')}`;
    // About 60 s of training (cancelled once looked at): long enough to look at while the watch runs.
    const h = await w.tandem.launch(spec({ name: 'ui-live', tenant: 'ui-live', stages: { train: { steps: 300, checkpointEvery: 50, stepDelayMs: 200 } } }), { id, tuning: { pollMaxMs: 300 } });
    try {
      const row = await waitFor('the train watch heartbeating', async () => {
        const { html } = await get(`/runs/${id}`);
        return /<g class="attempt" data-stage="train" data-job="[^"]+" data-split="observed">([\s\S]*?)<\/g>/.exec(html)?.[1];
      });
      // From the pending activity's heartbeat (the history has no result yet): seen RUNNING from the start.
      const report = await new Runs(w.tandem).show(id);
      expect(report.activities.find((a) => a.type === 'awaitJob' && a.stage === 'train')?.outcome).toBe('running');
      expect(row).toContain('<title>queue wait 0 ms (no queued state observed)</title>');
      expect(row).toMatch(/<title>running [\d.]+ (ms|s) so far \(RUNNING\)<\/title>/);
      // Live: the page reloads itself (a meta refresh: the CSP allows no script), and the train stage
      // shows the step and loss of the watch's last heartbeat, which a later reload moves on.
      const live = await waitFor('training progress on the page', async () => {
        const { html } = await get(`/runs/${id}`);
        const m = /<span class="progress" data-step="(\d+)" data-total="300">.*?step \d+\/300 · loss ([\d.]+)<\/span>/.exec(html);
        return m && Number(m[1]) > 0 ? { html, step: Number(m[1]) } : undefined;
      });
      expect(live.html).toContain('<meta http-equiv="refresh" content="5">');
      expect(live.html).toContain('still running: this page reloads every 5 s');
      await waitFor('a later step on reload', async () => {
        const m = /<span class="progress" data-step="(\d+)"/.exec((await get(`/runs/${id}`)).html);
        return m && Number(m[1]) > live.step ? true : undefined;
      });
      // The running job's output so far, on a page that reloads too.
      const out = await waitFor('the running job\'s output', async () => {
        const page = await get(`/runs/${id}/logs/train/1`);
        return /train: step \d+\/300/.test(page.html) ? page : undefined;
      });
      expect(out.html).toContain('<meta http-equiv="refresh" content="5">');
      if (CHROMIUM) {
        mkdirSync(ARTIFACTS, { recursive: true });
        await chromium([`--screenshot=${join(ARTIFACTS, 'live.png')}`, `${ui.url}/runs/${id}`], { window: '1280,1000' });
        await chromium([`--screenshot=${join(ARTIFACTS, 'logs.png')}`, `${ui.url}/runs/${id}/logs/train/1`], { window: '1280,700' });
        const dom = await chromium(['--dump-dom', `${ui.url}/runs/${id}`]);
        expect(dom).toMatch(/<progress value="\d+" max="300">/);
        expect(dom).toContain('data-name="running"');
      }
    } finally {
      await h.cancel();
    }
    await expect(h.result()).rejects.toThrow();
    const closed = await waitFor('the cancelled run closed', async () => {
      const r = await new Runs(w.tandem).show(id);
      return r.status === 'Canceled' ? r : undefined;
    });
    const undone = closed.activities.filter((a) => a.compensation);
    expect(undone.map((a) => a.type)).toContain('cancelJob');
    const { html } = await get(`/runs/${id}`);
    expect(html.match(/<g class="marker" data-kind="compensation">/g)).toHaveLength(undone.length);
    expect(html).toContain('<title>compensation: cancelJob completed</title>');
  }, 120_000);

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
    // dagre's layout, left to right: every edge runs from a node to one placed further right, and the
    // path it routed starts on the right half of the box it leaves.
    const at = Object.fromEntries([...html.matchAll(/<g class="node" data-id="([^"]+)"[^>]* data-x="([\d.]+)" data-y="([\d.]+)"/g)].map((m) => [m[1], { x: Number(m[2]), y: Number(m[3]) }]));
    expect(Object.keys(at).sort()).toEqual(Object.keys(argoStatus.nodes).sort());
    for (const m of html.matchAll(/data-from="([^"]+)" data-to="([^"]+)" d="M ([\d.]+) ([\d.]+)/g)) {
      expect(at[m[2]!]!.x).toBeGreaterThan(at[m[1]!]!.x);
      expect(Number(m[3])).toBeGreaterThanOrEqual(at[m[1]!]!.x + 85);
      expect(Number(m[3])).toBeLessThanOrEqual(at[m[1]!]!.x + 170.5);
    }
    expect(new Set(Object.values(at).map((p) => `${p.x},${p.y}`)).size).toBe(Object.keys(at).length); // no two boxes on top of each other
    // A's output is the hostile text, in its outputs and in its pod log: escaped, never markup.
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; &amp; more');
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).toContain('<pre class="log">failing');
  });

  test('a Failed Argo workflow is shown Failed (not Completed), its steps drawn one group after another', async () => {
    expect(stepsStatus.phase).toBe('Failed');
    const listed = await waitFor('the steps run listed', async () => {
      const page = await get('/');
      return page.html.includes(`href="/runs/${stepsId}"`) ? page : undefined;
    });
    const row = listed.html.split('<tr').find((r) => r.includes(`href="/runs/${stepsId}"`))!;
    expect(row).toContain('<span class="status s-Failed">Failed</span>');
    const { html } = await get(`/runs/${stepsId}`);
    expect(html).toContain('<dt>status</dt><dd><span class="status s-Failed">Failed</span></dd>');
    const id = (name: string) => Object.values(stepsStatus.nodes).find((n) => n.displayName === name)!.id;
    const edges = [...html.matchAll(/data-from="([^"]+)" data-to="([^"]+)"/g)].map((m) => `${m[1]}>${m[2]}`).sort();
    const root = stepsStatus.name;
    expect(edges).toEqual([`${root}>${id('[0]')}`, `${id('[0]')}>${id('first')}`, `${id('first')}>${id('[1]')}`, `${id('[1]')}>${id('second')}`].sort());
  });

  test('read-only, unknown runs are a clear 404, and a token is enforced when set', async () => {
    expect((await get('/', { method: 'POST' })).status).toBe(405);
    const missing = await get(`/runs/${encodeURIComponent('<b>nope</b>')}`);
    expect(missing.status).toBe(404);
    expect(missing.html).toContain('no run with id &quot;&lt;b&gt;nope&lt;/b&gt;&quot;');
    // Authenticated by default: no token is an explicit choice, and a loopback-only one.
    await expect(startUiServer({ tandem: w.tandem, port: 0 })).rejects.toThrow(/needs a token/);
    await expect(startUiServer({ tandem: w.tandem, port: 0, host: '0.0.0.0', noAuth: true })).rejects.toThrow(/loopback only, not 0\.0\.0\.0/);
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

warnIfNoChromium('test/ui.test.ts');

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
    // The whole run page (timeline, stages, loss curve, checkpoints, deployment and its gates) is about 2100 pixels tall.
    for (const [name, path, window] of [['run', `/runs/${runId}`, '1280,2100'], ['argo', `/runs/${argoId}`, '1280,900'], ['list', '/', '1280,900']] as const) {
      const file = join(ARTIFACTS, `${name}.png`);
      await chromium([`--screenshot=${file}`, `${ui.url}${path}`], { window });
      expect(readFileSync(file).subarray(1, 4).toString()).toBe('PNG');
      expect(statSync(file).size).toBeGreaterThan(10_000);
    }
  }, 90_000);
});
