// A real Argo Workflows v3.7.9 controller on the project's real Kubernetes control plane
// (test/kubernetes/control-plane.ts), for the *.cp.test.ts suites that test Tandem's executor plugin
// with Argo itself. scripts/argo/build.sh builds `workflow-controller` and `argoexec` into .tools/argo/.
//
// startArgo() installs what an Argo install would: the minimal CRDs from Argo's own module, the
// controller ConfigMap (metrics and telemetry off: otherwise the controller binds :9090 on every
// interface and panics when it is taken), the agent RBAC of Argo's quick-start manifests, and whatever
// objects the suite adds (an ExecutorPlugin ConfigMap, the plugin's RBAC); then starts the controller as
// a local process (kubeconfig, 127.0.0.1). kwok runs no containers, so this file plays the kubelet for
// Argo's agent pods: for each one the controller creates it runs the pod's init container, then its
// containers (the plugin sidecars and `argoexec agent main`), each with the pod's own command, args and
// env, in a mount namespace where the pod's volumes are where its volumeMounts say (the emptyDir
// /var/run/argo the agent writes each plugin's token to, subPath for the sidecar; the service-account
// Secret at /var/run/secrets/kubernetes.io/serviceaccount) and KUBERNETES_SERVICE_HOST/PORT naming the
// apiserver, as in a pod. What differs from a node, said here: pods share the host's network, so each
// pod's plugin port P (containerPort, `localhost:P` in ARGO_PLUGIN_ADDRESSES) is mapped to a free
// host port Q in that pod's sidecar args and agent env, as a pod's own loopback would keep them apart;
// securityContext and resources are not applied; images are not pulled: `argoexec` is the built binary,
// other commands come from `commands` (e.g. `tandem` → this checkout's bin/tandem.js). A deleted pod's
// processes get SIGTERM, then SIGKILL after 10 s. Argo's other pods (container steps) are finished by the
// kwok Stage ARGO_POD_STAGE, or, with `runPods`, run on this host by ./pod-runner.ts (the node-tree oracle). Every process is started under `setpriv --pdeathsig KILL`, so none outlives
// the test process; close() stops them by PID.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi, KubernetesObjectApi, PatchStrategy, setHeaderOptions, type KubernetesObject, type V1Container, type V1Pod } from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import type { ControlPlane } from '../kubernetes/control-plane.js';
import { freePort } from '../../workers/dev-server.js';
import { startPodRunner, type PodRunner } from './pod-runner.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Where scripts/argo/build.sh puts the binaries and the module source. */
export const ARGO_TOOLS = join(ROOT, '.tools', 'argo');
export const ARGO_VERSION = 'v3.7.9';
const GROUP = { group: 'argoproj.io', version: 'v1alpha1' };

/** The binaries and Argo's manifests, or an error saying how to build them. */
export function argoTools(): { controller: string; argoexec: string; manifests: string } {
  const t = { controller: join(ARGO_TOOLS, 'workflow-controller'), argoexec: join(ARGO_TOOLS, 'argoexec'), manifests: join(ARGO_TOOLS, 'src', 'manifests') };
  const missing = Object.values(t).filter((p) => !existsSync(p));
  if (missing.length) throw new Error(`Argo ${ARGO_VERSION} is not built (missing ${missing.join(', ')}): run npm run argo:install (about 4 minutes once)`);
  return t;
}

/**
 * kwok Stage for the pods of Argo's container steps (not the agent's): they end Succeeded, `main`
 * exit 0. `wait` exits 1, so the controller marks the step's task result complete without waiting
 * for a WorkflowTaskResult (which `argoexec wait` would write from inside the pod).
 */
export const ARGO_POD_STAGE = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: argo-pod-finish
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.metadata.labels["workflows.argoproj.io/workflow"]'
      operator: 'Exists'
    - key: '.metadata.labels["workflows.argoproj.io/component"]'
      operator: 'DoesNotExist'
  delay:
    durationMilliseconds: 300
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: PodCompleted
        type: Ready
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        started: false
        restartCount: 0
        state:
          terminated:
            exitCode: {{ if eq .name "wait" }}1{{ else }}0{{ end }}
            reason: {{ if eq .name "wait" }}"Error"{{ else }}"Completed"{{ end }}
            finishedAt: {{ $now | Quote }}
      {{ end }}
      phase: Succeeded
