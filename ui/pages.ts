// The pages of `tandem ui`, rendered on the server from what the SDK reads (sdk/runs.ts: the listing
// and the history report; argo/client.ts: an Argo run's status). No scripts: HTML and inline SVG.
// Shown: ids, names, phases, times, error messages and job output; never a run's raw input (a spec
// may name secret files and variables) — only its pipeline, tenant and QoS.
import type { RunSummary, RunStatusFilter } from '../sdk/runs.js';
import { RUN_STATUSES } from '../sdk/runs.js';
import type { RunReport } from '../sdk/history.js';
import type { ArgoStatus, Json } from '../argo/lang/types.js';
import type { PlaceResult } from '../activities/placement.js';
import { duration, esc, href, page, table, timeAgo, when } from './html.js';
import { timelineSvg } from './timeline-svg.js';
import { lossSvg } from './loss-svg.js';
import { dagSvg } from './dag-svg.js';
import type { TrainingView } from './training.js';
import { deploymentView } from './deployment.js';
import type { ObservedState } from '../activities/observed-states.js';
import type { JobProgress, JobStatus } from '../contract/outcome.js';
import type { LiveWatch } from './live.js';
import { jobAttempts, stageOf, type JobAttempt } from './attempts.js';

export interface PageContext {
  namespace: string;
  /** The Temporal Web UI to link runs to, e.g. http://127.0.0.1:8233. */
  temporalUi?: string;
  /** Runs a page of the listing holds. */
  pageSize?: number;
}

const status = (s: string) => `<span class="status s-${esc(s)}">${esc(s)}</span>`;

export interface RunsFilter {
  status?: RunStatusFilter;
  tenant?: string;
  pipeline?: string;
  /** The page token this page was asked for (none: the first page). */
  page?: string;
}

const query = (q: Record<string, string | undefined>) => {
  const s = new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => !!e[1])).toString();
  return s ? `/?${s}` : '/';
};

export function runsPage(runs: RunSummary[], filter: RunsFilter, ctx: PageContext, next?: string, now = Date.now()): string {
  const options = ['', ...Object.keys(RUN_STATUSES)].map((s) => `<option value="${esc(s)}"${s === (filter.status ?? '') ? ' selected' : ''}>${esc(s || 'any')}</option>`).join('');
  const form = `<form method="get" action="/"><label>status <select name="status">${options}</select></label> <label>pipeline <input name="pipeline" value="${esc(filter.pipeline ?? '')}" size="16"></label> <label>tenant <input name="tenant" value="${esc(filter.tenant ?? '')}" size="16"></label> <button type="submit">filter</button></form>`;
  const rows = runs.map((r) => [
    `<a class="run" href="${esc(href('runs', r.id))}">${esc(r.id)}</a>`,
    esc(r.type === 'argoWorkflow' ? 'argo' : 'pipeline'),
    r.pipeline ? `<a href="${esc(query({ status: filter.status, tenant: filter.tenant, pipeline: r.pipeline }))}">${esc(r.pipeline)}</a>` : '-',
    esc(r.tenant ?? '-'),
    status(r.status),
    esc(r.stage ?? '-'),
    timeAgo(r.startedAt, now),
    esc(duration(r.durationMs)) + (r.status === 'RUNNING' ? ' <span class="note">so far</span>' : ''),
  ]);
  const base = { status: filter.status, tenant: filter.tenant, pipeline: filter.pipeline };
  const pager = `<p class="pager">${filter.page ? `<a class="first" href="${esc(query(base))}">« newest</a>` : ''}${next ? `<a class="next" href="${esc(query({ ...base, page: next }))}">older runs »</a>` : ''}<span class="note">${esc(runs.length)} run(s) on this page${ctx.pageSize ? `, ${esc(ctx.pageSize)} a page` : ''}; refreshed every ${esc(RUNS_REFRESH_S)} s while a run is going</span></p>`;
  return page('runs', `<h1>Runs <span class="note">namespace ${esc(ctx.namespace)}</span></h1>${form}${table(['ID', 'KIND', 'PIPELINE', 'TENANT', 'STATUS', 'STAGE', 'STARTED', 'DURATION'], rows, 'runs')}${pager}`, { refresh: runs.some((r) => r.status === 'RUNNING') ? RUNS_REFRESH_S : undefined });
}

