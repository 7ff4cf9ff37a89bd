// [real Argo + real Slurm] A plugin node of a real Argo v3.7.9 workflow whose Tandem pipeline
// preprocesses and trains on a real Slurm cluster through FirecREST (test/slurm/firecrest-bed.ts: Debian
// slurmctld/slurmd, slurmrestd, the FirecREST v2 gateway) and serves locally; the next step gets the
// endpoint. The controller, the agent and the `tandem` sidecar as in executor-plugin.cp.test.ts.
import { chmodSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { createActivities } from '../../activities/index.js';
import { LocalServingBackend } from '../../backends/local-serving.js';
import type { PipelineStatus } from '../../contract/status.js';
import { address, startWorker, uniqueQueue } from '../helpers.js';
import { startControlPlane, type ControlPlane } from '../kubernetes/control-plane.js';
import { startBed, type Bed } from '../slurm/firecrest-bed.js';
import { ARGO_POD_STAGE, startArgo, type Argo, type Workflow } from './argo.js';
import { TANDEM_COMMAND, tandemPluginObjects } from './tandem-plugin.js';

const queue = uniqueQueue('argo-slurm');
let bed: Bed;
let cp: ControlPlane;
let argo: Argo;
let w: Awaited<ReturnType<typeof startWorker>>;
let home: string;
let oldUmask: number;

beforeAll(async () => {
  // Jobs run as the cluster's unprivileged user in run directories the worker creates (one host here).
  oldUmask = process.umask(0);
  bed = await startBed('argoreal');
  home = mkdtempSync(join(bed.cluster.workDir, 'home-'));
  chmodSync(home, 0o777);
  const slurm = bed.backend({ statusIntervalMs: 300 });
  w = await startWorker({ taskQueue: queue, home, activities: createActivities({ home, backends: { slurm } }) });
  cp = await startControlPlane({ nodes: [{ name: 'argo-node-1' }], extraStages: [ARGO_POD_STAGE] });
  argo = await startArgo(cp, { objects: tandemPluginObjects({ temporalAddress: address(), taskQueue: queue }), commands: TANDEM_COMMAND });
}, 240_000);

afterAll(async () => {
  await argo?.close();
  if (home) for (const d of new LocalServingBackend(home).list()) await new LocalServingBackend(home).undeploy(d.name);
  await w?.stop();
  await cp?.stop();
  await bed?.close();
  process.umask(oldUmask);
});

test('a real Argo plugin node trains on real Slurm through FirecREST; the next step gets the endpoint', async () => {
  const name = await argo.submit({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Workflow',
    metadata: { generateName: 'slurm-train-' },
    spec: {
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [{ name: 'train', template: 'train-on-slurm', arguments: { parameters: [{ name: 'steps', value: '20' }] } }],
            [{ name: 'report', template: 'report', arguments: { parameters: [{ name: 'endpoint', value: '{{steps.train.outputs.parameters.endpoint}}' }] } }],
          ],
        },
        {
          name: 'train-on-slurm',
          inputs: { parameters: [{ name: 'steps' }] },
          outputs: { parameters: [{ name: 'endpoint', valueFrom: { supplied: {} } }, { name: 'workflow-id', valueFrom: { supplied: {} } }] },
          plugin: { tandem: { requeue: '2s', pipeline: 'name: argo-slurm\ntenant: argo\nstages:\n  preprocess: { runtime: slurm, samples: 200 }\n  train: { runtime: slurm, steps: {{inputs.parameters.steps}}, checkpointEvery: 10 }\n  deploy: { runtime: local }\n' } },
        },
        { name: 'report', inputs: { parameters: [{ name: 'endpoint' }] }, container: { image: 'alpine:3.20', command: ['echo', 'served at {{inputs.parameters.endpoint}}'] } },
      ],
    },
  });
  const messages = new Set<string>();
  const wf = await argo.waitFor(
    name,
    'the Slurm-training workflow to finish',
    (x: Workflow) => {
      for (const n of Object.values(x.status?.nodes ?? {})) if (n.displayName === 'train' && n.message) messages.add(n.message);
      return ['Succeeded', 'Failed', 'Error'].includes(x.status?.phase ?? '') ? x : undefined;
    },
    240_000,
  );
  expect(wf.status!.phase).toBe('Succeeded');
  const train = Object.values(wf.status!.nodes!).find((n) => n.displayName === 'train')!;
  const out = Object.fromEntries((train.outputs?.parameters ?? []).map((p) => [p.name, p.value]));
  expect(out.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
  // The node followed the stages on Slurm (its message is what Argo shows of a reply).
  expect([...messages].some((m) => /stage (preprocess|train) running on slurm/.test(m))).toBe(true);
  // Both job stages ran on the Slurm site, as the run's status says.
  const status = await w.tandem.client.workflow.getHandle(out['workflow-id']!).query<PipelineStatus>('status');
  expect(status.stages.preprocess.runtime).toBe('slurm');
  expect(status.stages.train.runtime).toBe('slurm');
  const report = (await argo.pods(name)).find((p) => p.metadata?.name?.includes('report'))!;
  const main = report.spec!.containers.find((c) => c.name === 'main')!;
  expect([...(main.command ?? []), ...(main.args ?? [])].join(' ')).toContain(`served at ${out.endpoint}`);
}, 300_000);
