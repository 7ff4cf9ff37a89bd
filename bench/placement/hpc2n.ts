// Table a: HPC2N, 10 samples of 1024 consecutive jobs whose start indices are drawn exactly as
// RLScheduler's compare-pick-jobs.py draws them (gym np_random(1), randint(1024, N − 1024 − 1)), on
// 240 single-processor nodes as in its HPCSim.
import type { Inventory, JobRequest, PolicyConfig } from '../../placement/index.js';
import { simulate, type SimJob } from './sim.js';
import { GymNpRandom } from './numpy-rng.js';
import { loadSwf, type SwfJob } from './traces.js';

export const SAMPLE = 1024;
export const SAMPLES = 10;

export function hpc2nInventory(procs: number): Inventory {
  const nodes = Array.from({ length: procs }, (_, i) => ({ id: `seth-${String(i).padStart(3, '0')}`, cpus: 1, gpus: 0, memoryMB: 1024, ibIsland: 'seth' }));
  return { sites: [{ name: 'hpc2n', clusters: [{ name: 'seth', partitions: [{ name: 'batch', nodes }] }] }] };
}

export function swfToSim(j: SwfJob, t0: number, tenant = `u${j.user}`): SimJob {
  const req: JobRequest = {
    id: `hpc-${j.id}`,
    type: 'hpc-mpi',
    tenant,
    qos: 'gold',
    priority: 100,
    submit: j.submit - t0,
    count: j.procs,
    per: { cpus: 1, gpus: 0, memoryMB: 0 },
    walltime: Math.max(1, j.reqTime),
    needsIb: true,
    checkpointable: false,
  };
  return { req, run: j.run };
}

export function hpc2nSamples(seed = 1): { inv: Inventory; samples: SimJob[][] } {
  const { jobs, maxProcs } = loadSwf();
  const rnd = new GymNpRandom(seed);
  const samples: SimJob[][] = [];
  for (let k = 0; k < SAMPLES; k++) {
    const start = rnd.randint(SAMPLE, jobs.length - SAMPLE - 1);
    const seq = jobs.slice(start, start + SAMPLE).filter((j) => j.procs <= maxProcs);
    samples.push(seq.map((j) => swfToSim(j, seq[0].submit)));
  }
  return { inv: hpc2nInventory(maxProcs), samples };
}

export interface Row {
  name: string;
  pol: PolicyConfig;
}

export function runHpc2n(rows: Row[]) {
  const { inv, samples } = hpc2nSamples();
  return rows.map(({ name, pol }) => {
    const rs = samples.map((jobs) => simulate(inv, jobs, pol));
    const mean = (f: (r: (typeof rs)[number]) => number) => rs.reduce((t, r) => t + f(r), 0) / rs.length;
    return { name, bsld: mean((r) => r.avgBsld), jct: mean((r) => r.avgJct), util: mean((r) => r.utilCpu), makespan: mean((r) => r.makespan), lb: mean((r) => r.lowerBound), rejected: rs.reduce((t, r) => t + r.rejected.length, 0), perSample: rs.map((r) => r.avgBsld) };
  });
}
