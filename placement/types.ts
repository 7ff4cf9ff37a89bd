// Inputs and outputs of the placement engine. Plain data only (structured-clone and JSON safe), so an
// activity can build an inventory from live state and a workflow can carry a decision in its history.

export type JobType = 'hpc-mpi' | 'ai-training' | 'inference' | 'hybrid';
export type QosClass = 'gold' | 'silver' | 'bronze';

/** Per-hour prices of one node's resources, in an arbitrary currency unit. */
export interface NodePrice {
  cpuHour: number;
  gpuHour: number;
}

export interface NodeSpec {
  id: string;
  cpus: number;
  gpus: number;
  gpuModel?: string;
  memoryMB: number;
  /** GPUs inside one NVLink domain talk at NVLink speed; spanning domains falls back to PCIe/IB. */
  nvlinkDomain?: string;
  /** InfiniBand island / leaf switch: MPI traffic inside one island never crosses the spine. */
  ibIsland?: string;
  rack?: string;
  /** Inlet temperature of the node's rack (°C); cooler racks win ties. */
  rackTempC?: number;
  /** Full-load power (W); placement/energy.ts DEFAULT_POWER when absent. */
  powerW?: number;
  /** Power when up and idle (W); placement/energy.ts DEFAULT_POWER when absent. */
  idlePowerW?: number;
  price?: NodePrice;
  /** Not schedulable (drained, down). */
  down?: boolean;
}

export interface PartitionSpec {
  name: string;
  nodes: NodeSpec[];
  /** Job types the partition accepts; all when absent. */
  jobTypes?: JobType[];
  /** Oversubscription ratios the partition permits (e.g. cpu 1.2, gpu 1.05); 1:1 when absent. */
  oversubscription?: { cpu?: number; gpu?: number };
}

export interface ClusterSpec {
  name: string;
  partitions: PartitionSpec[];
}

export interface SiteSpec {
  name: string;
  clusters: ClusterSpec[];
}

export interface Inventory {
  sites: SiteSpec[];
}

export interface SlotResources {
  cpus: number;
  /**
   * GPUs per slot. A whole number takes that many fully free GPUs; any other fraction without
   * `gpuMilli` is a node-level share (the pooled model: counted per node, bound to no GPU).
   */
  gpus: number;
  memoryMB: number;
  /**
   * A share of one GPU, in thousandths (1..999): the slot must fit inside a single GPU's remaining
   * fraction, beside other shares. `gpus` must then be gpuMilli / 1000, which is what quotas, prices
   * and the per-node counters see; a job where they disagree is rejected.
   */
  gpuMilli?: number;
}

/** A job asks for `count` identical slots; a gang job gets all of them at once or none. */
export interface JobRequest {
  id: string;
  type: JobType;
  tenant: string;
  qos: QosClass;
  priority: number;
  /** Seconds since an arbitrary epoch shared with `now`. */
  submit: number;
  /** Number of slots (MPI ranks, GPUs, nodes) — the gang size. */
  count: number;
  /** Resources of one slot. */
  per: SlotResources;
  /** At most this many slots on one node; 1 means "whole-node gang members" (e.g. Slurm -N n). */
  maxPerNode?: number;
  gpuModel?: string;
  /**
   * Hard constraint for a job that asks for GPUs: every slot on nodes of one declared NVLink domain.
   * When no domain has room now the job is reserved for when one will; when no domain could ever hold
   * it, it is rejected. Ignored by jobs without GPUs.
   */
  needsNvlink?: boolean;
  /** Hard constraint: every slot (MPI rank) inside one IB island, exactly as `strictIsland`. */
  needsIb?: boolean;
  /** Refuse to span IB islands even when that would let it start now. */
  strictIsland?: boolean;
  /** Requested walltime (s): the job's limit; reservations and backfill plan with it unless `estimate` is set. */
  walltime: number;
  /**
   * Predicted run time (s) when the caller has a better guess than the request (placement/predict.ts:
   * from the user's recent completed jobs). The 'score' order, backfill and reservations then plan
   * with min(estimate, walltime) (planned()); deadlines, prices and the other orders keep the request.
   */
  estimate?: number;
  deadline?: number;
  delayTolerant?: boolean;
  checkpointable?: boolean;
  /** false: never chosen as a preemption victim (work the caller does not own, e.g. another user's job). */
  preemptible?: boolean;
  /** GPU-seconds already received (for least-attained-service ordering). */
  attained?: number;
}

