// Records workflow histories as replay fixtures: `npm run histories:record`. Each scenario runs on a
// fresh real dev server with scripted activities; the JSON lands in test/histories/ and
// test/replay.test.ts replays every file there on each test run. Files named *.before-<patch>.json were
// recorded before that patch and must keep replaying (patched() guards the change).
import { existsSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { startDevServer } from '../../workers/dev-server.js';
import { createTandemWorker } from '../../workers/worker.js';
import { TandemClient } from '../../sdk/client.js';
import { validatePipelineSpec } from '../../contract/parse.js';
import { fakeActivities, type FakeScript } from '../fake-activities.js';
import { createArgoActivities } from '../../activities/argo/index.js';
import { ArgoClient, prepare } from '../../argo/client.js';
import { admitUpdate, releaseUpdate } from '../../workflows/ledger.js';
import type { temporal } from '@temporalio/proto';
import { fakeSite } from '../migration/fake-site.js';
import { MigrationPlanSchema } from '../../contract/migration.js';
import type { PipelineTuning } from '../../contract/tuning.js';
import { parseQuotasFile } from '../../contract/quotas.js';
import type { PipelineSpecInput } from '../../contract/pipeline.js';
import type { KubernetesDeployInput } from '../../activities/kubernetes.js';
import { failure } from '../../contract/failures.js';


const HERE = fileURLToPath(new URL('.', import.meta.url));
// The deploy stage on Kubernetes (PATCHES.servingEndpoint): scripted serving activities, a new
// revision of the pipeline's endpoint rolled out, gated, and (failGate) rolled back to the one before.
const K8S_DEPLOY: PipelineSpecInput['stages'] = { deploy: { runtime: 'kubernetes', name: 'recorded-endpoint', kubernetes: { modelVolume: { claimName: 'tandem-home', workerPath: '/ckpt' } } } };
function scriptedServing(failGate: boolean) {
  const rev = (input: KubernetesDeployInput) => ({ namespace: 'tandem', name: input.name, model: input.model, checkpoint: input.checkpoint, generation: 2, templateHash: 'recorded', previousRevision: '1', previousTemplateHash: 'before', adopted: false, run: input.run, created: false });
  const deployment = { runtime: 'kubernetes' as const, name: 'recorded-endpoint', endpoint: 'http://127.0.0.1:1', model: 'recorded', checkpoint: '/ckpt/step-00000010', adopted: false };
  return {
    async k8sApplyServing(input: KubernetesDeployInput) {
      return rev(input);
    },
    async k8sAwaitRollout() {
      return deployment;
    },
    async k8sGateServing() {
      if (failGate) throw failure('GateFailed', 'failed gate "models" (/v1/models answered 200 listing [])');
      return { completion: 'recorded completion', models: ['recorded'] };
    },
    async k8sRollbackServing() {
      return { action: 'rolled-back', toRevision: '1', deployment };
    },
  };
}
const scenarios: Record<string, FakeScript & { tuning?: PipelineTuning; deadlineInMs?: number; stages?: PipelineSpecInput['stages']; kubernetes?: ReturnType<typeof scriptedServing> }> = {
  'hybridPipeline-kubernetes-deploy': { stages: K8S_DEPLOY, kubernetes: scriptedServing(false) },
  'hybridPipeline-kubernetes-gate-fails': { stages: K8S_DEPLOY, kubernetes: scriptedServing(true) },
  'hybridPipeline-happy': {},
  'hybridPipeline-train-retry': { jobStates: { train: ['NODE_FAIL', 'COMPLETED'] } },
  'hybridPipeline-deploy-gate-fails': { failGate: true },
  // NODE_FAIL at zurich → fenced, failover to lugano, resumed from the checkpoint copied there.
  'hybridPipeline-failover': { jobStates: { train: ['NODE_FAIL', 'COMPLETED'] }, tuning: { failover: { sites: ['zurich', 'lugano'] } } },
  // Tenant quotas: each job stage holds its CPUs in the site's ledger and releases them when it ends.
  'hybridPipeline-quota': { quotas: parseQuotasFile('quotas:\n  "*":\n    default: {cpus: 8}\n') },
  // Staged migration, Phase 2: the site routes 100% through Tandem, so both job stages go to its partition.
  'hybridPipeline-migration-routing': { siteRouting: { site: 'zurich', routing: { percent: 100, policies: [], pools: { tandem: 'tandem', legacy: 'batch' } } } },
  // The deadline timer fires while the train job runs: job cancelled, hold released, DeadlineExceeded.
  'hybridPipeline-deadline': { blockOn: 'train', quotas: parseQuotasFile('quotas:\n  "*":\n    default: {cpus: 8}\n'), deadlineInMs: 5000 },
  // A queue per site: the train stage's site activities go to the site's queue (the recorder's own here).
  'hybridPipeline-site-queues': { stages: { train: { runtime: 'slurm' } }, tuning: { siteQueues: { slurm: 'record-hybridPipeline-site-queues' } } },
};
// `npm run histories:record -- <name>…` records only those (by file name without .json); all by default.
const only = process.argv.slice(2);
const wanted = (name: string) => !only.length || only.includes(name);

Runtime.install({ logger: new DefaultLogger('WARN') });
// The same JSON as `temporal workflow show --output json` and the Web UI's export.
// Replay needs a run's own workflow id (child ids and lock holders derive from it): kept beside the files.
const IDS = join(HERE, 'workflow-ids.json');
function save(name: string, history: temporal.api.history.v1.IHistory, workflowId?: string): void {
  if (!wanted(name)) return;
  writeFileSync(join(HERE, `${name}.json`), JSON.stringify(JSON.parse(historyToJSON(history)), null, 1) + '\n');
  if (workflowId) {
    const ids = existsSync(IDS) ? (JSON.parse(readFileSync(IDS, 'utf8')) as Record<string, string>) : {};
    writeFileSync(IDS, JSON.stringify({ ...ids, [`${name}.json`]: workflowId }, null, 1) + '\n');
  }
  console.log(`recorded ${name}.json (${history.events?.length} events)`);
}
// Memoize and a workflow-level mutex: the interpreter's two patches, and the lock's own history.
const ARGO_PATCHED = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: recorded-argo-patches}
spec:
  entrypoint: main
  synchronization: {mutexes: [{name: recorded}]}
  templates:
  - name: main
    steps:
    - - {name: first, template: memo}
    - - {name: again, template: memo}
  - name: memo
    memoize: {key: "recorded-key", maxAge: "1h", cache: {configMap: {name: recorded-cache}}}
    script: {image: alpine, command: [sh], source: 'echo memo'}
