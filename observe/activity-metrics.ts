// Small helpers the activities call, so that each instrumented activity gains a line or two, not a
// block: a job watch's transitions and queue wait, a catalogued checkpoint, a placement decision, a
// deployment revision, a readiness gate.
import { metrics, nameLabel, runtimeLabel, stageOfJobName } from './metrics.js';

/** States in which a job has not started yet (the backend still queues or configures it). */
const QUEUED = new Set(['SUBMITTED', 'PENDING']);
const STATES = new Set(['SUBMITTED', 'PENDING', 'RUNNING', 'COMPLETING', 'COMPLETED', 'FAILED', 'OUT_OF_MEMORY', 'TIMEOUT', 'DEADLINE', 'NODE_FAIL', 'PREEMPTED', 'BOOT_FAIL', 'LOST', 'CANCELLED', 'UNKNOWN']);

/**
 * What one awaitJob sees of a job. `lastState` is the state the previous attempt of the watch
 * heartbeated (a re-attached watch continues from it, so a transition is counted once);
 * `scheduledAtMs` when the watch was first scheduled, right after the job's submission.
 */
export function jobWatch(ref: { name: string; runtime: string; site: string }, o: { lastState?: string; scheduledAtMs: number; now?: () => number }) {
  const labels = { stage: stageOfJobName(ref.name), runtime: runtimeLabel(ref.runtime) };
  const now = o.now ?? Date.now;
  let prev = o.lastState && STATES.has(o.lastState) ? o.lastState : 'SUBMITTED';
  return {
    /** Each observed state; unchanged states count nothing. */
    observe(state: string): void {
      if (state === prev || !STATES.has(state)) return;
      metrics.jobTransitions.inc({ ...labels, from: prev, to: state });
      // Leaving the queue: the wait is from submission (the watch's first scheduling) to now.
      if (QUEUED.has(prev) && !QUEUED.has(state)) metrics.queueWait.observe({ ...labels, site: nameLabel(ref.site) }, Math.max(0, now() - o.scheduledAtMs) / 1000);
      prev = state;
    },
  };
}

/** The checkpoint the checkpoint stage catalogued: age, size, and the newer ones that failed verification. */
export function observeCatalogued(latest: { manifest: { created: string; site: string; files: { size: number }[] } }, skipped: number, now = Date.now()): void {
  const site = nameLabel(latest.manifest.site);
  const created = Date.parse(latest.manifest.created);
  if (Number.isFinite(created)) metrics.checkpointAge.observe({ site }, Math.max(0, now - created) / 1000);
  metrics.checkpointSize.observe({ site }, latest.manifest.files.reduce((n, f) => n + (f.size ?? 0), 0));
  if (skipped) metrics.checkpointVerifyFailures.inc({ site }, skipped);
}

/** A placement decision, timed from before the inventory was gathered. */
export function observePlacement(outcome: string, policy: string, startedAt: number, unavailable: { source: string }[]): void {
  metrics.placementDecisions.inc({ outcome, policy });
  metrics.placementLatency.observe({ policy }, (performance.now() - startedAt) / 1000);
  for (const u of unavailable) metrics.inventoryUnavailable.inc({ source: nameLabel(u.source) });
}

/** A deployment revision: rolled out, adopted (already there), rolled back, torn down. */
export function observeDeployment(runtime: string, action: 'rollout' | 'adopt' | 'rollback' | 'teardown'): void {
  metrics.deploymentRevisions.inc({ runtime: runtimeLabel(runtime), action });
}

/** A readiness gate's result (health, models, completion; passed or failed). */
export function observeGate(gate: string, passed: boolean): void {
  metrics.gateResults.inc({ gate: ['health', 'models', 'completion', 'rollout'].includes(gate) ? gate : 'other', result: passed ? 'passed' : 'failed' });
}
