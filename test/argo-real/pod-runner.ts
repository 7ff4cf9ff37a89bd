// A local pod runner for the pods a real Argo v3.7.9 controller creates for container and script steps,
// so that real Argo decides the phases (bench/argo/oracle.ts). kwok runs no containers; for each such pod
// (label workflows.argoproj.io/workflow, no workflows.argoproj.io/component label: not an agent pod) this
// plays the kubelet and Argo's executor:
//   - `argoexec init`: the script source (ARGO_TEMPLATE's script.source) at /argo/staging/script, input
//     artifacts at their paths (raw ones written, ones from the artifact store copied, see below);
//   - the template's own init containers, then `main`: the command after `argoexec emissary … --` (so the
//     command the controller built: script.command + the staged file, or command + args), run on this host
//     in Tandem's own bubblewrap sandbox (activities/argo/sandbox.ts, the sandbox Tandem's local target
//     uses; its interpreters mapped to the host's as argo/local-command.ts maps them) with the container's
//     env (plain values, fieldRef metadata.*/spec.nodeName/status.podIP, Secret and ConfigMap keys read
//     from the apiserver), workingDir, emptyDir volumes shared by the pod's containers and
//     resources.limits.memory as RLIMIT_DATA (as the local target applies it);
//   - `argoexec wait`: the WorkflowTaskResult named by the node id (labels workflow=<wf> and
//     report-outputs-completed false at start, true once the outputs are in, owner the Workflow; as
//     workflow/executor/taskresult.go writes it), with the template's output parameters read from their
//     valueFrom.path (one trailing newline trimmed, `default` when the file is missing, else the wait
//     container fails, as SaveParameters does), `result` = stdout when ARGO_INCLUDE_SCRIPT_OUTPUT is true
//     (one newline trimmed, the last 256 kB: CaptureScriptResult), and output artifacts copied into the
//     artifact store under their archive location's key; the exit code is the controller's to read from
//     the pod status;
//   - the kubelet: once kwok has made the pod Running (podIP set, so kwok's ready stage no longer matches
//     it), the pod status becomes Succeeded or Failed with `main` terminated with its real exit code and
//     `wait` with 0 (1 when an output could not be saved). ARGO_DEADLINE (the workflow's or step's
//     deadline) ends the main process with SIGTERM, then SIGKILL after 10 s, as the wait container's
//     deadline monitor does; the pod's activeDeadlineSeconds fails the pod with reason DeadlineExceeded,
//     as the kubelet does. A deleted pod's processes are killed.
// The artifact store: the controller is configured with an S3 artifact repository on 127.0.0.1:9 that
// nothing ever dials (argo.ts `artifactRepository`); its keys name directories of a local store instead,
// so an output artifact reaches the steps that take it as the controller passes its location on.
// What differs from a real node: no image (the host's programs, /usr etc. read-only), no sidecars or
// container sets (the pod is marked not comparable), no network, securityContext ignored, artifacts are
// copied as files (no tar/gzip archive, no archive: none difference), logs are not archived.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Container, type V1Pod } from '@kubernetes/client-node';
import { bwrapBinary, hostPath, memoryBytes, sandboxArgs, type SandboxContainer } from '../../activities/argo/sandbox.js';
import { localArgv } from '../../argo/local-command.js';
import { jobEnv } from '../../backends/job-env.js';

const GROUP = { group: 'argoproj.io', version: 'v1alpha1' };
const STAGED_SCRIPT = '/argo/staging/script';
const MAX_RESULT = 256 * 1024;
const LABEL_WF = 'workflows.argoproj.io/workflow';
const LABEL_DONE = 'workflows.argoproj.io/report-outputs-completed';

type Json = Record<string, unknown>;
interface Param {
  name: string;
  value?: string;
  valueFrom?: { path?: string; default?: string };
  [k: string]: unknown;
}
interface Artifact {
  name: string;
  path?: string;
  optional?: boolean;
  raw?: { data: string };
  s3?: { key?: string; bucket?: string };
  subPath?: string;
  mode?: number;
  [k: string]: unknown;
}
interface Template {
  name?: string;
  script?: { source?: string };
  container?: Json;
  containerSet?: Json;
  sidecars?: unknown[];
  inputs?: { artifacts?: Artifact[] };
  outputs?: { parameters?: Param[]; artifacts?: Artifact[]; result?: string };
  archiveLocation?: { s3?: { key?: string; bucket?: string } };
}