/** Seconds between reloads of a page whose run is still going (a meta refresh: the pages have no scripts). */
export const RUNS_REFRESH_S = 10;
export const RUN_REFRESH_S = 5;

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

/**
 * A stage's training progress: the running watch's last heartbeat, else the last watch that ended
 * (its result carries the job's final progress). Undefined for stages that report none.
 */
export function stageProgress(report: RunReport, stage: string, watches: ReadonlyMap<number, LiveWatch> = new Map()): (JobProgress & { live: boolean }) | undefined {
  const ws = report.activities.filter((a) => stageOf(a) === stage && (a.type === 'awaitJob' || a.type === 'watchAt'));
  for (const a of [...ws].reverse()) {
    const live = watches.get(a.scheduledEventId)?.progress;
    if (live) return { ...live, live: true };
    const p = (a.result as JobStatus | undefined)?.progress;
    if (a.outcome === 'completed' && p && Number.isFinite(p.step) && Number.isFinite(p.total)) return { ...p, live: false };
  }
  return undefined;
}

function progressCell(p: (JobProgress & { live: boolean }) | undefined): string {
  if (!p) return '-';
  const loss = p.loss !== undefined && Number.isFinite(p.loss) ? ` · loss ${p.loss.toFixed(4)}` : '';
  return `<span class="progress" data-step="${esc(p.step)}" data-total="${esc(p.total)}"><progress value="${esc(Math.min(p.step, p.total))}" max="${esc(Math.max(1, p.total))}"></progress> step ${esc(p.step)}/${esc(p.total)}${esc(loss)}${p.live ? '' : ' <span class="note">(at its end)</span>'}</span>`;
}

/** The run's job attempts, each with a link to its output. */
function attemptsTable(report: RunReport & { runId: string }, attempts: JobAttempt[]): string {
  const rows = attempts.map((j) => [
    esc(j.stage),
    esc(j.attempt),
    `<span class="job">${esc(j.jobId)}</span>`,
    esc(`${j.runtime}/${j.site}`),
    j.final ? status(j.final.state) : status(j.watches.some((w) => w.outcome === 'running') ? 'running' : (j.watches[j.watches.length - 1]?.outcome ?? 'submitted')),
    `<a class="logs" href="${esc(href('runs', report.workflowId, 'logs', j.stage, String(j.attempt)))}">output</a>`,
  ]);
  return `<h2>Job attempts</h2>${table(['STAGE', 'ATTEMPT', 'JOB', 'WHERE', 'STATE', 'LOG'], rows, 'attempts')}`;
}

