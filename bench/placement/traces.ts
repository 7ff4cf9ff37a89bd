// Loaders for the real traces under ../shared/data/traces (see its PROVENANCE.md).
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../../programs/rng.js';

export const TRACES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'data', 'traces');

export interface SwfJob {
  id: number;
  submit: number;
  run: number;
  procs: number;
  /** Requested time: the user's walltime estimate. */
  reqTime: number;
  user: number;
}

/**
 * SWF as RLScheduler reads it: processors = max(allocated, requested); requested time -1 → run time;
 * jobs with run time ≤ 0 dropped (a -1 run time becomes 10 s first, as their loader does).
 * `maxNodes`/`maxProcs` are the header's MaxNodes/MaxProcs: HPCSim builds its cluster from them
 * (MaxNodes nodes of MaxProcs/MaxNodes processors; MaxProcs = MaxNodes when the header omits it).
 */
export function loadSwf(file = join(TRACES, 'hpc', 'HPC2N-2002-2.2-cln.swf.gz')): { jobs: SwfJob[]; maxProcs: number; maxNodes: number } {
  const raw = readFileSync(file);
  // gzip or plain, by the magic bytes rather than the name.
  const text = (raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw).toString('utf8');
  let maxProcs = 0;
  let maxNodes = 0;
  const jobs: SwfJob[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith(';')) {
      const m = /^;\s*MaxProcs:\s*(\d+)/.exec(line);
      if (m) maxProcs = Number(m[1]);
      const n = /^;\s*MaxNodes:\s*(\d+)/.exec(line);
      if (n) maxNodes = Number(n[1]);
      continue;
    }
    const f = line.trim().split(/\s+/);
    if (f.length < 18) continue;
    let run = Number(f[3]);
    if (run < 0) run = 10;
    if (run <= 0) continue;
    const procs = Math.max(Number(f[4]), Number(f[7]));
    let reqTime = Number(f[8]);
    if (reqTime === -1) reqTime = run;
    jobs.push({ id: Number(f[0]), submit: Number(f[1]), run, procs, reqTime, user: Number(f[11]) });
  }
  jobs.sort((a, b) => a.id - b.id);
  if (maxProcs === 0) maxProcs = maxNodes;
  return { jobs, maxProcs, maxNodes };
}

export interface PhillyJob {
  submit: number;
  duration: number;
  gpus: number;
  vc: string;
}

export function loadPhilly(file = join(TRACES, 'gpu', 'pollux-osdi21', 'traces', 'philly.csv')): PhillyJob[] {
  const lines = readFileSync(file, 'utf8').split('\n').slice(1);
  const out: PhillyJob[] = [];
  for (const l of lines) {
    if (!l.trim()) continue;
    const [ts, dur, gpus, , vc] = l.split(',');
    out.push({ submit: Date.parse(`${ts.replace(' ', 'T')}Z`) / 1000, duration: Number(dur), gpus: Number(gpus), vc });
  }
  return out.sort((a, b) => a.submit - b.submit || a.duration - b.duration);
}

export interface PolluxJob {
  name: string;
  submit: number;
  app: string;
  gpus: number;
}

export function loadPolluxWorkload(n: number, dir = 'workloads'): PolluxJob[] {
  const lines = readFileSync(join(TRACES, 'gpu', 'pollux-osdi21', dir, `workload-${n}.csv`), 'utf8').split('\n').slice(1);
  return lines.filter((l) => l.trim()).map((l) => {
    const [name, time, app, reps] = l.split(',');
    return { name, submit: Number(time), app, gpus: Number(reps) };
  });
}

export function loadPolluxResults(scheduler: string, load = '1.0'): { jcts: Record<string, Record<string, number>>; mean?: number } {
  return JSON.parse(readFileSync(join(TRACES, 'gpu', 'pollux-osdi21', 'results-jobload', `${scheduler}-${load}`, 'summary.json'), 'utf8'));
}

export interface AlibabaPod {
  name: string;
  cpuMilli: number;
  memMiB: number;
  numGpu: number;
  gpuMilli: number;
  gpuSpec: string;
  creation: number;
}

export interface AlibabaNode {
  sn: string;
  cpuMilli: number;
  memMiB: number;
  gpus: number;
  model: string;
}

export function loadAlibaba(): { pods: AlibabaPod[]; nodes: AlibabaNode[] } {
  const base = join(TRACES, 'gpu', 'alibaba-gpu-v2023');
  const rows = (f: string) => readFileSync(join(base, f), 'utf8').split('\n').slice(1).filter((l) => l.trim()).map((l) => l.split(','));
  const pods = rows('openb_pod_list_default.csv').map((r) => ({ name: r[0], cpuMilli: Number(r[1]), memMiB: Number(r[2]), numGpu: Number(r[3]), gpuMilli: Number(r[4]), gpuSpec: r[5], creation: Number(r[8]) }));
  const nodes = rows('openb_node_list_gpu_node.csv').map((r) => ({ sn: r[0], cpuMilli: Number(r[1]), memMiB: Number(r[2]), gpus: Number(r[3]), model: r[4] }));
  return { pods, nodes };
}

/** A small seeded PRNG (mulberry32, shared with the runtime) so samples are reproducible. */
export const prng = mulberry32;
