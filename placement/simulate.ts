// A discrete-event simulator that replays jobs through the placement engine (or a baseline expressed
// as an engine policy). Scheduling passes run at every arrival and completion, as in RLScheduler's
// HPCSim; preempted jobs re-queue with their remaining work (checkpointable) or from scratch.
import { ClusterState, schedule, type CarbonSeries, type Decision, type Inventory, type JobRequest, type PolicyConfig, type PortfolioCandidate } from './index.js';
import { EnergyMeter, type EnergyReport } from './energy.js';
import { RuntimePredictor } from './predict.js';

export interface SimJob {
  req: JobRequest;
  /** Actual run time (s) on its requested resources. */
  run: number;
}

export interface JobOutcome {
  id: string;
  submit: number;
  firstStart: number;
  end: number;
  run: number;
  preemptions: number;
}

export interface SimResult {
  outcomes: JobOutcome[];
  /** Jobs the policy rejected (or that could never start); not in the averages, which are over `outcomes`. */
  rejected: string[];
  /** Rejections by the engine's reason ('too-large', 'quota', 'qos-burst', …; 'never-starts' for jobs left waiting with nothing to wait for). */
  rejectReasons: Record<string, number>;
  /** First arrival to last completion (s). */
  makespan: number;
  /** Seconds during which at least one job was running (the union of the run intervals). */
  busy: number;
  /** Mean CPU / GPU utilisation over the busy period: work done / (physical capacity × `busy`). */
  utilCpu: number;
  utilGpu: number;
  avgJct: number;
  avgBsld: number;
  /** Makespan lower bound of the completed jobs: see makespanLowerBound. */
  lowerBound: number;
  /** Average JCT lower bound: mean run time of the completed jobs (a job's JCT is at least its run). */
  jctLowerBound: number;
  decisions: number;
  /** Starts the engine marked oversubscribed. */
  oversubscribed: number;
  /** With SimOptions.energy: the machine's energy and carbon over the makespan. */
  energy?: EnergyReport;
  /** With PolicyConfig.portfolio: how many times each candidate was chosen (the first runs until the first choice). */
  portfolio?: { candidate: PortfolioCandidate; chosen: number }[];
}

export interface LbJob {
  submit: number;
  run: number;
  /** Total CPUs / GPUs the job holds while it runs (slots × per slot). */
  cpus: number;
  gpus: number;
}

/**
 * A lower bound on the makespan (measured from `first`, the first arrival) of any schedule of `jobs`
 * on `cap` CPUs and GPUs: the largest of
 *  - max over jobs of (submit − first + run): no job ends before it arrives and runs;
 *  - max over arrival times t of (t − first + W(t) / capacity), per resource, where W(t) is the work
 *    (resource-seconds) of the jobs submitted at or after t: none of it can be done before t. At
 *    t = first this is the total work / capacity bound.
 */
export function makespanLowerBound(jobs: LbJob[], cap: { cpus: number; gpus: number }, first = jobs.reduce((m, j) => Math.min(m, j.submit), Infinity)): number {
  if (!jobs.length) return 0;
  let lb = 0;
  for (const j of jobs) lb = Math.max(lb, j.submit - first + j.run);
  const bySubmit = [...jobs].sort((a, b) => b.submit - a.submit);
  let wCpu = 0;
  let wGpu = 0;
  for (let k = 0; k < bySubmit.length; k++) {
    const j = bySubmit[k];
    wCpu += j.cpus * j.run;
    wGpu += j.gpus * j.run;
    if (k + 1 < bySubmit.length && bySubmit[k + 1].submit === j.submit) continue; // all jobs submitted at t first
    const t = j.submit - first;
    if (cap.cpus > 0) lb = Math.max(lb, t + wCpu / cap.cpus);
    if (cap.gpus > 0) lb = Math.max(lb, t + wGpu / cap.gpus);
  }
  return lb;
}

/**
 * Capacity for the lower bound: physical, or, when the policy oversubscribes, each node's capacity
 * times its partition's ratio (the most the simulator can ever run at once).
 */
