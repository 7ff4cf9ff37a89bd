// Tandem as an Argo executor plugin with training on real Slurm: the agent's recorded conversation
// (test/fixtures/argo-executor-plugin/) for a plugin node whose pipeline preprocesses and trains on a
// real Slurm cluster through FirecREST (firecrest-bed.ts), replayed end to end against the plugin's
// HTTP server on the real dev server: Pending/Running with requeue and step/total progress while the
// Slurm jobs run, one run and one Slurm job per stage throughout, then Succeeded with the outputs.
import { chmodSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { createExecutorPluginServer, listen, temporalRuns } from '../../argo/executor-plugin/server.js';
import { workflowIdFor, type ExecuteTemplateReply } from '../../argo/executor-plugin/protocol.js';
import { createActivities } from '../../activities/index.js';
import { TandemClient } from '../../sdk/client.js';
import { LocalServingBackend } from '../../backends/local-serving.js';
import { address, jobNameOf, startWorker, uniqueQueue, waitFor } from '../helpers.js';
import { startBed, type Bed } from './firecrest-bed.js';

const TOKEN = 'agent-token-' + randomUUID();
const conversation = JSON.parse(readFileSync(join(process.cwd(), 'test/fixtures/argo-executor-plugin/agent-conversation.json'), 'utf8'));
// The node's pipeline, as a team would write it for Slurm: preprocess and train at the site, serve locally.
const SLURM_PIPELINE = 'name: argo-plugin\ntenant: argo\nstages:\n  preprocess: { runtime: slurm, samples: 200 }\n  train: { runtime: slurm, steps: 20, checkpointEvery: 10 }\n  deploy: { runtime: local }\n';

let bed: Bed;
let oldUmask: number;
beforeAll(async () => {
  // Jobs run as the cluster's unprivileged user in run directories the worker creates (one host here).
  oldUmask = process.umask(0);
  bed = await startBed('plugin');
});
afterAll(async () => {
  process.umask(oldUmask);
  await bed?.close();
});

test("the agent's conversation for a Slurm-training node: requeue while the Slurm jobs run, then Succeeded", async () => {
  const home = mkdtempSync(join(bed.cluster.workDir, 'home-'));
  chmodSync(home, 0o777);
  const queue = uniqueQueue('plugin-slurm');
  const slurm = bed.backend({ statusIntervalMs: 300 });
  const w = await startWorker({ taskQueue: queue, home, activities: createActivities({ home, backends: { slurm } }) });
  const server: Server = createExecutorPluginServer({ token: () => TOKEN, runs: temporalRuns(() => TandemClient.connect({ address: address(), taskQueue: queue })) });
  const url = `http://127.0.0.1:${await listen(server, 0, '127.0.0.1')}`;
  try {
    const req = JSON.parse(JSON.stringify(conversation.request).replaceAll('${UID}', randomUUID()).replaceAll('${TOKEN}', TOKEN));
    req.body.template.plugin.tandem.pipeline = SLURM_PIPELINE;
    const id = workflowIdFor(req.body);
    const send = async () => {
      const res = await fetch(url + req.path, { method: req.method, headers: req.headers, body: JSON.stringify(req.body) });
      expect(res.status).toBe(200);
      return (await res.json()) as ExecuteTemplateReply;
    };
    const seen: ExecuteTemplateReply[] = [];
    const final = await waitFor(
      'the plugin node to finish',
      async () => {
        const r = await send();
        seen.push(r);
        if (r.node!.phase === 'Pending' || r.node!.phase === 'Running') {
          expect(r.requeue).toBe('30s');
          return undefined;
        }
        return r;
      },
      240_000,
      500,
    );
    expect(seen.some((r) => r.node!.phase === 'Running')).toBe(true);
    for (const r of seen.filter((x) => x.node!.phase === 'Running' && x.node!.progress)) expect(r.node!.progress).toMatch(/^\d+\/20$/);
    expect(final.node!.phase).toBe('Succeeded');
    const out = Object.fromEntries(final.node!.outputs!.parameters!.map((p) => [p.name, p.value]));
    expect(out).toMatchObject({ 'workflow-id': id, 'checkpoint-step': '20', 'training-attempts': '1' });
    // The stages really ran as Slurm jobs: one each, found by the run's job names.
    const handle = w.tandem.client.workflow.getHandle(id);
    const timeline = (await handle.query('timeline')) as { kind: string; stage?: string; runtime?: string }[];
    expect(timeline.filter((e) => e.kind === 'job-submitted' && (e.stage === 'preprocess' || e.stage === 'train')).map((e) => `${e.stage}:${e.runtime}`)).toEqual(['preprocess:slurm', 'train:slurm']);
    for (const stage of ['preprocess', 'train'] as const) {
      const jobs = (await bed.cluster.cli('squeue', ['-h', '-n', await jobNameOf(handle, stage, 1), '-t', 'all', '-o', '%A'])).trim();
      expect(jobs.split('\n').filter(Boolean)).toHaveLength(1);
    }
    // Asked again after it finished: the same answer.
    expect((await send()).node).toEqual(final.node);
  } finally {
    server.close();
    for (const d of new LocalServingBackend(home).list()) await new LocalServingBackend(home).undeploy(d.name);
    await w.stop();
  }
}, 300_000);
