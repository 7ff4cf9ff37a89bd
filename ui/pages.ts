// The pages of `tandem ui`, rendered on the server from what the SDK reads (sdk/runs.ts: the listing
// and the history report; argo/client.ts: an Argo run's status). No scripts: HTML and inline SVG.
// Shown: ids, names, phases, times, error messages and job output; never a run's raw input (a spec
// may name secret files and variables) — only its pipeline, tenant and QoS.
import type { RunSummary, RunStatusFilter } from '../sdk/runs.js';
import { RUN_STATUSES } from '../sdk/runs.js';
import type { RunReport } from '../sdk/history.js';
import type { ArgoStatus, Json } from '../argo/lang/types.js';
import type { PlaceResult } from '../activities/placement.js';
import { duration, esc, href, page, table, when } from './html.js';
import { timelineSvg } from './timeline-svg.js';
import { lossSvg } from './loss-svg.js';
import { dagSvg } from './dag-svg.js';
import type { TrainingView } from './training.js';
import { deploymentView } from './deployment.js';
import type { ObservedState } from '../activities/observed-states.js';

export interface PageContext {
  namespace: string;
  /** The Temporal Web UI to link runs to, e.g. http://127.0.0.1:8233. */
  temporalUi?: string;
}

const status = (s: string) => `<span class="status s-${esc(s)}">${esc(s)}</span>`;

export function runsPage(runs: RunSummary[], filter: { status?: RunStatusFilter; tenant?: string }, ctx: PageContext): string {
  const options = ['', ...Object.keys(RUN_STATUSES)].map((s) => `<option value="${esc(s)}"${s === (filter.status ?? '') ? ' selected' : ''}>${esc(s || 'any')}</option>`).join('');
  const form = `<form method="get" action="/"><label>status <select name="status">${options}</select></label> <label>tenant <input name="tenant" value="${esc(filter.tenant ?? '')}" size="16"></label> <button type="submit">filter</button></form>`;
  const rows = runs.map((r) => [`<a class="run" href="${esc(href('runs', r.id))}">${esc(r.id)}</a>`, esc(r.type === 'argoWorkflow' ? 'argo' : 'pipeline'), esc(r.tenant ?? '-'), status(r.status), esc(r.stage ?? '-'), esc(when(r.startedAt)), esc(duration(r.durationMs))]);
  return page('runs', `<h1>Runs <span class="note">namespace ${esc(ctx.namespace)}</span></h1>${form}${table(['ID', 'KIND', 'TENANT', 'STATUS', 'STAGE', 'STARTED', 'DURATION'], rows, 'runs')}`, { refresh: runs.some((r) => r.status === 'RUNNING') ? 10 : undefined });
}

