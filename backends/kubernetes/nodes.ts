// Staged migration on a Kubernetes site: node pools by label and taint, benchmark Jobs pinned to a pool,
// and observation of the Jobs a pool ran. A pool is a node set: the legacy pool is every (selected)
// node without Tandem's pool label; any other pool P is the nodes labelled `tandem.dev/pool=P` and
// tainted `tandem.dev/pool=P:NoSchedule` (so legacy workloads stay off them). A pool's state other than
// UP is a `tandem.dev/pool-state=<STATE>:NoSchedule` taint on its nodes (DRAIN: running pods finish,
// nothing new lands); oversubscription is the `tandem.dev/oversubscribe` annotation Tandem's placement
// reads. Nodes change only through GET + PUT with their resourceVersion (409 → re-read and retry), and
// only those Tandem-owned keys: every other label, annotation, taint and the cordon stay as they were.
import type { V1Job, V1Node, V1Pod, V1Taint } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import type { BenchmarkKind, BenchmarkResult, NodeRecord, PartitionState } from '../../contract/migration.js';
import { call, callOrMissing, isConflict, kubeError, KubeClients, type KubeConnectionOptions } from './client.js';

export const POOL_LABEL = 'tandem.dev/pool';
export const STATE_TAINT = 'tandem.dev/pool-state';
export const OVERSUBSCRIBE_ANNOTATION = 'tandem.dev/oversubscribe';
const TAINT_KEYS = [POOL_LABEL, STATE_TAINT];
const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

export interface KubeSiteOptions extends KubeConnectionOptions {
  /** The partition name the plan uses for the legacy pool (nodes without Tandem's label); default "batch". */
  legacyPool?: string;
  /** A label selector limiting which nodes take part at all (e.g. "!node-role.kubernetes.io/control-plane"). */
  nodeSelector?: string;
  /** Image of the benchmark Jobs (needs sh, awk, dd); default busybox:1.36. */
  benchmarkImage?: string;
}

type Managed = Omit<NodeRecord, 'name'>;

const sortNodes = (names: string[]) => [...names].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
const toMs = (d: Date | string | undefined) => (d === undefined ? undefined : new Date(d).getTime());

/** The Tandem-owned part of a node, exactly as it is. */
export function recordOf(node: V1Node): NodeRecord {
  const pick = (m: Record<string, string> | undefined, keys: string[]) => Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => keys.includes(k)));
  return {
    name: node.metadata!.name!,
    labels: pick(node.metadata?.labels, [POOL_LABEL]),
    annotations: pick(node.metadata?.annotations, [OVERSUBSCRIBE_ANNOTATION]),
    taints: (node.spec?.taints ?? []).filter((t) => TAINT_KEYS.includes(t.key)).map((t) => ({ key: t.key, ...(t.value !== undefined ? { value: t.value } : {}), effect: t.effect })),
  };
}

/** Replaces the Tandem-owned part of a node, keeping everything else; empty maps and lists are omitted (as the apiserver does). */
function withManaged(node: V1Node, m: Managed): V1Node {
  const labels = { ...Object.fromEntries(Object.entries(node.metadata?.labels ?? {}).filter(([k]) => k !== POOL_LABEL)), ...m.labels };
  const annotations = { ...Object.fromEntries(Object.entries(node.metadata?.annotations ?? {}).filter(([k]) => k !== OVERSUBSCRIBE_ANNOTATION)), ...m.annotations };
  const taints: V1Taint[] = [...(node.spec?.taints ?? []).filter((t) => !TAINT_KEYS.includes(t.key)), ...m.taints];
  const metadata = { ...node.metadata, labels: Object.keys(labels).length ? labels : undefined, annotations: Object.keys(annotations).length ? annotations : undefined };
  return { ...node, metadata, spec: { ...node.spec, taints: taints.length ? taints : undefined } };
}

const same = (a: Managed, b: Managed) => JSON.stringify(normal(a)) === JSON.stringify(normal(b));
const normal = (m: Managed) => ({
  labels: Object.entries(m.labels).sort(),
  annotations: Object.entries(m.annotations).sort(),
  taints: m.taints.map((t) => `${t.key}=${t.value ?? ''}:${t.effect}`).sort(),
});

export class KubeNodePools {
  readonly legacyPool: string;

  constructor(
    readonly clients: KubeClients,
    private readonly opts: KubeSiteOptions = {},
  ) {
    this.legacyPool = opts.legacyPool ?? 'batch';
  }

