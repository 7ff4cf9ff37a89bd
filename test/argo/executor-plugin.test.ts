// Tandem as an Argo executor plugin, over HTTP, on the real dev server with the local runtime: the
// protocol (403, `{}` for other plugins, 404, bad input → Failed naming the field, Running with a requeue without Temporal)
// and an agent's conversation for one plugin node (test/fixtures/argo-executor-plugin/), replayed to
// the end: Pending/Running with requeue, the same run on every call, Succeeded with the outputs. The
// agent is simulated by this test (no Kubernetes here); the server, Temporal, worker and jobs are real.
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { createExecutorPluginServer, listen, temporalRuns } from '../../argo/executor-plugin/server.js';
import { workflowIdFor, type ExecuteTemplateArgs, type ExecuteTemplateReply } from '../../argo/executor-plugin/protocol.js';
import { TandemClient } from '../../sdk/client.js';
import { LocalServingBackend } from '../../backends/local-serving.js';
import { address, startWorker, tempDir, uniqueQueue, waitFor } from '../helpers.js';

const TOKEN = 'agent-token-' + randomUUID();
const conversation = JSON.parse(readFileSync(join(process.cwd(), 'test/fixtures/argo-executor-plugin/agent-conversation.json'), 'utf8'));
const fill = <T>(v: T, uid: string): T => JSON.parse(JSON.stringify(v).replaceAll('${UID}', uid).replaceAll('${TOKEN}', TOKEN));

async function serve(connect: () => Promise<TandemClient>): Promise<{ url: string; server: Server }> {
  const server = createExecutorPluginServer({ token: () => TOKEN, runs: temporalRuns(connect) });
  const port = await listen(server, 0, '127.0.0.1');
  return { url: `http://127.0.0.1:${port}`, server };
}

async function call(url: string, body: unknown, opts: { path?: string; method?: string; auth?: string | null } = {}): Promise<{ status: number; json: ExecuteTemplateReply & { error?: string } }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.auth !== null) headers.authorization = opts.auth ?? `Bearer ${TOKEN}`;
  const res = await fetch(url + (opts.path ?? '/api/v1/template.execute'), { method: opts.method ?? 'POST', headers, body: opts.method === 'GET' ? undefined : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as ExecuteTemplateReply & { error?: string } };
}

