// Cross-site recovery: the activities behind hybridPipeline's failover path. Each configured site has its
// own job backend (FirecREST or slurmrestd), a health probe and a filesystem root for run directories.
// The workflow asks where to run (healthy sites, in order), stages the data set and restores the newest
// valid checkpoint there (copied with verification; checkpoint data never enters a payload), submits the
// training job under a lease (programs/fence.ts), watches it with a grace window for an unreachable site,
// fences the old job, and finally brings the winning checkpoint home for the catalog.
import { Context } from '@temporalio/activity';
import { existsSync, mkdirSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { FENCED_EXIT_CODE, fencedMarker } from '../programs/lease.js';
import { leasePollCapMs } from '../contract/failover.js';
import { applyRetention, copyCheckpoint, copyVerifiedDir, latestValidCheckpoint, removeStaleCopies, sha256File, type Hasher, type Skipped } from '../backends/checkpoints.js';
import type { JobBackend } from '../backends/types.js';
import { builtinCommand } from '../programs/commands.js';
import { durationMs } from '../contract/duration.js';
import { classifyJobState, type JobRef, type JobStatus } from '../contract/outcome.js';
import { failure } from '../contract/failures.js';
import { PollBackoff, pollPause } from './poll.js';
import { runDirs } from './run-store.js';
import type { SubmitJobInput } from './types.js';
import { policy as makePolicy, type JobRequest, type PolicyConfig } from '../placement/index.js';
import { decideNow, gatherInventory, type InventorySource } from './placement.js';
import { DEFAULTS, TUNING_DEFAULTS } from '../config/defaults.js';
import { activityAuditor, defaultAuditSettings, type AuditSettings } from './audit.js';
import { withTimeout } from '../backends/timeout.js';
import { stateLog, type ObservedState } from './observed-states.js';
import type { TenantGuard } from './tenant-policy.js';

export interface SiteHealth {
  healthy: boolean;
  detail: string;
}

/** One Slurm site that the pipeline may run training on. */
export interface RecoverySite {
  name: string;
  backend: JobBackend;
  /** Root of the site's run directories, as the worker reaches the site's filesystem. */
  root: string;
  /** FirecREST /status/systems servicesHealth, slurmrestd ping, … within a timeout. */
  health(): Promise<SiteHealth>;
  /** Verification where the data lives (FirecREST checksum endpoint); local sha256 otherwise. */
  hasher?: Hasher;
  /** The site's nodes and running work, so that failover asks placement which healthy site fits best. */
  inventory?: InventorySource;
}

export interface RecoveryConfig {
  /** TANDEM_HOME: the home run directory holds the data set and the catalogued checkpoints. */
  home: string;
  sites: RecoverySite[];
  /** The audit log (default <home>/audit.jsonl). */
  audit?: AuditSettings;
  pollInitialMs?: number;
  /** The tenant policy (activities/tenant-policy.ts): failover only to sites the run's tenant may use. */
  tenantGuard?: TenantGuard;
  /** Health probe timeout. */
  healthTimeoutMs?: number;
  /** Policy of the placement that ranks healthy sites (default: the engine's, without preemption). */
  placementPolicy?: Partial<PolicyConfig>;
}

export interface ChooseSiteInput {
  /** Sites not to use (the failed one). */
  exclude: string[];
  /** Restrict to these, in preference order (all configured sites by default). */
  sites?: string[];
  /** The job to place: healthy sites are ranked by placement; without it, preference order decides. */
  job?: JobRequest;
}

export interface ChooseSiteResult {
  site?: string;
  /** One line per site probed: "zurich: healthy (…)" — recorded in the timeline. */
  probes: string[];
}

export interface StageSiteInput {
  runKey: string;
  site: string;
}

export interface StageSiteResult {
  /** The checkpoint the job will resume from (undefined: from scratch). */
  step?: number;
  /** Where it came from (a site name or "home"). */
  source?: string;
  copied: boolean;
  bytes: number;
  skipped: (Skipped & { source: string })[];
  /** Sources that could not be read, with why. */
  unreadable: string[];
  staleCopiesRemoved: number;
}

export interface SubmitAtInput extends SubmitJobInput {
  site: string;
  /** Lease time to live; the job stops itself when the lease is not renewed in time. */
  leaseTtlMs?: number;
}

export interface WatchAtInput {
  ref: JobRef;
  pollMaxMs?: number;
  /** How long the site may stay unobservable before the watch gives up with `unreachable`. */
  graceMs: number;
  leaseTtlMs?: number;
  runKey: string;
}

/** `selfFenced`: the job stopped itself because nobody renewed its lease (e.g. no worker watched it
 *  for longer than the lease) while its site kept answering: the site is fine, the job can be resubmitted there. */
export type WatchAtResult = { kind: 'ended'; status: JobStatus & { observed?: ObservedState[] }; selfFenced?: boolean } | { kind: 'unreachable'; forMs: number; error: string; lastState?: string; progress?: JobStatus['progress']; observed?: ObservedState[] };

export interface FenceResult {
  fenced: boolean;
  detail: string;
}

export interface CollectResult {
  path: string;
  step: number;
  copied: boolean;
  skipped: Skipped[];
}

export function leaseFile(root: string, runKey: string, name: string): string {
  return join(runDirs(root, runKey).root, `lease-${name}.json`);
}

function writeLease(file: string, holder: string, ttlMs: number): void {
  writeFileSync(`${file}.tmp`, JSON.stringify({ holder, expiresAt: Date.now() + ttlMs }));
  renameSync(`${file}.tmp`, file);
}

export function createRecoveryActivities(config: RecoveryConfig) {
  const sites = new Map(config.sites.map((s) => [s.name, s]));
  const pollInitialMs = config.pollInitialMs ?? DEFAULTS.pollInitialMs;
  const audit = activityAuditor(config.audit ?? defaultAuditSettings(config.home));
  const site = (name: string): RecoverySite => {
    const s = sites.get(name);
    if (!s) throw failure('RuntimeUnavailable', `site ${name} is not configured on this worker (configured: ${[...sites.keys()].join(', ') || 'none'})`);
    return s;
  };
  const siteDirs = (name: string, runKey: string) => runDirs(site(name).root, runKey);
  const placementPolicy = makePolicy({ preemption: false, ...config.placementPolicy });

  /** The engine's decision over the healthy sites' live inventories (one decision across all of them). */
  async function placeAmong(healthy: string[], job: JobRequest): Promise<{ site?: string; note: string }> {
    const unread = healthy.filter((name) => !site(name).inventory).map((name) => `${name} (no inventory source)`);
    // Each site's own source, bounded by the probe timeout; decisions name the recovery site, whatever
    // the backend calls its cluster.
    const sources = healthy.flatMap((name): InventorySource[] => {
      const src = site(name).inventory;
      if (!src) return [];
      const gather = async () => {
        const g = await withTimeout(src.gather(), config.healthTimeoutMs ?? 5000, `${name} inventory`);
        return { ...g, sites: g.sites.map((s) => ({ ...s, name })) };
      };
      return [{ name, gather }];
    });
    const { inventory, running, unavailable } = await gatherInventory(sources);
    unread.push(...unavailable.map((u) => `${u.source} (${u.error})`));
    const unreadNote = unread.length ? `; not ranked: ${unread.join(', ')}` : '';
    if (!inventory.sites.length) return { note: `placement: no inventory${unreadNote}; preference order decides` };
    const now = Date.now() / 1000;
    const d = decideNow(inventory, running, job, now, placementPolicy);
    const at = 'placement' in d ? d.placement : undefined;
    if (!at || d.kind === 'reject') return { note: `placement: ${d.kind} (${d.explanation})${unreadNote}; preference order decides` };
    const when = d.kind === 'reserve' ? `reserve at +${Math.max(0, Math.round(d.at - now))}s` : d.kind;
    return { site: at.site, note: `placement: ${when} on ${at.site}/${at.cluster}/${at.partition} (${d.explanation})${unreadNote}` };
  }

  return {
    /**
     * A healthy site that is not excluded. Every site is probed (in parallel, each within the health
     * timeout); among the healthy ones placement picks where the job starts soonest and fits best. A
     * site whose inventory cannot be read, or a job placement cannot fit, falls back to preference order.
     */
    async chooseSite({ exclude, sites: only, job }: ChooseSiteInput): Promise<ChooseSiteResult> {
      // A misconfiguration is not an outage: fail now rather than wait for a site that cannot appear.
      const configured = [...sites.keys()];
      if (!configured.length) throw failure('RuntimeUnavailable', 'failover needs Slurm sites, but this worker has none configured (set TANDEM_SITES_FILE; see docs/slurm.md, "Failover between Slurm sites")');
      const unknown = (only ?? []).filter((n) => !sites.has(n));
      if (unknown.length) throw failure('RuntimeUnavailable', `failover site${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} not configured on this worker (configured: ${configured.join(', ')})`);
      let order = only?.length ? only : configured;
      const spec = await config.tenantGuard?.enforce();
      if (spec && config.tenantGuard) {
        order = config.tenantGuard.allowedSites(spec.tenant, order);
        if (!order.length) throw failure('TenantPolicyDenied', `refused by the tenant policy: tenant "${spec.tenant}" may use none of the failover sites (${(only?.length ? only : configured).join(', ')})`);
      }
      const candidates = order.filter((n) => !exclude.includes(n));
      const health = await Promise.all(
        candidates.map(async (name): Promise<SiteHealth> => {
          try {
            return await withTimeout(site(name).health(), config.healthTimeoutMs ?? 5000, `${name} health`);
          } catch (e) {
            return { healthy: false, detail: (e as Error).message };
          }
        }),
      );
      const probes = order.map((name) => {
        const k = candidates.indexOf(name);
        return k < 0 ? `${name}: excluded` : `${name}: ${health[k].healthy ? 'healthy' : 'unhealthy'} (${health[k].detail})`;
      });
      const healthy = candidates.filter((_, k) => health[k].healthy);
      if (!healthy.length) return { probes };
      if (!job || healthy.length === 1) return { site: healthy[0], probes };
      const ranked = await placeAmong(healthy, job);
      probes.push(ranked.note);
      return { site: ranked.site ?? healthy[0], probes };
    },

    /**
     * Makes a site ready to resume: the data set staged from home (verified), and the newest valid
     * checkpoint among home and every other site's run directory copied here (verified after the copy;
     * a half-finished copy is removed). Newer checkpoints that fail verification are skipped with why.
     */
    async stageSite({ runKey, site: name }: StageSiteInput): Promise<StageSiteResult> {
      await config.tenantGuard?.enforce({ train: name });
      const target = siteDirs(name, runKey);
      const home = runDirs(config.home, runKey);
      mkdirSync(target.checkpoints, { recursive: true });
      await copyVerifiedDir(home.data, target.data);
      const staleCopiesRemoved = removeStaleCopies(target.checkpoints).length;
      const sources: { source: string; dir: string; hasher?: Hasher }[] = [
        { source: name, dir: target.checkpoints, hasher: site(name).hasher },
        ...[...sites.values()].filter((s) => s.name !== name).map((s) => ({ source: s.name, dir: runDirs(s.root, runKey).checkpoints, hasher: s.hasher })),
        { source: 'home', dir: home.checkpoints },
      ];
      const skipped: StageSiteResult['skipped'] = [];
      const unreadable: string[] = [];
      let best: { source: string; path: string; step: number } | undefined;
      for (const src of sources) {
        try {
          const { latest, skipped: sk } = await latestValidCheckpoint(src.dir, true, src.hasher);
          skipped.push(...sk.map((s) => ({ ...s, source: src.source })));
          if (latest && (!best || latest.step > best.step)) best = { source: src.source, path: latest.path, step: latest.step };
        } catch (e) {
          unreadable.push(`${src.source}: ${(e as Error).message}`);
        }
        Context.current().heartbeat();
      }
      if (!best) return { copied: false, bytes: 0, skipped, unreadable, staleCopiesRemoved };
      if (best.source === name) return { step: best.step, source: name, copied: false, bytes: 0, skipped, unreadable, staleCopiesRemoved };
      const copy = await copyCheckpoint(best.path, target.checkpoints, { hasher: site(name).hasher, tag: Context.current().info.activityId, onFile: () => Context.current().heartbeat() });
      if (copy.copied) await audit({ what: 'checkpoint.copied', where: { site: name }, details: { runKey, from: best.source, step: copy.step, bytes: copy.bytes } });
      return { step: copy.step, source: best.source, copied: copy.copied, bytes: copy.bytes, skipped, unreadable, staleCopiesRemoved };
    },

    /** submitJob for a named site, with the run directory on that site and the job under a lease. */
    async submitAt(input: SubmitAtInput): Promise<JobRef> {
      await config.tenantGuard?.enforce({ train: input.site });
      const s = site(input.site);
      const dirs = siteDirs(input.site, input.runKey);
      mkdirSync(dirs.data, { recursive: true });
      mkdirSync(dirs.checkpoints, { recursive: true });
      const env: Record<string, string> = { ...input.env, TANDEM_RUN_ID: input.runKey, TANDEM_STAGE: input.stage, TANDEM_DATA_DIR: dirs.data, TANDEM_CHECKPOINT_DIR: dirs.checkpoints };
      for (const [k, v] of Object.entries(input.params)) env[`TANDEM_${k.toUpperCase()}`] = String(v);
      const existing = await s.backend.findByName(input.name);
      if (existing) {
        // Adopted by name on a retry: its outcome is recorded now (see submitJob).
        await audit({ what: 'job.submitted', where: { site: input.site, runtime: existing.runtime }, details: { runKey: input.runKey, stage: input.stage, name: existing.name, jobId: existing.jobId, resources: input.resources, leased: !!input.leaseTtlMs, adopted: true } });
        return existing;
      }
      let command = input.command ?? builtinCommand(input.stage);
      if (input.leaseTtlMs) {
        const lease = leaseFile(s.root, input.runKey, input.name);
        writeLease(lease, input.name, input.leaseTtlMs);
        command = [...builtinCommand('fence'), lease, '--', ...command];
      }
      await audit.intent({ what: 'job.submitted', where: { site: input.site, runtime: s.backend.runtime }, details: { runKey: input.runKey, stage: input.stage, name: input.name, resources: input.resources, leased: !!input.leaseTtlMs } });
      const ref = await s.backend.submit({ name: input.name, command, env, resources: input.resources, walltimeMs: durationMs(input.resources.walltime), kubernetes: input.kubernetes });
      await audit({ what: 'job.submitted', where: { site: input.site, runtime: ref.runtime }, details: { runKey: input.runKey, stage: input.stage, name: ref.name, jobId: ref.jobId, resources: input.resources, leased: !!input.leaseTtlMs } });
      return ref;
    },

    /**
     * Watches a job at its site until it ends, or until the site has not answered for `graceMs`
     * (the error window resets after every good observation, and survives a worker crash through the
     * heartbeat). Each good observation of an active job renews its lease.
     */
    async watchAt({ ref, pollMaxMs = TUNING_DEFAULTS.pollMaxMs, graceMs, leaseTtlMs, runKey }: WatchAtInput): Promise<WatchAtResult> {
      const ctx = Context.current();
      const s = site(ref.site);
      const prev = (ctx.info.heartbeatDetails ?? {}) as { failingSince?: number; state?: string; progress?: JobStatus['progress'] };
      let failingSince = prev.failingSince;
      let lastState = prev.state;
      let progress = prev.progress;
      let lastError = '';
      const observed = stateLog((prev as { observed?: unknown }).observed); // for the UI's Gantt
      // Under a lease, no pause (however long the job queues) exceeds the lease's poll cap: renewals come well inside its TTL.
      const backoff = new PollBackoff({ initialMs: pollInitialMs, maxMs: Math.min(pollMaxMs, leaseTtlMs ? leasePollCapMs(leaseTtlMs) : Infinity), fastMs: DEFAULTS.runningPollMs });
      const lease = leaseFile(s.root, runKey, ref.name);
      for (;;) {
        let st: JobStatus | undefined;
        try {
          st = await s.backend.status(ref.jobId);
          failingSince = undefined;
        } catch (e) {
          lastError = (e as Error).message;
          failingSince ??= Date.now();
          ctx.log.warn('job status unavailable', { jobId: ref.jobId, site: ref.site, error: lastError });
        }
        if (st) {
          observed.note(st.state);
          lastState = st.state;
          if (st.progress) progress = st.progress;
          if (classifyJobState(st.state) === 'active') {
            if (leaseTtlMs && existsSync(lease)) writeLease(lease, ref.name, leaseTtlMs);
          } else {
            if (st.state === 'FAILED' && st.exitCode === FENCED_EXIT_CODE && existsSync(fencedMarker(lease))) return { kind: 'ended', selfFenced: true, status: { ...st, state: 'PREEMPTED', reason: `self-fenced: its lease expired${st.reason ? ` (${st.reason})` : ''}`, observed: observed.list } };
            return { kind: 'ended', status: { ...st, observed: observed.list } };
          }
        }
        const details = { state: st?.state ?? 'UNKNOWN', progress, failingSince, observed: observed.list };
        ctx.heartbeat(details);
        if (failingSince !== undefined && Date.now() - failingSince >= graceMs) {
          return { kind: 'unreachable', forMs: Date.now() - failingSince, error: lastError, lastState, progress, observed: observed.list };
        }
        // The pause heartbeats these same details, so failingSince survives a retried attempt whenever it fails.
        await pollPause(ctx, backoff.pause(st?.state === 'RUNNING' || failingSince !== undefined), ref.jobId, details);
      }
    },

    /**
     * Cancels a job at its site if the site answers within the timeout. With `runKey`, its lease is
     * revoked first, so that the job stops itself even if the site requeues it (NODE_FAIL with
     * JobRequeue=1) or the cancel does not get through.
     */
    async fenceJob({ ref, timeoutMs = 5000, runKey }: { ref: JobRef; timeoutMs?: number; runKey?: string }): Promise<FenceResult> {
      if (runKey) {
        const lease = leaseFile(site(ref.site).root, runKey, ref.name);
        if (existsSync(lease)) writeLease(lease, ref.name, -1);
      }
      try {
        await withTimeout(site(ref.site).backend.cancel(ref.jobId), timeoutMs, `cancel at ${ref.site}`);
        await audit({ what: 'job.cancelled', where: { site: ref.site, runtime: ref.runtime }, details: { name: ref.name, jobId: ref.jobId, reason: 'fenced' } });
        return { fenced: true, detail: `cancelled job ${ref.jobId} at ${ref.site}` };
      } catch (e) {
        return { fenced: false, detail: `site ${ref.site} did not answer (${(e as Error).message}); its lease stops the job` };
      }
    },

    /** Keeps trying to cancel a job until its site answers (started in the background after a failover). */
    async fenceWhenReachable({ ref }: { ref: JobRef }): Promise<FenceResult> {
      const ctx = Context.current();
      for (let delay = 1000; ; delay = Math.min(delay * 2, 30_000)) {
        try {
          await withTimeout(site(ref.site).backend.cancel(ref.jobId), 5000, `cancel at ${ref.site}`);
          await audit({ what: 'job.cancelled', where: { site: ref.site, runtime: ref.runtime }, details: { name: ref.name, jobId: ref.jobId, reason: 'fenced once reachable' } });
          return { fenced: true, detail: `cancelled job ${ref.jobId} at ${ref.site} once it answered` };
        } catch {
          ctx.heartbeat();
          // Up to 30 s between tries: the pause heartbeats on its own schedule, within any heartbeat timeout.
          await pollPause(ctx, delay, ref.jobId);
        }
      }
    },

    /** Brings the site's newest valid checkpoint home (verified copy) for the catalog. */
    async collectCheckpoint({ runKey, site: name, keep, keepEvery }: { runKey: string; site: string; keep?: number; keepEvery?: number }): Promise<CollectResult> {
      const s = site(name);
      const at = siteDirs(name, runKey).checkpoints;
      const { latest, skipped } = await latestValidCheckpoint(at, true, s.hasher);
      if (!latest) throw failure('NoValidCheckpoint', `no valid checkpoint at ${name} for ${runKey}${skipped.length ? `: ${skipped.map((k) => k.reason).join('; ')}` : ''}`);
      const home = runDirs(config.home, runKey);
      const copy = await copyCheckpoint(latest.path, home.checkpoints, { tag: Context.current().info.activityId });
      if (copy.copied) await audit({ what: 'checkpoint.copied', where: { site: 'home' }, details: { runKey, from: name, step: copy.step } });
      // The site keeps what home keeps (the catalog applies retention at home); older ones go.
      const removed = keep ? applyRetention(at, keep, latest.path, keepEvery) : [];
      if (removed.length) await audit({ what: 'checkpoint.pruned', where: { site: name }, details: { runKey, kept: latest.path, removed } });
      return { path: copy.path, step: copy.step, copied: copy.copied, skipped };
    },
  };
}

export type RecoveryActivities = ReturnType<typeof createRecoveryActivities>;

/** Health of a slurmrestd site: its ping endpoint answers. */
export function slurmrestdHealth(client: { ping(): Promise<unknown> }): () => Promise<SiteHealth> {
  return async () => {
    await client.ping();
    return { healthy: true, detail: 'slurmrestd ping ok' };
  };
}

/** Health of a FirecREST system: /status/systems lists it with every service healthy, and its scheduler
 *  answers (/status/{system}/partitions) — servicesHealth is refreshed only every probing interval. */
export function firecrestHealth(client: { systems(): Promise<{ systems?: { name: string; servicesHealth?: { serviceType?: string; healthy?: boolean | null; message?: string | null }[] | null }[] }>; partitions(system: string): Promise<unknown> }, system: string): () => Promise<SiteHealth> {
  return async () => {
    const sys = (await client.systems()).systems?.find((s) => s.name === system);
    if (!sys) return { healthy: false, detail: `FirecREST does not list system ${system}` };
    const bad = (sys.servicesHealth ?? []).filter((h) => h.healthy === false);
    if (bad.length) return { healthy: false, detail: bad.map((h) => `${h.serviceType}: ${h.message ?? 'unhealthy'}`).join('; ') };
    try {
      await client.partitions(system);
    } catch (e) {
      return { healthy: false, detail: `servicesHealth ok but the scheduler does not answer (${(e as Error).message})` };
    }
    return { healthy: true, detail: 'FirecREST servicesHealth ok, scheduler answers' };
  };
}

/** Verification through FirecREST's checksum endpoint (SHA-256 computed at the site). */
export function firecrestHasher(client: { checksum(system: string, path: string): Promise<{ algorithm?: string; checksum?: string } | undefined> }, system: string): Hasher {
  return async (path) => {
    const c = await client.checksum(system, path);
    if (!c?.checksum) throw new Error(`FirecREST returned no checksum for ${path}`);
    if (c.algorithm && !/sha-?256/i.test(c.algorithm)) throw new Error(`FirecREST checksum algorithm ${c.algorithm} is not SHA-256`);
    return c.checksum;
  };
}

export { sha256File };
