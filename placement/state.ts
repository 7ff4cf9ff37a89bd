// The mutable, indexed view of an inventory the engine works on: flat typed arrays per node, groups
// per NVLink domain and IB island, free thousandths per GPU, running allocations and per-tenant usage.
// Pure (no I/O, no clock).
import { freshGpus, giveUnits, shareProblem, takeChosen, takeUnits, unitMilli, unitsPerSlot, type GpuState } from './gpus.js';
import { planned, type Inventory, type JobRequest, type JobType, type NodePrice } from './types.js';

export interface Allocation {
  job: JobRequest;
  nodes: number[];
  slots: number[];
  /** Per node entry, the GPUs (global numbers) its slots are bound to; absent when the job binds none. */
  gpus?: number[][];
  start: number;
  /** Start + planned run time (types.ts planned()): what reservations plan with. */
  estEnd: number;
}

export interface Group {
  name: string;
  nodes: number[];
  /** The inventory named it (an island of one undeclared node is not topology a person should read about). */
  declared?: boolean;
}

export interface Usage {
  cpus: number;
  gpus: number;
  mem: number;
}

/** Target entries per block of a tenant's running list (see RunBlocks); blocks hold 1 .. 2 × this. */
const RUN_BLOCK = 64;
/** Demands above this stay out of the block sums: a block (at most 2 × RUN_BLOCK + 1 entries) then sums below 2^53. */
const EXACT_MAX = 2 ** 40;

/**
 * A tenant's running list, earliest estimated end first, kept as consecutive blocks: block b holds
 * `items[b]`, entries start[b] onwards of the whole list. Each block carries the sum of its entries'
 * demands (per.x × count, as checkLimits computes them), so a limit check can step over a block in
 * one subtraction. Only whole, non-negative demands enter the sums: whole numbers add exactly in a
 * double in any order, so the sums stay equal to the one-by-one subtractions they replace; a block
 * holding any other demand (a fractional GPU, say) counts it in `inexact` and is walked job by job.
 * Blocks also keep allocate and release from moving the whole list (an insert into one long array
 * moves everything after it): only one block's entries move, and later blocks' starts shift by one.
 */
export interface RunBlocks {
  /** Number of blocks; entries past it in the typed arrays are spare capacity. */
  n: number;
  items: Allocation[][];
  start: Int32Array;
  cpus: Float64Array;
  gpus: Float64Array;
  mem: Float64Array;
  inexact: Int32Array;
}

const exact = (x: number) => Number.isSafeInteger(x) && x >= 0 && x <= EXACT_MAX;

function grown<T extends Float64Array | Int32Array>(a: T, len: number): T {
  if (len <= a.length) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(len, 2 * a.length));
  b.set(a);
  return b;
}

/** The running lists' order: earlier estimated end first, then smaller id. */
const before = (m: Allocation, a: Allocation) => m.estEnd < a.estEnd || (m.estEnd === a.estEnd && m.job.id < a.job.id);

class TenantRun {
  readonly blocks: RunBlocks = { n: 0, items: [], start: new Int32Array(4), cpus: new Float64Array(4), gpus: new Float64Array(4), mem: new Float64Array(4), inexact: new Int32Array(4) };
  length = 0;
  private flat: Allocation[] | undefined = [];
  /** Entries whose estimated end is NaN (they make the order partial). */
  private nanEnds = 0;