describe('tandem executor plugin', () => {
  const queue = uniqueQueue('argo-plugin');
  const home = tempDir('argo-plugin');
  let w: Awaited<ReturnType<typeof startWorker>>;
  let url: string;
  let server: Server;

  beforeAll(async () => {
    w = await startWorker({ taskQueue: queue, home });
    ({ url, server } = await serve(() => TandemClient.connect({ address: address(), taskQueue: queue })));
  });
  afterAll(async () => {
    server?.close();
    for (const d of new LocalServingBackend(home).list()) await new LocalServingBackend(home).undeploy(d.name);
    await w?.stop();
  });

  test('a wrong or missing bearer token is 403 and starts nothing', async () => {
    const body = fill(conversation.request.body, randomUUID()) as ExecuteTemplateArgs;
    expect((await call(url, body, { auth: 'Bearer not-the-token' })).status).toBe(403);
    expect((await call(url, body, { auth: null })).status).toBe(403);
    expect((await call(url, body, { auth: TOKEN })).status).toBe(403); // no "Bearer "
    await expect(w.tandem.client.workflow.getHandle(workflowIdFor(body)).describe()).rejects.toThrow(/not found/i);
  });

  test("another plugin's template gets {}, an unknown method 404 (the agent stops calling it)", async () => {
    expect(await call(url, fill(conversation.foreign, randomUUID()))).toEqual({ status: 200, json: {} });
    expect((await call(url, {}, { path: '/api/v1/unknown.method' })).status).toBe(404);
    expect((await call(url, {}, { path: '/', method: 'GET' })).status).toBe(404);
    expect((await call(url, {}, { path: '/api/v1/template.execute', method: 'GET' })).status).toBe(404);
  });

  test('bad input is a Failed node naming the field, never a 500; a body that is no request is 400', async () => {
    const body = fill(conversation.request.body, randomUUID());
    body.template.plugin.tandem.pipeline = body.template.plugin.tandem.pipeline.replace('steps: 20', 'steps: 0');
    const r = await call(url, body);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ node: { phase: 'Failed', message: expect.stringContaining('plugin.tandem.pipeline.stages.train.steps') } });
    expect(r.json.requeue).toBeUndefined();
    const unknown = await call(url, { ...body, template: { ...body.template, plugin: { tandem: { pipeline: 'name: p\n', when: 'now' } } } });
    expect(unknown.json.node).toEqual({ phase: 'Failed', message: 'plugin.tandem: unknown field "when"' });
    expect((await call(url, { workflow: {} })).status).toBe(400);
  });

  test('Temporal unreachable is a Running node with a requeue saying so (a 503 the agent would give up on after ≈ 31 s)', async () => {
    const dead = await serve(() => TandemClient.connect({ address: '127.0.0.1:1', taskQueue: queue }));
    try {
      const r = await call(dead.url, fill(conversation.request.body, randomUUID()));
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ node: { phase: 'Running', message: expect.stringMatching(/Temporal is not reachable: .*the node fails after 15m\); asking again in 30s$/) }, requeue: '30s' });
    } finally {
      dead.server.close();
    }
  });

  test("the agent's conversation for one node: Pending/Running with requeue, one run throughout, then Succeeded with the outputs", async () => {
    const uid = randomUUID();
    const req = fill(conversation.request, uid);
    const send = async () => {
      const res = await fetch(url + req.path, { method: req.method, headers: req.headers, body: JSON.stringify(req.body) });
      expect(res.status).toBe(200);
      return (await res.json()) as ExecuteTemplateReply;
    };
    const id = workflowIdFor(req.body);

    // The first call and two more at once (a restarted agent, a second agent worker): one run.
    const first = await Promise.all([send(), send(), send()]);
    for (const r of first) {
      expect(['Pending', 'Running', 'Succeeded']).toContain(r.node!.phase);
      if (r.node!.phase !== 'Succeeded') expect(r.requeue).toBe('30s');
      expect(r.node!.message).toContain(id);
    }
    const runId = (await w.tandem.client.workflow.getHandle(id).describe()).runId;

    // The agent asks again after each requeue (sooner here) until the phase is final.
    const seen: ExecuteTemplateReply[] = [];
    const final = await waitFor(
      'the plugin node to finish',
      async () => {
        const r = await send();
        seen.push(r);
        return r.node!.phase === 'Pending' || r.node!.phase === 'Running' ? undefined : r;
      },
      120_000,
      300,
    );
    for (const r of seen.filter((x) => x.node!.phase === 'Running' && x.node!.progress)) expect(r.node!.progress).toMatch(/^\d+\/20$/);
    expect(final.node!.phase).toBe('Succeeded');
    expect(final.requeue).toBeUndefined();
    const out = Object.fromEntries(final.node!.outputs!.parameters!.map((p) => [p.name, p.value]));
    expect(out).toMatchObject({ 'workflow-id': id, 'checkpoint-step': '20', 'training-attempts': '1' });
    expect(existsSync(out.checkpoint!)).toBe(true);
    expect(out.completion!.length).toBeGreaterThan(0); // text the trained char-LM generated
    // The served model is the run's catalogued checkpoint (vLLM's model card names its root).
    const models = (await (await fetch(`${out.endpoint}/v1/models`)).json()) as { data: { root: string }[] };
    expect(models.data[0]!.root).toBe(out.checkpoint);

    // Asked again after it finished (the agent's task set re-read): the same answer, still one run.
    const again = await send();
    expect(again.node).toEqual(final.node);
    expect((await w.tandem.client.workflow.getHandle(id).describe()).runId).toBe(runId);
    const runs = await waitFor('visibility to list the run', async () => {
      const list = [];
      for await (const x of w.tandem.client.workflow.list({ query: `WorkflowId = "${id}"` })) list.push(x.runId);
      return list.length > 0 ? list : undefined;
    });
    expect(runs).toEqual([runId]);
  });
});