function header(report: RunReport & { runId: string }, ctx: PageContext, extra: [string, string][] = [], shownStatus: string = report.status): string {
  const spec = report.type === 'hybridPipeline' ? report.input?.spec : undefined;
  const end = report.closedAt ?? new Date();
  const facts: [string, string][] = [
    ['kind', report.type],
    ['status', shownStatus],
    ...(spec ? ([['pipeline', spec.name], ['tenant', spec.tenant], ['qos', spec.qos]] as [string, string][]) : []),
    ...extra,
    ['started', when(report.startedAt)],
    ['closed', report.closedAt ? when(report.closedAt) : 'still running'],
    ['duration', report.startedAt ? duration(end.getTime() - report.startedAt.getTime()) : '-'],
    ['history events', String(report.events)],
  ];
  const link = ctx.temporalUi ? ` <a class="note" href="${esc(`${ctx.temporalUi.replace(/\/$/, '')}/namespaces/${encodeURIComponent(ctx.namespace)}/workflows/${encodeURIComponent(report.workflowId)}/${encodeURIComponent(report.runId)}/history`)}">in the Temporal UI</a>` : '';
  return `<h1>${esc(report.workflowId)}${link}</h1><dl>${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${k === 'status' ? status(v) : esc(v)}</dd>`).join('')}</dl>${report.failure ? `<h2>Failure</h2><pre class="failure">${esc(report.failure)}</pre>` : ''}`;
}

function problems(report: RunReport): string {
  const failed = report.activities.filter((a) => a.error);
  const comp = report.activities.filter((a) => a.compensation);
  return (
    `<h2>Errors</h2>${table(['ACTIVITY', 'STAGE', 'ATTEMPT', 'OUTCOME', 'TYPE', 'MESSAGE'], failed.map((a) => [esc(a.type), esc(a.stage ?? '-'), esc(a.attempt), status(a.outcome), esc(a.errorType ?? '-'), `<pre>${esc(a.error)}</pre>`]), 'errors')}` +
    `<h2>Compensations</h2>${table(['UNDO', 'STAGE', 'OUTCOME', 'AT'], comp.map((a) => [esc(a.type), esc(a.stage ?? '-'), status(a.outcome), esc(when(a.closedAt ?? a.scheduledAt))]), 'compensations')}`
  );
}

export function runPage(report: RunReport & { runId: string }, training: TrainingView, ctx: PageContext, live?: ReadonlyMap<number, ObservedState[]>): string {
  const stages = report.stages.map((s) => [
    `<b>${esc(s.name)}</b>`,
    status(s.status),
    esc(s.attempts),
    esc(s.jobs.map((j) => `${j.jobId} @ ${j.runtime}/${j.site}${j.state ? ` ${j.state}` : ''}${j.reason ? ` (${j.reason})` : ''}`).join('; ') || '-'),
    esc(when(s.startedAt)),
    esc(s.startedAt && s.finishedAt ? duration(s.finishedAt.getTime() - s.startedAt.getTime()) : '-'),
    esc(s.error ?? ''),
  ]);
  const placements = report.activities
    .filter((a) => a.type === 'placeJob' && a.outcome === 'completed' && a.result)
    .map((a) => {
      const r = a.result as PlaceResult;
      return [esc(a.stage ?? '-'), esc(r.decision?.kind ?? '-'), esc(r.summary ?? r.decision?.explanation ?? '-'), esc(r.unavailable?.map((u) => `${u.source}: ${u.error}`).join('; ') || '-')];
    });
  const deploy = deploymentView(report);
  const revisions = deploy.revisions.map((r) => [esc(r.runtime), `<span class="revision">${esc(r.name)}</span>`, esc(r.generation ?? '-'), esc(r.replaces ?? '-'), esc(r.action), esc(r.rollout), esc(r.endpoint ?? '-'), esc(r.model), esc(r.checkpoint), esc(when(r.at))]);
  const gates = deploy.gates.map((g) => [esc(g.gate), `<span class="gate status s-${g.result === 'passed' ? 'completed' : g.result === 'failed' ? 'failed' : 'running'}" data-gate="${esc(g.gate)}" data-result="${esc(g.result)}">${esc(g.result)}</span>`, esc(g.detail)]);
  const undo = deploy.undo.map((u) => [esc(u.what), status(u.outcome), esc(u.detail), esc(when(u.at))]);
  const ckpts = training.checkpoints.map((c) => [esc(c.step), esc(c.created ?? '-'), esc(c.job ?? '-'), esc(c.site ?? '-'), c.valid ? '<span class="s-completed">valid</span>' : `<span class="s-failed">INVALID: ${esc(c.reason)}</span>`, esc(c.loss?.toFixed(4) ?? '-'), esc(c.validLoss?.toFixed(4) ?? '-')]);
  const loss = training.loss.length
    ? `<div class="svg">${lossSvg(training.loss)}</div><p class="note">${esc(training.loss.length)} points from ${esc([...new Set(training.loss.map((p) => p.source))].join(', '))}</p>`
    : `<p class="empty">no loss recorded yet${training.lookedIn ? '' : ' (the worker\u2019s home is not readable here: pass --home)'}</p>`;
  const body = [
    header(report, ctx),
    `<h2>Timeline</h2><div class="svg">${timelineSvg(report, new Date(), live)}</div>`,
    `<h2>Stages</h2>${table(['STAGE', 'STATUS', 'ATTEMPTS', 'JOBS', 'STARTED', 'DURATION', 'ERROR'], stages, 'stages')}`,
    placements.length ? `<h2>Placement</h2>${table(['STAGE', 'DECISION', 'WHY', 'UNOBSERVED'], placements, 'placement')}` : '',
    `<h2>Training loss</h2>${loss}`,
    `<h2>Checkpoints</h2>${table(['STEP', 'CREATED', 'JOB', 'SITE', 'VERIFIED', 'LOSS', 'HELD-OUT LOSS'], ckpts, 'checkpoints')}${training.lookedIn ? `<p class="note">looked in ${esc(training.lookedIn)}</p>` : ''}`,
    `<h2>Deployment</h2><h3>Revisions</h3>${table(['RUNTIME', 'DEPLOYMENT', 'GENERATION', 'REPLACES REVISION', 'ACTION', 'ROLLOUT', 'ENDPOINT', 'MODEL', 'CHECKPOINT', 'AT'], revisions, 'revisions')}` +
      `<h3>Readiness gates</h3>${table(['GATE', 'RESULT', 'DETAIL'], gates, 'gates')}` +
      (undo.length ? `<h3>Rollback</h3>${table(['UNDO', 'OUTCOME', 'DETAIL', 'AT'], undo, 'rollback')}` : ''),
    problems(report),
  ].join('\n');
  return page(report.workflowId, body, { refresh: report.status === 'Running' ? 5 : undefined });
}

export function argoPage(report: RunReport & { runId: string }, st: ArgoStatus | undefined, statusError: string | undefined, logs: Map<string, string>, ctx: PageContext): string {
  const spec = (report.input as unknown as { spec?: Json } | undefined)?.spec;
  const nodes = st ? Object.values(st.nodes) : [];
  const rows = nodes.map((n) => {
    const out = n.outputs;
    const outputs = out ? [...Object.entries(out.parameters ?? {}).map(([k, v]) => `${k}=${v}`), ...(out.result !== undefined ? [`result=${out.result}`] : []), ...(out.exitCode !== undefined ? [`exitCode=${out.exitCode}`] : []), ...Object.entries(out.artifacts ?? {}).map(([k, v]) => `artifact ${k}: ${v}`)].join('\n') : '';
    const log = logs.get(n.id);
    return [
      `<b>${esc(n.displayName)}</b>`,
      esc(n.type),
      `<span class="phase status s-${esc(n.phase)}">${esc(n.phase)}</span>`,
      esc(n.templateName ?? '-'),
      esc([n.target, n.jobName].filter(Boolean).join(' ') || '-'),
      esc(n.startedAt ? duration((n.finishedAt ? Date.parse(n.finishedAt) : Date.now()) - Date.parse(n.startedAt)) : '-'),
      esc(n.message ?? ''),
      outputs ? `<pre>${esc(outputs)}</pre>` : '',
      log !== undefined ? `<details><summary>output</summary><pre class="log">${esc(log)}</pre></details>` : '',
    ];
  });
  const body = [
    // A run that completed in Temporal shows Argo's phase: a Failed or Errored Argo workflow is not "Completed".
    header(report, ctx, st ? [['argo phase', st.phase], ['entrypoint', st.entrypoint], ...(st.message ? ([['message', st.message]] as [string, string][]) : [])] : [], st && /^completed$/i.test(report.status) ? st.phase : report.status),
    st ? `<h2>Graph</h2><div class="svg">${dagSvg(st, spec)}</div>` : `<h2>Graph</h2><p class="empty">the run's status could not be read: ${esc(statusError)}</p>`,
    `<h2>Nodes</h2>${table(['NODE', 'TYPE', 'PHASE', 'TEMPLATE', 'RAN AS', 'DURATION', 'MESSAGE', 'OUTPUTS', 'LOG'], rows, 'nodes')}`,
    st?.outputs && Object.keys(st.outputs.parameters).length ? `<h2>Outputs</h2><pre>${esc(Object.entries(st.outputs.parameters).map(([k, v]) => `${k}=${v}`).join('\n'))}</pre>` : '',
    problems(report),
  ].join('\n');
  return page(report.workflowId, body, { refresh: report.status === 'Running' ? 5 : undefined });
}

export function errorPage(code: number, message: string): string {
  return page(String(code), `<h1>${esc(code)}</h1><p class="error">${esc(message)}</p><p><a href="/">all runs</a></p>`);
}
