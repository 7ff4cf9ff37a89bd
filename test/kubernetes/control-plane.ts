// A real Kubernetes control plane for the *.cp.test.ts suites: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler (built from upstream by scripts/kubernetes/build.sh
// into .tools/kubernetes/), plus kwok, which plays the kubelets: it keeps the fake nodes Ready and
// moves pods through the lifecycle the Stage resources in kwok-stages.ts describe.
//
// Everything listens on 127.0.0.1 on free ports. Nodes get 127.0.0.x InternalIPs and pods IPs from
// a loopback pod CIDR, so no object names a private-range address and nothing ever dials one.
// Only the kube-apiserver's --service-cluster-ip-range is a 10.x range (it must be set; nothing dials it).
// No kubelet API is served unless `podLogs` asks for it (then kwok's server binds 127.0.0.1 and every
// node's InternalIP is 127.0.0.1; one log file stands for every container). Each process runs under a tiny shell guard that kills it when
// this (test) process goes away, even by SIGKILL; stop() ends them by PID and removes the temp dir.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig, type V1Node, type V1Taint } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { KubeClients } from '../../backends/kubernetes/client.js';
import { kwokStages } from './kwok-stages.js';

// Where scripts/kubernetes/build.sh puts the binaries.
export const KUBERNETES_TOOLS = join(fileURLToPath(new URL('../..', import.meta.url)), '.tools', 'kubernetes');
const BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'] as const;
type Component = (typeof BINARIES)[number];

/** Pods get addresses from this range (kwok --cidr): loopback, never a private range. */
export const POD_CIDR = '127.100.0.1/16';
/** Services get ClusterIPs from here. The apiserver needs a range; nothing here ever dials one. */
const SERVICE_CIDR = '10.96.0.0/16';

export interface NodeSpec {
  name: string;
  /** Defaults: 8 cpu, 32Gi, 110 pods, no GPUs. */
  cpu?: string;
  memory?: string;
  pods?: number;
  gpus?: number;
  labels?: Record<string, string>;
  taints?: V1Taint[];
}

export interface ControlPlaneOptions {
  /** Nodes created (and waited Ready) before start-up returns. */
  nodes?: NodeSpec[];
  /** A namespace created before start-up returns (with its default ServiceAccount); default "tandem". */
  namespace?: string;
  /** More kwok Stage documents (YAML), e.g. for Deployment pods that should fail. */
  extraStages?: string[];
  /** Print each component's log on stop (also when TANDEM_TEST_VERBOSE is set). */
  verbose?: boolean;
  /**
   * Serve pod logs as a kubelet does: kwok serves the kubelet API on 127.0.0.1 (TLS, the apiserver's
   * certificate) and every node's InternalIP is 127.0.0.1, so the apiserver's log requests reach it.
   * kwok runs no containers: every container of every pod has the log `writePodLog` wrote.
   */
  podLogs?: boolean;
}

export interface ControlPlane {
  /** A kubeconfig (https://127.0.0.1:port, the CA, an admin token) for KubeClients / KUBECONFIG. */
  kubeconfigPath: string;
  server: string;
  token: string;
  namespace: string;
  kubeConfig(): KubeConfig;
  clients(namespace?: string): KubeClients;
  /** Creates the namespace and waits for its default ServiceAccount (pods need it). Idempotent. */
  createNamespace(name: string): Promise<void>;
  /** Creates fake nodes managed by kwok and waits until they are Ready. */
  addNodes(nodes: NodeSpec[]): Promise<V1Node[]>;
  /** With `podLogs`: the lines every container's log shows (kubectl logs, readNamespacedPodLog). */
  writePodLog(lines: { stream?: 'stdout' | 'stderr'; text: string }[]): void;
  /**
   * A PersistentVolumeClaim bound to a static PersistentVolume of the same name (e.g. the shared
   * filesystem a deploy's modelVolume names), waited Bound. Nothing is mounted: kwok runs no containers.
   */
  createClaim(name: string, namespace?: string): Promise<void>;
  /** A component's log so far (for failure messages). */
  log(component: Component): string;
  /** Stops every process (SIGTERM, then SIGKILL) and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

/** The binaries, or an error saying how to build them. */
export function kubernetesBinaries(): Record<Component, string> {
  const missing = BINARIES.filter((b) => !existsSync(join(KUBERNETES_TOOLS, b)));
  if (missing.length) {
    throw new Error(`the Kubernetes control plane is not built (missing ${missing.join(', ')} in ${KUBERNETES_TOOLS}): run npm run kubernetes:install (about 10 minutes once)`);
  }
  return Object.fromEntries(BINARIES.map((b) => [b, join(KUBERNETES_TOOLS, b)])) as Record<Component, string>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** GET on loopback; resolves the status code (0 when refused). */
function probe(url: string, opts: { ca?: string; token?: string; insecure?: boolean } = {}): Promise<{ code: number; body: string }> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(
      u,
      { method: 'GET', ca: opts.ca, rejectUnauthorized: !opts.insecure, headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {}, timeout: 2000 },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', () => resolve({ code: 0, body: '' }));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

// Live control planes of this process, stopped on exit whatever the test did.
const live = new Set<{ kill(): void }>();
let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const cp of live) cp.kill();
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      for (const cp of live) cp.kill();
      process.kill(process.pid, sig);
    });
  }
}