export function lbCapacity(s: ClusterState, pol: Pick<PolicyConfig, 'oversubscription'>): { cpus: number; gpus: number } {
  let cpus = 0;
  let gpus = 0;
  for (let i = 0; i < s.n; i++) {
    if (s.down[i]) continue;
    cpus += s.capCpu[i] * (pol.oversubscription ? s.osCpu[i] : 1);
    gpus += s.capGpu[i] * (pol.oversubscription ? s.osGpu[i] : 1);
  }
  return { cpus, gpus };
}

export const lbJob = (j: SimJob): LbJob => ({ submit: j.req.submit, run: j.run, cpus: j.req.per.cpus * j.req.count, gpus: j.req.per.gpus * j.req.count });

export interface SimOptions {
  /** Account energy (node power from the inventory, DEFAULT_POWER where absent) and, with `carbon`, kg CO2. */
  energy?: { carbon?: CarbonSeries };
  /** Extra scheduling ticks (s) while jobs wait, for policies whose priorities change with time (LAS). */
  tick?: number;
  tau?: number;
  /** Schedule only at multiples of `tick` (round-based schedulers such as Pollux's simulator), not at every event. */
  rounds?: boolean;
  /** Seconds added to a preempted job's remaining work when it restarts (Pollux's simulator: 30 s). */
  restartPenalty?: number;
  /**
   * RLScheduler's HPCSim loop (HPCSimPickJobs.schedule_curr_sequence_reset), for FCFS/SJF with no
   * backfill or its EASY variant: the job picked first in policy order, once it does not fit, stays
   * picked until it starts (skip_for_resources_greedy only moves time on), so a shorter job arriving
   * meanwhile cannot overtake it under SJF. With backfill, its shadow time is taken once when it
   * blocks (moveforward_for_resources_backfill_greedy) and waiting jobs are backfilled in FCFS order
   * if they fit now and, by their estimates, end strictly before it.
   */
  hpcsimLoop?: boolean;
}

class Heap {
  private a: { t: number; id: string; v: number }[] = [];
  push(x: { t: number; id: string; v: number }) {
    const a = this.a;
    a.push(x);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p].t < a[i].t || (a[p].t === a[i].t && a[p].id <= a[i].id)) break;
      [a[p], a[i]] = [a[i], a[p]];
      i = p;
    }
  }
  peek() {
    return this.a[0];
  }
  pop() {
    const a = this.a;
    const top = a[0];
    const last = a.pop()!;
    if (a.length) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && (a[l].t < a[m].t || (a[l].t === a[m].t && a[l].id < a[m].id))) m = l;
        if (r < a.length && (a[r].t < a[m].t || (a[r].t === a[m].t && a[r].id < a[m].id))) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i], a[m]];
        i = m;
      }
    }
    return top;
  }
  get size() {
    return this.a.length;
  }
}

/** Completed jobs a portfolio replays, and how often (in completions) it chooses again. */
export const PORTFOLIO_WINDOW = 256;
export const PORTFOLIO_EVERY = 64;

/**
 * PolicyConfig.portfolio: which candidate to schedule with, chosen from online information only. Opt-in
 * and not the default: on HPC2N's Table V windows (5 samples) it reached bsld 43.4 where the fixed
 * 'score' order gets 36.8 (40.96 without the SJF wait bound; replaying every completed job so far, up
 * to 1,024, every 128 completions with a 5% switching margin: 48.9 / 53.9), because a replay from
 * an idle machine ranks the orders differently from the backlogged machine they then run on. Every
 * PORTFOLIO_EVERY completions it replays the last PORTFOLIO_WINDOW completed jobs (their submits and
 * requests as they were, their run times now known) from an idle machine under each candidate, and
 * takes the one with the lowest mean bounded slowdown among those whose longest wait on that replay
 * is no longer than SJF's (SJF + EASY's starvation is the bound a site accepts from a size-blind
 * order); ties keep the current one. Until the first choice it schedules with the first candidate.
 */
export class Portfolio {
  private readonly done: SimJob[] = [];
  private since = 0;
  current: PortfolioCandidate;
  /** How many times each candidate was chosen (by index), for reports. */
  readonly chosen: number[];