`;
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
// A name that makes pod job names too long for the targets: they end in a hash (ARGO_PATCHES.podNames).
const ARGO_LONG_NAME = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: recorded-argo-${'long-name-'.repeat(12)}x}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: one, template: echo}
    - - {name: two, template: echo}
  - name: echo
    script: {image: alpine, command: [sh], source: 'echo long'}
`;
// The interpreter's scheduling patches (ARGO_PATCHES parallelism, loopOutputs, outputPaths,
// templateFailFast, daemonScope): a parallelism-bounded loop whose aggregated outputs feed withParam,
// an output path tag, a daemon stopped with its steps template, and a failFast template.
const ARGO_CONTROLLER = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: recorded-argo-controller}
spec:
  entrypoint: main
  templates:
  - name: main
    parallelism: 1
    steps:
    - - {name: gen, template: emit, withItems: [a, b, c], arguments: {parameters: [{name: x, value: "{{item}}"}]}}
    - - {name: use, template: echo, withParam: "{{steps.gen.outputs.parameters}}", arguments: {parameters: [{name: msg, value: "{{item.out}}"}]}}
    - - {name: daemon-scope, template: with-daemon}
    - - {name: fast, template: fail-fast, continueOn: {failed: true}}
  - name: emit
    inputs: {parameters: [{name: x}]}
    script: {image: alpine, command: [sh], source: "printf '%s' '{{inputs.parameters.x}}' > {{outputs.parameters.out.path}}"}
    outputs: {parameters: [{name: out, valueFrom: {path: out.txt}}]}
  - name: with-daemon
    steps:
    - - {name: server, template: server}
    - - {name: client, template: echo, arguments: {parameters: [{name: msg, value: client}]}}
  - name: server
    daemon: true
    container: {image: alpine, command: [sh, -c, "sleep 60"]}
  - name: fail-fast
    parallelism: 1
    failFast: true
    steps:
    - - {name: item, template: maybe-fail, withItems: ["0", "1", "2"], arguments: {parameters: [{name: n, value: "{{item}}"}]}}
  - name: maybe-fail
    inputs: {parameters: [{name: n}]}
    container: {image: alpine, command: [sh, -c, "test {{inputs.parameters.n}} != 1"]}
  - name: echo
    inputs: {parameters: [{name: msg}]}
    script: {image: alpine, command: [sh], source: 'echo "{{inputs.parameters.msg}}"'}