/** What the runner did with one pod. */
export interface PodRun {
  pod: string;
  workflow: string;
  nodeId: string;
  argv?: string[];
  exitCode?: number;
  /** Why this pod could not be run faithfully: its workflow is not comparable. */
  notComparable?: string;
  done: boolean;
}

export interface PodRunnerOptions {
  namespace: string;
  /** Per-pod directories (roots, volumes, logs). */
  dir: string;
  /** The local artifact store behind the S3 keys (default: <dir>/artifacts). */
  artifactStore?: string;
  log?: (line: string) => void;
}

export interface PodRunner {
  runs: Map<string, PodRun>;
  /** Reasons pods of this workflow could not be run faithfully. */
  notComparable(workflow: string): string[];
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const trimOneNewline = (s: string) => (s.endsWith('\n') ? s.slice(0, -1) : s);

export function startPodRunner(kc: KubeConfig, opts: PodRunnerOptions): PodRunner {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const { namespace } = opts;
  const store = opts.artifactStore ?? join(opts.dir, 'artifacts');
  const runs = new Map<string, PodRun>();
  const procs = new Map<string, Set<ChildProcess>>();
  const log = opts.log ?? (() => {});
  let closed = false;

  const killPod = (pod: string) => {
    for (const c of procs.get(pod) ?? []) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  };

  const taskResult = async (wf: string, wfUid: string | undefined, nodeId: string, outputs: Json | undefined, done: boolean) => {
    const labels = { [LABEL_WF]: wf, [LABEL_DONE]: String(done) };
    const body = { apiVersion: 'argoproj.io/v1alpha1', kind: 'WorkflowTaskResult', metadata: { name: nodeId, labels, ...(wfUid ? { ownerReferences: [{ apiVersion: 'argoproj.io/v1alpha1', kind: 'Workflow', name: wf, uid: wfUid }] } : {}) }, ...(outputs ? { outputs } : {}) };
    try {
      await custom.createNamespacedCustomObject({ ...GROUP, namespace, plural: 'workflowtaskresults', body });
    } catch (e) {
      if ((e as { code?: number }).code !== 409) throw e;
      await custom.patchNamespacedCustomObject({ ...GROUP, namespace, plural: 'workflowtaskresults', name: nodeId, body: { metadata: { labels }, ...(outputs ? { outputs } : {}) } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    }
  };

  const finishPod = async (pod: V1Pod, main: { exitCode: number; reason: string; startedAt: Date }, wait: { exitCode: number; message?: string }, podReason?: { reason: string; message: string }) => {
    const now = new Date().toISOString();
    const names = (pod.spec?.containers ?? []).map((c) => c.name);
    const containerStatuses = names.map((name) => {
      const t = name === 'wait' ? { exitCode: wait.exitCode, reason: wait.exitCode === 0 ? 'Completed' : 'Error', ...(wait.message ? { message: wait.message } : {}) } : name === 'main' ? { exitCode: main.exitCode, reason: main.reason } : { exitCode: 137, reason: 'Error' };
      return { name, image: pod.spec!.containers.find((c) => c.name === name)!.image ?? '', ready: false, started: false, restartCount: 0, state: { terminated: { ...t, startedAt: main.startedAt.toISOString(), finishedAt: now } } };
    });
    const initContainerStatuses = (pod.spec?.initContainers ?? []).map((c) => ({ name: c.name, image: c.image ?? '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: main.startedAt.toISOString(), finishedAt: main.startedAt.toISOString() } } }));
    const ok = main.exitCode === 0 && wait.exitCode === 0 && !podReason;
    const status = {
      phase: ok ? 'Succeeded' : 'Failed',
      ...(podReason ?? {}),
      conditions: [
        { type: 'Initialized', status: 'True', lastTransitionTime: now },
        { type: 'Ready', status: 'False', reason: 'PodCompleted', lastTransitionTime: now },
        { type: 'ContainersReady', status: 'False', reason: 'PodCompleted', lastTransitionTime: now },
      ],
      initContainerStatuses,
      containerStatuses,
    };
    await core.patchNamespacedPodStatus({ name: pod.metadata!.name!, namespace, body: { status } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  };

  /** The pod's env for one container: plain values, fieldRefs, Secret and ConfigMap keys. */
  const envOf = async (pod: V1Pod, c: V1Container): Promise<Record<string, string>> => {
    const env: Record<string, string> = {};
    for (const e of c.env ?? []) {
      if (e.value !== undefined) env[e.name] = e.value;
      else if (e.valueFrom?.fieldRef) {
        const f = e.valueFrom.fieldRef.fieldPath;
        const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(f);
        const v = m ? (pod.metadata?.[m[1] as 'labels']?.[m[2]!] ?? '') : ({ 'metadata.name': pod.metadata?.name, 'metadata.namespace': pod.metadata?.namespace, 'metadata.uid': pod.metadata?.uid, 'spec.nodeName': pod.spec?.nodeName, 'spec.serviceAccountName': pod.spec?.serviceAccountName, 'status.podIP': pod.status?.podIP, 'status.hostIP': pod.status?.hostIP } as Record<string, string | undefined>)[f];
        env[e.name] = v ?? '';
      } else if (e.valueFrom?.secretKeyRef) {
        const r = e.valueFrom.secretKeyRef;
        const s = await core.readNamespacedSecret({ name: r.name!, namespace }).catch(() => undefined);
        const v = s?.data?.[r.key];
        if (v !== undefined) env[e.name] = Buffer.from(v, 'base64').toString();
        else if (!r.optional) throw new Error(`env ${e.name}: secret ${r.name}/${r.key} not found`);
      } else if (e.valueFrom?.configMapKeyRef) {
        const r = e.valueFrom.configMapKeyRef;
        const m = await core.readNamespacedConfigMap({ name: r.name!, namespace }).catch(() => undefined);
        const v = m?.data?.[r.key];
        if (v !== undefined) env[e.name] = v;
        else if (!r.optional) throw new Error(`env ${e.name}: configmap ${r.name}/${r.key} not found`);
      } else throw new Error(`env ${e.name}: this kind of valueFrom is not supported by the pod runner`);
    }
    return env;
  };

  /** One container as the sandbox sees it; throws with the reason when it cannot run here. */
  const sandboxOf = (pod: V1Pod, c: V1Container, argv: string[], ownPaths: string[]): SandboxContainer => {
    const volumes = new Map((pod.spec?.volumes ?? []).map((v) => [v.name, v]));
    const mounts: SandboxContainer['volumeMounts'] = [];
    for (const m of c.volumeMounts ?? []) {
      // Argo's own volumes: /var/run/argo (the executor's files) and input-artifacts (where `argoexec init`
      // unpacks each input artifact, mounted at its path with a subPath): the runner plays the executor and
      // places input artifacts in the container's own root at their paths instead.
      if (m.name === 'var-run-argo' || m.name === 'input-artifacts') continue;
      // The ServiceAccount token the admission plugin projects into every pod: the sandbox has no network to use it on.
      if (m.mountPath === '/var/run/secrets/kubernetes.io/serviceaccount') continue;
      const v = volumes.get(m.name);
      if (v?.emptyDir) mounts.push({ name: m.name, mountPath: m.mountPath, readOnly: !!m.readOnly, subPath: m.subPath });
      else throw new Error(`volume ${m.name}: only emptyDir volumes are run by the pod runner (${Object.keys(v ?? {}).filter((k) => k !== 'name').join(', ') || 'undeclared'})`);
    }
    const limit = c.resources?.limits?.memory;
    return { argv, workingDir: c.workingDir, volumeMounts: mounts, ownPaths, memoryBytes: limit !== undefined ? memoryBytes(String(limit)) : undefined };
  };

  /** The command after `argoexec emissary … --`, mapped to this host's programs. */
  const hostArgv = (c: V1Container): string[] => {
    const all = [...(c.command ?? []), ...(c.args ?? [])];
    const em = all.findIndex((a) => a.endsWith('/argoexec'));
    const dd = all.indexOf('--', em + 1);
    const cmd = em >= 0 && all[em + 1] === 'emissary' && dd > em ? all.slice(dd + 1) : all;
    const { argv, reason } = localArgv({ kind: 'container', command: cmd, args: [], image: c.image }, STAGED_SCRIPT);
    if (!argv) throw new Error(`container ${c.name}: ${reason!}`);
    return argv;
  };

  const runSandboxed = (podName: string, c: SandboxContainer, layout: { root: string; volumesDir: string }, env: Record<string, string>, out: string, err: string): { child: ChildProcess; exited: Promise<number> } => {
    const bwrap = bwrapBinary();
    const argv = sandboxArgs(c, layout);
    const child = spawn('setpriv', ['--pdeathsig', 'KILL', bwrap, ...argv], { env: jobEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    const set = procs.get(podName) ?? new Set();
    set.add(child);
    procs.set(podName, set);
    const o = createWriteStream(out);
    const e = createWriteStream(err);
    child.stdout!.pipe(o);
    child.stderr!.pipe(e);
    const exited = new Promise<number>((resolve) => {
      child.once('close', (code, signal) => {
        set.delete(child);
        // A process ended by a signal is exit code 137 whatever the signal, as emissary reports it
        // (cmd/argoexec/commands/emissary.go: ExitCode() < 0 → 137).
        const done = () => resolve(code ?? (signal ? 137 : 1));
        let n = 0;
        const check = () => (o.writableFinished && e.writableFinished) || ++n > 50 ? done() : setTimeout(check, 20);
        check();
      });
      child.once('error', () => resolve(127));
    });
    return { child, exited };
  };

  const placeArtifact = (a: Artifact, to: string) => {
    mkdirSync(dirname(to), { recursive: true });
    if (a.raw) writeFileSync(to, a.raw.data);
    else if (a.s3?.key !== undefined) {
      const from = join(store, a.s3.key, a.subPath ?? '');
      if (existsSync(from)) {
        rmSync(to, { recursive: true, force: true });
        cpSync(from, to, { recursive: true });
      } else if (!a.optional) throw new Error(`input artifact ${a.name}: ${a.s3.key} is not in the artifact store`);
    } else if (!a.optional) throw new Error(`input artifact ${a.name}: only raw artifacts and artifacts of earlier steps are run by the pod runner`);
  };

  const handle = async (pod: V1Pod) => {
    const podName = pod.metadata!.name!;
    const wf = pod.metadata!.labels![LABEL_WF]!;
    const wfUid = pod.metadata?.ownerReferences?.find((o) => o.kind === 'Workflow')?.uid;
    const main = pod.spec!.containers.find((c) => c.name === 'main');
    const allEnv = [...(pod.spec?.initContainers ?? []), ...pod.spec!.containers].flatMap((c) => c.env ?? []);
    const nodeId = allEnv.find((e) => e.name === 'ARGO_NODE_ID')?.value ?? podName;
    const rec: PodRun = { pod: podName, workflow: wf, nodeId, done: false };
    runs.set(podName, rec);
    const startedAt = new Date();
    const podDir = join(opts.dir, podName);
    const layout = { root: join(podDir, 'main', 'root'), volumesDir: join(podDir, 'volumes') };
    await taskResult(wf, wfUid, nodeId, undefined, false);
    let tmpl: Template;
    // A pod the runner cannot run: its example is not comparable, and the pod ends at once (Error).
    const giveUp = async (e: unknown) => {
      rec.notComparable = (e as Error).message;
      await taskResult(wf, wfUid, nodeId, undefined, true);
      await finishPod(pod, { exitCode: 1, reason: 'Error', startedAt }, { exitCode: 0 });
      rec.done = true;
    };
    try {
      const raw = allEnv.find((e) => e.name === 'ARGO_TEMPLATE')?.value;
      if (!raw) throw new Error('no ARGO_TEMPLATE in the pod (offloaded templates are not read by the pod runner)');
      tmpl = JSON.parse(raw) as Template;
      if (!main) throw new Error('no main container (a container set)');
      if (tmpl.containerSet) throw new Error('container sets are not run by the pod runner');
      if (tmpl.sidecars?.length) throw new Error('sidecars are not run by the pod runner');
    } catch (e) {
      return giveUp(e);
    }
    const outParams = tmpl.outputs?.parameters ?? [];
    const outArts = tmpl.outputs?.artifacts ?? [];
    const inArts = tmpl.inputs?.artifacts ?? [];
    const ownPaths = [...outParams.flatMap((p) => (p.valueFrom?.path ? [p.valueFrom.path] : [])), ...outArts.flatMap((a) => (a.path ? [a.path] : [])), ...inArts.flatMap((a) => (a.path ? [a.path] : [])), ...(tmpl.script ? [STAGED_SCRIPT] : [])];
    let mainSpec: SandboxContainer;
    let env: Record<string, string>;
    try {
      mainSpec = sandboxOf(pod, main, hostArgv(main), ownPaths);
      env = await envOf(pod, main);
      rec.argv = mainSpec.argv;
      // argoexec init: the script and the input artifacts.
      if (tmpl.script) {
        const f = hostPath(mainSpec, layout, STAGED_SCRIPT);
        mkdirSync(dirname(f), { recursive: true });
        writeFileSync(f, tmpl.script.source ?? '', { mode: 0o755 });
      }
      for (const a of inArts) if (a.path) placeArtifact(a, hostPath(mainSpec, layout, a.path));
    } catch (e) {
      return giveUp(e);
    }
    // The template's init containers, in order (Argo's own `init` is played above).
    for (const [i, c] of (pod.spec?.initContainers ?? []).filter((x) => x.name !== 'init').entries()) {
      let code: number;
      try {
        const spec = sandboxOf(pod, c, hostArgv(c), []);
        const r = runSandboxed(podName, spec, { root: join(podDir, `init-${i}`, 'root'), volumesDir: layout.volumesDir }, await envOf(pod, c), join(podDir, `init-${i}.out`), join(podDir, `init-${i}.err`));
        code = await r.exited;
      } catch (e) {
        rec.notComparable = `init container ${c.name}: ${(e as Error).message}`;
        code = 1;
      }
      if (code !== 0) {
        await taskResult(wf, wfUid, nodeId, undefined, true);
        await finishPod(pod, { exitCode: code, reason: 'Error', startedAt }, { exitCode: 0 }, { reason: 'Init:Error', message: `init container ${c.name} exited ${code}` });
        rec.done = true;
        return;
      }
    }
    if (closed) return;
    const out = join(podDir, 'main.out');
    const r = runSandboxed(podName, mainSpec, layout, env, out, join(podDir, 'main.err'));
    // Deadlines: the step's (ARGO_DEADLINE, the wait container's monitor: SIGTERM, SIGKILL after the
    // grace period) and the pod's activeDeadlineSeconds (the kubelet fails the pod).
    const timers: NodeJS.Timeout[] = [];
    let deadlineExceeded = false;
    const deadline = Date.parse(allEnv.find((e) => e.name === 'ARGO_DEADLINE')?.value ?? '');
    if (Number.isFinite(deadline) && deadline > 0 && deadline - Date.now() < 365 * 86_400_000) {
      timers.push(setTimeout(() => {
        r.child.kill('SIGTERM');
        timers.push(setTimeout(() => r.child.kill('SIGKILL'), 10_000));
      }, Math.max(0, deadline - Date.now())));
    }
    const ads = pod.spec?.activeDeadlineSeconds;
    if (ads !== undefined) {
      const started = Date.parse(String(pod.status?.startTime ?? '')) || startedAt.getTime();
      timers.push(setTimeout(() => {
        deadlineExceeded = true;
        r.child.kill('SIGKILL');
      }, Math.max(0, started + ads * 1000 - Date.now())));
    }
    const exitCode = await r.exited;
    for (const t of timers) clearTimeout(t);
    rec.exitCode = exitCode;
    if (closed) return;
    // argoexec wait: the outputs.
    let waitError: string | undefined;
    const parameters: Param[] = [];
    for (const p of outParams) {
      const q: Param = { ...p };
      if (p.valueFrom?.path) {
        const f = hostPath(mainSpec, layout, p.valueFrom.path);
        if (existsSync(f) && statSync(f).isFile()) q.value = trimOneNewline(readFileSync(f, 'utf8'));
        else if (p.valueFrom.default !== undefined) q.value = trimOneNewline(String(p.valueFrom.default));
        else waitError ??= `open ${p.valueFrom.path}: no such file or directory`;
      }
      parameters.push(q);
    }
    const outputs: Json = {};
    if (parameters.length) outputs.parameters = parameters;
    const artifacts: Artifact[] = [];
    for (const a of outArts) {
      if (!a.path) continue;
      const src = hostPath(mainSpec, layout, a.path);
      if (!existsSync(src)) {
        if (!a.optional) waitError ??= `output artifact ${a.name}: ${a.path} does not exist`;
        continue;
      }
      const base = tmpl.archiveLocation?.s3?.key ?? `${wf}/${podName}`;
      const key = posix.join(base, `${a.name}.tgz`);
      const dest = join(store, key);
      rmSync(dest, { recursive: true, force: true });
      mkdirSync(dirname(dest), { recursive: true });
      cpSync(src, dest, { recursive: true });
      const { path, name, optional, mode, archive, globalName } = a;
      artifacts.push({ name, path, ...(optional ? { optional } : {}), ...(mode !== undefined ? { mode } : {}), ...(archive ? { archive } : {}), ...(globalName ? { globalName } : {}), s3: { ...(tmpl.archiveLocation?.s3 ?? {}), key } });
    }
    if (artifacts.length) outputs.artifacts = artifacts;
    if (allEnv.find((e) => e.name === 'ARGO_INCLUDE_SCRIPT_OUTPUT')?.value === 'true') {
      let s = trimOneNewline(existsSync(out) ? readFileSync(out, 'utf8') : '');
      if (Buffer.byteLength(s) > MAX_RESULT) s = Buffer.from(s).subarray(-MAX_RESULT).toString();
      outputs.result = s;
    }
    await taskResult(wf, wfUid, nodeId, Object.keys(outputs).length ? outputs : undefined, true);
    await finishPod(
      pod,
      { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt },
      { exitCode: waitError ? 1 : 0, message: waitError },
      deadlineExceeded ? { reason: 'DeadlineExceeded', message: `Pod was active on the node longer than the specified deadline` } : undefined,
    );
    rec.done = true;
    log(`${podName}: ${rec.argv?.join(' ')} → exit ${exitCode}${waitError ? ` (wait: ${waitError})` : ''}`);
  };

  const loop = (async () => {
    const starting = new Set<string>();
    while (!closed) {
      const list = await core.listNamespacedPod({ namespace, labelSelector: `${LABEL_WF},!workflows.argoproj.io/component` }).catch(() => undefined);
      if (list) {
        const live = new Set<string>();
        for (const pod of list.items) {
          const n = pod.metadata!.name!;
          if (pod.metadata?.deletionTimestamp) continue;
          live.add(n);
          // kwok's ready stage sets the podIP and Running; only then may the final status be written.
          if (!runs.has(n) && !starting.has(n) && pod.status?.phase === 'Running' && pod.status.podIP) {
            starting.add(n);
            void handle(pod)
              .catch(async (e: unknown) => {
                const r = runs.get(n);
                if (r) r.notComparable ??= `pod runner: ${(e as Error).message}`;
                log(`${n}: ${(e as Error).message}`);
                // Finish the pod anyway, so its workflow ends now rather than at the bench's timeout.
                if (r && !r.done) {
                  r.done = true;
                  const wfUid = pod.metadata?.ownerReferences?.find((o) => o.kind === 'Workflow')?.uid;
                  await taskResult(r.workflow, wfUid, r.nodeId, undefined, true).catch(() => undefined);
                  await finishPod(pod, { exitCode: 1, reason: 'Error', startedAt: new Date() }, { exitCode: 0 }).catch(() => undefined);
                }
              })
              .finally(() => starting.delete(n));
          }
        }
        for (const [n, r] of runs) if (!live.has(n) && !r.done) killPod(n);
      }
      await sleep(200);
    }
  })();

  return {
    runs,
    notComparable: (workflow) => [...runs.values()].filter((r) => r.workflow === workflow && r.notComparable).map((r) => `${r.pod}: ${r.notComparable!}`),
    async close() {
      closed = true;
      await loop;
      for (const n of procs.keys()) killPod(n);
    },
  };
}
