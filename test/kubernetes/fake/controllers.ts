// Simulated controllers for the fake API server: the Job controller, the Deployment and ReplicaSet
// controllers (rolling update with revisions, progress deadline), a scheduler over the cluster's Node
// objects (nodeSelector, required node affinity, taints/tolerations, cordon, per-node GPU capacity;
// the least-loaded fitting node wins) + a kubelet (exit codes, logs, HTTP startup/readiness probes
// against the pod's fake vLLM), and a service load balancer (a TCP proxy to the ready pods).
//
// Level-triggered like the real ones: every store change (and a short tick, for timers) runs a full
// reconcile pass, and every write is a no-op unless something changed.
//
// Pod behaviour comes from pod annotations:
//   fake.tandem.dev/exit-codes  "1,0": the exit code of the 1st, 2nd… pod of a Job ("oom" = OOMKilled)
//   fake.tandem.dev/script      counts attempts across Jobs sharing this value instead of per Job
//   fake.tandem.dev/run-ms      how long a Job pod runs (default 150)
//   fake.tandem.dev/log         what the container prints (default: the command line)
//   fake.tandem.dev/vllm        ok | dead | wrong-model | bad-completion (serving pods)
//   fake.tandem.dev/boot-ms     how long the vLLM server takes to listen (default 100)
// Time in specs (probe periods, progressDeadlineSeconds, activeDeadlineSeconds) is scaled by
// `secondMs`, the length of one simulated second.
import { createHash, randomBytes } from 'node:crypto';
import { createServer as createTcpServer, connect, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FakeApiServer } from './apiserver.js';
import { matchesLabels } from './apiserver.js';
import { canonical, type KObject } from './store.js';
import { startFakeVllm, type FakeVllm, type VllmBehaviour } from './vllm.js';

export interface FakeNode {
  name: string;
  labels: Record<string, string>;
  taints: { key: string; value?: string; effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' }[];
  gpus: number;
}

interface Probe {
  httpGet?: { path: string; port: number | string };
  periodSeconds?: number;
  failureThreshold?: number;
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  startupProbe?: Probe;
  readinessProbe?: Probe;
}
interface PodSpec {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: { key?: string; operator?: string; value?: string; effect?: string }[];
  affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: { matchExpressions?: { key: string; operator: string; values?: string[] }[] }[] } } };
  containers: Container[];
}
type Cond = { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string; lastUpdateTime?: string; lastProbeTime?: string };

const ANN = 'fake.tandem.dev/';
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const rand5 = () => randomBytes(4).toString('hex').replace(/[^a-z0-9]/g, '').slice(0, 5);
const spec = <T>(o: KObject) => o.spec as unknown as T;
const status = <T>(o: KObject) => (o.status ?? {}) as unknown as T;
const owned = (o: KObject, owner: KObject) => o.metadata.ownerReferences?.some((r) => r.uid === owner.metadata.uid && r.controller) ?? false;
const condTrue = (o: KObject, type: string) => status<{ conditions?: Cond[] }>(o).conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
const podReady = (p: KObject) => condTrue(p, 'Ready');
const podDone = (p: KObject) => ['Succeeded', 'Failed'].includes(status<{ phase?: string }>(p).phase ?? '');

/** Keeps lastTransitionTime when a condition's status did not change, as controllers do. */
function mergeConditions(old: Cond[] | undefined, next: Cond[]): Cond[] {
  return next.map((c) => {
    const prev = old?.find((o) => o.type === c.type);
    const same = prev && prev.status === c.status && prev.reason === c.reason;
    return { ...c, lastTransitionTime: same ? prev.lastTransitionTime : now(), ...(c.lastUpdateTime !== undefined || prev?.lastUpdateTime ? { lastUpdateTime: same ? prev.lastUpdateTime : now() } : {}) };
  });
}

