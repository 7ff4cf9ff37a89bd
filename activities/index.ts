// All of the pipeline's I/O. Activities are idempotent: submit adopts a job that already has its
// deterministic name, undo operations treat "already gone" as done.
import { Context } from '@temporalio/activity';
import { mkdirSync } from 'node:fs';
import { chooseIsolation, LocalJobBackend } from '../backends/local-jobs.js';
import type { LocalIsolationMode } from '../config/worker.js';
import { LocalServingBackend } from '../backends/local-serving.js';
import { applyRetention, latestValidCheckpoint } from '../backends/checkpoints.js';
import { builtinCommand } from '../programs/commands.js';
import { durationMs } from '../contract/duration.js';
import { classifyJobState, type JobRef, type JobStatus } from '../contract/outcome.js';
import { failure } from '../contract/failures.js';
import { deniedEnvName } from '../contract/pipeline.js';
import { PollBackoff, pollPause } from './poll.js';
import { readCatalog, runDirs, writeCatalog } from './run-store.js';
import { resolveBackend, siteOf, type BackendMap } from './runtimes.js';
import { createQuotaActivities } from './quota.js';
import { createRoutingActivities } from './routing.js';
import type { QuotasFile } from '../contract/quotas.js';
import { checkReadiness } from './readiness.js';
import { createPlacementActivities, localMachineSource, type InventorySource } from './placement.js';
import { KeptInventory } from './placement-inventory.js';
import { closeWith } from './lifetime.js';
import type { RecoverySite } from './recovery.js';
import type { AwaitJobInput, CatalogEntry, CatalogInput, DeployInput, Deployment, ReadinessInput, ReadinessResult, SubmitJobInput } from './types.js';
import { DEFAULTS, TUNING_DEFAULTS } from '../config/defaults.js';
import { jobWatch, observeCatalogued, observeDeployment } from '../observe/activity-metrics.js';
import { trainingWatch } from '../observe/in-flight.js';
import { stageOfJobName } from '../observe/metrics.js';
import { activityAuditor, defaultAuditSettings, type AuditSettings } from './audit.js';
import { stateLog, type ObservedState } from './observed-states.js';
import type { TenantPolicy } from '../contract/tenant-policy.js';
import { TenantGuard } from './tenant-policy.js';
import { RunInputs } from './run-input.js';
import { claimRunDir } from './run-owner.js';

export interface ActivityConfig {
  /** Root of the local runtime's state: jobs, run directories, deployments, the catalog. */
  home: string;
  /** Extra backends (Slurm, Kubernetes) keyed by runtime; the local one is always present. */
  backends?: BackendMap;
  /** Starting delay of the status-polling backoff. */
  pollInitialMs?: number;
  /** What placement sees; the local machine by default. */
  inventorySources?: InventorySource[];
  /** Slurm sites that training may fail over between (tuning.failover); see activities/recovery.ts. */
  recoverySites?: RecoverySite[];
  /** Tenant quotas per site (TANDEM_QUOTAS_FILE), enforced through one quotaLedger per site. */
  quotas?: QuotasFile;
  /** The audit log every external side effect is appended to (default <home>/audit.jsonl). */
  audit?: AuditSettings;
  /** TANDEM_TENANT_POLICY: checked again here for runs started without the SDK (activities/tenant-policy.ts). */
  tenantPolicy?: TenantPolicy;
  /** TANDEM_LOCAL_ISOLATION: how local pipeline jobs are isolated (default auto: the sandbox where it works). */
  localIsolation?: LocalIsolationMode;
}

const warned = new Set<string>();
/** Once per process: every worker assembly (and each test's) builds activities again. */
function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  console.warn(message);
}

/** The guard of `policy` over these backends (a stage pinned to a runtime runs at its backend's site). */
export function tenantGuardOf(policy: TenantPolicy | undefined, backends: BackendMap, inputs?: RunInputs): TenantGuard | undefined {
  if (!policy) return undefined;
  return new TenantGuard(policy, (runtime, stage) => {
    try {
      return siteOf(resolveBackend(backends, runtime, stage));
    } catch {
      return undefined; // no such backend: submitJob says so itself
    }
  }, inputs);
}