export interface SlotAssignment {
  node: string;
  slots: number;
  cpus: number;
  gpus: number;
  memoryMB: number;
  /** GPUs (indices on the node) the slots of a GPU-sharing job sit on, one per slot. */
  gpuIndex?: number[];
}

export interface Placement {
  site: string;
  cluster: string;
  partition: string;
  nodes: SlotAssignment[];
  nvlinkDomains: number;
  ibIslands: number;
}

interface DecisionBase {
  jobId: string;
  explanation: string;
}

export type Decision =
  | (DecisionBase & { kind: 'start'; placement: Placement; price: number; backfilled?: boolean; oversubscribed?: boolean; borrowed?: boolean })
  | (DecisionBase & { kind: 'preempt'; placement: Placement; victims: string[]; price: number })
  | (DecisionBase & { kind: 'reserve'; at: number; placement?: Placement; price: number; reason: 'resources' | 'quota' | 'qos-burst' | 'carbon' })
  | (DecisionBase & { kind: 'reject'; reason: string });

export interface TenantSpec {
  name: string;
  /** Fair-share weight (weighted DRF). */
  weight?: number;
  /** Hard caps; never exceeded. */
  quota?: { cpus?: number; gpus?: number; memoryMB?: number };
}

/**
 * 'srsf': shortest remaining service first, the remaining service being requested walltime × GPUs
 * (CPUs for CPU-only jobs) minus what the job has attained; with preemption a job displaces only jobs
 * with strictly more service left (Tiresias' argument for LAS is that durations are unknown; 'srsf'
 * is for clusters whose requested times are good).
 * 'saf': smallest requested area (walltime × CPUs, GPUs for GPU-only jobs) first. 'f1': Carastan-Santos
 * & de Camargo's F1 (policies.ts `f1Key`), a baseline for the benches.
 * 'score' (the default): Smith's rule for bounded slowdown — requested size × requested walltime²,
 * smallest first — weighted by fair share across the tenants that have jobs waiting, from what a job
 * asks for (requested walltime), never from what it will really use: see policies.ts `scoreKey`.
 */
export type QueueOrder = 'fcfs' | 'sjf' | 'saf' | 'f1' | 'priority' | 'fairshare' | 'las' | 'score' | 'srsf';

/**
 * How a job whose slots fit on one node picks that node. 'topology' is the group-then-node fit of
 * fit.ts. 'best-fit' leaves the least CPU and GPU behind (FGD's packing baseline). 'fgd' is FGD's
 * fragmentation gradient descent (Weng et al., ATC'23): the node whose expected GPU fragmentation
 * under `targetWorkload` grows least. A job that needs several nodes gets the fit `topology` selects.
 */
export type Packing = 'topology' | 'best-fit' | 'fgd';

/** One task shape of the workload the cluster expects, with its share of the tasks (shares sum to 1). */
export interface WorkloadShape {
  share: number;
  cpus: number;
  /** Checked only when given (FGD's own definition looks at CPU and GPU alone). */
  memoryMB?: number;
  /** Whole GPUs of the task; ignored when `gpuMilli` is set. 0 for a CPU-only task. */
  gpus: number;
  /** A share of one GPU in thousandths (1..999), as in a slot. */
  gpuMilli?: number;
  gpuModel?: string;
}

