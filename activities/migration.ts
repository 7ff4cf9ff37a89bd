// Activities of staged migration: partition changes, benchmark jobs and observation on a Slurm site
// (scontrol/sbatch) or a Kubernetes site (node pools by label and taint, benchmark Jobs; see
// backends/kubernetes/nodes.ts), and the routing share that pipelines read (activities/routing.ts). Each change is idempotent (absolute states,
// deterministic job names) and audited, so a retried activity never moves a node twice.
import { Context } from '@temporalio/activity';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SlurmAdmin, type SlurmAdminOptions } from '../backends/slurm-admin.js';
import { KubeClients } from '../backends/kubernetes/client.js';
import { KubeNodePools, type KubeSiteOptions } from '../backends/kubernetes/nodes.js';
import type { BenchmarkKind, BenchmarkResult, PartitionState, SiteSnapshot, UndoStep } from '../contract/migration.js';
import { failure } from '../contract/failures.js';
import { isPipelineJobName, type Routing } from '../contract/routing.js';
import { readRouting, writeRouting } from './routing.js';
import { activityAuditor, defaultAuditSettings, type AuditSettings } from './audit.js';

/** A site staged migration administers: Slurm (the default, for configs without `kind`) or Kubernetes. */
export type MigrationSiteConfig = ({ kind?: 'slurm' } & SlurmAdminOptions) | ({ kind: 'kubernetes' } & KubeSiteOptions);

export interface MigrationActivityConfig {
  home: string;
  /** Sites by name. */
  sites: Record<string, MigrationSiteConfig>;
  /** The tamper-evident audit log (default <home>/audit.jsonl); changes.jsonl per site stays the site's own record. */
  audit?: AuditSettings;
}

export type { Routing } from '../contract/routing.js';

export interface Observation {
  jobs: number;
  failed: number;
  errorRate: number;
  avgWaitSeconds: number;
  utilisation: number;
}

// Real work of each kind, small enough for a test cluster: several tasks via srun, a CPU loop, disk I/O.
const BENCHMARK_SCRIPTS: Record<BenchmarkKind, { script: string; args: string[] }> = {
  mpi: { script: 'srun --ntasks=2 sh -c \'echo "rank $SLURM_PROCID of $SLURM_NTASKS on $(hostname)"\'', args: ['--ntasks=2'] },
  cpu: { script: "awk 'BEGIN { s = 0; for (i = 0; i < 20000000; i++) s += i % 7; print s }'", args: ['--ntasks=1'] },
  io: { script: 'f="io-$SLURM_JOB_ID.bin"; dd if=/dev/zero of="$f" bs=1M count=64 conv=fsync status=none && dd if="$f" of=/dev/null bs=1M status=none; rm -f "$f"', args: ['--ntasks=1'] },
};
/** The audit log's name for each entry of a site's changes.jsonl. */
const CHANGE_ACTIONS: Record<string, string> = { partition: 'partition.changed', 'delete-partition': 'partition.deleted', 'move-jobs': 'partition.jobsMoved', routing: 'routing.changed' };
const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT', 'NODE_FAIL', 'PREEMPTED', 'BOOT_FAIL', 'OUT_OF_MEMORY', 'DEADLINE']);