`;

/**
 * The artifact repository of `runPods`: S3 on a loopback port nothing listens on. The controller only
 * writes its bucket and keys into the pods' templates; the pod runner stores the files under the keys.
 */
const ORACLE_ARTIFACT_REPOSITORY = `s3:
  bucket: tandem-oracle
  endpoint: 127.0.0.1:9
  insecure: true
  accessKeySecret: { name: oracle-s3, key: accesskey }
  secretKeySecret: { name: oracle-s3, key: secretkey }
`;

export interface ArgoOptions {
  /** The namespace the controller runs in and workflows are submitted to (default: the control plane's). */
  namespace?: string;
  /** Objects created before the controller starts (ExecutorPlugin ConfigMaps, their RBAC). */
  objects?: KubernetesObject[];
  /** A pod command's argv[0] → what runs instead (images are not pulled). `argoexec` is always the built binary. */
  commands?: Record<string, string[]>;
  /** Env given to every container besides its own (e.g. PATH for `tandem`). */
  env?: Record<string, string>;
  verbose?: boolean;
  /**
   * Run the pods of Argo's container and script steps on this host (./pod-runner.ts) instead of leaving
   * them to a kwok Stage: do not pass ARGO_POD_STAGE to the control plane then. The controller is also
   * given an S3 artifact repository that nothing dials (127.0.0.1:9): its keys name directories of the
   * runner's local artifact store.
   */
  runPods?: boolean;
  /** More keys of the controller's ConfigMap (e.g. `synchronization`, ./sync-db.ts). */
  controllerConfig?: Record<string, string>;
}

export interface ContainerRun {
  name: string;
  argv: string[];
  env: Record<string, string>;
  child: ChildProcess;
  exit?: number | null;
  logFile: string;
}

/** What the kubelet stand-in did for one agent pod. */
export interface AgentPodRun {
  name: string;
  workflow: string;
  /** Each plugin's token as `agent init` wrote it (/var/run/argo/<plugin>/token). */
  tokens: Record<string, string>;
  /** containerPort → host port. */
  ports: Record<number, number>;
  containers: ContainerRun[];
  /** The pod was deleted and its processes stopped. */
  stopped: boolean;
}

export type Workflow = KubernetesObject & {
  spec: Record<string, unknown> & { shutdown?: string };
  status?: { phase?: string; message?: string; nodes?: Record<string, ArgoNode> };
};
/** The workflow once Argo has given it a final phase (for waits that poll until a value), else undefined. */
export const finished = (wf: Workflow): Workflow | undefined => (['Succeeded', 'Failed', 'Error'].includes(wf.status?.phase ?? '') ? wf : undefined);

/** The workflow's node with this display name. */
export const nodeNamed = (wf: Workflow, displayName: string): ArgoNode | undefined => Object.values(wf.status?.nodes ?? {}).find((n) => n.displayName === displayName);

export interface ArgoNode {
  id: string;
  name: string;
  displayName: string;
  type: string;
  templateName?: string;
  phase?: string;
  message?: string;
  inputs?: { parameters?: { name: string; value?: string }[] };
  outputs?: { parameters?: { name: string; value?: string }[]; result?: string };
  progress?: string;
}

export interface Argo {
  namespace: string;
  /** Creates a Workflow (its generateName honoured) and returns its name. */
  submit(wf: object): Promise<string>;
  get(name: string): Promise<Workflow | undefined>;
  /** Polls the workflow until `ok` returns a value; the error carries the workflow's nodes and the controller's log tail. */
  waitFor<T>(name: string, what: string, ok: (wf: Workflow) => T | undefined, timeoutMs?: number): Promise<T>;
  /** `argo stop` / `argo terminate`: sets spec.shutdown. */
  shutdown(name: string, strategy: 'Stop' | 'Terminate'): Promise<void>;
  delete(name: string): Promise<void>;
  /** Agent pods run so far, by pod name. */
  agents: Map<string, AgentPodRun>;
  /** Pods of a workflow as the apiserver has them. */
  pods(workflow: string): Promise<V1Pod[]>;
  controllerLog(): string;
  containerLog(c: ContainerRun): string;
  /** With `runPods`: the local pod runner. */
  podRunner?: PodRunner;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
// /var/run is a symlink to /run here; mounts go where it points.
const hostPath = (p: string) => p.replace(/^\/var\/run(\/|$)/, '/run$1');

function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function startArgo(cp: ControlPlane, opts: ArgoOptions = {}): Promise<Argo> {
  const tools = argoTools();
  const namespace = opts.namespace ?? cp.namespace;
  const dir = mkdtempSync(join(tmpdir(), 'tandem-argo-'));
  const kc = cp.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const apiPort = new URL(cp.server).port;
  const verbose = opts.verbose || !!process.env.TANDEM_TEST_VERBOSE;
  const children = new Set<ChildProcess>();
  const agents = new Map<string, AgentPodRun>();
  let closed = false;

  const killAll = () => {
    for (const c of children) if (alive(c.pid)) process.kill(c.pid!, 'SIGKILL');
  };
  process.once('exit', killAll);

  /** Starts argv under pdeathsig; with `mounts`, in a mount namespace with a tmpfs on /run and the binds. */
  const run = (argv: string[], env: Record<string, string>, logFile: string, mounts: { src: string; dst: string; ro: boolean }[] = []): ChildProcess => {
    const fd = openSync(logFile, 'a');
    let cmd: string[];
    if (mounts.length) {
      const script = ['set -e', 'mount -t tmpfs tmpfs /run', ...mounts.flatMap((m) => [`mkdir -p ${q(m.src)} ${q(m.dst)}`, `mount --bind ${q(m.src)} ${q(m.dst)}`, ...(m.ro ? [`mount -o remount,bind,ro ${q(m.dst)}`] : [])]), 'exec "$@"'].join('\n');
      cmd = ['setpriv', '--pdeathsig', 'KILL', 'unshare', '-m', '--propagation', 'private', '/bin/sh', '-c', script, 'pod', ...argv];
    } else cmd = ['setpriv', '--pdeathsig', 'KILL', ...argv];
    const child = spawn(cmd[0]!, cmd.slice(1), { cwd: dir, env, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  };
  const stopChild = async (c: ChildProcess, graceMs = 10_000) => {
    if (c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGTERM');
    const t = setTimeout(() => c.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(t);
  };
  const readLog = (f: string) => {
    try {
      return readFileSync(f, 'utf8');
    } catch {
      return '';
    }
  };
  const controllerLogFile = join(dir, 'workflow-controller.log');
  const controllerLog = () => readLog(controllerLogFile);

  // --- Install: CRDs, controller ConfigMap, agent RBAC, the suite's objects.
  // POSTed as JSON, not through the typed client: its serializer knows `x_kubernetes_preserve_unknown_fields`,
  // not the YAML's `x-kubernetes-preserve-unknown-fields`, and drops it, so the apiserver would prune
  // every Workflow down to its metadata.
  const crdDir = join(tools.manifests, 'base', 'crds', 'minimal');
  const ca = Buffer.from(kc.getCurrentCluster()!.caData!, 'base64').toString();
  for (const f of readdirSync(crdDir).filter((x) => x.startsWith('argoproj.io_') && x.endsWith('.yaml'))) {
    const body = JSON.stringify(parse(readFileSync(join(crdDir, f), 'utf8')));
    const code = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest(`${cp.server}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, { method: 'POST', ca, headers: { authorization: `Bearer ${cp.token}`, 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
    });
    if (code !== 201 && code !== 409) throw new Error(`creating the CRD in ${f}: HTTP ${code}`);
  }
  for (let i = 0; ; i++) {
    const ok = await custom.listNamespacedCustomObject({ ...GROUP, namespace, plural: 'workflows' }).then(
      () => true,
      () => false,
    );
    if (ok) break;
    if (i > 300) throw new Error('the Workflow CRD was not served within 30 s');
    await sleep(100);
  }
  const quick = join(tools.manifests, 'quick-start', 'base');
  const install: KubernetesObject[] = [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'workflow-controller-configmap' }, data: { metricsConfig: 'enabled: false\n', telemetryConfig: 'enabled: false\n', ...(opts.runPods ? { artifactRepository: ORACLE_ARTIFACT_REPOSITORY } : {}), ...opts.controllerConfig } } as KubernetesObject,
    ...(opts.runPods ? [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'oracle-s3' }, stringData: { accesskey: 'oracle', secretkey: 'oracle' } } as KubernetesObject] : []),
    ...['agent-role.yaml', 'agent-default-rolebinding.yaml', 'default.service-account-token-secret.yaml'].flatMap((f) => parseAllDocuments(readFileSync(join(quick, f), 'utf8')).map((d) => d.toJS() as KubernetesObject)),
    ...(opts.objects ?? []),
  ];
  for (const o of install) await objects.create({ ...o, metadata: { ...o.metadata, namespace } });

  // --- The controller.
  const home = join(dir, 'home');
  mkdirSync(home);
  const controller = run(
    [tools.controller, '--kubeconfig', cp.kubeconfigPath, '--namespace', namespace, '--executor-image', `quay.io/argoproj/argoexec:${ARGO_VERSION}`, '--loglevel', 'info'],
    { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ARGO_EXECUTOR_PLUGINS: 'true', LEADER_ELECTION_DISABLE: 'true', DEFAULT_REQUEUE_TIME: '1s' },
    controllerLogFile,
  );
  const plugins = install.filter((o) => o.kind === 'ConfigMap' && o.metadata?.labels?.['workflows.argoproj.io/configmap-type'] === 'ExecutorPlugin').map((o) => o.metadata!.name!);
  for (let i = 0; ; i++) {
    const log = controllerLog();
    if (controller.exitCode !== null) throw new Error(`workflow-controller exited (${controller.exitCode}):\n${log.split('\n').slice(-30).join('\n')}`);
    // Each plugin ConfigMap is logged as `Executor plugin added … name=<configmap>`.
    const added = log.split('\n').filter((l) => l.includes('Executor plugin added'));
    if (log.includes('Starting Workflow Controller') && plugins.every((p) => added.some((l) => l.includes(`name=${p}`)))) break;
    if (i > 600) throw new Error(`workflow-controller did not start within 60 s:\n${log.split('\n').slice(-30).join('\n')}`);
    await sleep(100);
  }

  const podRunner = opts.runPods ? startPodRunner(kc, { namespace, dir: join(dir, 'run-pods'), log: verbose ? (l) => console.error(`pod-runner: ${l}`) : undefined }) : undefined;

  // --- The kubelet for agent pods.
  const secretFiles = async (name: string, into: string) => {
    for (let i = 0; ; i++) {
      const s = await core.readNamespacedSecret({ name, namespace }).catch(() => undefined);
      const data = s?.data ?? {};
      if (s && (s.type !== 'kubernetes.io/service-account-token' || data.token)) {
        mkdirSync(into, { recursive: true });
        for (const [k, v] of Object.entries(data)) writeFileSync(join(into, k), Buffer.from(v, 'base64'));
        return;
      }
      if (i > 200) throw new Error(`Secret ${namespace}/${name} has no token after 20 s`);
      await sleep(100);
    }
  };
  const startPod = async (pod: V1Pod): Promise<void> => {
    const name = pod.metadata!.name!;
    const podDir = join(dir, 'pods', name);
    mkdirSync(podDir, { recursive: true });
    const rec: AgentPodRun = { name, workflow: pod.metadata?.labels?.['workflows.argoproj.io/workflow'] ?? '', tokens: {}, ports: {}, containers: [], stopped: false };
    agents.set(name, rec);
    const volDir = (v: string) => join(podDir, 'volumes', v);
    for (const v of pod.spec?.volumes ?? []) {
      if (v.secret?.secretName) await secretFiles(v.secret.secretName, volDir(v.name));
      else mkdirSync(volDir(v.name), { recursive: true });
    }
    const sidecars = (pod.spec?.containers ?? []).filter((c) => c.name !== 'main');
    for (const c of sidecars) {
      const p = c.ports?.[0]?.containerPort;
      if (p) rec.ports[p] = await freePort();
    }
    const mapPorts = (s: string) => Object.entries(rec.ports).reduce((acc, [p, h]) => acc.replaceAll(`localhost:${p}`, `localhost:${h}`), s);
    const argvOf = (c: V1Container): string[] => {
      const [cmd0, ...rest] = [...(c.command ?? []), ...(c.args ?? [])];
      if (!cmd0) throw new Error(`container ${c.name} of pod ${name} has no command`);
      const head = cmd0 === 'argoexec' ? [tools.argoexec] : (opts.commands?.[cmd0] ?? [cmd0]);
      const port = c.ports?.[0]?.containerPort;
      return [...head, ...rest.map((a) => (port && a === String(port) ? String(rec.ports[port]) : a))];
    };
    const start = (c: V1Container): ContainerRun => {
      const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(podDir, `home-${c.name}`), ...opts.env };
      mkdirSync(env.HOME!, { recursive: true });
      for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = mapPorts(e.value);
      const mounts = (c.volumeMounts ?? []).map((m) => ({ src: join(volDir(m.name), m.subPath ?? ''), dst: hostPath(m.mountPath), ro: !!m.readOnly }));
      if (mounts.some((m) => m.dst === '/run/secrets/kubernetes.io/serviceaccount')) Object.assign(env, { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: apiPort });
      const argv = argvOf(c);
      const logFile = join(podDir, `${c.name}.log`);
      const child = run(argv, env, logFile, mounts);
      const r: ContainerRun = { name: c.name, argv, env, child, logFile };
      child.once('exit', (code) => (r.exit = code));
      rec.containers.push(r);
      return r;
    };
    for (const c of pod.spec?.initContainers ?? []) {
      const r = start(c);
      const code = await new Promise<number | null>((res) => (r.exit !== undefined ? res(r.exit) : r.child.once('exit', (x) => res(x))));
      if (code !== 0) throw new Error(`init container ${c.name} of ${name} exited ${code}:\n${readLog(r.logFile)}`);
    }
    const argoVol = pod.spec?.volumes?.find((v) => v.name === 'var-run-argo');
    if (argoVol) for (const c of sidecars) rec.tokens[c.name] = readLog(join(volDir(argoVol.name), c.name, 'token'));
    for (const c of pod.spec?.containers ?? []) start(c);
  };
  const stopPod = async (rec: AgentPodRun) => {
    rec.stopped = true;
    await Promise.all(rec.containers.map((c) => stopChild(c.child)));
  };
  const podErrors: string[] = [];
  const kubelet = (async () => {
    const starting = new Map<string, Promise<void>>();
    while (!closed) {
      const list = await core.listNamespacedPod({ namespace, labelSelector: 'workflows.argoproj.io/component=agent' }).catch(() => undefined);
      if (list) {
        const live = new Set<string>();
        for (const pod of list.items) {
          const n = pod.metadata!.name!;
          if (pod.metadata?.deletionTimestamp) continue;
          live.add(n);
          if (!agents.has(n) && !starting.has(n) && pod.spec?.nodeName) {
            starting.set(
              n,
              startPod(pod).catch((e: unknown) => {
                podErrors.push(`${n}: ${(e as Error).message}`);
              }),
            );
          }
        }
        for (const [n, rec] of agents) {
          if (!live.has(n) && !rec.stopped) {
            await starting.get(n);
            void stopPod(rec);
          }
        }
      }
      await sleep(200);
    }
  })();

  const get = async (name: string) => (await custom.getNamespacedCustomObject({ ...GROUP, namespace, plural: 'workflows', name }).catch((e: { code?: number }) => {
    if (e.code === 404) return undefined;
    throw e;
  })) as Workflow | undefined;
  const describe = async (name: string) => {
    const wf = await get(name).catch(() => undefined);
    const nodes = Object.values(wf?.status?.nodes ?? {}).map((n) => `  ${n.displayName} ${n.type} ${n.phase}${n.message ? `: ${n.message}` : ''}`);
    return `workflow ${name}: ${wf?.status?.phase ?? 'no status'} ${wf?.status?.message ?? ''}\n${nodes.join('\n')}\n${podErrors.join('\n')}\n--- controller log tail\n${controllerLog().split('\n').slice(-25).join('\n')}`;
  };

  return {
    namespace,
    agents,
    async submit(wf) {
      const created = (await custom.createNamespacedCustomObject({ ...GROUP, namespace, plural: 'workflows', body: wf })) as Workflow;
      return created.metadata!.name!;
    },
    get,
    async waitFor(name, what, ok, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const wf = await get(name);
        const v = wf ? ok(wf) : undefined;
        if (v !== undefined && v !== false) return v;
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${await describe(name)}`);
        await sleep(250);
      }
    },
    async shutdown(name, strategy) {
      await custom.patchNamespacedCustomObject({ ...GROUP, namespace, plural: 'workflows', name, body: { spec: { shutdown: strategy } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    },
    async delete(name) {
      await custom.deleteNamespacedCustomObject({ ...GROUP, namespace, plural: 'workflows', name });
    },
    async pods(workflow) {
      return (await core.listNamespacedPod({ namespace, labelSelector: `workflows.argoproj.io/workflow=${workflow}` })).items;
    },
    controllerLog,
    containerLog: (c) => readLog(c.logFile),
    podRunner,
    async close() {
      if (closed) return;
      closed = true;
      await kubelet;
      await podRunner?.close();
      await Promise.all([...agents.values()].map((r) => stopPod(r)));
      await stopChild(controller);
      if (verbose) {
        console.error(`----- workflow-controller\n${controllerLog().split('\n').slice(-60).join('\n')}`);
        for (const r of agents.values()) for (const c of r.containers) console.error(`----- ${r.name}/${c.name}\n${readLog(c.logFile).split('\n').slice(-30).join('\n')}`);
      }
      process.off('exit', killAll);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