/**
 * Without a tenant policy the worker still refuses what no spec may set (LD_PRELOAD, NODE_OPTIONS, …:
 * contract/pipeline.ts deniedEnvName): a run started without the SDK skips the spec's validation.
 * With a policy its guard checks the run's spec, where a tenant's `allowEnv` may permit some.
 */
function refuseDeniedEnv(env: Record<string, string> | undefined, what: string): void {
  const denied = Object.keys(env ?? {}).filter(deniedEnvName);
  if (denied.length) throw failure('InvalidRequest', `${what}: env.${denied[0]} may not be set by a pipeline spec (${denied.join(', ')} change the programs Tandem runs around the job; a tenant policy's allowEnv can permit it)`);
}

export function createActivities(config: ActivityConfig) {
  // Every local pipeline job runs in its own sandbox where the host can build one (its run's data and
  // checkpoints, nothing else of the home); see chooseIsolation for the hosts that cannot.
  const isolation = chooseIsolation(config.localIsolation ?? 'auto', config.tenantPolicy !== undefined);
  if (isolation.warning) warnOnce(isolation.warning);
  const local = new LocalJobBackend(config.home, Date.now, { isolation: isolation.isolation });
  const serving = new LocalServingBackend(config.home, { isolation: isolation.isolation }); // model servers in the same sandbox
  const backends: BackendMap = { local, ...config.backends };
  const pollInitialMs = config.pollInitialMs ?? DEFAULTS.pollInitialMs;
  const backendOf = (ref: JobRef) => resolveBackend(backends, ref.runtime, ref.name);
  const audit = activityAuditor(config.audit ?? defaultAuditSettings(config.home));
  const runInputs = new RunInputs();
  const guard = tenantGuardOf(config.tenantPolicy, backends, runInputs);
  /** A run's directories, once the running pipeline's tenant owns them (activities/run-owner.ts). */
  const ownedRunDirs = async (runKey: string) => {
    const dirs = runDirs(config.home, runKey);
    const run = await runInputs.current();
    if (run) claimRunDir(dirs.root, runKey, { tenant: run.spec.tenant, workflowId: Context.current().info.workflowExecution?.workflowId ?? runKey });
    return dirs;
  };

  const inventorySources = config.inventorySources ?? [localMachineSource()];
  // Placement's kept state: moved by what submitJob and awaitJob see (activities/placement-inventory.ts).
  const placementState = new KeptInventory(inventorySources);

  // Its sources' watches (Kubernetes) are closed when the worker stops (activities/lifetime.ts).
  return closeWith({
    ...createPlacementActivities(inventorySources, {}, undefined, guard, placementState),
    ...createQuotaActivities(config.quotas, (runtime, stage, site) => siteOf(resolveBackend(backends, runtime, stage, site)), audit),
    // A stage with no backend gets undefined here and its clear error from submitJob.
    ...createRoutingActivities(config.home, (i) => (i.runtime === 'auto' || backends[i.runtime] ? resolveBackend(backends, i.runtime, i.stage, i.site) : undefined)),

    async submitJob(input: SubmitJobInput): Promise<JobRef> {
      const backend = resolveBackend(backends, input.runtime, input.stage, input.site);
      // Before the run's directories exist: a refused run leaves nothing behind.
      await guard?.enforce({ [input.stage]: siteOf(backend) });
      if (!guard) refuseDeniedEnv(input.env, `stage ${input.stage}`);
      const dirs = await ownedRunDirs(input.runKey);
      mkdirSync(dirs.data, { recursive: true });
      mkdirSync(dirs.checkpoints, { recursive: true });
      const env: Record<string, string> = {
        ...input.env,
        TANDEM_RUN_ID: input.runKey,
        TANDEM_STAGE: input.stage,
        TANDEM_DATA_DIR: dirs.data,
        TANDEM_CHECKPOINT_DIR: dirs.checkpoints,
      };
      for (const [k, v] of Object.entries(input.params)) env[`TANDEM_${k.toUpperCase()}`] = String(v);
      const existing = await backend.findByName(input.name);
      if (existing) {
        // A retry after the outcome append failed (or the worker died) finds the job by name: its outcome
        // is recorded now, marked adopted (an auditor sees intent + outcome for every job that runs).
        await audit({ what: 'job.submitted', where: { site: existing.site, runtime: existing.runtime }, details: { runKey: input.runKey, stage: input.stage, name: existing.name, jobId: existing.jobId, resources: input.resources, adopted: true } });
        return existing;
      }
      // Intent first: a log that cannot take it stops the submission before anything runs.
      await audit.intent({ what: 'job.submitted', where: { site: siteOf(backend), runtime: backend.runtime }, details: { runKey: input.runKey, stage: input.stage, name: input.name, resources: input.resources } });
      const ref = await backend.submit({
        name: input.name,
        command: input.command ?? builtinCommand(input.stage),
        env,
        resources: input.resources,
        walltimeMs: durationMs(input.resources.walltime),
        kubernetes: input.kubernetes,
        labels: input.labels,
        sandbox: { writable: [dirs.data, dirs.checkpoints] },
      });
      placementState.changed(); // a job queued: placement reads its sources again before it decides next
      await audit({ what: 'job.submitted', where: { site: ref.site, runtime: ref.runtime }, details: { runKey: input.runKey, stage: input.stage, name: ref.name, jobId: ref.jobId, resources: input.resources } });
      return ref;
    },

    /** Polls until the job ends, heartbeating its state; a retried attempt re-attaches to the same job. */
    async awaitJob({ ref, pollMaxMs = TUNING_DEFAULTS.pollMaxMs, run }: AwaitJobInput): Promise<JobStatus & { observed?: ObservedState[] }> {
      const ctx = Context.current();
      const backend = backendOf(ref);
      if (ctx.info.attempt > 1) ctx.log.info('re-attaching to job after a worker or observation failure', { jobId: ref.jobId, attempt: ctx.info.attempt });
      const backoff = new PollBackoff({ initialMs: pollInitialMs, maxMs: pollMaxMs, fastMs: DEFAULTS.runningPollMs });
      const seen = jobWatch(ref, { lastState: (ctx.info.heartbeatDetails as { state?: string } | undefined)?.state, scheduledAtMs: ctx.info.scheduledTimestampMs }); // metrics
      const observed = stateLog((ctx.info.heartbeatDetails as { observed?: unknown } | undefined)?.observed); // for the UI's Gantt
      // The running job's step and loss as gauges (runs that pass who they are; the stage from the job's name otherwise).
      const training = trainingWatch({ tenant: run?.tenant, pipeline: run?.pipeline, stage: run?.stage ?? stageOfJobName(ref.name), site: ref.site, runtime: ref.runtime });
      try {
        return await watchLoop();
      } finally {
        training.end();
      }
      async function watchLoop(): Promise<JobStatus & { observed?: ObservedState[] }> {
        let runningSeen = false;
        for (;;) {
          let st: JobStatus | undefined;
          try {
            st = await backend.status(ref.jobId);
            seen.observe(st.state);
            observed.note(st.state);
            training.progress(st.progress);
          } catch (e) {
            // Could not observe: never a job failure. Keep watching with backoff.
            ctx.log.warn('job status unavailable', { jobId: ref.jobId, error: (e as Error).message });
          }
          const details = st ? { state: st.state, progress: st.progress, observed: observed.list } : { state: 'UNKNOWN', observed: observed.list };
          ctx.heartbeat(details);
          if (st?.state === 'RUNNING' && !runningSeen) {
            runningSeen = true;
            placementState.changed(); // started: where it runs, the sources say
          }
          if (st && classifyJobState(st.state) !== 'active') {
            placementState.finished(ref.name); // ended: off the kept state now (a job it never kept marks the sources for a read)
            return { ...st, observed: observed.list };
          }
          // Progress stays fresh while the job runs; the pause heartbeats on its own schedule however long it is.
          await pollPause(ctx, backoff.pause(st?.state === 'RUNNING'), ref.jobId, details);
        }
      }
    },

    async cancelJob(ref: JobRef): Promise<void> {
      await audit.intent({ what: 'job.cancelled', where: { site: ref.site, runtime: ref.runtime }, details: { name: ref.name, jobId: ref.jobId } });
      await backendOf(ref).cancel(ref.jobId);
      await audit({ what: 'job.cancelled', where: { site: ref.site, runtime: ref.runtime }, details: { name: ref.name, jobId: ref.jobId } });
    },

    async catalogCheckpoint({ runKey, verify, keep, keepEvery }: CatalogInput): Promise<CatalogEntry> {
      const dirs = await ownedRunDirs(runKey);
      const { latest, skipped } = await latestValidCheckpoint(dirs.checkpoints, verify);
      if (!latest) {
        throw failure('NoValidCheckpoint', `no valid checkpoint under ${dirs.checkpoints}${skipped.length ? `: ${skipped.map((s) => `${s.path}: ${s.reason}`).join('; ')}` : ' (training wrote none)'}`);
      }
      observeCatalogued(latest, skipped.length); // metrics
      const removed = applyRetention(dirs.checkpoints, keep, latest.path, keepEvery);
      if (removed.length) await audit({ what: 'checkpoint.pruned', where: { site: 'home' }, details: { runKey, kept: latest.path, removed } });
      const entry: CatalogEntry = { runKey, path: latest.path, step: latest.step, job: latest.manifest.job, site: latest.manifest.site, created: latest.manifest.created, metrics: latest.manifest.metrics, skipped, removed };
      writeCatalog(dirs.catalog, [...readCatalog(dirs.catalog).filter((e) => e.path !== entry.path), entry]);
      return entry;
    },

    async withdrawCheckpoint({ runKey, path }: { runKey: string; path: string }): Promise<void> {
      const dirs = await ownedRunDirs(runKey);
      const before = readCatalog(dirs.catalog);
      writeCatalog(dirs.catalog, before.filter((e) => e.path !== path));
      if (before.some((e) => e.path === path)) await audit({ what: 'checkpoint.withdrawn', where: { site: 'home' }, details: { runKey, path } });
    },

    async deployModel(input: DeployInput): Promise<Deployment> {
      if (input.runtime !== 'auto' && input.runtime !== 'local') {
        throw failure('RuntimeUnavailable', `stage deploy asks for runtime "${input.runtime}", but this worker serves models only on the local runtime. Set stages.deploy.runtime to "local" or "auto".`);
      }
      await guard?.enforce({ deploy: 'local' });
      if (!guard) refuseDeniedEnv(input.env, 'stage deploy');
      await audit.intent({ what: 'deployment.rolledOut', where: { site: 'local', runtime: 'local' }, details: { name: input.name, model: input.model, checkpoint: input.checkpoint } });
      // The pipeline, tenant and run it serves: `tandem deployments`, and retirement by a newer revision.
      const run = await runInputs.current().catch(() => undefined);
      const workflowId = Context.current().info.workflowExecution?.workflowId;
      const d = await serving.deploy({ name: input.name, model: input.model, checkpoint: input.checkpoint, command: input.command, env: input.env, pipeline: run?.spec.name, tenant: run?.spec.tenant, workflowId });
      observeDeployment('local', d.adopted ? 'adopt' : 'rollout'); // metrics
      if (!d.adopted) await audit({ what: 'deployment.rolledOut', where: { site: 'local', runtime: 'local' }, details: { name: d.name, model: d.model, checkpoint: d.checkpoint, endpoint: d.endpoint } });
      return d;
    },

    async awaitReadiness(input: ReadinessInput): Promise<ReadinessResult> {
      const ready = await checkReadiness(input, Context.current());
      // A ready local revision: the pipeline's newest gated one serves, the others are retired (kept for
      // `tandem deployments rollback`).
      if (input.deployment.runtime === 'local') {
        const retired = await serving.retireOthers(input.deployment.name);
        for (const { name, by } of retired) {
          observeDeployment('local', 'teardown'); // metrics
          await audit({ what: 'deployment.retired', where: { site: 'local', runtime: 'local' }, details: { name, by } });
        }
      }
      return ready;
    },

    async undeployModel({ name }: { runtime: string; name: string }): Promise<void> {
      await audit.intent({ what: 'deployment.removed', where: { site: 'local', runtime: 'local' }, details: { name } });
      const removed = await serving.undeploy(name);
      if (removed) observeDeployment('local', 'teardown'); // metrics
      if (removed) await audit({ what: 'deployment.removed', where: { site: 'local', runtime: 'local' }, details: { name } });
    },
  }, () => placementState.close());
}

export type TandemActivities = ReturnType<typeof createActivities>;
