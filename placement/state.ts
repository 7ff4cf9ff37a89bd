// The mutable, indexed view of an inventory the engine works on: flat typed arrays per node, groups
// per NVLink domain and IB island, free thousandths per GPU, running allocations and per-tenant usage.
// Pure (no I/O, no clock).
import { freshGpus, giveUnits, shareProblem, takeChosen, takeUnits, unitMilli, unitsPerSlot, type GpuState } from './gpus.js';
import type { Inventory, JobRequest, JobType, NodePrice } from './types.js';

export interface Allocation {
  job: JobRequest;
  nodes: number[];
  slots: number[];
  /** Per node entry, the GPUs (global numbers) its slots are bound to; absent when the job binds none. */
  gpus?: number[][];
  start: number;
  /** Start + walltime estimate: what reservations plan with. */
  estEnd: number;
}

export interface Group {
  name: string;
  nodes: number[];
}

export interface Usage {
  cpus: number;
  gpus: number;
  mem: number;
}

const NO_PRICE: NodePrice = { cpuHour: 0, gpuHour: 0 };

export class ClusterState {
  readonly n: number;
  readonly ids: string[];
  readonly site: string[];
  readonly cluster: string[];
  readonly partition: string[];
  readonly gpuModel: (string | undefined)[];
  readonly jobTypes: (JobType[] | undefined)[];
  readonly price: NodePrice[];
  readonly capCpu: Float64Array;
  readonly capGpu: Float64Array;
  readonly capMem: Float64Array;
  readonly usedCpu: Float64Array;
  readonly usedGpu: Float64Array;
  readonly usedMem: Float64Array;
  readonly osCpu: Float64Array;
  readonly osGpu: Float64Array;
  readonly temp: Float64Array;
  readonly down: Uint8Array;
  /** Index of the node's IB island / NVLink domain in `islands` / `domains` (-1: none). */
  readonly islandOf: Int32Array;
  readonly domainOf: Int32Array;
  readonly islands: Group[];
  readonly domains: Group[];
  /** Free physical resources per island, kept incrementally so whole islands are skipped cheaply. */
  readonly islandFreeCpu: Float64Array;
  readonly islandFreeGpu: Float64Array;
  /** Node i owns GPUs gpuOff[i] .. gpuOff[i + 1] - 1 of `gpu`. */
  readonly gpuOff: Int32Array;
  readonly gpu: GpuState;
  /** Running jobs that hold shares of a GPU (while none run, no GPU is partly taken). */
  sharesRunning = 0;
  readonly index = new Map<string, number>();
  readonly running = new Map<string, Allocation>();
  readonly tenantUsage = new Map<string, Usage>();
  private readonly tenantRunning = new Map<string, Allocation[]>();
  /**
   * Nodes whose use changed, oldest first; `changeBase` is the absolute position of `changes[0]`. Fit
   * indexes (fit-index.ts) replay it to catch up; it is cleared when long, which makes them rebuild.
   */
  readonly changes: number[] = [];
  changeBase = 0;
  /** Length at which the change log is cleared (tests lower it to exercise the indexes' rebuild). */
  changeLogLimit: number;
  totalCpu = 0;
  totalGpu = 0;
  totalMem = 0;
  freeCpu = 0;
  freeGpu = 0;
  freeMem = 0;

