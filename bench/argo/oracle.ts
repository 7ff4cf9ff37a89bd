// The node-tree oracle (`npm run argo:oracle [-- FILE...]`): every runnable example of Argo's own corpus
// (the conformance bench's selection, ./selection.ts) runs twice — on a REAL Argo v3.7.9
// workflow-controller (test/argo-real/argo.ts, on the project's real Kubernetes control plane with kwok
// nodes) whose container and script pods the local pod runner runs on this host
// (test/argo-real/pod-runner.ts: the pod's real command in Tandem's sandbox, its outputs reported as
// `argoexec wait` reports them), and on Tandem's interpreter (a Temporal dev server + a local worker, as
// the conformance bench runs it) — and the two node trees are compared by ./node-tree-compare.ts, which
// shares no code with the interpreter: real Argo decides the phases, not a model.
//
// The controller runs with DEFAULT_REQUEUE_TIME=1s (argo.ts; 10 s by default), so a step's pod is
// created about a second after the step before it ends: slower than Tandem, not different. Every
// WorkflowTemplate and ClusterWorkflowTemplate of the corpus is applied first, as Tandem's template
// library is the whole corpus. Both runs get the same workflow name, so `{{workflow.name}}` agrees.
// Suspended nodes are resumed every 2 s on both sides, with a value for each `supplied` output that has
// no default, as the conformance bench does (`argo resume` / `argo node set`).
// Everything started here (control plane, controller, pods, dev server, worker) is stopped at the end,
// also on an error or Ctrl-C.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { execSync } from 'node:child_process';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { Runtime, DefaultLogger } from '@temporalio/worker';
import { parseAllDocuments } from 'yaml';
import type { Library } from '../../argo/lint/validate.js';
import { argoShape } from '../../argo/status-shape.js';
import { startControlPlane, type ControlPlane } from '../../test/kubernetes/control-plane.js';
import { startArgo, type Argo, type ArgoNode, type Workflow } from '../../test/argo-real/argo.js';
import { startSyncDatabase, type SyncDatabase } from '../../test/argo-real/sync-db.js';
import { CORPUS, EXAMPLES, selectExamples, type Case } from './selection.js';
import { compareNodeTrees, type CmpStatus } from './node-tree-compare.js';
import { resumeSuspended, SUPPLIED } from './resume.js';
import { startTandemSide } from './tandem-side.js';

const T0 = performance.now();
const GROUP = { group: 'argoproj.io', version: 'v1alpha1' };
const LANES = Number(process.env.ARGO_ORACLE_LANES ?? 2);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const args = process.argv.slice(2).filter((a) => a !== '--');
const subset = args.length ? args.map((a) => resolve(EXAMPLES, a)) : undefined;
const sel = selectExamples(subset ?? execSync(`find ${EXAMPLES} -name '*.yaml'`).toString().trim().split('\n').sort());
const { library, runnable } = sel;
console.log(`${runnable.length} runnable examples (${sel.excluded.length} excluded, ${sel.notRunnable.length} not runnable here, ${sel.files.length - sel.accepted.length} rejected by lint)`);

/** One name for both runs: the file's path, as the conformance bench names Tandem's runs. */
const nameOf = (c: Case) =>
  relative(EXAMPLES, c.file)
    .replace(/\.yaml$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 50)
    .replace(/-+$/, '');

type Verdict = { file: string; kind: 'identical' | 'differs' | 'not comparable'; argoPhase?: string; tandemPhase?: string; diffs: string[]; reason?: string; note?: string; argoMs: number; tandemMs: number; argo?: CmpStatus; tandem?: CmpStatus };

/**
 * Pods that draw random numbers (a coin flip) make two runs of one workflow take different branches.
 * Such an example is run again on Tandem, up to RANDOM_TRIES times, until its draws are Argo's: the
 * question is whether the same draws give the same tree. Said in the table when it took more than one run.
 */
