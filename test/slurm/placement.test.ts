// Placement's inventory from a Slurm site: the recorded slurmrestd answer, and a real cluster.
import { readFileSync } from 'node:fs';
import { slurmrestdMapping } from '../../backends/slurm/slurmrestd-mapping.js';
import { SlurmrestdJobBackend } from '../../backends/slurm/slurmrestd-backend.js';
import { gpusFromGres } from '../../backends/slurm/site-api.js';
import { firecrestAllocGpus, slurmInventory, slurmrestdSource } from '../../activities/placement-sources.js';
import { createPlacementActivities } from '../../activities/placement.js';
import { KeptInventory } from '../../activities/placement-inventory.js';
import { startCluster, type Cluster } from './cluster.js';

const RECORDED = '../shared/data/firecrest/slurmrestd-mock-responses/slurm_get_nodes.json';

test('a recorded slurmrestd /nodes answer becomes a site with its partitions and current use', () => {
  const nodes = slurmrestdMapping('0.0.38').nodes(JSON.parse(readFileSync(RECORDED, 'utf8')));
  expect(nodes[0]).toMatchObject({ name: 'localhost', cpus: 2, memoryMB: 1000, state: ['idle'], partitions: ['part01', 'part02', 'xfer'], features: ['f7t'] });
  const inv = slurmInventory('cscs', 'daint', nodes);
  // A node in several partitions is placed under the first (slurm.conf order).
  expect(inv.sites[0]!.clusters[0]!.partitions.map((p) => [p.name, p.nodes.map((n) => n.id)])).toEqual([['part01', ['localhost']]]);
  expect(inv.running).toEqual([]); // idle: nothing allocated
});

test('GRES, topology features and unavailable states', () => {
  expect(gpusFromGres('gpu:a100:4(S:0-1),nic:2')).toEqual({ count: 4, model: 'a100' });
  expect(gpusFromGres('gpu:8')).toEqual({ count: 8, model: undefined });
  expect(gpusFromGres('gpu:a100:2(IDX:0-1)')).toEqual({ count: 2, model: 'a100' }); // slurmrestd's gres_used
  // FirecREST reports no GRES in use: estimated from the CPUs, never below what is busy.
  expect([firecrestAllocGpus(4, 64, 16, ['mixed']), firecrestAllocGpus(4, 64, 17, ['mixed']), firecrestAllocGpus(4, 64, 2, ['allocated']), firecrestAllocGpus(0, 64, 64, ['allocated'])]).toEqual([1, 2, 4, 0]);
  const inv = slurmInventory('s', 'c', [
    { name: 'g1', cpus: 64, memoryMB: 512_000, allocCpus: 16, allocMemoryMB: 1000, gpus: 4, allocGpus: 2, gpuModel: 'a100', partitions: ['gpu'], state: ['mixed'], features: ['ib:i1', 'nvlink:d1', 'rack:r7'] },
    { name: 'g2', cpus: 64, memoryMB: 512_000, allocCpus: 0, allocMemoryMB: 0, gpus: 4, allocGpus: 0, partitions: ['gpu'], state: ['idle', 'drain'], features: [] },
  ]);
  expect(inv.sites[0]!.clusters[0]!.partitions[0]!.nodes).toEqual([
    expect.objectContaining({ id: 'g1', gpus: 4, gpuModel: 'a100', ibIsland: 'i1', nvlinkDomain: 'd1', rack: 'r7', down: false }),
    expect.objectContaining({ id: 'g2', down: true }),
  ]);
  expect(inv.running).toEqual([expect.objectContaining({ nodes: [{ node: 'g1', slots: 1 }], job: expect.objectContaining({ per: { cpus: 16, gpus: 2, memoryMB: 1000 } }) })]);
});

describe('on a real Slurm cluster through slurmrestd', () => {
  let cluster: Cluster;
  let backend: SlurmrestdJobBackend;
  beforeAll(async () => {
    cluster = await startCluster('place');
    backend = new SlurmrestdJobBackend({ site: 'place', workDir: cluster.workDir, statusIntervalMs: 250, rest: { socketPath: cluster.restSocket } });
  }, 120_000);
  afterAll(() => cluster?.down());

  test('placement decides on the live inventory: a small job starts there, an impossible one is rejected', async () => {
    const inv = await slurmrestdSource(backend).gather();
    expect(inv.sites[0]!.clusters[0]!.partitions.find((p) => p.name === 'debug')!.nodes).toEqual([expect.objectContaining({ id: cluster.node, cpus: 8, down: false })]);
    const { placeJob } = createPlacementActivities([slurmrestdSource(backend)]);
    const job = (id: string, gpus: number) => ({ id, type: 'hpc-mpi' as const, tenant: 't', qos: 'silver' as const, priority: 100, submit: 0, count: 2, per: { cpus: 1, gpus, memoryMB: 256 }, walltime: 600 });
    const ok = await placeJob({ job: job('small', 0) });
    expect(ok.decision).toMatchObject({ kind: 'start', placement: { site: 'place', cluster: 'place' } });
    const no = await placeJob({ job: job('gpu', 8) });
    expect(no.decision.kind).toBe('reject');
    expect(no.decision.explanation).toMatch(/gpu/i);
  });

  test("the kept inventory asks slurmrestd whether the nodes changed (304: no read) and sees another user's job start and end through it", async () => {
    // resync after an hour: whatever the kept state learns below comes through the generation alone.
    const src = slurmrestdSource(backend, undefined, { clockMarginSeconds: 1 });
    const kept = new KeptInventory([src], 3600);
    const now = () => Date.now() / 1000;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    await kept.refresh(now());
    expect(kept.reads).toBe(1);
    // Unchanged: decisions cost a 304, not a read. The idle cluster's own node table moves now and then
    // (every ~20 s here), so one of three windows of 10 decisions must have read at most once; without
    // the generation each of them reads 10 times.
    const windows: number[] = [];
    for (let w = 0; w < 3 && !windows.some((r) => r <= 1); w++) {
      await sleep(2200); // past the 1 s margin since the last read
      const before = kept.reads;
      for (let k = 0; k < 10; k++) await kept.refresh(now());
      windows.push(kept.reads - before);
    }
    expect(windows.some((r) => r <= 1)).toBe(true);
    const inUse = `place:${cluster.node}:in-use`;
    const until = async (what: string, ok: () => boolean) => {
      for (const end = Date.now() + 20_000; Date.now() < end; await sleep(250)) {
        await kept.refresh(now());
        if (ok()) return;
      }
      throw new Error(`the kept inventory never saw ${what}`);
    };
    expect(kept.running(inUse)).toBeUndefined();
    const id = /Submitted batch job (\d+)/.exec(await cluster.cli('sbatch', ['--wrap', 'sleep 60', '-N1', '-n2', '-o', '/dev/null']))![1]!;
    await until('the job start', () => kept.running(inUse)?.job.per.cpus === 2);
    await cluster.cli('scancel', [id]);
    await until('the job end', () => kept.running(inUse) === undefined);
  }, 90_000);
});