interface Proc {
  name: Component;
  child: ChildProcess;
  pidFile: string;
  logFile: string;
}

// The guard: the component runs in the background; the shell waits on its fd 3, a pipe from this
// process, which closes when this process exits for any reason (even SIGKILL): then it SIGTERMs the
// component and, as nobody else will, removes the control plane's temp dir.
const GUARD = [
  '"$@" </dev/null 3<&- & c=$!',
  'echo $c > "$PIDFILE"',
  '{ read -r _ <&3; : > "$PIDFILE.orphaned"; kill -TERM $c 2>/dev/null; } & r=$!',
  'wait $c; s=$?',
  'kill $r 2>/dev/null',
  'if [ -e "$PIDFILE.orphaned" ]; then sleep 2; rm -rf "$CPDIR"; fi',
  'exit $s',
].join('\n');

function pidOf(p: Proc): number | undefined {
  try {
    const pid = Number(readFileSync(p.pidFile, 'utf8').trim());
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const bin = kubernetesBinaries();
  hookExit();
  const dir = mkdtempSync(join(tmpdir(), 'tandem-cp-'));
  const procs: Proc[] = [];
  const verbose = opts.verbose || !!process.env.TANDEM_TEST_VERBOSE;
  let stopped = false;

  const killAll = (signal: NodeJS.Signals) => {
    for (const p of procs) {
      const pid = pidOf(p);
      if (pid && alive(pid)) process.kill(pid, signal);
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill(signal);
    }
  };
  const handle = {
    kill() {
      killAll('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  live.add(handle);

  const start = (name: Component, args: string[]): Proc => {
    const logFile = join(dir, `${name}.log`);
    const pidFile = join(dir, `${name}.pid`);
    const fd = openSync(logFile, 'a');
    const child = spawn('/bin/sh', ['-c', GUARD, 'guard', bin[name], ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, PIDFILE: pidFile, CPDIR: dir },
      stdio: ['ignore', fd, fd, 'pipe'],
    });
    closeSync(fd);
    const p = { name, child, pidFile, logFile };
    procs.push(p);
    return p;
  };
  const log = (name: Component) => {
    try {
      return readFileSync(join(dir, `${name}.log`), 'utf8');
    } catch {
      return '';
    }
  };
  const waitUntil = async (what: string, component: Component, ok: () => Promise<boolean>, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    const p = procs.find((x) => x.name === component);
    for (;;) {
      if (await ok()) return;
      if (p && (p.child.exitCode !== null || p.child.signalCode !== null)) throw new Error(`${component} exited before ${what}:\n${log(component).split('\n').slice(-30).join('\n')}`);
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}:\n${log(component).split('\n').slice(-30).join('\n')}`);
      await sleep(100);
    }
  };

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // Reverse start order: kwok and the controllers first, etcd last.
    for (const p of [...procs].reverse()) {
      const pid = pidOf(p);
      if (pid && alive(pid)) process.kill(pid, 'SIGTERM');
      const deadline = Date.now() + 10_000;
      while (pid && alive(pid) && Date.now() < deadline) await sleep(50);
      if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
      (p.child.stdio[3] as Socket | null)?.destroy(); // the guard's reader sees EOF and exits
      if (p.child.exitCode === null && p.child.signalCode === null) {
        await new Promise<void>((r) => {
          p.child.once('exit', () => r());
          p.child.kill('SIGKILL');
        });
      }
    }
    if (verbose) for (const p of procs) console.error(`----- ${p.name}\n${log(p.name).split('\n').slice(-40).join('\n')}`);
    live.delete(handle);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    // Credentials: a self-signed serving certificate for 127.0.0.1 (which the kubeconfig trusts as its
    // CA), a service-account signing key, and one admin token (group system:masters).
    const cert = join(dir, 'apiserver.crt');
    const key = join(dir, 'apiserver.key');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
    const ca = readFileSync(cert, 'utf8');
    const sa = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const saKey = join(dir, 'sa.key');
    const saPub = join(dir, 'sa.pub');
    writeFileSync(saKey, sa.privateKey.export({ type: 'sec1', format: 'pem' }), { mode: 0o600 });
    writeFileSync(saPub, sa.publicKey.export({ type: 'spki', format: 'pem' }));
    const token = randomBytes(24).toString('hex');
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, `${token},tandem-admin,tandem-admin,"system:masters"\n`, { mode: 0o600 });

    const [etcdClient, etcdPeer, apiPort, kcmPort, schedPort, kubeletPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
    const server = `https://127.0.0.1:${apiPort}`;
    const namespace = opts.namespace ?? 'tandem';
    const config = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'tandem-cp', cluster: { server, 'certificate-authority-data': Buffer.from(ca).toString('base64') } }],
      users: [{ name: 'tandem-admin', user: { token } }],
      contexts: [{ name: 'tandem-cp', context: { cluster: 'tandem-cp', user: 'tandem-admin', namespace } }],
      'current-context': 'tandem-cp',
    };
    const kubeconfigPath = join(dir, 'kubeconfig');
    writeFileSync(kubeconfigPath, stringify(config), { mode: 0o600 });

    start('etcd', [
      '--name=tandem',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=tandem=http://127.0.0.1:${etcdPeer}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ]);
    await waitUntil('etcd /health', 'etcd', async () => (await probe(`http://127.0.0.1:${etcdClient}/health`)).body.includes('"true"'));

    start('kube-apiserver', [
      `--etcd-servers=http://127.0.0.1:${etcdClient}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--tls-cert-file=${cert}`,
      `--tls-private-key-file=${key}`,
      `--service-account-key-file=${saPub}`,
      `--service-account-signing-key-file=${saKey}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--token-auth-file=${tokens}`,
      '--authorization-mode=RBAC',
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      // Without this it logs every 10 s that 127.0.0.1 may not be an endpoint address.
      '--endpoint-reconciler-type=none',
      '--kubelet-preferred-address-types=InternalIP',
      '--profiling=false',
    ]);
    await waitUntil('kube-apiserver /readyz', 'kube-apiserver', async () => (await probe(`${server}/readyz`, { ca, token })).code === 200, 90_000);

    const common = [`--kubeconfig=${kubeconfigPath}`, `--authentication-kubeconfig=${kubeconfigPath}`, `--authorization-kubeconfig=${kubeconfigPath}`, '--bind-address=127.0.0.1', '--leader-elect=false', '--profiling=false'];
    start('kube-controller-manager', [
      ...common,
      `--secure-port=${kcmPort}`,
      `--service-account-private-key-file=${saKey}`,
      `--root-ca-file=${cert}`,
      '--use-service-account-credentials=false',
      '--controllers=*',
      // Re-sync claims and volumes every 5 s rather than 15 s, so one missed watch event costs
      // seconds, not a test's timeout.
      '--pvclaimbinder-sync-period=5s',
    ]);
    start('kube-scheduler', [...common, `--secure-port=${schedPort}`]);
    const stagesFile = join(dir, 'kwok.yaml');
    const podLog = join(dir, 'pod.log');
    const writePodLog = (lines: { stream?: 'stdout' | 'stderr'; text: string }[]) => {
      if (!opts.podLogs) throw new Error('writePodLog: start the control plane with podLogs: true');
      // The CRI log format kubelets read (and kwok with them): time, stream, F(ull line), text.
      writeFileSync(podLog, lines.map((l) => `${new Date().toISOString()} ${l.stream ?? 'stdout'} F ${l.text}\n`).join(''));
    };
    // One ClusterLogs rule (no selector: every pod; no containers: every container) reading podLog.
    const logsRule = `---\napiVersion: kwok.x-k8s.io/v1alpha1\nkind: ClusterLogs\nmetadata:\n  name: every-container\nspec:\n  logs:\n  - logsFile: ${JSON.stringify(podLog)}\n`;
    writeFileSync(stagesFile, kwokStages(opts.extraStages) + (opts.podLogs ? logsRule : ''));
    if (opts.podLogs) writePodLog([]);
    const kubelet = opts.podLogs ? [`--server-address=127.0.0.1:${kubeletPort}`, `--node-port=${kubeletPort}`, `--tls-cert-file=${cert}`, `--tls-private-key-file=${key}`] : [];
    start('kwok', [`--kubeconfig=${kubeconfigPath}`, `--config=${stagesFile}`, '--manage-all-nodes=false', '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake', `--cidr=${POD_CIDR}`, '--node-ip=127.0.0.1', ...kubelet]);
    await Promise.all([
      waitUntil('kube-controller-manager /healthz', 'kube-controller-manager', async () => (await probe(`https://127.0.0.1:${kcmPort}/healthz`, { insecure: true })).code === 200),
      waitUntil('kube-scheduler /healthz', 'kube-scheduler', async () => (await probe(`https://127.0.0.1:${schedPort}/healthz`, { insecure: true })).code === 200),
    ]);

    const kubeConfig = () => {
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfigPath);
      return kc;
    };
    const clients = (ns = namespace) => new KubeClients({ kubeconfigPath, namespace: ns });
    const admin = clients();
    let nextIp = 1;

    const createNamespace = async (name: string) => {
      await admin.core.createNamespace({ body: { metadata: { name } } }).catch((e: { code?: number }) => {
        if (e?.code !== 409) throw e;
      });
      // The ServiceAccount admission plugin refuses pods until the controller made "default".
      await waitUntil(`ServiceAccount ${name}/default`, 'kube-controller-manager', () =>
        admin.core.readNamespacedServiceAccount({ name: 'default', namespace: name }).then(
          () => true,
          () => false,
        ),
      );
    };

    const addNodes = async (nodes: NodeSpec[]) => {
      for (const n of nodes) {
        const capacity: Record<string, string> = { cpu: n.cpu ?? '8', memory: n.memory ?? '32Gi', pods: String(n.pods ?? 110) };
        if (n.gpus) capacity['nvidia.com/gpu'] = String(n.gpus);
        // The apiserver dials a node's InternalIP for logs: kwok's server listens on 127.0.0.1 only.
        const ip = opts.podLogs ? '127.0.0.1' : `127.0.0.${1 + (nextIp++ % 250)}`;
        await admin.core.createNode({
          body: {
            apiVersion: 'v1',
            kind: 'Node',
            metadata: {
              name: n.name,
              labels: { 'kubernetes.io/hostname': n.name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok', ...n.labels },
              annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
            },
            spec: { taints: n.taints?.length ? n.taints : undefined },
            status: {
              capacity,
              allocatable: capacity,
              addresses: [
                { type: 'InternalIP', address: ip },
                { type: 'Hostname', address: n.name },
              ],
            },
          },
        });
      }
      const ready: V1Node[] = [];
      for (const n of nodes) {
        await waitUntil(`node ${n.name} Ready`, 'kwok', async () => {
          const node = await admin.core.readNode({ name: n.name });
          const ok = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
          if (ok) ready.push(node);
          return !!ok;
        });
      }
      return ready;
    };

    const createClaim = async (name: string, ns = namespace) => {
      const storage = '10Gi';
      const accessModes = ['ReadOnlyMany', 'ReadWriteMany'];
      // The pair is created already bound both ways (the claim's volumeName and bind-completed
      // annotation, the volume's claimRef with the claim's uid), so the PersistentVolume controller
      // only has to write the two phases. Left to bind a pre-bound-by-name pair itself, it once took
      // longer than 30 s on a loaded CI machine (a missed event waits for its resync).
      const claim = await admin.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } }, spec: { accessModes: ['ReadOnlyMany'], storageClassName: '', volumeName: `${ns}-${name}`, resources: { requests: { storage } } } } });
      await admin.core.createPersistentVolume({ body: { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: `${ns}-${name}` }, spec: { capacity: { storage }, accessModes, storageClassName: '', persistentVolumeReclaimPolicy: 'Retain', hostPath: { path: `/srv/${ns}/${name}` }, claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: ns, name, uid: claim.metadata?.uid } } } });
      // The scheduler admits pods on a claim only once the controller has marked it Bound.
      await waitUntil(`claim ${ns}/${name} Bound`, 'kube-controller-manager', async () => (await admin.core.readNamespacedPersistentVolumeClaim({ name, namespace: ns })).status?.phase === 'Bound', 120_000);
    };

    await createNamespace(namespace);
    if (opts.nodes?.length) await addNodes(opts.nodes);
    return { kubeconfigPath, server, token, namespace, kubeConfig, clients, createNamespace, addNodes, createClaim, writePodLog, log, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * A control plane with `count` GPU nodes (gpu-node-1…N, `gpusPerNode` nvidia.com/gpu each, labelled
 * nvidia.com/gpu.product and tainted nvidia.com/gpu=present:NoSchedule as GPU pools usually are).
 * Returns the kubeconfig path for `new KubeClients({ kubeconfigPath })` or a worker's KUBECONFIG.
 */
export function startGpuControlPlane(count: number, opts: { gpusPerNode?: number; product?: string; taint?: boolean } & Omit<ControlPlaneOptions, 'nodes'> = {}): Promise<ControlPlane> {
  const nodes: NodeSpec[] = Array.from({ length: count }, (_, i) => ({
    name: `gpu-node-${i + 1}`,
    gpus: opts.gpusPerNode ?? 8,
    labels: { 'nvidia.com/gpu.product': opts.product ?? 'NVIDIA-A100-SXM4-80GB', 'nvidia.com/gpu.present': 'true' },
    taints: opts.taint === false ? [] : [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }],
  }));
  return startControlPlane({ ...opts, nodes });
}