  constructor(
    private readonly inv: Inventory,
    private readonly pol: PolicyConfig,
    readonly candidates: PortfolioCandidate[],
    private readonly tau = 10,
  ) {
    this.current = candidates[0];
    this.chosen = candidates.map(() => 0);
  }

  /** The policy to schedule with now. */
  policy(): PolicyConfig {
    return { ...this.pol, order: this.current.order, predict: this.current.predict ?? false, portfolio: [] };
  }

  observe(job: SimJob): void {
    this.done.push(job);
    if (this.done.length > PORTFOLIO_WINDOW) this.done.shift();
    if (++this.since >= PORTFOLIO_EVERY && this.done.length >= PORTFOLIO_EVERY) {
      this.since = 0;
      this.choose();
    }
  }

  private choose(): void {
    const window = [...this.done].sort((a, b) => a.req.submit - b.req.submit || (a.req.id < b.req.id ? -1 : 1));
    const scored = this.candidates.map((c) => {
      const r = simulate(this.inv, window, { ...this.pol, order: c.order, predict: c.predict ?? false, portfolio: [] }, { tau: this.tau });
      return { c, bsld: r.avgBsld, maxWait: r.outcomes.reduce((m, o) => Math.max(m, o.firstStart - o.submit), 0) };
    });
    const sjf = scored.find((x) => x.c.order === 'sjf' && !x.c.predict);
    const allowed = scored.filter((x) => !sjf || x.maxWait <= sjf.maxWait);
    let best = allowed.find((x) => x.c === this.current) ?? allowed[0];
    for (const x of allowed) if (x.bsld < best.bsld) best = x;
    this.current = best.c;
    this.chosen[this.candidates.indexOf(best.c)]++;
  }
}