`;
// Argo's node tree (ARGO_PATCHES loopAggregate, loopNodes, dagOmitted, suspendSupplied): a suspend
// node resumed with its supplied output, a steps loop whose items hang from the step group and whose
// typed aggregate feeds the next step, an empty loop, and a DAG whose failure leaves Omitted tasks.
const ARGO_NODE_TREE = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: recorded-argo-node-tree}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: approve, template: approve}
    - - {name: gen, template: emit, withItems: [2, 4], arguments: {parameters: [{name: x, value: "{{item}}"}]}}
      - {name: none, template: emit, withItems: [], arguments: {parameters: [{name: x, value: "{{item}}"}]}}
    - - {name: use, template: echo, arguments: {parameters: [{name: msg, value: "{{steps.gen.outputs.result}} {{steps.approve.outputs.parameters.ok}}"}]}}
    - - {name: graph, template: graph, continueOn: {failed: true}}
  - name: approve
    suspend: {}
    outputs: {parameters: [{name: ok, valueFrom: {supplied: {}}}]}
  - name: emit
    inputs: {parameters: [{name: x}]}
    script: {image: alpine, command: [sh], source: 'echo {{inputs.parameters.x}}'}
  - name: graph
    dag:
      tasks:
      - {name: a, template: fail}
      - {name: b, template: echo, depends: a, arguments: {parameters: [{name: msg, value: b}]}}
  - name: fail
    container: {image: alpine, command: [sh, -c, "exit 1"]}
  - name: echo
    inputs: {parameters: [{name: msg}]}
    script: {image: alpine, command: [sh], source: 'echo "{{inputs.parameters.msg}}"'}
`;
// Lifecycle hooks (ARGO_PATCHES.lifecycleHooks): a step's running and success hooks, the workflow's.
const ARGO_HOOKS = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: recorded-argo-hooks}
spec:
  entrypoint: main
  hooks:
    running: {expression: 'workflow.status == "Running"', template: echo, arguments: {parameters: [{name: msg, value: wf-running}]}}
    ended: {expression: 'workflow.status == "Succeeded"', template: echo, arguments: {parameters: [{name: msg, value: wf-done}]}}
  templates:
  - name: main
    steps:
    - - name: work
        template: echo
        arguments: {parameters: [{name: msg, value: work}]}
        hooks:
          running: {expression: 'steps.work.status == "Running"', template: echo, arguments: {parameters: [{name: msg, value: running}]}}
          success: {expression: 'steps.work.status == "Succeeded"', template: echo, arguments: {parameters: [{name: msg, value: "{{steps.work.outputs.result}}"}]}}
  - name: echo
    inputs: {parameters: [{name: msg}]}
    script: {image: alpine, command: [sh], source: 'echo "{{inputs.parameters.msg}}"'}
