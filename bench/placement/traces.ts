// Loaders for the real traces under ../shared/data/traces (see its PROVENANCE.md).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../../programs/rng.js';
import { parseSwf, type Trace, type TraceJob } from '../../cli/trace.js';
import { traceText } from '../../cli/simulate.js';

const here = dirname(fileURLToPath(import.meta.url));
/** TANDEM_TRACES, else shared/data/traces beside the checkout (../shared) or beside its parent (a worktree under wt/). */
export const TRACES = process.env.TANDEM_TRACES ?? [join(here, '..', '..', '..', 'shared', 'data', 'traces'), join(here, '..', '..', '..', '..', 'shared', 'data', 'traces')].find((d) => existsSync(d)) ?? join(here, '..', '..', '..', 'shared', 'data', 'traces');

/** One SWF job (cli/trace.ts parses the format, for `tandem simulate` and these benches alike). */
export type SwfJob = TraceJob;

/**
 * An SWF trace file, gz or plain (by the magic bytes rather than the name), parsed as RLScheduler reads
 * it. `maxNodes`/`maxProcs` are the header's MaxNodes/MaxProcs: HPCSim builds its cluster from them
 * (MaxNodes nodes of MaxProcs/MaxNodes processors; MaxProcs = MaxNodes when the header omits it).
 */
export function loadSwf(file = join(TRACES, 'hpc', 'HPC2N-2002-2.2-cln.swf.gz')): Trace {
  // tandem simulate's reader: the same bound on the file and on what it decompresses to (a gzip bomb
  // given to --swf is an error, not gigabytes), and errors that name the file. Malformed records are
  // left out and counted (printSwfFile notes them), as `tandem simulate --skip-malformed` does: one
  // odd record of a year-long public log should not keep its table from being printed.
  return parseSwf(traceText(file), { source: file, skipMalformed: true });
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