export function simulate(inv: Inventory, jobs: SimJob[], pol: PolicyConfig, opts: SimOptions = {}): SimResult {
  const tau = opts.tau ?? 10;
  const s = new ClusterState(inv);
  const arrivals = [...jobs].sort((a, b) => a.req.submit - b.req.submit || (a.req.id < b.req.id ? -1 : 1));
  const byId = new Map(jobs.map((j) => [j.req.id, j]));
  const st = new Map<string, { remaining: number; start: number; firstStart: number; version: number; preemptions: number; attained: number }>();
  for (const j of jobs) st.set(j.req.id, { remaining: j.run, start: -1, firstStart: -1, version: 0, preemptions: 0, attained: 0 });
  const done = new Heap();
  const queue = new Map<string, JobRequest>();
  const outcomes: JobOutcome[] = [];
  const rejected: string[] = [];
  const rejectReasons: Record<string, number> = {};
  let next = 0;
  let now = arrivals.length ? arrivals[0].req.submit : 0;
  let decisions = 0;
  let oversubscribed = 0;
  let busy = 0;
  let workCpu = 0;
  let workGpu = 0;
  let nextTick = Infinity;
  let picked: { id: string; shadow: number } | undefined;
  const meter = opts.energy ? new EnergyMeter(inv, opts.energy.carbon) : undefined;
  // The earliest time a carbon-held job is to be reconsidered (the engine's 'carbon' reserve).
  let nextWake = Infinity;
  // PolicyConfig.predict: guesses from each user's completed jobs, kept per job across preemptions.
  const portfolio = pol.portfolio?.length ? new Portfolio(inv, pol, pol.portfolio, tau) : undefined;
  const predictor = pol.predict || pol.portfolio?.some((c) => c.predict) ? new RuntimePredictor() : undefined;
  const guess = new Map<string, number>();
  const queued = (r: JobRequest): JobRequest => {
    const e = guess.get(r.id);
    return e === undefined ? { ...r } : { ...r, estimate: e };
  };
  while (next < arrivals.length || done.size || queue.size) {
    const tArr = next < arrivals.length ? arrivals[next].req.submit : Infinity;
    const tDone = done.size ? done.peek().t : Infinity;
    const t = Math.min(tArr, tDone, queue.size ? Math.min(nextTick, nextWake) : Infinity);
    if (t === Infinity) {
      // Nothing runs, nothing arrives, yet jobs wait: they can never start.
      for (const id of queue.keys()) rejected.push(id);
      if (queue.size) rejectReasons['never-starts'] = (rejectReasons['never-starts'] ?? 0) + queue.size;
      break;
    }
    // What runs stays put between events: [now, t) is busy iff something runs.
    if (s.running.size) busy += t - now;
    meter?.advance(now, t);
    now = t;
    while (done.size && done.peek().t <= now) {
      const e = done.pop();
      const js = st.get(e.id)!;
      if (e.v !== js.version) continue; // preempted since
      const a = s.release(e.id)!;
      meter?.stop(e.id);
      const j = byId.get(e.id)!;
      outcomes.push({ id: e.id, submit: j.req.submit, firstStart: js.firstStart, end: now, run: j.run, preemptions: js.preemptions });
      predictor?.observe(j.req, j.run);
      portfolio?.observe(j);
      void a;
    }
    const intoEmpty: string[] | undefined = opts.hpcsimLoop && queue.size === 0 ? [] : undefined;
    while (next < arrivals.length && arrivals[next].req.submit <= now) {
      const j = arrivals[next++];
      const e = predictor?.estimate(j.req);
      if (e !== undefined) guess.set(j.req.id, e);
      queue.set(j.req.id, queued(j.req));
      intoEmpty?.push(j.req.id);
    }
    if (pol.order === 'las' || pol.order === 'srsf') {
      // Attained service moves with time: refresh it for waiting and running jobs.
      for (const [id, q] of queue) q.attained = st.get(id)!.attained;
      for (const a of s.running.values()) a.job.attained = st.get(a.job.id)!.attained + a.job.per.gpus * a.job.count * (now - a.start);
    }
    if (opts.rounds && opts.tick && now % opts.tick !== 0) {
      nextTick = Math.ceil(now / opts.tick) * opts.tick;
      continue;
    }
    predictor?.correct(s, now);
    const active = portfolio ? portfolio.policy() : pol;
    // The engine plans with any estimate a job carries: a portfolio candidate without prediction gets none.
    const waiting = predictor && !active.predict ? [...queue.values()].map(({ estimate: _, ...r }) => r) : [...queue.values()];
    const ds = opts.hpcsimLoop ? hpcsimPass(intoEmpty) : schedule(s, waiting, now, active);
    decisions += ds.length;
    nextWake = Infinity;
    for (const d of ds) {
      if (d.kind === 'reserve' && d.reason === 'carbon') nextWake = Math.min(nextWake, d.at);
      if (d.kind === 'start' || d.kind === 'preempt') {
        if (d.kind === 'start' && d.oversubscribed) oversubscribed++;
        if (d.kind === 'preempt')
          for (const vid of d.victims) {
            const vs = st.get(vid)!;
            const vj = byId.get(vid)!;
            const ran = now - vs.start;
            vs.attained += vj.req.per.gpus * vj.req.count * ran;
            workCpu -= vj.req.per.cpus * vj.req.count * Math.max(0, vs.remaining - ran);
            workGpu -= vj.req.per.gpus * vj.req.count * Math.max(0, vs.remaining - ran);
            vs.remaining = vj.req.checkpointable ? Math.max(1, vs.remaining - ran) : vj.run;
            vs.version++;
            vs.preemptions++;
            meter?.stop(vid);
            queue.set(vid, { ...queued(vj.req), attained: vs.attained });
          }
        const js = st.get(d.jobId)!;
        const j = byId.get(d.jobId)!;
        if (js.firstStart >= 0 && opts.restartPenalty) js.remaining += opts.restartPenalty;
        js.start = now;
        meter?.start(d.jobId, d.placement);
        if (js.firstStart < 0) js.firstStart = now;
        done.push({ t: now + js.remaining, id: d.jobId, v: js.version });
        workCpu += j.req.per.cpus * j.req.count * js.remaining;
        workGpu += j.req.per.gpus * j.req.count * js.remaining;
        queue.delete(d.jobId);
      } else if (d.kind === 'reject') {
        rejected.push(d.jobId);
        rejectReasons[d.reason] = (rejectReasons[d.reason] ?? 0) + 1;
        queue.delete(d.jobId);
      }
    }
    nextTick = opts.tick ? now + opts.tick : Infinity;
  }
  /**
   * One HPCSim step at `now`; `schedule` applies the starts to `s`, the caller books them.
   * `intoEmpty`: jobs that arrived now to an empty queue, in trace order.
   */
  function hpcsimPass(intoEmpty?: string[]): Decision[] {
    const out: Decision[] = [];
    const gone = new Set<string>();
    const waiting = () => [...queue.values()].filter((q) => !s.running.has(q.id) && !gone.has(q.id));
    const strict = { ...pol, backfill: 'none' as const };
    const reserveIn = (ds: Decision[]) => ds.find((d): d is Extract<Decision, { kind: 'reserve' }> => d.kind === 'reserve' && d.reason !== 'carbon');
    const run = (jobs: JobRequest[], p: PolicyConfig) => {
      const ds = schedule(s, jobs, now, p);
      for (const d of ds) if (d.kind === 'reject') gone.add(d.jobId);
      for (const d of ds) out.push(d);
      return ds;
    };
    // HPCSim's moveforward_for_job feeds an empty queue one arrival at a time and picks among what is
    // queued, so jobs arriving together at an idle queue are picked in trace order, not policy order.
    for (const id of picked ? [] : (intoEmpty ?? [])) {
      const r = reserveIn(run([queue.get(id)!], strict));
      if (r) {
        picked = { id, shadow: r.at };
        break;
      }
    }
    for (;;) {
      if (picked && (gone.has(picked.id) || !queue.has(picked.id))) picked = undefined;
      if (picked) {
        if (run([queue.get(picked.id)!], strict).some((d) => d.kind === 'start')) {
          picked = undefined;
          continue;
        }
      } else {
        // Start jobs in policy order while they fit; the first that does not becomes the picked job.
        const ds = run(waiting(), strict);
        const r = reserveIn(ds);
        if (!r) {
          if (ds.some((d) => d.kind === 'reject')) continue; // a too-large head left: pick again
          return out;
        }
        picked = { id: r.jobId, shadow: r.at };
      }
      if (pol.backfill !== 'none') {
        const p = picked;
        const fits = waiting().filter((q) => q.id !== p.id && now + q.walltime < p.shadow);
        // Depth 0: no reservation of the engine's own; the shadow test above is HPCSim's.
        run(fits, { ...pol, order: 'fcfs', backfill: 'easy', reservationDepth: 0, backfillExtraNodes: true });
      }
      return out;
    }
  }
  const first = arrivals.length ? arrivals[0].req.submit : 0;
  const lastEnd = outcomes.reduce((m, o) => Math.max(m, o.end), first);
  const makespan = lastEnd - first;
  const jct = outcomes.reduce((t, o) => t + (o.end - o.submit), 0) / Math.max(1, outcomes.length);
  const bsld = outcomes.reduce((t, o) => t + Math.max(1, (o.end - o.submit) / Math.max(o.run, tau)), 0) / Math.max(1, outcomes.length);
  const served = outcomes.map((o) => byId.get(o.id)!);
  const lowerBound = makespanLowerBound(served.map(lbJob), lbCapacity(s, pol), first);
  const jctLowerBound = served.reduce((t, j) => t + j.run, 0) / Math.max(1, served.length);
  return {
    outcomes,
    rejected,
    rejectReasons,
    makespan,
    busy,
    utilCpu: busy > 0 && s.totalCpu ? workCpu / (s.totalCpu * busy) : 0,
    utilGpu: busy > 0 && s.totalGpu ? workGpu / (s.totalGpu * busy) : 0,
    avgJct: jct,
    avgBsld: bsld,
    lowerBound,
    jctLowerBound,
    decisions,
    oversubscribed,
    ...(meter && { energy: meter.report() }),
    ...(portfolio && { portfolio: portfolio.candidates.map((candidate, k) => ({ candidate, chosen: portfolio.chosen[k] })) }),
  };
}