  /**
   * Where the binary search over the whole list puts `a`: after every entry that ends earlier, or as
   * early with a smaller id. While no end is NaN the order is total, the answer unique, and found
   * by block first; otherwise the whole-list search is replayed probe by probe.
   */
  seek(a: Allocation): number {
    const bl = this.blocks;
    if (this.nanEnds === 0 && a.estEnd === a.estEnd) {
      let lo = 0;
      let hi = bl.n;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const items = bl.items[mid];
        if (before(items[items.length - 1], a)) lo = mid + 1;
        else hi = mid;
      }
      if (lo === bl.n) return this.length;
      const items = bl.items[lo];
      const b = lo;
      lo = 0;
      hi = items.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (before(items[mid], a)) lo = mid + 1;
        else hi = mid;
      }
      return bl.start[b] + lo;
    }
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(this.at(mid), a)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Entry k of the whole list. */
  at(k: number): Allocation {
    const b = this.blockAt(k);
    return this.blocks.items[b][k - this.blocks.start[b]];
  }

  /** The whole list (rebuilt after a change). */
  list(): readonly Allocation[] {
    return (this.flat ??= this.blocks.items.flat());
  }

  insert(lo: number, a: Allocation): void {
    const bl = this.blocks;
    this.flat = undefined;
    this.length++;
    if (a.estEnd !== a.estEnd) this.nanEnds++;
    if (bl.n === 0) this.open(0, 0, []);
    // At the end of the list, the last block; elsewhere the block holding the entry now at lo.
    const b = this.blockAt(lo);
    bl.items[b].splice(lo - bl.start[b], 0, a);
    for (let x = b + 1; x < bl.n; x++) bl.start[x]++;
    this.count(b, a, 1);
    const items = bl.items[b];
    if (items.length > 2 * RUN_BLOCK) {
      const half = items.length >> 1;
      this.open(b + 1, bl.start[b] + half, items.splice(half));
      for (const x of bl.items[b + 1]) {
        this.count(b, x, -1);
        this.count(b + 1, x, 1);
      }
    }
  }

  remove(lo: number): void {
    const bl = this.blocks;
    this.flat = undefined;
    this.length--;
    const b = this.blockAt(lo);
    const [a] = bl.items[b].splice(lo - bl.start[b], 1);
    for (let x = b + 1; x < bl.n; x++) bl.start[x]--;
    this.count(b, a, -1);
    if (a.estEnd !== a.estEnd) this.nanEnds--;
    // Small blocks merge so that their number stays near length / RUN_BLOCK; none is ever empty.
    const size = bl.items[b].length;
    if (size === 0) this.close(b);
    else if (b + 1 < bl.n && size + bl.items[b + 1].length <= RUN_BLOCK) this.merge(b);
    else if (b > 0 && size + bl.items[b - 1].length <= RUN_BLOCK) this.merge(b - 1);
  }

  /** The block holding entry k (the last block for k = length): the last whose start is at most k. */
  private blockAt(k: number): number {
    const { start, n } = this.blocks;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (start[mid] <= k) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private count(b: number, a: Allocation, sign: 1 | -1): void {
    const bl = this.blocks;
    const { per, count } = a.job;
    const c = per.cpus * count;
    const g = per.gpus * count;
    const m = per.memoryMB * count;
    if (exact(c) && exact(g) && exact(m)) {
      bl.cpus[b] += sign * c;
      bl.gpus[b] += sign * g;
      bl.mem[b] += sign * m;
    } else bl.inexact[b] += sign;
  }

  /** Inserts block b, empty of sums, holding `items` from entry `from`. */
  private open(b: number, from: number, items: Allocation[]): void {
    const bl = this.blocks;
    const n = ++bl.n;
    bl.start = grown(bl.start, n);
    bl.cpus = grown(bl.cpus, n);
    bl.gpus = grown(bl.gpus, n);
    bl.mem = grown(bl.mem, n);
    bl.inexact = grown(bl.inexact, n);
    for (const arr of [bl.start, bl.cpus, bl.gpus, bl.mem, bl.inexact]) {
      arr.copyWithin(b + 1, b, n - 1);
      arr[b] = 0;
    }
    bl.start[b] = from;
    bl.items.splice(b, 0, items);
  }

  /** Removes block b, whose entries (if any) the caller has accounted to a neighbour. */
  private close(b: number): void {
    const bl = this.blocks;
    const n = --bl.n;
    for (const arr of [bl.start, bl.cpus, bl.gpus, bl.mem, bl.inexact]) {
      arr.copyWithin(b, b + 1, n + 1);
      arr[n] = 0;
    }
    bl.items.splice(b, 1);
  }

  /** Folds block b + 1 into block b. */
  private merge(b: number): void {
    const bl = this.blocks;
    bl.cpus[b] += bl.cpus[b + 1];
    bl.gpus[b] += bl.gpus[b + 1];
    bl.mem[b] += bl.mem[b + 1];
    bl.inexact[b] += bl.inexact[b + 1];
    for (const x of bl.items[b + 1]) bl.items[b].push(x);
    this.close(b + 1);
  }
}

