// [real Argo] Tandem's executor plugin run by Argo Workflows v3.7.9 itself: the real workflow-controller
// (validator, task sets, agent pods, node phases) and the real `argoexec agent` (its token, its calls,
// its retries) on the real control plane, with the shipped plugin ConfigMap and RBAC and the real
// `tandem argo executor-plugin serve` sidecar (this checkout's CLI) talking to the Temporal dev server and
// an in-process Tandem worker (local runtime). The harness (./argo.ts) plays the kubelet for agent pods;
// kwok finishes Argo's container pods. The replayed conversation of test/argo/executor-plugin.test.ts
// covers the protocol's corners in `npm test`; this suite is what real Argo does with them.
import { readFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { parse } from 'yaml';
import { LocalServingBackend } from '../../backends/local-serving.js';
import type { PipelineStatus, TimelineEntry } from '../../contract/status.js';
import { address, startWorker, tempDir, uniqueQueue, waitFor } from '../helpers.js';
import { startControlPlane, type ControlPlane } from '../kubernetes/control-plane.js';
import { ARGO_POD_STAGE, finished, nodeNamed, startArgo, type Argo, type ArgoNode, type Workflow } from './argo.js';
import { PLUGIN_DIR as DIR, TANDEM_COMMAND, tandemPluginObjects } from './tandem-plugin.js';

const queue = uniqueQueue('argo-real');
const home = tempDir('argo-real');
let cp: ControlPlane;
let argo: Argo;
let w: Awaited<ReturnType<typeof startWorker>>;
let temporal: Outage;

/** A loopback TCP proxy in front of the dev server that the test can take down and bring back. */
interface Outage {
  address: string;
  down(): void;
  up(): Promise<void>;
  close(): Promise<void>;
}
async function temporalProxy(target: string): Promise<Outage> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let listenPort = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((c) => {
        const u = connect(port, host);
        for (const s of [c, u]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        c.pipe(u).pipe(c);
      });
      server.once('error', reject);
      server.listen(listenPort, '127.0.0.1', () => {
        listenPort = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  await listen();
  const down = () => {
    server?.close();
    server = undefined;
    for (const s of sockets) s.destroy();
  };
  return { address: `127.0.0.1:${listenPort}`, down, up: listen, close: async () => down() };
}

beforeAll(async () => {
  temporal = await temporalProxy(address());
  cp = await startControlPlane({ nodes: [{ name: 'argo-node-1', cpu: '16', memory: '64Gi' }], extraStages: [ARGO_POD_STAGE] });
  w = await startWorker({ taskQueue: queue, home });
  // The sidecar reads the workflows every second (default 5s), so a stop shows within a couple of seconds here.
  argo = await startArgo(cp, { objects: tandemPluginObjects({ temporalAddress: temporal.address, taskQueue: queue, extraArgs: ['--watch-every', '1s'] }), commands: TANDEM_COMMAND });
}, 180_000);

afterAll(async () => {
  await argo?.close();
  for (const d of new LocalServingBackend(home).list()) await new LocalServingBackend(home).undeploy(d.name);
  await w?.stop();
  await cp?.stop();
  await temporal?.close();
});

const nodes = (wf: Workflow): ArgoNode[] => Object.values(wf.status?.nodes ?? {});
const node = nodeNamed;
const param = (n: ArgoNode | undefined, name: string) => n?.outputs?.parameters?.find((p) => p.name === name)?.value;
/** The Tandem run id a plugin node's message names (every reply's message starts "Tandem run <id>"). */
const runIdOf = (n: ArgoNode | undefined) => /Tandem run (argo-[A-Za-z0-9-]+)/.exec(n?.message ?? '')?.[1];

/** A one-node workflow: the plugin template with this pipeline text, a steps parameter and requeue. */
function pluginWorkflow(prefix: string, pipeline: string, opts: { requeue?: string; steps?: number } = {}): object {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Workflow',
    metadata: { generateName: `${prefix}-` },
    spec: {
      entrypoint: 'main',
      templates: [
        { name: 'main', steps: [[{ name: 'train', template: 'tandem', arguments: { parameters: [{ name: 'steps', value: String(opts.steps ?? 20) }] } }]] },
        {
          name: 'tandem',
          inputs: { parameters: [{ name: 'steps' }] },
          outputs: { parameters: [{ name: 'endpoint', valueFrom: { supplied: {} } }] },
          plugin: { tandem: { requeue: opts.requeue ?? '1s', pipeline } },
        },
      ],
    },
  };
}

test('the shipped example: Argo validates it, the plugin node trains and deploys, its outputs reach the next step', async () => {
  const example = parse(readFileSync(join(DIR, 'example-workflow.yaml'), 'utf8'));
  const name = await argo.submit(example);
  const wf = await argo.waitFor(name, 'the example workflow to finish', finished, 150_000);
  expect(wf.status!.phase).toBe('Succeeded');
  const train = node(wf, 'train')!;
  expect(train).toMatchObject({ type: 'Plugin', phase: 'Succeeded' });
  const endpoint = param(train, 'endpoint')!;
  const completion = param(train, 'completion')!;
  expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
  expect(completion.length).toBeGreaterThan(0);
  // The report step's pod got the substituted values in its command (Argo wraps it in argoexec emissary).
  const report = node(wf, 'report')!;
  expect(report).toMatchObject({ type: 'Pod', phase: 'Succeeded' });
  const pod = (await argo.pods(name)).find((p) => p.metadata?.name?.includes('report'))!;
  const main = pod.spec!.containers.find((c) => c.name === 'main')!;
  expect([...(main.command ?? []), ...(main.args ?? [])].join(' ')).toContain(`served at ${endpoint}: ${completion}`);
  // One Tandem run, completed, and its served model answers.
  const id = runIdOf(train)!;
  expect((await w.tandem.client.workflow.getHandle(id).describe()).status.name).toBe('COMPLETED');
  const models = (await (await fetch(`${endpoint}/v1/models`)).json()) as { data: unknown[] };
  expect(models.data.length).toBe(1);
}, 180_000);

test('concurrent workflows: each agent pod has its own token, which only its own sidecar accepts; progress is in the message', async () => {
  const pipeline = (n: number) => `name: concurrent-${n}\ntenant: argo\nstages:\n  train: { runtime: local, steps: {{inputs.parameters.steps}}, checkpointEvery: 20, stepDelayMs: 40 }\n`;
  const names = await Promise.all([1, 2].map((n) => argo.submit(pluginWorkflow(`concurrent-${n}`, pipeline(n), { steps: 60 }))));
  // Both agent pods up with their sidecars listening: tokens differ, and a token is only good for its own pod.
  const pods = await waitFor(
    'both agent pods with their tokens',
    () => {
      const runs = names.map((n) => [...argo.agents.values()].find((a) => a.workflow === n && Object.keys(a.tokens).length));
      return runs.every(Boolean) ? runs.map((r) => r!) : undefined;
    },
    60_000,
  );
  const [a, b] = pods.map((p) => ({ token: p.tokens['tandem-executor-plugin']!, port: Object.values(p.ports)[0]! }));
  expect(a!.token).toMatch(/^[a-z0-9]{32}$/);
  expect(b!.token).toMatch(/^[a-z0-9]{32}$/);
  expect(a!.token).not.toBe(b!.token);
  const callWith = async (port: number, token: string) => {
    for (;;) {
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/template.execute`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' }).catch(() => undefined);
      if (r) return r.status;
      await new Promise((res) => setTimeout(res, 200)); // the sidecar is still starting
    }
  };
  expect(await callWith(a!.port, b!.token)).toBe(403);
  expect(await callWith(b!.port, a!.token)).toBe(403);
  expect(await callWith(a!.port, a!.token)).toBe(400); // past authentication: `{}` is no request

  // While training, the node's message (all Argo keeps of a reply, besides phase and outputs) shows progress.
  const progress = await argo.waitFor(names[0]!, 'a Running node whose message shows training progress', (wf) => {
    const t = node(wf, 'train');
    return t?.phase === 'Running' && /step \d+\/60/.test(t.message ?? '') ? t.message : finished(wf) ? 'finished first' : undefined;
  });
  expect(progress).toMatch(/^Tandem run argo-\S+: stage train running on local \(local\), step \d+\/60$/);

  const done = await Promise.all(names.map((n) => argo.waitFor(n, `${n} to finish`, finished)));
  for (const wf of done) {
    expect(wf.status!.phase).toBe('Succeeded');
    expect(param(node(wf, 'train'), 'endpoint')).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
  }
  expect(new Set(done.map((wf) => runIdOf(node(wf, 'train'))))).toHaveProperty('size', 2);
}, 180_000);

test('a bad spec is a Failed node naming the field; a template of another plugin gets "no plugin executed the template"', async () => {
  const bad = await argo.submit(pluginWorkflow('bad-spec', 'name: bad\nstages:\n  train: { runtime: local, steps: {{inputs.parameters.steps}} }\n', { steps: 0 }));
  const foreign = await argo.submit({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Workflow',
    metadata: { generateName: 'foreign-' },
    spec: { entrypoint: 'other', templates: [{ name: 'other', plugin: { hello: { text: 'not for tandem' } } }] },
  });
  const [b, f] = await Promise.all([argo.waitFor(bad, 'the bad-spec workflow to finish', finished), argo.waitFor(foreign, 'the foreign-plugin workflow to finish', finished)]);
  expect(b.status!.phase).toBe('Failed');
  expect(node(b, 'train')).toMatchObject({ phase: 'Failed', message: expect.stringContaining('plugin.tandem.pipeline.stages.train.steps') });
  expect(f.status!.phase).toBe('Failed');
  expect(nodes(f)[0]).toMatchObject({ type: 'Plugin', phase: 'Failed', message: expect.stringContaining('no plugin executed the template') });
}, 120_000);

/** A run that trains long enough to be stopped, and then deploys (so there is something to undo). */
const slowPipeline = 'name: stoppable\ntenant: argo\nstages:\n  train: { runtime: local, steps: {{inputs.parameters.steps}}, checkpointEvery: 10, stepDelayMs: 100 }\n';

async function runningRun(name: string): Promise<string> {
  const n = await argo.waitFor(name, 'the plugin node Running in train', (wf) => {
    const t = node(wf, 'train');
    return t?.phase === 'Running' && /stage train running/.test(t.message ?? '') ? t : undefined;
  });
  return runIdOf(n)!;
}

async function cancelledRun(id: string): Promise<{ status: PipelineStatus; timeline: TimelineEntry[] }> {
  const h = w.tandem.client.workflow.getHandle(id);
  await waitFor('the Tandem run to be cancelled', async () => ((await h.describe()).status.name === 'CANCELLED' ? true : undefined), 60_000, 250);
  return { status: await h.query<PipelineStatus>('status'), timeline: await h.query<TimelineEntry[]>('timeline') };
}

test.each(['Stop', 'Terminate'] as const)('`argo %s` fails the node in Argo and cancels the Tandem run (compensations run)', async (strategy) => {
  const name = await argo.submit(pluginWorkflow(`stop-${strategy.toLowerCase()}`, slowPipeline, { steps: 3000 }));
  const id = await runningRun(name);
  await argo.shutdown(name, strategy);
  const wf = await argo.waitFor(name, 'the stopped workflow to finish', finished);
  expect(wf.status!.phase).toBe('Failed');
  expect(node(wf, 'train')).toMatchObject({ phase: 'Failed', message: `Stopped with strategy '${strategy}'` });
  const { status, timeline } = await cancelledRun(id);
  expect(status.phase).toBe('cancelled');
  expect(status.stages.train.status).toBe('cancelled');
  expect(timeline.map((e) => e.kind)).toContain('pipeline-cancelled');
  // The running training job was the saga's to undo: cancelled as a compensation.
  expect(timeline.filter((e) => e.kind === 'compensation').length).toBeGreaterThan(0);
}, 120_000);

test('deleting the Argo workflow cancels the Tandem run', async () => {
  const name = await argo.submit(pluginWorkflow('deleted', slowPipeline, { steps: 3000 }));
  const id = await runningRun(name);
  await argo.delete(name);
  const { status, timeline } = await cancelledRun(id);
  expect(status.phase).toBe('cancelled');
  expect(timeline.filter((e) => e.kind === 'compensation').length).toBeGreaterThan(0);
  expect(await argo.get(name)).toBeUndefined();
}, 120_000);

test('Temporal unreachable for longer than the agent retries a 503 does not fail the node: Running with a message, then Succeeded', async () => {
  const pipeline = 'name: outage\ntenant: argo\nstages:\n  train: { runtime: local, steps: {{inputs.parameters.steps}}, checkpointEvery: 20, stepDelayMs: 50 }\n';
  const name = await argo.submit(pluginWorkflow('outage', pipeline, { steps: 200 }));
  await runningRun(name);
  temporal.down();
  const message = await argo.waitFor(name, 'the node to say Temporal is unreachable', (wf) => {
    const t = node(wf, 'train');
    return t?.phase === 'Running' && t.message?.includes('Temporal is not reachable') ? t.message : undefined;
  });
  expect(message).toMatch(/the node fails after 15m\); asking again in 1s$/);
  // Argo's agent gives up on a 503 or a refused connection after ≈ 31 s; 40 s of outage is past that.
  const until = Date.now() + 40_000;
  while (Date.now() < until) {
    const t = node((await argo.get(name))!, 'train');
    expect(t?.phase).toBe('Running');
    await new Promise((r) => setTimeout(r, 1000));
  }
  await temporal.up();
  const wf = await argo.waitFor(name, 'the workflow to finish after the outage', finished);
  expect(wf.status!.phase).toBe('Succeeded');
  expect(param(node(wf, 'train'), 'endpoint')).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
}, 180_000);