  async nodes(): Promise<V1Node[]> {
    const list = await call('list Nodes', () => this.clients.core.listNode({ labelSelector: this.opts.nodeSelector }));
    return list.items.filter((n) => n.metadata?.name);
  }

  poolOf(node: V1Node): string {
    return node.metadata?.labels?.[POOL_LABEL] ?? this.legacyPool;
  }

  /** What a member of pool `p` carries (the forward direction: Phase 1 and 3 moves). */
  desired(p: { name: string; state: string; overSubscribe?: string }): Managed {
    const legacy = p.name === this.legacyPool;
    const taints: Managed['taints'] = legacy ? [] : [{ key: POOL_LABEL, value: p.name, effect: 'NoSchedule' }];
    if (p.state !== 'UP') taints.push({ key: STATE_TAINT, value: p.state, effect: 'NoSchedule' });
    return {
      labels: legacy ? {} : { [POOL_LABEL]: p.name },
      annotations: p.overSubscribe && p.overSubscribe !== 'NO' ? { [OVERSUBSCRIBE_ANNOTATION]: p.overSubscribe } : {},
      taints,
    };
  }

  private static partitionOf(name: string, members: V1Node[]): PartitionState {
    const sorted = [...members].sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!, 'en', { numeric: true }));
    const first = sorted[0];
    return {
      name,
      nodes: sorted.map((n) => n.metadata!.name!),
      state: first?.spec?.taints?.find((t) => t.key === STATE_TAINT)?.value ?? 'UP',
      overSubscribe: first?.metadata?.annotations?.[OVERSUBSCRIBE_ANNOTATION] ?? 'NO',
      nodeRecords: sorted.map(recordOf),
    };
  }

  /** The legacy pool (always) and one partition per pool label value, each with its nodes' records. */
  async partitions(): Promise<PartitionState[]> {
    const nodes = await this.nodes();
    const pools = new Map<string, V1Node[]>([[this.legacyPool, []]]);
    for (const n of nodes) pools.set(this.poolOf(n), [...(pools.get(this.poolOf(n)) ?? []), n]);
    return [...pools].map(([name, members]) => KubeNodePools.partitionOf(name, members)).sort((a, b) => a.name.localeCompare(b.name));
  }

  async partition(name: string): Promise<PartitionState | undefined> {
    return (await this.partitions()).find((p) => p.name === name);
  }

  /** GET + PUT with the read resourceVersion; a conflict (someone else wrote the node) re-reads. */
  private async setManaged(name: string, m: Managed): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      const node = await callOrMissing(`read Node ${name}`, () => this.clients.core.readNode({ name }));
      if (!node) return false;
      if (same(recordOf(node), m)) return false;
      try {
        await this.clients.core.replaceNode({ name, body: withManaged(node, m) });
        return true;
      } catch (e) {
        const err = kubeError(e, `replace Node ${name}`);
        if (!isConflict(err) || attempt >= 10) throw err;
      }
    }
  }

  /**
   * Makes pool `p.name` consist of `p.nodes`. Members get the pool's label/taints (or, with `exact`, the
   * record `p.nodeRecords` holds for them: how undo restores nodes exactly); nodes that leave a Tandem
   * pool return to the legacy pool. The legacy pool cannot shed nodes except into another pool, so legacy
   * nodes missing from `p.nodes` stay (reported as `kept`). Nodes gone from the cluster are `missing`.
   */
  async setPartition(p: PartitionState, opts: { exact?: boolean } = {}): Promise<{ changed: string[]; kept: string[]; missing: string[] }> {
    if (!LABEL_VALUE.test(p.name)) throw new Error(`pool name "${p.name}" is not a valid Kubernetes label value`);
    const nodes = await this.nodes();
    const byName = new Map(nodes.map((n) => [n.metadata!.name!, n]));
    const legacyNow = KubeNodePools.partitionOf(this.legacyPool, nodes.filter((n) => this.poolOf(n) === this.legacyPool));
    const changed: string[] = [];
    const missing = p.nodes.filter((n) => !byName.has(n));
    const legacy = p.name === this.legacyPool;
    const kept = legacy ? nodes.filter((n) => this.poolOf(n) === this.legacyPool && !p.nodes.includes(n.metadata!.name!)).map((n) => n.metadata!.name!) : [];
    if (!legacy) {
      for (const n of nodes.filter((n) => this.poolOf(n) === p.name && !p.nodes.includes(n.metadata!.name!))) {
        if (await this.setManaged(n.metadata!.name!, this.desired(legacyNow))) changed.push(n.metadata!.name!);
      }
    }
    // A forward move leaves nodes already in the pool alone unless the pool's state or oversubscription changes.
    const current = KubeNodePools.partitionOf(p.name, nodes.filter((n) => this.poolOf(n) === p.name));
    const poolUnchanged = current.state === p.state && current.overSubscribe === (p.overSubscribe ?? 'NO');
    for (const name of sortNodes(p.nodes.filter((n) => byName.has(n)))) {
      if (!opts.exact && poolUnchanged && this.poolOf(byName.get(name)!) === p.name) continue;
      const rec = opts.exact ? p.nodeRecords?.find((r) => r.name === name) : undefined;
      if (await this.setManaged(name, rec ?? this.desired(p))) changed.push(name);
    }
    return { changed, kept, missing };
  }

  /** Returns every node of a Tandem pool to the legacy pool (the legacy pool itself cannot be deleted). */
  async deletePartition(name: string): Promise<string[]> {
    if (name === this.legacyPool) return [];
    const nodes = await this.nodes();
    const legacyNow = KubeNodePools.partitionOf(this.legacyPool, nodes.filter((n) => this.poolOf(n) === this.legacyPool));
    const changed: string[] = [];
    for (const n of nodes.filter((n) => this.poolOf(n) === name)) if (await this.setManaged(n.metadata!.name!, this.desired(legacyNow))) changed.push(n.metadata!.name!);
    return changed;
  }

  // ---- benchmark Jobs and observation -----------------------------------------------------------

  /** Where a pod of pool `pool` may run: Tandem's pool by selector + toleration, legacy by not being labelled. */
  placement(pool: string, tandemPools: string[]): object {
    if (pool === this.legacyPool) {
      return { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: POOL_LABEL, operator: 'NotIn', values: tandemPools }] }] } } } };
    }
    return { nodeSelector: { [POOL_LABEL]: pool }, tolerations: [{ key: POOL_LABEL, operator: 'Equal', value: pool, effect: 'NoSchedule' }] };
  }

  static benchmarkJobName(runKey: string, pool: 'tandem' | 'legacy', kind: BenchmarkKind): string {
    return `tandem-mig-${createHash('sha256').update(runKey).digest('hex').slice(0, 12)}-${pool}-${kind}`;
  }

  /** Creates the Job unless it exists (deterministic names: a retried activity submits nothing twice). */
  async submitBenchmark(input: { runKey: string; pool: 'tandem' | 'legacy'; kind: BenchmarkKind; partition: string; tandemPartition: string }): Promise<string> {
    const name = KubeNodePools.benchmarkJobName(input.runKey, input.pool, input.kind);
    const namespace = this.clients.namespace;
    const scripts: Record<BenchmarkKind, string> = {
      mpi: 'echo "rank ${JOB_COMPLETION_INDEX:-0} of 2 on $(hostname)"',
      cpu: "awk 'BEGIN { s = 0; for (i = 0; i < 20000000; i++) s += i % 7; print s }'",
      io: 'f=/tmp/io.bin; dd if=/dev/zero of="$f" bs=1M count=64 conv=fsync 2>/dev/null && dd if="$f" of=/dev/null bs=1M 2>/dev/null; rm -f "$f"',
    };
    const parallel = input.kind === 'mpi' ? { completions: 2, parallelism: 2, completionMode: 'Indexed' } : {};
    const body: V1Job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name, labels: { 'app.kubernetes.io/managed-by': 'tandem', 'tandem.dev/benchmark': input.kind, 'tandem.dev/path': input.pool } },
      spec: {
        ...parallel,
        backoffLimit: 0,
        template: {
          metadata: { labels: { 'tandem.dev/benchmark': input.kind, 'tandem.dev/path': input.pool } },
          spec: {
            restartPolicy: 'Never',
            ...this.placement(input.partition, [input.tandemPartition]),
            containers: [{ name: 'bench', image: this.opts.benchmarkImage ?? 'busybox:1.36', command: ['sh', '-c', scripts[input.kind]], resources: { requests: { cpu: '1' } } }],
          },
        },
      },
    };
    try {
      await this.clients.batch.createNamespacedJob({ namespace, body });
    } catch (e) {
      const err = kubeError(e, `create Job ${namespace}/${name}`);
      if (err.code !== 409) throw err;
    }
    return name;
  }

  private async podsOf(job: string): Promise<V1Pod[]> {
    return (await call(`list pods of Job ${job}`, () => this.clients.core.listNamespacedPod({ namespace: this.clients.namespace, labelSelector: `job-name=${job}` }))).items;
  }

  /** A benchmark Job's state (COMPLETED, FAILED, RUNNING, PENDING) and its wait and run seconds. */
  async benchmarkResult(name: string): Promise<Omit<BenchmarkResult, 'kind' | 'pool'>> {
    const job = await callOrMissing(`read Job ${name}`, () => this.clients.batch.readNamespacedJob({ name, namespace: this.clients.namespace }));
    if (!job) return { jobId: name, state: 'UNKNOWN', waitSeconds: 0, runSeconds: 0 };
    const cond = (type: string) => job.status?.conditions?.find((c) => c.type === type && c.status === 'True');
    const pods = await this.podsOf(name);
    const starts = pods.map((p) => toMs(p.status?.startTime)).filter((t): t is number => t !== undefined);
    const created = toMs(job.metadata?.creationTimestamp) ?? Date.now();
    const firstStart = starts.length ? Math.min(...starts) : undefined;
    const end = toMs(job.status?.completionTime) ?? toMs(cond('Failed')?.lastTransitionTime);
    const state = cond('Complete') ? 'COMPLETED' : cond('Failed') ? 'FAILED' : firstStart !== undefined ? 'RUNNING' : 'PENDING';
    return {
      jobId: name,
      state,
      waitSeconds: firstStart !== undefined ? Math.max(0, (firstStart - created) / 1000) : 0,
      runSeconds: firstStart !== undefined && end !== undefined ? Math.max(0, (end - firstStart) / 1000) : 0,
    };
  }

  async deleteJob(name: string): Promise<void> {
    await callOrMissing(`delete Job ${name}`, () => this.clients.batch.deleteNamespacedJob({ name, namespace: this.clients.namespace, propagationPolicy: 'Background' }));
  }

  /**
   * The Jobs pool `pool` ran since `sinceMs` (created then or later): those whose pods target the pool
   * (its node selector) or ran on its nodes. Error rate over finished Jobs; wait = first pod start −
   * Job creation over started Jobs; utilisation = CPU requested by running pods ÷ allocatable CPU.
   */
  async observe(pool: string, sinceMs: number): Promise<{ jobs: number; failed: number; errorRate: number; avgWaitSeconds: number; utilisation: number }> {
    const namespace = this.clients.namespace;
    const nodes = (await this.nodes()).filter((n) => this.poolOf(n) === pool);
    const names = new Set(nodes.map((n) => n.metadata!.name!));
    const jobs = (await call(`list Jobs in ${namespace}`, () => this.clients.batch.listNamespacedJob({ namespace }))).items;
    const pods = (await call(`list pods in ${namespace}`, () => this.clients.core.listNamespacedPod({ namespace }))).items;
    const podsOf = (j: V1Job) => pods.filter((p) => p.metadata?.ownerReferences?.some((r) => r.uid === j.metadata?.uid));
    const targets = (j: V1Job) => {
      const sel = j.spec?.template?.spec?.nodeSelector?.[POOL_LABEL];
      return pool === this.legacyPool ? sel === undefined || sel === pool : sel === pool;
    };
    const ours = jobs.filter((j) => (toMs(j.metadata?.creationTimestamp) ?? 0) >= sinceMs - 1000 && (targets(j) || podsOf(j).some((p) => names.has(p.spec?.nodeName ?? ''))));
    const done = (j: V1Job, type: string) => j.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
    const finished = ours.filter((j) => done(j, 'Complete') || done(j, 'Failed'));
    const failed = ours.filter((j) => done(j, 'Failed')).length;
    const waits = ours
      .map((j) => {
        const starts = podsOf(j).map((p) => toMs(p.status?.startTime)).filter((t): t is number => t !== undefined);
        return starts.length ? Math.max(0, (Math.min(...starts) - (toMs(j.metadata?.creationTimestamp) ?? 0)) / 1000) : undefined;
      })
      .filter((w): w is number => w !== undefined);
    const cpu = (q: string | undefined) => (q === undefined ? 0 : q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q) || 0);
    const allocatable = nodes.reduce((s, n) => s + cpu(n.status?.allocatable?.cpu), 0);
    const requested = pods.filter((p) => names.has(p.spec?.nodeName ?? '') && p.status?.phase === 'Running').reduce((s, p) => s + (p.spec?.containers ?? []).reduce((c, k) => c + cpu(k.resources?.requests?.cpu), 0), 0);
    return {
      jobs: ours.length,
      failed,
      errorRate: finished.length ? failed / finished.length : 0,
      avgWaitSeconds: waits.length ? waits.reduce((a, b) => a + b, 0) / waits.length : 0,
      utilisation: allocatable ? Math.min(1, requested / allocatable) : 0,
    };
  }
}