`;
// A template's display-name annotation (ARGO_PATCHES.displayName).
const ARGO_DISPLAY_NAME = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: recorded-argo-display-name}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: one, template: named, arguments: {parameters: [{name: n, value: "1"}]}}
  - name: named
    metadata: {annotations: {workflows.argoproj.io/display-name: "run-{{inputs.parameters.n}}"}}
    inputs: {parameters: [{name: n}]}
    script: {image: alpine, command: [sh], source: 'echo named'}
`;
// withSequence values read as Argo reads them (ARGO_PATCHES.loopChecks): a count known only when the
// step runs ("abc") is the node's error; before the patch it was NaN, so no items and a Skipped node.
const ARGO_LOOP_CHECKS = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: recorded-argo-loop-checks}
spec:
  entrypoint: main
  arguments: {parameters: [{name: n, value: abc}]}
  templates:
  - name: main
    steps:
    - - {name: ok, template: echo, withSequence: {count: "2"}, arguments: {parameters: [{name: msg, value: "n{{item}}"}]}}
    - - {name: bad, template: echo, withSequence: {count: "{{workflow.parameters.n}}"}, arguments: {parameters: [{name: msg, value: "b{{item}}"}]}}
  - name: echo
    inputs: {parameters: [{name: msg}]}
    script: {image: alpine, command: [sh], source: 'echo "{{inputs.parameters.msg}}"'}
`;
// A loop and a DAG larger than their (tiny) budgets: child workflows, and activities queued at the bound.
const ARGO_FAN_OUT = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: recorded-argo-fan-out
  annotations: {tandem.io/slice-nodes: "2", tandem.io/max-activities-in-flight: "1"}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: loop, template: echo, withSequence: {count: "5"}, arguments: {parameters: [{name: msg, value: "n{{item}}"}]}}
      - {name: pair, template: pair, depends: loop}
      - {name: last, template: echo, depends: pair, arguments: {parameters: [{name: msg, value: "{{tasks.loop.outputs.result}}"}]}}
  - name: pair
    dag:
      tasks:
      - {name: a, template: echo, arguments: {parameters: [{name: msg, value: a}]}}
      - {name: b, template: echo, arguments: {parameters: [{name: msg, value: b}]}}
      - {name: c, template: echo, arguments: {parameters: [{name: msg, value: c}]}}
  - name: echo
    inputs: {parameters: [{name: msg}]}
    script: {image: alpine, command: [sh], source: 'echo "{{inputs.parameters.msg}}"'}
`;
// A DAG of 10 composite tasks over a budget of 2: 10 children wanted at once, 8 run (ARGO_PATCHES.childrenAtOnce).
const ARGO_CHILDREN_AT_ONCE = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: recorded-argo-children-at-once
  annotations: {tandem.io/slice-nodes: "2"}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
${Array.from({ length: 10 }, (_, i) => `      - {name: t${i}, template: pair, arguments: {parameters: [{name: msg, value: "${i}"}]}}`).join('\n')}
  - name: pair
    inputs: {parameters: [{name: msg}]}
    dag:
      tasks:
      - {name: a, template: echo, arguments: {parameters: [{name: msg, value: "{{inputs.parameters.msg}}a"}]}}
      - {name: b, template: echo, arguments: {parameters: [{name: msg, value: "{{inputs.parameters.msg}}b"}]}}
      - {name: c, template: echo, arguments: {parameters: [{name: msg, value: "{{inputs.parameters.msg}}c"}]}}
  - name: echo
    inputs: {parameters: [{name: msg}]}
    script: {image: alpine, command: [sh], source: 'echo "{{inputs.parameters.msg}}"'}