const NO_PRICE: NodePrice = { cpuHour: 0, gpuHour: 0 };

/**
 * What changed since `begin()`, so that `rollback()` can put the state back to the last bit: the
 * first value of every per-node, per-island and per-tenant figure touched, the jobs booked and the
 * allocations released. Floating sums are restored, not recomputed: (x + c) − c need not be x.
 */
interface Journal {
  nodes: Map<number, [number, number, number]>;
  islands: Map<number, [number, number]>;
  tenants: Map<string, Usage | undefined>;
  totals: [number, number, number];
  allocated: string[];
  released: Allocation[];
}

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
  /** Lowest priority of a running job; undefined once the job holding it left, until asked again. */
  private lowest: number | undefined = Infinity;
  readonly index = new Map<string, number>();
  readonly running = new Map<string, Allocation>();
  readonly tenantUsage = new Map<string, Usage>();
  private readonly tenantRunning = new Map<string, TenantRun>();
  private readonly allRunning = new TenantRun();
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
  private journal: Journal | undefined;
  /**
   * Set for one decision only (LiveCluster.decide): running jobs it returns false for are never
   * preemption victims, whatever their `preemptible` says. Undefined: `preemptible` alone decides.
   */
  mayPreempt: ((victim: JobRequest) => boolean) | undefined;
  /** Allocations on each node: when the last leaves, its use is exactly zero again (no rounding left over). */
  private readonly jobsOn: Int32Array;

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
    this.jobsOn = new Int32Array(n);
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
      if (ii === undefined) islandIdx.set(iname, (ii = this.islands.push({ name: node.ibIsland ?? node.id, nodes: [], declared: node.ibIsland !== undefined }) - 1));
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
    const a: Allocation = { job, nodes, slots, start, estEnd: start + planned(job) };
    if (unitsPerSlot(job.per) > 0) a.gpus = this.bindGpus(job, nodes, slots, gpus);
    if (job.per.gpuMilli !== undefined) this.sharesRunning++;
    this.apply(a, 1);
    this.running.set(job.id, a);
    this.journal?.allocated.push(job.id);
    if (this.lowest !== undefined && job.priority < this.lowest) this.lowest = job.priority;
    return a;
  }

  release(jobId: string): Allocation | undefined {
    const a = this.running.get(jobId);
    if (!a) return undefined;
    this.running.delete(jobId);
    this.journal?.released.push(a);
    if (this.lowest !== undefined && !(a.job.priority > this.lowest)) this.lowest = undefined;
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

  /** Starts recording changes for rollback() (one level: a second begin() restarts the record). */
  begin(): void {
    this.journal = { nodes: new Map(), islands: new Map(), tenants: new Map(), totals: [this.freeCpu, this.freeGpu, this.freeMem], allocated: [], released: [] };
  }

  /** Stops recording and keeps the changes. */
  commit(): void {
    this.journal = undefined;
  }

  /**
   * Undoes everything since begin(): jobs booked since are released, jobs released since are booked
   * again on the same nodes and GPUs, and every figure touched gets its first value back.
   */
  rollback(): void {
    const j = this.journal;
    if (!j) throw new Error('rollback() without begin()');
    this.journal = undefined;
    for (let k = j.allocated.length - 1; k >= 0; k--) this.release(j.allocated[k]);
    for (let k = j.released.length - 1; k >= 0; k--) {
      const a = j.released[k];
      if (!this.running.has(a.job.id)) this.allocate(a.job, a.nodes, a.slots, a.start, a.gpus);
    }
    for (const [i, [c, g, m]] of j.nodes) {
      this.usedCpu[i] = c;
      this.usedGpu[i] = g;
      this.usedMem[i] = m;
    }
    for (const [i, [c, g]] of j.islands) {
      this.islandFreeCpu[i] = c;
      this.islandFreeGpu[i] = g;
    }
    for (const [t, u] of j.tenants) {
      if (u) this.tenantUsage.set(t, u);
      else this.tenantUsage.delete(t);
    }
    [this.freeCpu, this.freeGpu, this.freeMem] = j.totals;
  }

  private apply(a: Allocation, sign: 1 | -1): void {
    const { per } = a.job;
    const j = this.journal;
    if (j && !j.tenants.has(a.job.tenant)) j.tenants.set(a.job.tenant, this.tenantUsage.get(a.job.tenant));
    let total = 0;
    for (let k = 0; k < a.nodes.length; k++) {
      const i = a.nodes[k];
      if (j && !j.nodes.has(i)) {
        j.nodes.set(i, [this.usedCpu[i], this.usedGpu[i], this.usedMem[i]]);
        const ii = this.islandOf[i];
        if (!j.islands.has(ii)) j.islands.set(ii, [this.islandFreeCpu[ii], this.islandFreeGpu[ii]]);
      }
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
      if ((this.jobsOn[i] += sign) === 0) {
        // Shares that are not binary fractions (0.3 GPU) leave rounding behind; an empty node has none.
        this.usedCpu[i] = 0;
        this.usedGpu[i] = 0;
        this.usedMem[i] = 0;
      }
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
    // A tenant running nothing uses exactly nothing (as for nodes: no rounding left over).
    if (sign < 0 && !this.tenantRunning.get(a.job.tenant)?.length) this.tenantUsage.delete(a.job.tenant);
    else
      this.tenantUsage.set(a.job.tenant, {
        cpus: u.cpus + sign * per.cpus * total,
        gpus: u.gpus + sign * per.gpus * total,
        mem: u.mem + sign * per.memoryMB * total,
      });
  }

  /** The lowest priority among running jobs (Infinity while none runs; a NaN priority is never lowest). */
  lowestPriority(): number {
    if (this.lowest === undefined) {
      let low = Infinity;
      for (const a of this.running.values()) if (a.job.priority < low) low = a.job.priority;
      this.lowest = low;
    }
    return this.lowest;
  }

  /** Estimated end of the tenant's running jobs, earliest first (for quota reservations). Kept sorted on allocate/release. */
  runningOf(tenant: string): readonly Allocation[] {
    return this.tenantRunning.get(tenant)?.list() ?? [];
  }

  /** runningOf(tenant) in blocks, with block sums; undefined while the tenant has never run anything. */
  runBlocks(tenant: string): Readonly<RunBlocks> | undefined {
    return this.tenantRunning.get(tenant)?.blocks;
  }

  /** Every running job, earliest estimated end first, then smaller id (reservations replay ends in this order). Kept sorted on allocate/release. */
  runningByEnd(): readonly Allocation[] {
    return this.allRunning.list();
  }

  private trackTenant(a: Allocation, sign: 1 | -1): void {
    let t = this.tenantRunning.get(a.job.tenant);
    if (!t) this.tenantRunning.set(a.job.tenant, (t = new TenantRun()));
    track(this.allRunning, a, sign);
    track(t, a, sign);
  }
}

/** Inserts (sign 1) or removes (sign −1) an allocation in a running list, keeping its order. */
function track(t: TenantRun, a: Allocation, sign: 1 | -1): void {
  const lo = t.seek(a);
  if (sign > 0) t.insert(lo, a);
  else if (lo < t.length && t.at(lo) === a) t.remove(lo);
  else throw new Error(`allocation of ${a.job.id} missing from its running list`);
}
