// npx tsx bench/placement/hpc2n-only.ts — table (a) of `npm run bench:placement` alone (seconds, not
// minutes), for checking the HPC2N reproduction of RLScheduler's Table V, with every row's per-sample figures.
import { printHpc2n } from './hpc2n.js';

const t0 = Date.now();
printHpc2n(true);
console.log(`time ${((Date.now() - t0) / 1000).toFixed(0)} s`);