export function runPage(report: RunReport & { runId: string }, training: TrainingView, ctx: PageContext, watches: ReadonlyMap<number, LiveWatch> = new Map(), now = new Date()): string {
  const live = new Map<number, ObservedState[]>();
  for (const [id, w] of watches) if (w.observed) live.set(id, w.observed);
  const attempts = jobAttempts(report, now.getTime(), live);
  const stages = report.stages.map((s) => [
    `<b>${esc(s.name)}</b>`,
    status(s.status),
    esc(s.attempts),
    `<span class="job">${esc(s.jobs.map((j) => `${j.jobId} @ ${j.runtime}/${j.site}${j.state ? ` ${j.state}` : ''}${j.reason ? ` (${j.reason})` : ''}`).join('; ') || '-')}</span>`,
    esc(when(s.startedAt)),
    esc(s.startedAt && s.finishedAt ? duration(s.finishedAt.getTime() - s.startedAt.getTime()) : s.startedAt && s.status === 'running' ? `${duration(now.getTime() - s.startedAt.getTime())} so far` : '-'),
    progressCell(stageProgress(report, s.name, watches)),
    s.error ? `<pre class="stage-error">${esc(s.error)}</pre>` : '',
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
    `<h2>Timeline</h2><div class="svg">${timelineSvg(report, now, live)}</div>`,
    `<h2>Stages</h2>${table(['STAGE', 'STATUS', 'ATTEMPTS', 'JOBS', 'STARTED', 'DURATION', 'PROGRESS', 'ERROR'], stages, 'stages')}`,
    attempts.length ? attemptsTable(report, attempts) : '',
    placements.length ? `<h2>Placement</h2>${table(['STAGE', 'DECISION', 'WHY', 'UNOBSERVED'], placements, 'placement')}` : '',
    `<h2>Training loss</h2>${loss}`,
    `<h2>Checkpoints</h2>${table(['STEP', 'CREATED', 'JOB', 'SITE', 'VERIFIED', 'LOSS', 'HELD-OUT LOSS'], ckpts, 'checkpoints')}${training.lookedIn ? `<p class="note">looked in ${esc(training.lookedIn)}</p>` : ''}`,
    `<h2>Deployment</h2><h3>Revisions</h3>${table(['RUNTIME', 'DEPLOYMENT', 'GENERATION', 'REPLACES REVISION', 'ACTION', 'ROLLOUT', 'ENDPOINT', 'MODEL', 'CHECKPOINT', 'AT'], revisions, 'revisions')}` +
      `<h3>Readiness gates</h3>${table(['GATE', 'RESULT', 'DETAIL'], gates, 'gates')}` +
      (undo.length ? `<h3>Rollback</h3>${table(['UNDO', 'OUTCOME', 'DETAIL', 'AT'], undo, 'rollback')}` : ''),
    problems(report),
    report.status === 'Running' ? `<p class="note live">still running: this page reloads every ${esc(RUN_REFRESH_S)} s</p>` : '',
  ].join('\n');
  return page(report.workflowId, body, { refresh: report.status === 'Running' ? RUN_REFRESH_S : undefined });
}

/** One job attempt's output: stdout, then stderr; reloads while the job runs. */
export function logsPage(report: RunReport & { runId: string }, a: JobAttempt, out: { stdout: string; stderr?: string; truncated?: boolean } | { error: string }, running: boolean): string {
  const title = `${report.workflowId}: ${a.stage} attempt ${a.attempt}`;
  const body = [
    `<h1><a href="${esc(href('runs', report.workflowId))}">${esc(report.workflowId)}</a> · ${esc(a.stage)} attempt ${esc(a.attempt)}</h1>`,
    `<dl><dt>job</dt><dd>${esc(a.jobId)}</dd><dt>where</dt><dd>${esc(`${a.runtime}/${a.site}`)}</dd><dt>state</dt><dd>${status(a.final?.state ?? (running ? 'running' : 'unknown'))}</dd></dl>`,
    'error' in out
      ? `<p class="error">${esc(out.error)}</p>`
      : `<h2>stdout</h2>${out.truncated ? '<p class="note">the last 256 KiB</p>' : ''}<pre class="log stdout">${esc(out.stdout) || '<span class="empty">(empty)</span>'}</pre>` +
        (out.stderr !== undefined ? `<h2>stderr</h2><pre class="log stderr">${esc(out.stderr) || '<span class="empty">(empty)</span>'}</pre>` : ''),
    running ? `<p class="note live">the job is running: this page reloads every ${esc(RUN_REFRESH_S)} s</p>` : '',
  ].join('\n');
  return page(title, body, { refresh: running ? RUN_REFRESH_S : undefined });
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
  return page(report.workflowId, body, { refresh: report.status === 'Running' ? RUN_REFRESH_S : undefined });
}

export function errorPage(code: number, message: string): string {
  return page(String(code), `<h1>${esc(code)}</h1><p class="error">${esc(message)}</p><p><a href="/">all runs</a></p>`);
}
