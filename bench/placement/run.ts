// npm run bench:placement — trace-driven tables: (a) HPC2N against RLScheduler's Table V, (b) HPC2N +
// Philly on one shared cluster against a static split, (c) the Pollux workloads against Tiresias, (d)
// Alibaba GPU v2023 against best-fit packing. Every figure is computed here from the traces.
import { printHpc2n } from './hpc2n.js';
import { printMixed } from './mixed.js';
import { join } from 'node:path';
import { TRACES } from './traces.js';
import { printAlibaba } from './alibaba.js';
import { printPollux } from './pollux.js';

import { printLublinTables, printSwfFile } from './swf.js';
import { lublinJobs } from './lublin.js';
import { loadSwf } from './traces.js';

const t0 = Date.now();

// `npm run bench:placement -- --swf FILE`: table (a) for that trace alone.
const swfAt = process.argv.indexOf('--swf');
if (swfAt >= 0) {
  const file = process.argv[swfAt + 1];
  if (!file) throw new Error('--swf needs a file (SWF, gz or plain)');
  printSwfFile(file, loadSwf);
  console.log(`\nbench time ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  process.exit(0);
}

// ---------- (a) HPC2N, (b) mixed ----------
printHpc2n();
printSwfFile(join(TRACES, 'hpc', 'HPC2N-2002-2.2-cln.swf.gz'), loadSwf);
printLublinTables(lublinJobs);
printMixed();

printPollux();
printAlibaba();
console.log(`\nbench time ${((Date.now() - t0) / 1000).toFixed(0)} s`);