interface PodRuntime {
  timers: NodeJS.Timeout[];
  vllm?: FakeVllm;
  started: boolean;
  ready: boolean;
  failures: number;
}

export interface ControllerOptions {
  secondMs: number;
}

/** A Node object as a kubelet registers it (capacity: 4 CPUs, `gpus` GPUs). */
export function nodeObject(n: FakeNode): KObject {
  const capacity = { cpu: '4', memory: '16Gi', pods: '110', 'nvidia.com/gpu': String(n.gpus) };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: n.name, labels: { 'kubernetes.io/hostname': n.name, 'kubernetes.io/os': 'linux', ...n.labels } },
    spec: n.taints.length ? { taints: structuredClone(n.taints) } : {},
    status: { capacity, allocatable: capacity, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }] },
  };
}

export class FakeControllers {
  private readonly runtimes = new Map<string, PodRuntime>();
  private readonly attempts = new Map<string, number>();
  private readonly jobStarts = new Map<string, number>();
  private readonly progress = new Map<string, { key: string; at: number }>();
  private readonly balancers = new Map<string, { server: TcpServer; port: number }>();
  private readonly unsubscribe: () => void;
  private readonly tick: NodeJS.Timeout;
  private pending = false;
  private stopped = false;

  constructor(
    private readonly api: FakeApiServer,
    private readonly opts: ControllerOptions,
  ) {
    this.unsubscribe = api.store.subscribe((e) => {
      if (e.type === 'DELETED' && e.resource === 'pods') this.stopPod(e.object.metadata.uid!);
      if (e.type === 'DELETED' && e.resource === 'services') this.closeBalancer(`${e.object.metadata.namespace}/${e.object.metadata.name}`);
      this.schedule();
    });
    this.tick = setInterval(() => this.schedule(), 25);
  }

  private get store() {
    return this.api.store;
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    clearInterval(this.tick);
    for (const uid of [...this.runtimes.keys()]) this.stopPod(uid);
    for (const key of [...this.balancers.keys()]) this.closeBalancer(key);
  }

  private schedule(): void {
    if (this.pending || this.stopped) return;
    this.pending = true;
    setImmediate(() => {
      this.pending = false;
      if (this.stopped) return;
      try {
        this.reconcileAll();
      } catch (e) {
        console.error('fake controllers:', e);
      }
    });
  }

  private reconcileAll(): void {
    for (const d of this.store.list('deployments', undefined)) this.reconcileDeployment(d);
    for (const rs of this.store.list('replicasets', undefined)) this.reconcileReplicaSet(rs);
    for (const j of this.store.list('jobs', undefined)) this.reconcileJob(j);
    for (const p of this.store.list('pods', undefined)) this.kubelet(p);
    for (const s of this.store.list('services', undefined)) this.reconcileService(s);
  }

  private writeStatus(resource: string, o: KObject, next: object): void {
    if (canonical(o.status ?? {}) === canonical(next)) return;
    this.store.update(resource, o.metadata.namespace!, { ...o, status: next as KObject['status'] }, { subresource: 'status' });
  }