export interface PolicyConfig {
  order: QueueOrder;
  quotas: boolean;
  fairShare: boolean;
  qos: boolean;
  preemption: boolean;
  backfill: 'none' | 'easy' | 'conservative';
  /** Topology-aware packing; false is a greedy first-fit over nodes in inventory order. */
  topology: boolean;
  oversubscription: boolean;
  deadlines: boolean;
  cost: boolean;
  thermal: boolean;
  /**
   * EASY's second rule: a job that outlasts the reservation may still start on nodes the reserved job
   * does not need. Off gives the shadow-time-only variant RLScheduler's HPCSim implements.
   */
  backfillExtraNodes: boolean;
  /** Conservative backfill reserves at most this many blocked jobs per pass (like Slurm's bf_max_job_test). */
  reservationDepth: number;
  /** Least-attained-service queue thresholds in GPU-seconds (Tiresias' discretised queues). */
  lasThresholds: number[];
  tenants: TenantSpec[];
  /**
   * Borrowing (Kueue's cohort model): a checkpointable, preemptible job may go past its class's burst
   * limit into capacity that is idle now (lent by tenants not using their share); a job within its
   * burst limit that needs a resource some other tenant holds beyond its burst reclaims it at once by
   * preempting that tenant's checkpointable jobs. Quotas stay hard caps.
   */
  borrowing: boolean;
  /**
   * The 'score' order's makespan guard: a waiting job whose requested walltime reaches past the time
   * the known work (running jobs' estimated remainders and every queued request, per resource over
   * capacity) needs to drain is critical, since every second it waits then lengthens the schedule;
   * critical jobs go first, longest request first (LPT for the tail). Off by default: it serves a
   * fixed batch that must drain (table (b) turns it on); on the open job streams of table (a) it raised
   * bsld by 30% on Lublin-2 and max wait 1.6× on HPC2N (bench/placement/swf.ts).
   */
  makespanGuard: boolean;
  /**
   * The 'score' order's optional starvation bound, in seconds: a waiting job's key is divided by e
   * for every this long it has waited (policies.ts ageKey), so the widest, longest jobs, which
   * Smith's rule alone leaves for the end of a busy spell, overtake younger ones: one with 10× the key
   * of a newcomer goes first after ln 10 × this of waiting. Default 0: no aging, because on traces
   * the bound was not tuned on it cost more than it bought. At 60 h (the strongest setting that kept
   * bsld below SJF + EASY's on the tuning traces) it missed that goal on 7 of the 20 fresh
   * Lublin–Feitelson windows of `npm run bench:placement-grid` (all exact estimates, bsld 1.3–3.0×
   * the unaged order's), where the unaged order met it on all 20; on the real logs it cut max wait
   * by a third at most (KTH-SP2 244 → 156 h, SDSC-Blue 129 → 107 h, HPC2N unchanged). Without it,
   * max wait is 1.0–1.9× SJF + EASY's on those windows and logs but one (6.2× at load 0.5, where
   * SJF + EASY's is 68 h); table (a) prints it beside bsld. Sites that value a bounded wait over mean slowdown set it: 60 h, or 5 h, which
   * brings max wait within 1.4× FCFS + EASY's on table (a)'s traces at 2.7× the bsld on Lublin-1.
   */
  starvation: number;
  /**
   * Run-time prediction (placement/predict.ts): callers that see jobs complete (the simulator) give
   * each queued job an `estimate` from its user's last two completed jobs, and raise the guess of a
   * running job that outlives it (EASY++). The engine itself only reads JobRequest.estimate. Off by
   * default: with the 'score' order it raised bsld on HPC2N's Table V windows from 36.8 to 41.1
   * (5 samples) and changed nothing on the Lublin logs, whose requests are exact.
   */
  predict?: boolean;
  /**
   * Self-tuning order (a portfolio scheduler after Streit's dynP and Deng, Verboon and Iosup's
   * periodic portfolio scheduling): callers that see jobs complete (the simulator) replay the recent
   * completed jobs, with their now known run times, under each candidate and schedule with the one
   * whose bounded slowdown was lowest among those whose longest wait was no worse than SJF's on the
   * same replay (placement/simulate.ts Portfolio). The engine itself only reads `order`. Off by
   * default: on the traces measured it did worse than the fixed 'score' order (see Portfolio).
   */
  portfolio?: PortfolioCandidate[];
  /**
   * Self-tuning order that plans the queue (Streit's dynP, placement/dynp.ts): before each pass the
   * waiting jobs are planned under each candidate order on a free-capacity profile (running jobs end
   * at their estimates) and the pass runs with the one whose plan has the lowest mean bounded
   * slowdown. Unlike `portfolio` it needs no completed jobs, so the live engine can use it. Off by
   * default: better than 'score' on the lightly loaded logs, worse on the heavily loaded ones
   * (docs/placement.md).
   */
  dynp?: QueueOrder[];
  /** Single-node packing rule; 'topology' when absent. */
  packing?: Packing;
  /** The workload 'fgd' keeps room for; the caller derives it (e.g. typicalWorkload over a trace). */
  targetWorkload?: WorkloadShape[];
  /** Carbon-aware holding of flexible jobs; off when absent. */
  carbonAware?: CarbonAware;
}

