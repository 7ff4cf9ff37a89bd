// The worker's end of the workflows' metric sinks (workflows/observe.ts): each call becomes metric
// updates. Registered with callDuringReplay false: a run replayed on this worker (cache eviction, a
// worker taking over) does not count its past again. A workflow task that fails and is retried may
// call a sink twice; metrics tolerate that (Temporal's sinks are at-least-once, docs of InjectedSinkFunction).
import type { InjectedSinks } from '@temporalio/worker';
import type { PipelineEvent, TandemSinks } from '../workflows/observe.js';
import { PHASES } from '../argo/lang/types.js';
import { metrics, nameLabel, siteLabel, runtimeLabel, setQuota, stageLabel } from './metrics.js';

const ARGO_NODE_TYPES = ['Pod', 'Steps', 'StepGroup', 'DAG', 'TaskGroup', 'Retry', 'Skipped', 'Suspend', 'HTTP', 'Plugin', 'Container', 'Resource', 'Script', 'Data'];
const COMPENSATION_ACTIONS = ['cancel', 'release', 'withdraw', 'rollback', 'teardown'];

/** Turns one pipeline timeline event into its metrics. Exported for the unit test. */
export function recordPipelineEvent(e: PipelineEvent): void {
  const run = { tenant: nameLabel(e.tenant), pipeline: nameLabel(e.pipeline) };
  const site = siteLabel(e.site, e.runtime);
  switch (e.kind) {
    case 'pipeline-started':
      return void metrics.pipelinesStarted.inc(run);
    case 'pipeline-completed':
      return void metrics.pipelinesCompleted.inc(run);
    case 'pipeline-failed':
      return void metrics.pipelinesFailed.inc({ ...run, reason: e.deadline ? 'deadline' : 'failed' });
    case 'pipeline-cancelled':
      return void metrics.pipelinesCancelled.inc(run);
    case 'stage-completed':
    case 'stage-failed':
      if (e.seconds !== undefined) metrics.stageDuration.observe({ stage: stageLabel(e.stage), site, runtime: runtimeLabel(e.runtime), outcome: e.kind === 'stage-completed' ? 'completed' : 'failed' }, e.seconds);
      return;
    case 'retry-scheduled':
      return void metrics.stageRetries.inc({ stage: stageLabel(e.stage) });
    case 'failover':
      return void metrics.failovers.inc({ from_site: site });
    case 'fence':
      metrics.fences.inc({ site });
      if (e.selfFenced) metrics.selfFenceResubmits.inc({ site });
      return;
    case 'preemption':
      return void metrics.preemptions.inc({ stage: stageLabel(e.stage) });
    case 'compensation':
      return void metrics.compensations.inc({ action: compensationAction(e.action) });
    case 'compensation-failed':
      return void metrics.compensationsFailed.inc({ action: compensationAction(e.action) });
    case 'quota-wait':
      return void metrics.quotaWaits.inc({ tenant: run.tenant, site });
    default:
      return;
  }
}

const compensationAction = (a: string | undefined) => (a === undefined ? 'none' : COMPENSATION_ACTIONS.includes(a) ? a : 'other');

/**
 * The sinks every Tandem worker (and replayer) registers: without them a workflow's sink call is
 * logged as unregistered. `record: false` registers them doing nothing (metrics off).
 */
export function tandemSinks({ record = true }: { record?: boolean } = {}): InjectedSinks<TandemSinks> {
  if (!record) return { tandemMetrics: { pipeline: { fn: () => undefined }, argoNode: { fn: () => undefined }, quota: { fn: () => undefined } } };
  return {
    tandemMetrics: {
      pipeline: { fn: (_info, e) => recordPipelineEvent(e), callDuringReplay: false },
      argoNode: {
        fn: (_info, e) => {
          const phase = (PHASES as readonly string[]).includes(e.phase) ? e.phase : 'other';
          metrics.argoNodes.inc({ type: ARGO_NODE_TYPES.includes(e.type) ? e.type : 'other', phase });
          if (e.seconds !== undefined) metrics.argoNodeDuration.observe({ phase }, e.seconds);
        },
        callDuringReplay: false,
      },
      // A gauge is state, not an event: replaying a ledger's history sets it to where the ledger stands.
      quota: { fn: (_info, e) => setQuota(e.site, e.tenant, e.held, e.quota), callDuringReplay: true },
    },
  };
}