const RANDOM = /\brandom\b|\$RANDOM|\bshuf\b|\/dev\/u?random|Math\.random|\buuid/i;
const RANDOM_TRIES = Number(process.env.ARGO_ORACLE_RANDOM_TRIES ?? 20);
/** Examples that print for a long time (colored-logs.yaml: 99 s) need more than the conformance bench's 90 s. */
const MIN_TIMEOUT_MS = Number(process.env.ARGO_ORACLE_MIN_TIMEOUT_MS ?? 150_000);
const REPORT = process.env.ARGO_ORACLE_REPORT ?? join(tmpdir(), 'argo-oracle-report.json');

let cp: ControlPlane | undefined;
let argo: Argo | undefined;
let syncDb: SyncDatabase | undefined;
let stopAll: (() => Promise<void>) | undefined;
let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  await stopAll?.().catch((e: unknown) => console.error('stopping Tandem:', (e as Error).message));
  await argo?.close().catch((e: unknown) => console.error('stopping Argo:', (e as Error).message));
  await syncDb?.stop().catch((e: unknown) => console.error('stopping PostgreSQL:', (e as Error).message));
  await cp?.stop().catch((e: unknown) => console.error('stopping the control plane:', (e as Error).message));
};
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    console.error(`\n${sig}: stopping everything`);
    void shutdown().finally(() => process.exit(130));
  });
}