  constructor(inv: Inventory) {
    const flat: { node: Inventory['sites'][0]['clusters'][0]['partitions'][0]['nodes'][0]; site: string; cluster: string; part: Inventory['sites'][0]['clusters'][0]['partitions'][0] }[] = [];
    for (const s of inv.sites) for (const c of s.clusters) for (const p of c.partitions) for (const node of p.nodes) flat.push({ node, site: s.name, cluster: c.name, part: p });
    const n = (this.n = flat.length);
    this.ids = new Array(n);
    this.site = new Array(n);
    this.cluster = new Array(n);
    this.partition = new Array(n);
    this.gpuModel = new Array(n);
    this.jobTypes = new Array(n);
    this.price = new Array(n);
    this.capCpu = new Float64Array(n);
    this.capGpu = new Float64Array(n);
    this.capMem = new Float64Array(n);
    this.usedCpu = new Float64Array(n);
    this.usedGpu = new Float64Array(n);
    this.usedMem = new Float64Array(n);
    this.osCpu = new Float64Array(n);
    this.osGpu = new Float64Array(n);
    this.temp = new Float64Array(n);
    this.down = new Uint8Array(n);
    this.islandOf = new Int32Array(n);
    this.domainOf = new Int32Array(n);
    const islandIdx = new Map<string, number>();
    const domainIdx = new Map<string, number>();
    this.islands = [];
    this.domains = [];
    flat.forEach(({ node, site, cluster, part }, i) => {
      if (this.index.has(node.id)) throw new Error(`duplicate node id ${node.id}`);
      this.index.set(node.id, i);
      this.ids[i] = node.id;
      this.site[i] = site;
      this.cluster[i] = cluster;
      this.partition[i] = part.name;
      this.gpuModel[i] = node.gpuModel;
      this.jobTypes[i] = part.jobTypes;
      this.price[i] = node.price ?? NO_PRICE;
      this.capCpu[i] = node.cpus;
      this.capGpu[i] = node.gpus;
      this.capMem[i] = node.memoryMB;
      this.osCpu[i] = Math.max(1, part.oversubscription?.cpu ?? 1);
      this.osGpu[i] = Math.max(1, part.oversubscription?.gpu ?? 1);
      this.temp[i] = node.rackTempC ?? 0;
      this.down[i] = node.down ? 1 : 0;
      // Nodes without an island form a singleton island: spanning them is spanning islands.
      const iname = `${site}/${cluster}/${node.ibIsland ?? `node:${node.id}`}`;
      let ii = islandIdx.get(iname);
      if (ii === undefined) islandIdx.set(iname, (ii = this.islands.push({ name: node.ibIsland ?? node.id, nodes: [] }) - 1));
      this.islands[ii].nodes.push(i);
      this.islandOf[i] = ii;
      if (node.nvlinkDomain !== undefined) {
        const dname = `${site}/${cluster}/${node.nvlinkDomain}`;
        let di = domainIdx.get(dname);
        if (di === undefined) domainIdx.set(dname, (di = this.domains.push({ name: node.nvlinkDomain, nodes: [] }) - 1));
        this.domains[di].nodes.push(i);
        this.domainOf[i] = di;
      } else this.domainOf[i] = -1;
      if (!node.down) {
        this.totalCpu += node.cpus;
        this.totalGpu += node.gpus;
        this.totalMem += node.memoryMB;
      }
    });
    this.islandFreeCpu = new Float64Array(this.islands.length);
    this.islandFreeGpu = new Float64Array(this.islands.length);
    for (let i = 0; i < n; i++) {
      if (this.down[i]) continue;
      this.islandFreeCpu[this.islandOf[i]] += this.capCpu[i];
      this.islandFreeGpu[this.islandOf[i]] += this.capGpu[i];
    }
    this.gpuOff = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) this.gpuOff[i + 1] = this.gpuOff[i] + Math.max(0, Math.floor(this.capGpu[i]));
    this.gpu = freshGpus(this.gpuOff);
    this.changeLogLimit = Math.max(4096, 4 * n);
    this.freeCpu = this.totalCpu;
    this.freeGpu = this.totalGpu;
    this.freeMem = this.totalMem;
  }

  usage(tenant: string): Usage {
    return this.tenantUsage.get(tenant) ?? { cpus: 0, gpus: 0, mem: 0 };
  }

  /**
   * Books a placement. Throws if the job is already running or asks for an impossible share (caller
   * bugs, never silently doubled). `gpus` pins the GPUs per node entry (global numbers, as a packing
   * policy chose them); otherwise each share takes the tightest GPU it fits and whole GPUs the lowest free.
   */
  allocate(job: JobRequest, nodes: number[], slots: number[], start: number, gpus?: number[][]): Allocation {
    if (this.running.has(job.id)) throw new Error(`job ${job.id} is already allocated`);
    const bad = shareProblem(job.per);
    if (bad) throw new Error(`job ${job.id}: ${bad}`);
    const a: Allocation = { job, nodes, slots, start, estEnd: start + job.walltime };
    if (unitsPerSlot(job.per) > 0) a.gpus = this.bindGpus(job, nodes, slots, gpus);
    if (job.per.gpuMilli !== undefined) this.sharesRunning++;
    this.apply(a, 1);
    this.running.set(job.id, a);
    return a;
  }

  release(jobId: string): Allocation | undefined {
    const a = this.running.get(jobId);
    if (!a) return undefined;
    this.running.delete(jobId);
    if (a.gpus) {
      const milli = unitMilli(a.job.per);
      for (let k = 0; k < a.nodes.length; k++) giveUnits(this.gpu, a.nodes[k], milli, a.gpus[k]);
    }
    if (a.job.per.gpuMilli !== undefined) this.sharesRunning--;
    this.apply(a, -1);
    return a;
  }

  private bindGpus(job: JobRequest, nodes: number[], slots: number[], chosen: number[][] | undefined): number[][] {
    const units = unitsPerSlot(job.per);
    const milli = unitMilli(job.per);
    const bound: number[][] = [];
    try {
      for (let k = 0; k < nodes.length; k++) {
        const i = nodes[k];
        const pick = chosen?.[k];
        const out: number[] = [];
        if (!pick) takeUnits(this.gpuOff, this.gpu, i, milli, units * slots[k], out);
        else {
          if (pick.length !== units * slots[k]) throw new Error(`job ${job.id}: ${pick.length} GPU(s) chosen on node ${this.ids[i]} for ${units * slots[k]} unit(s)`);
          takeChosen(this.gpuOff, this.gpu, i, milli, pick);
          out.push(...pick);
        }
        bound.push(out);
      }
    } catch (e) {
      // A bad choice must leave the state as it was.
      bound.forEach((gs, k) => giveUnits(this.gpu, nodes[k], milli, gs));
      throw e;
    }
    return bound;
  }

  private apply(a: Allocation, sign: 1 | -1): void {
    const { per } = a.job;
    let total = 0;
    for (let k = 0; k < a.nodes.length; k++) {
      const i = a.nodes[k];
      const s = a.slots[k];
      total += s;
      const c = per.cpus * s;
      const g = per.gpus * s;
      const m = per.memoryMB * s;
      const beforeC = Math.max(0, this.capCpu[i] - this.usedCpu[i]);
      const beforeG = Math.max(0, this.capGpu[i] - this.usedGpu[i]);
      this.usedCpu[i] += sign * c;
      this.usedGpu[i] += sign * g;
      this.usedMem[i] += sign * m;
      // Aggregates count physical free capacity only (oversubscribed use beyond it frees nothing).
      const dC = Math.max(0, this.capCpu[i] - this.usedCpu[i]) - beforeC;
      const dG = Math.max(0, this.capGpu[i] - this.usedGpu[i]) - beforeG;
      this.islandFreeCpu[this.islandOf[i]] += dC;
      this.islandFreeGpu[this.islandOf[i]] += dG;
      this.freeCpu += dC;
      this.freeGpu += dG;
      this.freeMem -= sign * m;
      if (this.changes.length >= this.changeLogLimit) {
        this.changeBase += this.changes.length;
        this.changes.length = 0;
      }
      this.changes.push(i);
    }
    this.trackTenant(a, sign);
    const u = this.usage(a.job.tenant);
    this.tenantUsage.set(a.job.tenant, {
      cpus: u.cpus + sign * per.cpus * total,
      gpus: u.gpus + sign * per.gpus * total,
      mem: u.mem + sign * per.memoryMB * total,
    });
  }

  /** Estimated end of the tenant's running jobs, earliest first (for quota reservations). Kept sorted on allocate/release. */
  runningOf(tenant: string): readonly Allocation[] {
    return this.tenantRunning.get(tenant) ?? [];
  }

  private trackTenant(a: Allocation, sign: 1 | -1): void {
    let list = this.tenantRunning.get(a.job.tenant);
    if (!list) this.tenantRunning.set(a.job.tenant, (list = []));
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const m = list[mid];
      if (m.estEnd < a.estEnd || (m.estEnd === a.estEnd && m.job.id < a.job.id)) lo = mid + 1;
      else hi = mid;
    }
    if (sign > 0) list.splice(lo, 0, a);
    else if (list[lo] === a) list.splice(lo, 1);
    else throw new Error(`allocation of ${a.job.id} missing from its tenant's list`);
  }
}
