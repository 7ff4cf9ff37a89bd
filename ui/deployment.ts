// The deploy stage as the run page shows it, from the activities' recorded inputs, results and
// failures (workflows/pipeline/deploy.ts and endpoint.ts): each revision rolled out (the local model
// server's deployModel, or a Kubernetes endpoint's k8sApplyServing + k8sAwaitRollout), the readiness
// gates in vLLM's order (activities/readiness.ts: health, models, completion — a failure names its
// gate), and what undid it (k8sRollbackServing to the previous revision, undeployModel, teardown).
import type { ActivityRecord, RunReport } from '../sdk/history.js';
import type { Deployment, ReadinessResult } from '../activities/types.js';
import type { ServingRevision } from '../backends/kubernetes/serving.js';

export interface RevisionView {
  runtime: 'local' | 'kubernetes';
  name: string;
  endpoint?: string;
  model: string;
  checkpoint: string;
  /** kubernetes: metadata.generation after the apply; the revision it replaced. */
  generation?: number;
  replaces?: string;
  /** rolled out by this run, adopted (already there: a retried apply), or the endpoint's first. */
  action: string;
  rollout: string;
  at?: Date;
}

export const GATES = ['health', 'models', 'completion'] as const;

export interface GateView {
  gate: (typeof GATES)[number];
  result: 'passed' | 'failed' | 'not reached' | 'running';
  detail: string;
}

export interface UndoView {
  what: string;
  outcome: string;
  detail: string;
  at?: Date;
}

export interface DeploymentView {
  revisions: RevisionView[];
  gates: GateView[];
  undo: UndoView[];
}

const done = (a: ActivityRecord | undefined) => (a?.outcome === 'completed' ? a.result : undefined);

/** The gate results of one readiness check: all passed, or the named one failed and the ones after it never ran. */
function gates(check: ActivityRecord): GateView[] {
  if (check.outcome === 'completed') {
    const r = check.result as ReadinessResult;
    return [
      { gate: 'health', result: 'passed', detail: '/health answered 200' },
      { gate: 'models', result: 'passed', detail: `/v1/models lists ${r.models.join(', ')}` },
      { gate: 'completion', result: 'passed', detail: `smoke completion: ${JSON.stringify(r.completion)}` },
    ];
  }
  if (check.outcome === 'running') return GATES.map((gate) => ({ gate, result: 'running', detail: 'checking' }));
  // GateFailed: `deployment … not ready after Ns: failed gate "models" (/v1/models answered 200 listing [])`
  const m = /failed gate "(health|models|completion)" \((.*)\)$/s.exec(check.error ?? '');
  const failed = (m?.[1] as GateView['gate'] | undefined) ?? 'health';
  const at = GATES.indexOf(failed);
  return GATES.map((gate, i) => ({ gate, result: i < at ? 'passed' : i === at ? 'failed' : 'not reached', detail: i < at ? 'passed before the failure' : i === at ? (m?.[2] ?? check.error ?? check.outcome) : '' }));
}

export function deploymentView(report: RunReport): DeploymentView {
  const acts = report.activities;
  const revisions: RevisionView[] = [];
  for (const a of acts) {
    if (a.type === 'deployModel') {
      const d = done(a) as Deployment | undefined;
      const input = a.input as { name?: string; model?: string; checkpoint?: string } | undefined;
      revisions.push({ runtime: 'local', name: d?.name ?? input?.name ?? '?', endpoint: d?.endpoint, model: d?.model ?? input?.model ?? '?', checkpoint: d?.checkpoint ?? input?.checkpoint ?? '?', action: d ? (d.adopted ? 'adopted (already serving)' : 'rolled out') : a.outcome, rollout: d ? 'serving' : (a.error ?? a.outcome), at: a.scheduledAt });
    } else if (a.type === 'k8sApplyServing') {
      const rev = done(a) as ServingRevision | undefined;
      const input = a.input as { name?: string; model?: string; checkpoint?: string } | undefined;
      // The rollout watch of this revision is the next k8sAwaitRollout.
      const watch = acts.find((b) => b.type === 'k8sAwaitRollout' && b.scheduledEventId > a.scheduledEventId);
      const served = done(watch) as Deployment | undefined;
      revisions.push({
        runtime: 'kubernetes',
        name: rev ? `${rev.namespace}/${rev.name}` : (input?.name ?? '?'),
        endpoint: served?.endpoint,
        model: rev?.model ?? input?.model ?? '?',
        checkpoint: rev?.checkpoint ?? input?.checkpoint ?? '?',
        generation: rev?.generation,
        replaces: rev?.previousRevision,
        action: rev ? (rev.adopted ? 'adopted (already applied)' : rev.created ? 'rolled out (first revision: created the endpoint)' : 'rolled out') : `apply ${a.outcome}${a.error ? `: ${a.error}` : ''}`,
        rollout: served ? 'rollout complete' : watch ? `rollout ${watch.outcome}${watch.error ? `: ${watch.error}` : ''}` : rev ? 'not watched' : '-',
        at: a.scheduledAt,
      });
    }
  }
  const checks = acts.filter((a) => a.type === 'awaitReadiness' || a.type === 'k8sGateServing');
  const last = checks[checks.length - 1];
  const undo: UndoView[] = acts
    .filter((a) => a.type === 'k8sRollbackServing' || a.type === 'undeployModel' || a.type === 'k8sTeardownServing')
    .map((a) => {
      const r = done(a) as { action?: string; toRevision?: string; deployment?: Deployment; deleted?: string[] } | undefined;
      const detail = a.type === 'k8sRollbackServing' ? (r ? `${r.action}${r.toRevision ? ` to revision ${r.toRevision}` : ''}${r.deployment ? `, ${r.deployment.endpoint} serving again` : ''}` : (a.error ?? '')) : a.type === 'k8sTeardownServing' ? (r?.deleted?.join(', ') ?? a.error ?? '') : (a.error ?? 'torn down');
      return { what: a.type === 'k8sRollbackServing' ? 'rollback' : 'teardown', outcome: a.outcome, detail, at: a.scheduledAt };
    });
  return { revisions, gates: last ? gates(last) : [], undo };
}