`;
const dir = mkdtempSync(join(tmpdir(), 'tandem-record-'));
const server = await startDevServer({ dbFile: join(dir, 'temporal.db') });
try {
  for (const [name, script] of Object.entries(scenarios)) {
    if (!wanted(name)) continue;
    const fake = fakeActivities(script);
    const taskQueue = `record-${name}`;
    const { worker, connection } = await createTandemWorker({ address: server.address, taskQueue, home: dir, activities: { ...fake.acts, ...script.kubernetes } });
    const tandem = await TandemClient.connect({ address: server.address, taskQueue });
    await worker.runUntil(async () => {
      const deadline = script.deadlineInMs ? new Date(Date.now() + script.deadlineInMs).toISOString() : undefined;
      const h = await tandem.launch(validatePipelineSpec({ name: 'recorded', retry: { initialInterval: '100ms' }, ...(deadline ? { deadline } : {}), ...(script.stages ? { stages: script.stages } : {}) }), { id: name, tuning: script.tuning });
      await h.result().catch(() => undefined);
      const history = await h.workflow.fetchHistory();
      save(name, history, name);
    });
    await tandem.close();
    await connection.close();
  }
  // An Argo DAG run on the local runtime, and a quota ledger after two updates.
  if (only.some((n) => !(n in scenarios)) || !only.length) {
    const taskQueue = 'record-argo';
    const site = fakeSite();
    const { worker, connection } = await createTandemWorker({ address: server.address, taskQueue, home: dir, activities: { ...createArgoActivities({ home: dir }), ...site.acts } });
    const argo = await ArgoClient.connect({ address: server.address, taskQueue });
    await worker.runUntil(async () => {
      const { id } = await argo.submit(prepare('recorded-argo.yaml', { text: ARGO_DAG }));
      await argo.wait(id);
      save('argoWorkflow-dag', await argo.client.workflow.getHandle(`argo-${id}`).fetchHistory(), `argo-${id}`);
      const patchedRun = await argo.submit(prepare('recorded-argo-patches.yaml', { text: ARGO_PATCHED }));
      await argo.wait(patchedRun.id);
      save('argoWorkflow-memoize-mutex', await argo.client.workflow.getHandle(`argo-${patchedRun.id}`).fetchHistory(), `argo-${patchedRun.id}`);
      const longRun = await argo.submit(prepare('recorded-argo-long-name.yaml', { text: ARGO_LONG_NAME }));
      await argo.wait(longRun.id);
      save('argoWorkflow-long-name', await argo.client.workflow.getHandle(`argo-${longRun.id}`).fetchHistory(), `argo-${longRun.id}`);
      const treeRun = await argo.submit(prepare('recorded-argo-node-tree.yaml', { text: ARGO_NODE_TREE }));
      for (let i = 0; i < 600 && !Object.values((await argo.status(treeRun.id)).nodes).some((n) => n.type === 'Suspend' && n.phase === 'Running'); i++) await new Promise((r) => setTimeout(r, 100));
      await argo.resume(treeRun.id, undefined, { ok: 'yes' });
      await argo.wait(treeRun.id);
      save('argoWorkflow-node-tree', await argo.client.workflow.getHandle(`argo-${treeRun.id}`).fetchHistory(), `argo-${treeRun.id}`);
      const hooksRun = await argo.submit(prepare('recorded-argo-hooks.yaml', { text: ARGO_HOOKS }));
      await argo.wait(hooksRun.id);
      save('argoWorkflow-hooks', await argo.client.workflow.getHandle(`argo-${hooksRun.id}`).fetchHistory(), `argo-${hooksRun.id}`);
      const fanOutRun = await argo.submit(prepare('recorded-argo-fan-out.yaml', { text: ARGO_FAN_OUT }));
      await argo.wait(fanOutRun.id);
      save('argoWorkflow-fan-out', await argo.client.workflow.getHandle(`argo-${fanOutRun.id}`).fetchHistory(), `argo-${fanOutRun.id}`);
      // Its first child runs two of the loop's items and returns their results (ARGO_PATCHES.sliceItems).
      save('argoSlice-fan-out-loop', await argo.client.workflow.getHandle(`argo-${fanOutRun.id}--f1`).fetchHistory(), `argo-${fanOutRun.id}--f1`);
      // Its fourth child runs the three pods of `pair`, one at a time (max-activities-in-flight 1).
      save('argoSlice-fan-out', await argo.client.workflow.getHandle(`argo-${fanOutRun.id}--f4`).fetchHistory(), `argo-${fanOutRun.id}--f4`);
      const gateRun = await argo.submit(prepare('recorded-argo-children-at-once.yaml', { text: ARGO_CHILDREN_AT_ONCE }));
      await argo.wait(gateRun.id);
      save('argoWorkflow-children-at-once', await argo.client.workflow.getHandle(`argo-${gateRun.id}`).fetchHistory(), `argo-${gateRun.id}`);
      const loopChecksRun = await argo.submit(prepare('recorded-argo-loop-checks.yaml', { text: ARGO_LOOP_CHECKS }));
      await argo.wait(loopChecksRun.id);
      save('argoWorkflow-loop-checks', await argo.client.workflow.getHandle(`argo-${loopChecksRun.id}`).fetchHistory(), `argo-${loopChecksRun.id}`);
      const displayRun = await argo.submit(prepare('recorded-argo-display-name.yaml', { text: ARGO_DISPLAY_NAME }));
      await argo.wait(displayRun.id);
      save('argoWorkflow-display-name', await argo.client.workflow.getHandle(`argo-${displayRun.id}`).fetchHistory(), `argo-${displayRun.id}`);
      const controllerRun = await argo.submit(prepare('recorded-argo-controller.yaml', { text: ARGO_CONTROLLER }));
      await argo.wait(controllerRun.id);
      save('argoWorkflow-controller', await argo.client.workflow.getHandle(`argo-${controllerRun.id}`).fetchHistory(), `argo-${controllerRun.id}`);
      for await (const lock of argo.client.workflow.list({ query: `WorkflowType = 'argoLock'` })) {
        await argo.client.workflow.getHandle(lock.workflowId).result().catch(() => undefined);
        save('argoLock-mutex', await argo.client.workflow.getHandle(lock.workflowId).fetchHistory(), lock.workflowId);
        break;
      }
      const ledger = await argo.client.workflow.start('quotaLedger', { taskQueue, workflowId: 'recorded-ledger', args: [{ site: 'zurich', quotas: { research: { gpus: 8 } }, holds: {} }] });
      await ledger.executeUpdate(admitUpdate, { args: [{ holdId: 'p1', tenant: 'research', cpus: 4, gpus: 4, memoryMB: 1024 }] });
      await ledger.executeUpdate(releaseUpdate, { args: [{ holdId: 'p1' }] });
      save('quotaLedger-admit-release', await ledger.fetchHistory(), 'recorded-ledger');
      await ledger.terminate('recorded');

      // A staged migration against an in-memory site: Phases 1 to 3, then a rollback inside the window.
      const mig = await argo.client.workflow.start('stagedMigration', { taskQueue, workflowId: 'recorded-migration', args: [{ plan: MigrationPlanSchema.parse({ site: 'zurich', requireApproval: false, phase2: { steps: [100], observeFor: '100ms' }, phase3: { rollbackWindow: '1h' } }) }] });
      while ((await mig.query<{ state: string }>('migrationStatus')).state !== 'rollback-window') await new Promise((r) => setTimeout(r, 100));
      await mig.executeUpdate('rollback');
      save('stagedMigration-phases-rollback', await mig.fetchHistory(), 'recorded-migration');
      for (const [phase, n] of [['phase1', 0], ['phase2', 1], ['phase3', 2]] as const) save(`migrationP${phase.slice(1)}-pass`, await argo.client.workflow.getHandle(`recorded-migration-${phase}-${n}`).fetchHistory(), `recorded-migration-${phase}-${n}`);
      await mig.terminate('recorded');
    });
    await argo.close();
    await connection.close();
  }
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