const dir = mkdtempSync(join(tmpdir(), 'argo-oracle-'));
const verdicts: Verdict[] = [];
try {
  // --- Real Argo: control plane (no kwok Stage for Argo's pods: the pod runner finishes them), controller.
  cp = await startControlPlane({ nodes: [{ name: 'oracle-node-1', cpu: '64', memory: '256Gi', pods: 500 }] });
  // Argo's synchronization database (`database: true` mutexes and semaphores), where PostgreSQL is installed.
  syncDb = await startSyncDatabase();
  if (!syncDb) console.log('no PostgreSQL here: examples with database locks will not be comparable');
  argo = await startArgo(cp, { runPods: true, controllerConfig: syncDb?.controllerConfig, objects: syncDb?.objects });
  const custom = cp.kubeConfig().makeApiClient(CustomObjectsApi);
  let applied = 0;
  for (const f of execSync(`find ${CORPUS} -name '*.yaml'`).toString().trim().split('\n').sort()) {
    for (const d of parseAllDocuments(readFileSync(f, 'utf8'))) {
      const o = d.toJS() as { kind?: string; metadata?: { name?: string } } | null;
      if (!o || (o.kind !== 'WorkflowTemplate' && o.kind !== 'ClusterWorkflowTemplate') || !o.metadata?.name) continue;
      const body = { ...o, metadata: { ...o.metadata, namespace: undefined } };
      const made =
        o.kind === 'WorkflowTemplate'
          ? custom.createNamespacedCustomObject({ ...GROUP, namespace: argo.namespace, plural: 'workflowtemplates', body })
          : custom.createClusterCustomObject({ ...GROUP, plural: 'clusterworkflowtemplates', body });
      await made.then(
        () => applied++,
        () => undefined, // a second template of the same name: the first stays, as with kubectl create
      );
    }
  }
  console.log(`real Argo ready: ${applied} WorkflowTemplates/ClusterWorkflowTemplates applied`);

  // --- Tandem: dev server + local worker, as the conformance bench runs it.
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const tandem = await startTandemSide(dir, 'argo-oracle');
  const client = tandem.client;
  stopAll = tandem.stop;

  const finished = (wf: Workflow) => ['Succeeded', 'Failed', 'Error'].includes(wf.status?.phase ?? '');

  /** `argo resume` on every active suspend node (OverrideOutputParametersWithDefault, a value for `supplied` outputs without one). */
  const resumeArgo = async (name: string) => {
    const wf = (await argo!.get(name)) as (Workflow & { metadata: { resourceVersion?: string }; spec: { suspend?: boolean } }) | undefined;
    if (!wf?.status?.nodes) return;
    let changed = false;
    if (wf.spec.suspend) {
      delete wf.spec.suspend;
      changed = true;
    }
    for (const n of Object.values(wf.status.nodes) as ArgoNode[]) {
      if (n.type !== 'Suspend' || n.phase !== 'Running') continue;
      for (const p of (n.outputs?.parameters ?? []) as { name: string; value?: string; valueFrom?: { supplied?: object; default?: string } }[]) {
        if (p.valueFrom?.supplied === undefined) continue;
        p.value = p.valueFrom.default ?? SUPPLIED;
        delete p.valueFrom;
      }
      n.phase = 'Succeeded';
      (n as { finishedAt?: string }).finishedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      changed = true;
    }
    if (changed) await custom.replaceNamespacedCustomObject({ ...GROUP, namespace: argo!.namespace, plural: 'workflows', name, body: wf }).catch(() => undefined); // a conflict: next round
  };

  const runArgo = async (c: Case, name: string): Promise<{ wf?: Workflow; reason?: string; ms: number }> => {
    const t = performance.now();
    const doc = structuredClone(c.doc) as { metadata?: Record<string, unknown> };
    doc.metadata = { ...(doc.metadata ?? {}), name };
    delete doc.metadata.generateName;
    delete doc.metadata.namespace;
    try {
      await argo!.submit(doc);
    } catch (e) {
      return { reason: `Argo refused it: ${(e as { body?: unknown }).body ? JSON.stringify((e as { body?: unknown }).body).slice(0, 200) : (e as Error).message}`, ms: performance.now() - t };
    }
    const deadline = Date.now() + c.timeoutMs;
    for (;;) {
      const wf = await argo!.get(name).catch(() => undefined);
      if (wf && finished(wf)) return { wf, ms: performance.now() - t };
      if (Date.now() > deadline) {
        await argo!.shutdown(name, 'Stop').catch(() => undefined);
        return { wf, reason: `Argo did not finish within ${c.timeoutMs / 1000} s`, ms: performance.now() - t };
      }
      await resumeArgo(name).catch(() => undefined);
      await sleep(2000);
    }
  };

  // As ./conformance.ts runs an example on Tandem.
  const runTandem = async (c: Case, name: string): Promise<{ status?: CmpStatus & { name: string }; reason?: string; ms: number }> => {
    const t = performance.now();
    const inFlight = new Set<Promise<unknown>>();
    const track = (p: Promise<unknown>) => {
      const q = p.catch(() => undefined).finally(() => inFlight.delete(q));
      inFlight.add(q);
    };
    try {
      const { id } = await client.submit({ lint: undefined as never, doc: c.doc, library: library as unknown as Library } as never, { name });
      const resumer = setInterval(() => track(resumeSuspended(client, id)), 2000);
      let timedOut = false;
      const timeout = setTimeout(() => {
        timedOut = true;
        track(client.stop(id, `oracle timeout (${c.timeoutMs / 1000} s)`));
      }, c.timeoutMs);
      try {
        const st = await client.wait(id);
        const shaped = argoShape(st);
        return { status: { name: shaped.metadata.name, ...shaped.status }, reason: timedOut ? `Tandem did not finish within ${c.timeoutMs / 1000} s` : undefined, ms: performance.now() - t };
      } finally {
        clearInterval(resumer);
        clearTimeout(timeout);
        await Promise.all([...inFlight]);
      }
    } catch (e) {
      return { reason: `Tandem: ${(e as Error).message}`, ms: performance.now() - t };
    }
  };

  const queue = [...runnable];
  const lane = async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      const name = nameOf(c);
      const file = relative(EXAMPLES, c.file);
      const cc = { ...c, timeoutMs: Math.max(c.timeoutMs, MIN_TIMEOUT_MS) };
      const [a, first] = await Promise.all([runArgo(cc, name), runTandem(cc, name)]);
      let t = first;
      const v: Verdict = { file, kind: 'identical', argoPhase: a.wf?.status?.phase, tandemPhase: t.status?.phase, diffs: [], argoMs: a.ms, tandemMs: t.ms, argo: a.wf?.status as CmpStatus | undefined };
      const differs = (x: typeof t) => !x.status || !!x.reason || compareNodeTrees({ name, status: a.wf!.status as CmpStatus }, { name: x.status.name, status: x.status }).length > 0;
      if (a.wf && !a.reason && RANDOM.test(JSON.stringify(c.doc)) && differs(t)) {
        // A new name for each run: a run's pods are kept by name, so a rerun under the same one would reuse their results.
        for (let i = 2; i <= RANDOM_TRIES && differs(t); i++) {
          t = await runTandem(cc, `${name.slice(0, 45)}-r${i}`);
          v.note = differs(t) ? `random: no Tandem run of ${i} drew Argo's numbers` : `random: Tandem's run ${i} drew Argo's numbers`;
        }
        v.tandemPhase = t.status?.phase;
        // No run drew Argo's numbers (many draws: withsequence-nested-result.yaml draws one per pod): the
        // trees cannot tell the interpreter from the dice.
        if (differs(t)) Object.assign(v, { kind: 'not comparable', reason: `random: its pods draw random numbers, and none of ${RANDOM_TRIES} Tandem runs drew Argo's`, note: undefined });
      }
      v.tandem = t.status;
      const pods = argo!.podRunner!.notComparable(name);
      if (v.kind === 'not comparable') v.diffs = [];
      else if (pods.length) Object.assign(v, { kind: 'not comparable', reason: `pod runner: ${pods[0]}` });
      else if (!a.wf || a.reason) Object.assign(v, { kind: 'not comparable', reason: a.reason ?? 'no Argo workflow' });
      else if (/database session is not available/.test(JSON.stringify(a.wf.status))) Object.assign(v, { kind: 'not comparable', reason: "Argo's synchronization database (database: true locks) is not configured here" });
      else if (!t.status) Object.assign(v, { kind: 'differs', diffs: [t.reason ?? 'no Tandem status'] });
      else {
        v.diffs = [...(t.reason ? [t.reason] : []), ...compareNodeTrees({ name, status: a.wf.status as CmpStatus }, { name: t.status.name, status: t.status })];
        v.kind = v.diffs.length ? 'differs' : 'identical';
      }
      verdicts.push(v);
      console.log(`${v.kind === 'identical' ? '✓' : v.kind === 'differs' ? '✗' : '–'} ${file}: ${v.kind}${v.reason ? ` (${v.reason})` : ''}${v.note ? ` (${v.note})` : ''}${v.diffs.length ? `: ${v.diffs.slice(0, 3).join('; ')}` : ''} [Argo ${(a.ms / 1000).toFixed(1)} s, Tandem ${(t.ms / 1000).toFixed(1)} s]`);
      if (process.env.ARGO_ORACLE_DUMP) {
        console.log(JSON.stringify({ argo: Object.values(a.wf?.status?.nodes ?? {}).map((n) => [n.name, n.type, n.phase, n.templateName, n.outputs?.parameters]), tandem: Object.values(t.status?.nodes ?? {}).map((n) => [n.name, n.type, n.phase, n.templateName, n.outputs?.parameters]) }));
      }
      await argo!.delete(name).catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));
} finally {
  await shutdown();
  rmSync(dir, { recursive: true, force: true });
}

const n = (k: Verdict['kind']) => verdicts.filter((v) => v.kind === k).length;
console.log(`\n| example | verdict | Argo | Tandem | first differences / reason |\n|---|---|---|---|---|`);
for (const v of verdicts.sort((a, b) => a.file.localeCompare(b.file))) {
  const note = [v.reason ?? v.diffs.slice(0, 3).join('; '), v.note].filter(Boolean).join('; ').replace(/\|/g, '/');
  console.log(`| ${v.file} | ${v.kind} | ${v.argoPhase ?? '–'} | ${v.tandemPhase ?? '–'} | ${note.slice(0, 300)} |`);
}
writeFileSync(REPORT, JSON.stringify(verdicts, null, 1));
console.log(`\nboth node trees of every example: ${REPORT}`);
const total = verdicts.length;
console.log(`\nSUMMARY node trees identical ${((100 * n('identical')) / Math.max(1, total)).toFixed(1)}% (${n('identical')}/${total} runnable); ${n('differs')} differ, ${n('not comparable')} not comparable; of the comparable ${((100 * n('identical')) / Math.max(1, total - n('not comparable'))).toFixed(1)}%; ${((performance.now() - T0) / 1000).toFixed(0)} s in all`);