  private createPod(owner: KObject, ownerApiVersion: string, template: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: object }, extraLabels: Record<string, string>, namePrefix: string): void {
    this.store.create('pods', owner.metadata.namespace!, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${namePrefix}-${rand5()}`,
        labels: { ...template.metadata?.labels, ...extraLabels },
        annotations: template.metadata?.annotations,
        ownerReferences: [{ apiVersion: ownerApiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true }],
      },
      spec: structuredClone(template.spec) as KObject['spec'],
      status: { phase: 'Pending' },
    });
  }

  // ---- batch/v1 Job controller -------------------------------------------------------------
  private reconcileJob(job: KObject): void {
    const s = spec<{ parallelism?: number; completions?: number; backoffLimit?: number; activeDeadlineSeconds?: number; suspend?: boolean; template: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: object } }>(job);
    const st = status<{ startTime?: string; conditions?: Cond[]; completionTime?: string }>(job);
    const ns = job.metadata.namespace!;
    const pods = this.store.list('pods', ns, (p) => owned(p, job));
    const active = pods.filter((p) => !podDone(p));
    const succeeded = pods.filter((p) => status<{ phase?: string }>(p).phase === 'Succeeded').length;
    const failed = pods.filter((p) => status<{ phase?: string }>(p).phase === 'Failed').length;
    const finished = condTrue(job, 'Complete') || condTrue(job, 'Failed');
    const counts = { active: active.length, ready: active.filter(podReady).length, succeeded, failed, terminating: 0, uncountedTerminatedPods: {} };
    if (finished) {
      for (const p of active) this.store.delete('pods', ns, p.metadata.name);
      return this.writeStatus('jobs', job, { ...st, ...counts, active: 0, ready: 0 });
    }
    if (s.suspend) {
      for (const p of active) this.store.delete('pods', ns, p.metadata.name);
      return this.writeStatus('jobs', job, { ...st, ...counts, conditions: mergeConditions(st.conditions, [{ type: 'Suspended', status: 'True', reason: 'JobSuspended', message: 'Job suspended' }]) });
    }
    const startTime = st.startTime ?? now();
    // status.startTime has whole-second precision; deadlines use the exact start (time is scaled).
    if (!this.jobStarts.has(job.metadata.uid!)) this.jobStarts.set(job.metadata.uid!, Date.now());
    const completions = s.completions ?? 1;
    let conditions: Cond[] | undefined;
    if (s.activeDeadlineSeconds !== undefined && Date.now() - this.jobStarts.get(job.metadata.uid!)! > s.activeDeadlineSeconds * this.opts.secondMs) {
      conditions = [{ type: 'FailureTarget', status: 'True', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }, { type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }];
    } else if (failed > (s.backoffLimit ?? 6)) {
      conditions = [{ type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }, { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }];
    } else if (succeeded >= completions) {
      conditions = [{ type: 'SuccessCriteriaMet', status: 'True', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' }, { type: 'Complete', status: 'True', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' }];
    }
    if (conditions) {
      for (const p of active) this.store.delete('pods', ns, p.metadata.name);
      const done = conditions.some((c) => c.type === 'Complete');
      return this.writeStatus('jobs', job, { ...counts, active: 0, ready: 0, startTime, ...(done ? { completionTime: now() } : {}), conditions: mergeConditions(st.conditions, conditions) });
    }
    const want = Math.min(s.parallelism ?? 1, completions - succeeded) - active.length;
    for (let i = 0; i < want; i++) {
      const name = job.metadata.name;
      this.createPod(job, 'batch/v1', s.template, { 'job-name': name, 'batch.kubernetes.io/job-name': name, 'controller-uid': job.metadata.uid!, 'batch.kubernetes.io/controller-uid': job.metadata.uid! }, name);
    }
    this.writeStatus('jobs', job, { ...st, ...counts, active: active.length + Math.max(0, want), startTime });
  }

  // ---- apps/v1 Deployment + ReplicaSet controllers -----------------------------------------
  private reconcileDeployment(d: KObject): void {
    const ns = d.metadata.namespace!;
    const s = spec<{ replicas?: number; selector: { matchLabels: Record<string, string> }; template: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: object }; progressDeadlineSeconds?: number; strategy?: { rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string } } }>(d);
    const R = s.replicas ?? 1;
    const hash = createHash('sha256').update(canonical(s.template)).digest('hex').slice(0, 10);
    const rsets = this.store.list('replicasets', ns, (rs) => owned(rs, d));
    const rev = (rs: KObject) => Number(rs.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? 0);
    const maxRev = Math.max(0, ...rsets.map(rev));
    let newRs = rsets.find((rs) => rs.metadata.labels?.['pod-template-hash'] === hash);
    if (!newRs) {
      const labels = { ...s.template.metadata?.labels, 'pod-template-hash': hash };
      newRs = this.store.create('replicasets', ns, {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: `${d.metadata.name}-${hash}`, labels, annotations: { 'deployment.kubernetes.io/revision': String(maxRev + 1), 'deployment.kubernetes.io/desired-replicas': String(R) }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name, uid: d.metadata.uid!, controller: true, blockOwnerDeletion: true }] },
        spec: { replicas: 0, selector: { matchLabels: { ...s.selector.matchLabels, 'pod-template-hash': hash } }, template: { metadata: { ...s.template.metadata, labels }, spec: s.template.spec } },
      });
    } else if (rev(newRs) < maxRev) {
      // Rolling back to an older template re-uses its ReplicaSet under a new revision number.
      newRs = this.store.update('replicasets', ns, { ...newRs, metadata: { ...newRs.metadata, annotations: { ...newRs.metadata.annotations, 'deployment.kubernetes.io/revision': String(maxRev + 1) } } });
    }
    const revision = newRs.metadata.annotations!['deployment.kubernetes.io/revision']!;
    if (d.metadata.annotations?.['deployment.kubernetes.io/revision'] !== revision) {
      d = this.store.update('deployments', ns, { ...d, metadata: { ...d.metadata, annotations: { ...d.metadata.annotations, 'deployment.kubernetes.io/revision': revision } } });
    }
    const old = rsets.filter((rs) => rs.metadata.uid !== newRs!.metadata.uid);
    const pct = (v: number | string | undefined, dflt: number, up: boolean) => (typeof v === 'string' && v.endsWith('%') ? (up ? Math.ceil : Math.floor)((R * Number(v.slice(0, -1))) / 100) : Number(v ?? dflt));
    const surge = pct(s.strategy?.rollingUpdate?.maxSurge, 1, true);
    const maxUnavailable = pct(s.strategy?.rollingUpdate?.maxUnavailable, 0, false);
    const sReplicas = (rs: KObject) => spec<{ replicas?: number }>(rs).replicas ?? 0;
    const avail = (rs: KObject) => status<{ availableReplicas?: number }>(rs).availableReplicas ?? 0;
    const scale = (rs: KObject, n: number) => {
      if (sReplicas(rs) !== n) this.store.update('replicasets', ns, { ...rs, metadata: { ...rs.metadata, resourceVersion: undefined }, spec: { ...rs.spec, replicas: n } });
    };
    // Scale up the new ReplicaSet within maxSurge.
    const oldTotal = old.reduce((n, rs) => n + sReplicas(rs), 0);
    const newWant = Math.min(R, Math.max(sReplicas(newRs), R + surge - oldTotal));
    scale(newRs, newWant);
    // Scale down old ones: unavailable pods freely, available ones only above R - maxUnavailable.
    let budget = avail(newRs) + old.reduce((n, rs) => n + avail(rs), 0) - (R - maxUnavailable);
    for (const rs of old) {
      let n = sReplicas(rs);
      n -= Math.max(0, n - avail(rs)); // unhealthy replicas cost no availability
      const cut = Math.min(n, Math.max(0, budget));
      budget -= cut;
      scale(rs, n - cut);
    }
    // Status, read back after the scaling above.
    const all = this.store.list('replicasets', ns, (rs) => owned(rs, d));
    const nrs = all.find((rs) => rs.metadata.uid === newRs!.metadata.uid)!;
    const sum = (f: (rs: KObject) => number) => all.reduce((n, rs) => n + f(rs), 0);
    const replicas = sum((rs) => status<{ replicas?: number }>(rs).replicas ?? 0);
    const updated = status<{ replicas?: number }>(nrs).replicas ?? 0;
    const available = sum(avail);
    const ready = sum((rs) => status<{ readyReplicas?: number }>(rs).readyReplicas ?? 0);
    const complete = updated === R && replicas === updated && avail(nrs) >= R;
    const key = `${nrs.metadata.name}:${updated}:${avail(nrs)}:${replicas}`;
    const p = this.progress.get(d.metadata.uid!);
    if (!p || p.key !== key) this.progress.set(d.metadata.uid!, { key, at: Date.now() });
    const since = this.progress.get(d.metadata.uid!)!.at;
    const prev = status<{ conditions?: Cond[] }>(d).conditions;
    const prevProgressing = prev?.find((c) => c.type === 'Progressing');
    const stuck = prevProgressing?.reason === 'ProgressDeadlineExceeded' && p?.key === key;
    let progressing: Cond;
    if (complete) progressing = { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: `ReplicaSet "${nrs.metadata.name}" has successfully progressed.`, lastUpdateTime: '' };
    else if (stuck || Date.now() - since > (s.progressDeadlineSeconds ?? 600) * this.opts.secondMs) progressing = { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: `ReplicaSet "${nrs.metadata.name}" has timed out progressing.`, lastUpdateTime: '' };
    else progressing = { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: `ReplicaSet "${nrs.metadata.name}" is progressing.`, lastUpdateTime: '' };
    const availableCond: Cond = available >= R - maxUnavailable ? { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.', lastUpdateTime: '' } : { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.', lastUpdateTime: '' };
    this.writeStatus('deployments', d, {
      observedGeneration: d.metadata.generation,
      replicas,
      updatedReplicas: updated,
      readyReplicas: ready,
      availableReplicas: available,
      unavailableReplicas: Math.max(0, replicas - available),
      conditions: mergeConditions(prev, [availableCond, progressing]),
    });
  }

  private reconcileReplicaSet(rs: KObject): void {
    const ns = rs.metadata.namespace!;
    const s = spec<{ replicas?: number; template: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: object } }>(rs);
    const pods = this.store.list('pods', ns, (p) => owned(p, rs));
    const want = s.replicas ?? 1;
    if (pods.length < want) for (let i = pods.length; i < want; i++) this.createPod(rs, 'apps/v1', s.template, {}, rs.metadata.name);
    if (pods.length > want) {
      // Delete not-ready pods first, then the newest (what the ReplicaSet controller prefers).
      const victims = [...pods].sort((a, b) => Number(podReady(a)) - Number(podReady(b)) || (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '')).slice(0, pods.length - want);
      for (const p of victims) this.store.delete('pods', ns, p.metadata.name);
    }
    const live = this.store.list('pods', ns, (p) => owned(p, rs));
    const readyCount = live.filter(podReady).length;
    this.writeStatus('replicasets', rs, { replicas: live.length, fullyLabeledReplicas: live.length, readyReplicas: readyCount, availableReplicas: readyCount, observedGeneration: rs.metadata.generation });
  }

  // ---- scheduler + kubelet -------------------------------------------------------------------
  /** The cluster's Node objects, as the scheduler sees them: labels, taints, cordon, GPU capacity. */
  private nodes(): { name: string; labels: Record<string, string>; taints: FakeNode['taints']; unschedulable: boolean; gpus: number }[] {
    return this.store.list('nodes', '').map((n) => {
      const ns = spec<{ taints?: FakeNode['taints']; unschedulable?: boolean }>(n);
      const cap = status<{ allocatable?: Record<string, string> }>(n).allocatable ?? {};
      return { name: n.metadata.name, labels: n.metadata.labels ?? {}, taints: ns.taints ?? [], unschedulable: ns.unschedulable ?? false, gpus: Number(cap['nvidia.com/gpu'] ?? 0) };
    });
  }

  /** Why `pod` cannot go to `node` (undefined: it fits), in the scheduler's words. */
  private misfit(pod: KObject, node: ReturnType<FakeControllers['nodes']>[number]): string | undefined {
    const s = spec<PodSpec>(pod);
    if (node.unschedulable) return "node(s) were unschedulable";
    for (const [k, v] of Object.entries(s.nodeSelector ?? {})) if (node.labels[k] !== v) return `node(s) didn't match Pod's node affinity/selector (${k}=${v})`;
    const terms = s.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
    if (terms?.length) {
      // Terms are ORed, the expressions of one term ANDed (DoesNotExist/Exists/In/NotIn on labels).
      const ok = terms.some((t) =>
        (t.matchExpressions ?? []).every((e) => matchesLabels(node.labels, [{ key: e.key, op: ({ In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!exists' } as const)[e.operator as 'In'] ?? 'in', values: e.values ?? [] }])),
      );
      if (!ok) return "node(s) didn't match Pod's node affinity/selector";
    }
    for (const t of node.taints) {
      if (t.effect === 'PreferNoSchedule') continue;
      const ok = (s.tolerations ?? []).some((tol) => (tol.effect === undefined || tol.effect === t.effect) && (tol.operator === 'Exists' ? tol.key === undefined || tol.key === t.key : tol.key === t.key && (tol.value ?? '') === (t.value ?? '')));
      if (!ok) return `node(s) had untolerated taint {${t.key}: ${t.value ?? ''}}`;
    }
    const gpus = (p: KObject) => spec<PodSpec>(p).containers.reduce((n, c) => n + Number(c.resources?.limits?.['nvidia.com/gpu'] ?? c.resources?.requests?.['nvidia.com/gpu'] ?? 0), 0);
    const used = this.store.list('pods', undefined, (p) => p.metadata.uid !== pod.metadata.uid && spec<PodSpec>(p).nodeName === node.name && !podDone(p)).reduce((n, p) => n + gpus(p), 0);
    if (gpus(pod) > node.gpus - used) return 'Insufficient nvidia.com/gpu';
    return undefined;
  }

  /** The node for a pending pod: among those that fit, the one running fewest pods (then by name). */
  private place(pod: KObject): { node?: string; why?: string } {
    const nodes = this.nodes();
    const why = new Map<string, number>();
    const fits: string[] = [];
    for (const n of nodes) {
      const w = this.misfit(pod, n);
      if (w) why.set(w, (why.get(w) ?? 0) + 1);
      else fits.push(n.name);
    }
    if (fits.length) {
      const load = (name: string) => this.store.list('pods', undefined, (p) => spec<PodSpec>(p).nodeName === name && !podDone(p)).length;
      return { node: fits.map((name) => ({ name, load: load(name) })).sort((a, b) => a.load - b.load || a.name.localeCompare(b.name, 'en', { numeric: true }))[0]!.name };
    }
    return { why: `0/${nodes.length} nodes are available: ${[...why].map(([w, c]) => `${c} ${w}`).join(', ')}.` };
  }

  private kubelet(pod: KObject): void {
    const ns = pod.metadata.namespace!;
    const s = spec<PodSpec>(pod);
    if (podDone(pod)) return;
    if (!s.nodeName) {
      const { node, why } = this.place(pod);
      if (!node) return this.writeStatus('pods', pod, { phase: 'Pending', conditions: mergeConditions(status<{ conditions?: Cond[] }>(pod).conditions, [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: why }]) });
      this.store.update('pods', ns, { ...pod, metadata: { ...pod.metadata, resourceVersion: undefined }, spec: { ...pod.spec, nodeName: node } });
      return;
    }
    if (this.runtimes.has(pod.metadata.uid!)) return;
    const rt: PodRuntime = { timers: [], started: false, ready: false, failures: 0 };
    this.runtimes.set(pod.metadata.uid!, rt);
    const serving = s.containers.some((c) => c.readinessProbe);
    if (serving) this.runServing(pod, rt);
    else this.runBatch(pod, rt);
  }

  /** Writes the pod's status from its runtime, re-reading the pod (it may be gone). */
  private podStatus(pod: KObject, build: (p: KObject) => object): void {
    const current = this.store.get('pods', pod.metadata.namespace!, pod.metadata.name);
    if (!current || current.metadata.uid !== pod.metadata.uid) return;
    this.writeStatus('pods', current, build(current));
  }

  private runBatch(pod: KObject, rt: PodRuntime): void {
    const a = pod.metadata.annotations ?? {};
    const c = spec<PodSpec>(pod).containers[0]!;
    const jobName = pod.metadata.labels?.['job-name'] ?? pod.metadata.name;
    // Attempts count per Job, or per fake.tandem.dev/script across Jobs (Tandem's own retries use new Jobs).
    const key = `${pod.metadata.namespace}/${a[`${ANN}script`] ?? jobName}`;
    const attempt = this.attempts.get(key) ?? 0;
    this.attempts.set(key, attempt + 1);
    const codes = (a[`${ANN}exit-codes`] ?? '0').split(',').map((x) => x.trim());
    const code = codes[Math.min(attempt, codes.length - 1)]!;
    const runMs = Number(a[`${ANN}run-ms`] ?? 150);
    const startedAt = now();
    const logKey = `${pod.metadata.namespace}/${pod.metadata.name}/${c.name}`;
    const base = { hostIP: '127.0.0.1', podIP: `127.0.1.${(attempt % 250) + 2}`, startTime: startedAt };
    this.podStatus(pod, () => ({ ...base, phase: 'Running', conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Initialized', status: 'True' }, { type: 'ContainersReady', status: 'True' }, { type: 'Ready', status: 'True' }], containerStatuses: [{ name: c.name, image: c.image, imageID: '', ready: true, started: true, restartCount: 0, state: { running: { startedAt } } }] }));
    const lines = a[`${ANN}log`] ?? `running ${[...(c.command ?? []), ...(c.args ?? [])].join(' ')}`;
    this.api.logs.set(logKey, `${lines}\n`);
    rt.timers.push(
      setTimeout(() => {
        const oom = code === 'oom';
        const exitCode = oom ? 137 : Number(code);
        const terminated = { exitCode, reason: oom ? 'OOMKilled' : exitCode === 0 ? 'Completed' : 'Error', startedAt, finishedAt: now() };
        if (exitCode !== 0) this.api.logs.set(logKey, `${lines}\nerror: exiting with code ${exitCode}\n`);
        this.podStatus(pod, () => ({ ...base, phase: exitCode === 0 ? 'Succeeded' : 'Failed', conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'False', reason: 'PodCompleted' }], containerStatuses: [{ name: c.name, image: c.image, imageID: '', ready: false, started: false, restartCount: 0, state: { terminated } }] }));
      }, runMs),
    );
  }

  private runServing(pod: KObject, rt: PodRuntime): void {
    const a = pod.metadata.annotations ?? {};
    const c = spec<PodSpec>(pod).containers[0]!;
    const behaviour = (a[`${ANN}vllm`] ?? 'ok') as VllmBehaviour;
    const bootMs = Number(a[`${ANN}boot-ms`] ?? 100);
    const startedAt = now();
    const write = () =>
      this.podStatus(pod, () => ({
        phase: 'Running',
        hostIP: '127.0.0.1',
        podIP: '127.0.2.2',
        startTime: startedAt,
        conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Initialized', status: 'True' }, { type: 'ContainersReady', status: rt.ready ? 'True' : 'False' }, { type: 'Ready', status: rt.ready ? 'True' : 'False' }],
        containerStatuses: [{ name: c.name, image: c.image, imageID: '', ready: rt.ready, started: rt.started, restartCount: 0, state: { running: { startedAt } } }],
      }));
    write();
    this.api.logs.set(`${pod.metadata.namespace}/${pod.metadata.name}/${c.name}`, `INFO vllm serve ${(c.args ?? []).join(' ')}\n`);
    rt.timers.push(
      setTimeout(() => {
        void startFakeVllm(c.args ?? [], behaviour, pod.metadata.name).then((v) => {
          if (!this.runtimes.has(pod.metadata.uid!)) return v.close(); // deleted while booting
          rt.vllm = v;
        });
      }, bootMs),
    );
    // Probes: the startup probe until it passes, then the readiness probe, each at its period.
    const probe = async () => {
      const p = rt.started ? c.readinessProbe : (c.startupProbe ?? c.readinessProbe);
      let ok = false;
      if (rt.vllm && p?.httpGet) {
        try {
          ok = (await fetch(`http://127.0.0.1:${rt.vllm.port}${p.httpGet.path}`, { signal: AbortSignal.timeout(1000) })).status < 400;
        } catch {
          ok = false;
        }
      }
      if (!this.runtimes.has(pod.metadata.uid!)) return;
      if (!rt.started) rt.started = ok;
      else {
        rt.failures = ok ? 0 : rt.failures + 1;
        const ready = ok || (rt.ready && rt.failures < (p?.failureThreshold ?? 3));
        if (ready !== rt.ready) rt.ready = ready;
      }
      if (rt.started && ok && !rt.ready) rt.ready = true;
      write();
      rt.timers.push(setTimeout(() => void probe(), (p?.periodSeconds ?? 10) * this.opts.secondMs));
    };
    rt.timers.push(setTimeout(() => void probe(), Math.min(bootMs, 50)));
  }

  private stopPod(uid: string): void {
    const rt = this.runtimes.get(uid);
    if (!rt) return;
    this.runtimes.delete(uid);
    for (const t of rt.timers) clearTimeout(t);
    rt.vllm?.close();
  }

  /** The fake vLLM port of a ready pod (what the Service's endpoints would list). */
  private podPort(pod: KObject): number | undefined {
    return this.runtimes.get(pod.metadata.uid!)?.vllm?.port;
  }

  // ---- Service load balancer -------------------------------------------------------------------
  private reconcileService(svc: KObject): void {
    const s = spec<{ type?: string; selector?: Record<string, string> }>(svc);
    if (s.type !== 'LoadBalancer') return;
    const key = `${svc.metadata.namespace}/${svc.metadata.name}`;
    let lb = this.balancers.get(key);
    if (!lb) {
      let next = 0;
      const server = createTcpServer((client) => {
        const current = this.store.get('services', svc.metadata.namespace!, svc.metadata.name);
        const sel = current ? spec<{ selector?: Record<string, string> }>(current).selector : undefined;
        const reqs = Object.entries(sel ?? {}).map(([k, v]) => ({ key: k, op: '=' as const, values: [v] }));
        const ports = this.store
          .list('pods', svc.metadata.namespace, (p) => matchesLabels(p.metadata.labels, reqs) && podReady(p))
          .map((p) => this.podPort(p))
          .filter((p): p is number => p !== undefined);
        // No ready endpoint: the connection is refused, as kube-proxy's reject rule does.
        if (!ports.length) return client.destroy();
        const upstream = connect(ports[next++ % ports.length]!, '127.0.0.1');
        client.pipe(upstream).pipe(client);
        const end = () => (client.destroy(), upstream.destroy());
        client.on('error', end);
        upstream.on('error', end);
        client.on('close', end);
        upstream.on('close', end);
      });
      server.listen(0, '127.0.0.1');
      lb = { server, port: 0 };
      this.balancers.set(key, lb);
      server.on('listening', () => {
        lb!.port = (server.address() as AddressInfo).port;
        this.schedule();
      });
      return;
    }
    if (!lb.port) return;
    this.writeStatus('services', svc, { loadBalancer: { ingress: [{ ip: '127.0.0.1', ipMode: 'VIP', ports: [{ port: lb.port, protocol: 'TCP' }] }] } });
  }

  private closeBalancer(key: string): void {
    const lb = this.balancers.get(key);
    if (!lb) return;
    this.balancers.delete(key);
    lb.server.close();
  }
}