/** One order a portfolio may switch to, with or without run-time prediction. */
export interface PortfolioCandidate {
  order: QueueOrder;
  predict?: boolean;
}

/** A portfolio of the engine's own orders, Smith's rule with and without predictions (PolicyConfig.portfolio, opt-in). */
export const DEFAULT_PORTFOLIO: PortfolioCandidate[] = [{ order: 'score' }, { order: 'score', predict: true }, { order: 'sjf' }, { order: 'saf' }, { order: 'f1' }, { order: 'fcfs' }];

/**
 * A carbon-intensity time series: g[k] gCO2/kWh holds on [t[k], t[k+1]) (t ascending, seconds on the
 * engine's clock); the first value before t[0], the last after the end — or, with `period` (s), the
 * series repeats every period from t[0].
 */
export interface CarbonSeries {
  t: number[];
  g: number[];
  period?: number;
}

/** The carbon-aware option (placement/energy.ts carbonHold): hold flexible jobs for a cleaner start. */
export interface CarbonAware {
  /** The forecast the rule trusts. */
  series: CarbonSeries;
  /** No job is held past submit + maxDelay (s). */
  maxDelay: number;
  /**
   * Hold a job at most this many times its requested walltime as well (bounded slowdown grows by
   * delay / run, so a short job held hours costs most): e.g. 1 lets a 2 h request wait up to 2 h.
   */
  slack?: number;
  /** Hold only when a later start lowers the mean intensity over the job's walltime by this share (default 0.1). */
  minGain?: number;
  /** Never hold while the intensity now is at or below this (gCO2/kWh). */
  threshold?: number;
  /** Which jobs may be held: those marked delayTolerant (default) or all; deadline-bound jobs never. */
  jobs?: 'delay-tolerant' | 'all';
}

export interface QosRule {
  /** Share of the tenant's entitlement the class is guaranteed (it may preempt borrowers below it). */
  guarantee: number;
  /** Share of the entitlement the class may never exceed. */
  burst: number;
  oversubscribe: boolean;
}

/** The reference design's QoS table: minimum guarantee / burst limit of the tenant's entitlement. */
export const QOS_RULES: Record<QosClass, QosRule> = {
  gold: { guarantee: 1.0, burst: 1.2, oversubscribe: false },
  silver: { guarantee: 0.8, burst: 1.0, oversubscribe: true },
  bronze: { guarantee: 0.5, burst: 0.8, oversubscribe: true },
};

export const OVERSUBSCRIPTION_DEFAULT = { cpu: 1.2, gpu: 1.05 } as const;

/**
 * Price modifiers of the cost policy. The NVLink surcharge follows the placement: a job pays it when
 * its GPUs (more than one) all sit in one NVLink domain, whether or not it asked for NVLink.
 */
export const PRICE_RULES = { nvlinkSurcharge: 0.2, delayTolerantDiscount: 0.3 } as const;

/** The run time placement plans with: the estimate when one is set (never past the request), else the request. */
export function planned(job: Pick<JobRequest, 'walltime' | 'estimate'>): number {
  const e = job.estimate;
  return e !== undefined && e > 0 && e < job.walltime ? e : job.walltime;
}

export const DEFAULT_POLICY: PolicyConfig = {
  order: 'score',
  quotas: true,
  fairShare: true,
  qos: true,
  preemption: true,
  backfill: 'easy',
  topology: true,
  oversubscription: true,
  deadlines: true,
  cost: true,
  thermal: true,
  backfillExtraNodes: true,
  reservationDepth: 32,
  lasThresholds: [3600],
  tenants: [],
  borrowing: true,
  makespanGuard: false,
  starvation: 0,
  predict: false,
};

export function policy(overrides: Partial<PolicyConfig> = {}): PolicyConfig {
  return { ...DEFAULT_POLICY, ...overrides };
}
