// npm run bench:placement — trace-driven tables: (a) HPC2N against RLScheduler's Table V, (b) HPC2N +
// Philly on one shared cluster against a static split, (c) the Pollux workloads against Tiresias, (d)
// Alibaba GPU v2023 against best-fit packing. Every figure is computed here from the traces.
import { printHpc2n } from './hpc2n.js';
import { printMixed } from './mixed.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { TRACES } from './traces.js';
import { printAlibaba } from './alibaba.js';
import { printPollux } from './pollux.js';

import { printLublinTables, printSwfFile, printVerdicts } from './swf.js';
import { lublinJobs } from './lublin.js';
import { loadSwf } from './traces.js';

const t0 = Date.now();

// `npm run bench:placement -- --swf FILE [--nodes N --per-node K]`: table (a) for that trace alone.
const arg = (name: string) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const count = (name: string) => {
  const v = arg(name);
  if (v === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(v)) fail(`${name} must be a positive whole number, not ${JSON.stringify(v)}`);
  return Number(v);
};
function fail(message: string): never {
  console.error(`bench:placement: ${message}`);
  process.exit(2);
}
if (process.argv.includes('--swf')) {
  const file = arg('--swf');
  if (!file || file.startsWith('--')) fail('--swf needs a file (SWF, gz or plain)');
  if (!existsSync(file)) fail(`--swf ${file}: no such file`);
  const machine = { nodes: count('--nodes'), perNode: count('--per-node') };
  if (machine.perNode && !machine.nodes) fail('--per-node needs --nodes');
  try {
    printSwfFile(file, loadSwf, machine);
    printVerdicts();
  } catch (e) {
    fail((e as Error).message);
  }
  console.log(`\nbench time ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  process.exit(0);
}

// ---------- (a) HPC2N, (b) mixed ----------
printHpc2n();
printSwfFile(join(TRACES, 'hpc', 'HPC2N-2002-2.2-cln.swf.gz'), loadSwf);
printLublinTables(lublinJobs);
printVerdicts();
printMixed();

printPollux();
printAlibaba();
console.log(`\nbench time ${((Date.now() - t0) / 1000).toFixed(0)} s`);