export function createMigrationActivities(cfg: MigrationActivityConfig) {
  const siteConfig = (site: string) => {
    const o = cfg.sites[site];
    if (!o) throw new Error(`site "${site}" is not configured on this worker (configured: ${Object.keys(cfg.sites).join(', ') || 'none'})`);
    return o;
  };
  const admin = (site: string) => {
    const o = siteConfig(site);
    if (o.kind === 'kubernetes') throw new Error(`site "${site}" is a Kubernetes site, not a Slurm one`);
    mkdirSync(o.workDir, { recursive: true });
    return new SlurmAdmin(o);
  };
  const pools = new Map<string, KubeNodePools>();
  /** The site's node pools when it is a Kubernetes site (one client per site), else undefined. */
  const kube = (site: string): KubeNodePools | undefined => {
    const o = siteConfig(site);
    if (o.kind !== 'kubernetes') return undefined;
    let p = pools.get(site);
    if (!p) pools.set(site, (p = new KubeNodePools(new KubeClients(o), o)));
    return p;
  };
  const siteDir = (site: string) => {
    const d = join(cfg.home, 'sites', site);
    mkdirSync(d, { recursive: true });
    return d;
  };
  const chain = activityAuditor(cfg.audit ?? defaultAuditSettings(cfg.home));
  const audit = async (site: string, entry: { change: string } & Record<string, unknown>) => {
    appendFileSync(join(siteDir(site), 'changes.jsonl'), JSON.stringify({ at: new Date().toISOString(), ...entry }) + '\n');
    const { change, ...details } = entry;
    await chain({ what: CHANGE_ACTIONS[change] ?? `partition.${change}`, where: { site, runtime: kube(site) ? 'kubernetes' : 'slurm' }, details });
  };

  const acts = {
    async snapshotSite(site: string): Promise<SiteSnapshot> {
      const k = kube(site);
      return { partitions: await (k ?? admin(site)).partitions() };
    },

    async applyPartition(site: string, p: PartitionState): Promise<boolean> {
      const k = kube(site);
      if (k) return kubeSetPartition(site, k, p, false);
      const a = admin(site);
      const before = await a.partition(p.name);
      const changed = await a.setPartition(p);
      if (changed) await audit(site, { change: 'partition', name: p.name, from: before ?? null, to: p });
      return changed;
    },

    /** @param moveTo where Tandem's routed pipeline jobs still pending in the partition go (the legacy partition). */
    async removePartition(site: string, name: string, moveTo?: string): Promise<boolean> {
      const k = kube(site);
      if (k) {
        // Removing the label and NoSchedule taints evicts nothing: running pods finish where they are.
        const before = await k.partition(name);
        if (!before || name === k.legacyPool) return false;
        const changed = await k.deletePartition(name);
        if (changed.length) await audit(site, { change: 'delete-partition', name, from: before, nodes: changed });
        return changed.length > 0;
      }
      const a = admin(site);
      const before = await a.partition(name);
      if (!before) return false;
      // Slurm refuses to delete a partition that still has jobs. Tandem's own benchmark jobs can go;
      // anybody else's must finish (or be moved) first, which is the operator's call.
      // Pipelines routed here that have not started yet move to the legacy pool; the pipeline keeps
      // watching the same job id, so it does not notice.
      let live = (await a.jobs(name)).filter((j) => !TERMINAL.has(j.state));
      const waiting = moveTo ? live.filter((j) => j.state === 'PENDING' && isPipelineJobName(j.name)) : [];
      for (const j of waiting) await a.run('scontrol', ['update', `JobId=${j.id}`, `Partition=${moveTo}`]);
      if (waiting.length) {
        await audit(site, { change: 'move-jobs', from: name, to: moveTo, jobs: waiting.map((j) => j.id) });
        live = live.filter((j) => !waiting.includes(j));
      }
      const ours = live.filter((j) => j.name.startsWith('tandem-mig-')).map((j) => j.id);
      if (ours.length) {
        await a.run('scancel', ours);
        await chain({ what: 'job.cancelled', where: { site, runtime: 'slurm' }, details: { jobIds: ours, reason: `partition ${name} removed` } });
      }
      const others = live.filter((j) => !j.name.startsWith('tandem-mig-'));
      if (others.length) {
        throw failure('PartitionInUse', `partition ${name} on ${site} still has ${others.length} job(s) (${others.map((j) => j.id).join(', ')}); they must finish or move before its nodes can be returned`);
      }
      for (let i = 0; i < 20 && ours.length && (await a.jobs(name)).some((j) => ours.includes(j.id) && !TERMINAL.has(j.state)); i++) await new Promise((r) => setTimeout(r, 250));
      const changed = await a.deletePartition(name);
      if (changed) await audit(site, { change: 'delete-partition', name, from: before });
      return changed;
    },

    /** Sets the routing share that new pipelines at the site read; returns the previous one (for the undo). */
    async setRouting(site: string, routing: Routing): Promise<Routing> {
      const prev = readRouting(cfg.home, site);
      writeRouting(cfg.home, site, routing);
      if (JSON.stringify(prev) !== JSON.stringify(routing)) await audit(site, { change: 'routing', from: prev, to: routing });
      return prev;
    },

    async getRouting(site: string): Promise<Routing> {
      return readRouting(cfg.home, site);
    },

    async applyUndo(site: string, step: UndoStep): Promise<void> {
      const k = kube(site);
      // On Kubernetes an undo restores each node to its recorded labels/annotations/taints, exactly.
      if (step.kind === 'set-partition' && k) await kubeSetPartition(site, k, step.partition, true);
      else if (step.kind === 'set-partition') await acts.applyPartition(site, step.partition);
      else if (step.kind === 'delete-partition') await acts.removePartition(site, step.name, step.moveTo);
      else await acts.setRouting(site, { percent: step.percent, policies: step.policies, ...(step.pools ? { pools: step.pools } : {}) });
    },

    /** Runs the suite on both pools side by side and reports wait and run times per job. */
    async runBenchmarks(site: string, input: { runKey: string; tandemPartition: string; legacyPartition: string; suite: BenchmarkKind[]; timeoutMs: number }): Promise<BenchmarkResult[]> {
      const k = kube(site);
      if (k) return kubeBenchmarks(k, input);
      const a = admin(site);
      const ctx = Context.current();
      const submitted: { kind: BenchmarkKind; pool: 'tandem' | 'legacy'; jobId: string }[] = [];
      for (const kind of input.suite) {
        for (const pool of ['tandem', 'legacy'] as const) {
          const b = BENCHMARK_SCRIPTS[kind];
          const partition = pool === 'tandem' ? input.tandemPartition : input.legacyPartition;
          const jobId = await a.submitOnce(`tandem-mig-${input.runKey}-${pool}-${kind}`, partition, b.script, b.args);
          submitted.push({ kind, pool, jobId });
        }
      }
      await chain({ what: 'job.submitted', where: { site, runtime: 'slurm' }, details: { runKey: input.runKey, benchmarks: submitted } });
      const deadline = Date.now() + input.timeoutMs;
      for (;;) {
        const jobs = await Promise.all(submitted.map(async (s) => ({ ...s, rec: await a.job(s.jobId) })));
        const states = jobs.map((j) => j.rec?.JobState ?? 'UNKNOWN');
        ctx.heartbeat({ states });
        if (states.every((s) => TERMINAL.has(s))) {
          const secs = (from?: string, to?: string) => (from && to && /^\d{4}/.test(from) && /^\d{4}/.test(to) ? Math.max(0, (Date.parse(`${to}Z`) - Date.parse(`${from}Z`)) / 1000) : 0);
          return jobs.map((j) => ({ kind: j.kind, pool: j.pool, jobId: j.jobId, state: j.rec!.JobState!, waitSeconds: secs(j.rec!.SubmitTime, j.rec!.StartTime), runSeconds: secs(j.rec!.StartTime, j.rec!.EndTime) }));
        }
        if (Date.now() > deadline) {
          // The gate has decided: its own unfinished jobs go, so the pool can be returned cleanly.
          const unfinished = jobs.filter((j) => !TERMINAL.has(j.rec?.JobState ?? '')).map((j) => j.jobId);
          if (unfinished.length) {
            await a.run('scancel', unfinished);
            await chain({ what: 'job.cancelled', where: { site, runtime: 'slurm' }, details: { runKey: input.runKey, jobIds: unfinished, reason: 'benchmark gate timeout' } });
          }
          return jobs.map((j) => ({ kind: j.kind, pool: j.pool, jobId: j.jobId, state: `${j.rec?.JobState ?? 'UNKNOWN'} (gate timeout)`, waitSeconds: 0, runSeconds: 0 }));
        }
        await ctx.sleep(500);
      }
    },

    /**
     * Error rate and wait of the pipeline jobs routed to the pool since `sinceMs` (Tandem's pipeline
     * job names in that partition, see contract/routing.ts: not the gate's benchmarks, not other
     * users' jobs), and its CPU utilisation now. A job still pending counts with the wait so far, so
     * a pool that starts nothing breaches the wait SLO instead of looking idle.
     */
    async observePool(site: string, input: { partition: string; sinceMs: number }): Promise<Observation> {
      const k = kube(site);
      if (k) return k.observe(input.partition, input.sinceMs);
      const a = admin(site);
      const jobs = (await a.jobs(input.partition)).filter((j) => j.submit >= input.sinceMs - 1000 && isPipelineJobName(j.name));
      const finished = jobs.filter((j) => TERMINAL.has(j.state));
      const failed = finished.filter((j) => j.state !== 'COMPLETED' && j.state !== 'CANCELLED').length;
      const now = Date.now();
      // squeue's start of a pending job is only an estimate: its wait is the time it has waited so far.
      const waits = jobs.flatMap((j) => (j.state === 'PENDING' ? [(now - j.submit) / 1000] : j.start !== undefined && j.start >= j.submit ? [(j.start - j.submit) / 1000] : []));
      const avgWait = waits.length ? waits.reduce((s, w) => s + w, 0) / waits.length : 0;
      const cpu = await a.cpuUsage(input.partition);
      return { jobs: jobs.length, failed, errorRate: finished.length ? failed / finished.length : 0, avgWaitSeconds: avgWait, utilisation: cpu.total ? cpu.allocated / cpu.total : 0 };
    },
  };

  async function kubeSetPartition(site: string, k: KubeNodePools, p: PartitionState, exact: boolean): Promise<boolean> {
    const before = await k.partition(p.name);
    const r = await k.setPartition(p, { exact });
    if (r.changed.length || r.missing.length) {
      const strip = (q: PartitionState | undefined) => q && { name: q.name, nodes: q.nodes, state: q.state, overSubscribe: q.overSubscribe };
      await audit(site, { change: 'partition', name: p.name, from: strip(before) ?? null, to: strip(p), exact, nodes: r.changed, ...(r.missing.length ? { missing: r.missing } : {}), ...(r.kept.length ? { kept: r.kept } : {}) });
    }
    return r.changed.length > 0;
  }

  async function kubeBenchmarks(k: KubeNodePools, input: { runKey: string; tandemPartition: string; legacyPartition: string; suite: BenchmarkKind[]; timeoutMs: number }): Promise<BenchmarkResult[]> {
    const ctx = Context.current();
    const submitted: { kind: BenchmarkKind; pool: 'tandem' | 'legacy'; jobId: string }[] = [];
    for (const kind of input.suite) {
      for (const pool of ['tandem', 'legacy'] as const) {
        const partition = pool === 'tandem' ? input.tandemPartition : input.legacyPartition;
        submitted.push({ kind, pool, jobId: await k.submitBenchmark({ runKey: input.runKey, pool, kind, partition, tandemPartition: input.tandemPartition }) });
      }
    }
    const deadline = Date.now() + input.timeoutMs;
    for (;;) {
      const results = await Promise.all(submitted.map(async (s) => ({ ...s, ...(await k.benchmarkResult(s.jobId)) })));
      ctx.heartbeat({ states: results.map((r) => r.state) });
      if (results.every((r) => r.state === 'COMPLETED' || r.state === 'FAILED')) return results;
      if (Date.now() > deadline) {
        // The gate has decided: its own unfinished Jobs go, so the pool can be returned cleanly.
        for (const r of results.filter((r) => r.state !== 'COMPLETED' && r.state !== 'FAILED')) await k.deleteJob(r.jobId);
        return results.map((r) => (r.state === 'COMPLETED' || r.state === 'FAILED' ? r : { ...r, state: `${r.state} (gate timeout)`, waitSeconds: 0, runSeconds: 0 }));
      }
      await ctx.sleep(250);
    }
  }

  return acts;
}

export type MigrationActivities = ReturnType<typeof createMigrationActivities>;
