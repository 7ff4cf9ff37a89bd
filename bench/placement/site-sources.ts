// The placeJob activity as pipelines call it, on the inventory sources a worker really has: the
// Kubernetes source against a real kube-apiserver with kwok nodes (test/kubernetes/control-plane.ts)
// and the slurmrestd source against a real Slurm cluster (test/slurm/cluster.ts), all on 127.0.0.1.
// Each source runs twice in the same run: as shipped (its generation: the Kubernetes watches, the
// slurmrestd `update_time` question), and the same source without one, which reads the site on every
// decision (the baseline: what every call cost before). Nothing changes at the site during a window,
// so this is the steady state a pipeline's placement meets between changes.
// Run: npm run bench:placement-sources [-- --nodes 1000 --pods 500 --seconds 3]
import { parseArgs } from 'node:util';
import { createPlacementActivities, type InventorySource } from '../../activities/placement.js';
import { kubernetesSource, slurmrestdSource } from '../../activities/placement-sources.js';
import { KeptInventory } from '../../activities/placement-inventory.js';
import { SlurmrestdJobBackend } from '../../backends/slurm/slurmrestd-backend.js';
import type { JobRequest } from '../../placement/index.js';
import { startControlPlane } from '../../test/kubernetes/control-plane.js';
import { startCluster } from '../../test/slurm/cluster.js';

const { values } = parseArgs({ options: { nodes: { type: 'string', default: '1000' }, pods: { type: 'string', default: '500' }, seconds: { type: 'string', default: '3' } } });
const NODES = Number(values.nodes);
const PODS = Number(values.pods);
const WINDOW_MS = Number(values.seconds) * 1000;

const job = (k: number): JobRequest => ({ id: `bench-${k}`, type: 'hpc-mpi', tenant: 't', qos: 'silver', priority: 100, submit: 0, count: 1, per: { cpus: 1, gpus: 0, memoryMB: 256 }, walltime: 600 });

interface Row { source: string; nodes: number; mode: string; decisions: number; perSecond: number; reads: number; msPerCall: number }

/** placeJob back to back for the window, after the first call (which reads the site) and a settling pause. */
async function measure(source: string, nodes: number, mode: string, src: InventorySource): Promise<Row> {
  const kept = new KeptInventory([src]);
  const { placeJob } = createPlacementActivities([src], {}, undefined, undefined, kept);
  let k = 0;
  await placeJob({ job: job(k++) });
  // The watches come up (a source without a generation reads either way).
  for (const end = Date.now() + 10_000; Date.now() < end; ) {
    const r = kept.reads;
    await placeJob({ job: job(k++) });
    if (kept.reads === r) break;
  }
  const reads0 = kept.reads;
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < WINDOW_MS) {
    await placeJob({ job: job(k++) });
    n++;
  }
  const ms = performance.now() - t0;
  await kept.close();
  return { source, nodes, mode, decisions: n, perSecond: (n * 1000) / ms, reads: kept.reads - reads0, msPerCall: ms / n };
}

const rows: Row[] = [];
const without = (s: InventorySource): InventorySource => ({ name: s.name, gather: () => s.gather() });

{
  const t0 = Date.now();
  const cp = await startControlPlane({ nodes: [] });
  try {
    const names = Array.from({ length: NODES }, (_, i) => `node-${i}`);
    // In batches: the apiserver takes them concurrently; addNodes waits each Ready.
    for (let i = 0; i < names.length; i += 50) await cp.addNodes(names.slice(i, i + 50).map((name) => ({ name, cpu: '64', memory: '256Gi' })));
    const clients = cp.clients();
    for (let i = 0; i < PODS; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, PODS - i) }, (_, j) =>
          clients.core.createNamespacedPod({ namespace: clients.namespace, body: { metadata: { name: `site-pod-${i + j}` }, spec: { nodeName: names[(i + j) % names.length], containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '2', memory: '4Gi' } } }] } } }),
        ),
      );
    }
    console.log(`control plane with ${NODES} kwok nodes and ${PODS} pods up in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    const shipped = kubernetesSource(clients, 'k8s');
    rows.push(await measure('kubernetes', NODES, 'as shipped (watches)', shipped));
    const plain = kubernetesSource(clients, 'k8s');
    rows.push(await measure('kubernetes', NODES, 'listed every decision (baseline)', without(plain)));
    plain.close();
  } finally {
    await cp.stop();
  }
}

{
  const cluster = await startCluster('benchsrc');
  try {
    const backend = new SlurmrestdJobBackend({ site: 'benchsrc', workDir: cluster.workDir, rest: { socketPath: cluster.restSocket } });
    rows.push(await measure('slurmrestd', 1, 'as shipped (update_time)', slurmrestdSource(backend)));
    rows.push(await measure('slurmrestd', 1, 'read every decision (baseline)', without(slurmrestdSource(backend))));
  } finally {
    await cluster.down();
  }
}

console.log(`\nplaceJob on real sources (${WINDOW_MS / 1000} s windows, nothing changing at the site; this machine)\n`);
console.log('| source | nodes | generation | decisions/s | ms a call | site reads in the window | × baseline |');
console.log('|---|---:|---|---:|---:|---:|---:|');
for (const r of rows) {
  const base = rows.find((b) => b.source === r.source && b.mode.includes('baseline'))!;
  const ratio = r.perSecond / base.perSecond;
  console.log(`| ${r.source} | ${r.nodes.toLocaleString('en')} | ${r.mode} | ${Math.round(r.perSecond).toLocaleString('en')} | ${r.msPerCall.toFixed(2)} | ${r.reads} of ${r.decisions.toLocaleString('en')} | ${ratio < 10 ? ratio.toFixed(1) : Math.round(ratio).toLocaleString('en')}× |`);
}
