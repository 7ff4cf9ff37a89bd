// "Running now", as gauges: pipelines by status and stages running, counted by Temporal's visibility
// (the same store `tandem runs list` reads), and each running training job's step and loss, from the
// watch that sees them. Counters say what happened on this worker; these say what is — so they are
// right whichever worker ran what, and across worker restarts.
//
// The visibility gauges are the namespace's and task queue's, not this worker's: every worker on the
// queue reports the same values (graph them with max(), not sum()). They are read at scrape time, at
// most every 2 s (CACHE_MS), with a handful of count queries (one grouped by status, one per stage).
import type { temporal } from '@temporalio/proto';
import { metrics, nameLabel, setInFlightReader, siteLabel, stageLabel } from './metrics.js';

/** The visibility calls a source needs: a Client's or NativeConnection's workflowService. */
export interface VisibilityService {
  countWorkflowExecutions(req: temporal.api.workflowservice.v1.ICountWorkflowExecutionsRequest): Promise<temporal.api.workflowservice.v1.ICountWorkflowExecutionsResponse>;
}

export interface InFlightSource {
  service: VisibilityService;
  namespace: string;
  taskQueue: string;
}

const CACHE_MS = 2_000;
const STATUSES = ['Running', 'Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut', 'ContinuedAsNew'];
const STAGES = ['preprocess', 'train', 'checkpoint', 'deploy'];

/** Every worker of this process that counts, by namespace and task queue (a newer worker of one queue replaces the older). */
const sources = new Map<string, InFlightSource>();
let cached: { at: number; value: Promise<Counts> } | undefined;
type Counts = { byStatus: Map<string, number>; stages: Map<string, number> };

/**
 * A worker's visibility, for the gauges below: each worker of the process (Tandem's own, a
 * TandemPlugin's) adds its namespace and task queue, and the gauges count them all. Without any, they
 * report nothing.
 */
export function addInFlightSource(s: InFlightSource): void {
  sources.set(`${s.namespace}\u0000${s.taskQueue}`, s);
  cached = undefined;
  setInFlightReader(() => counts());
}

const quote = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** A grouped count's group value: a JSON-encoded string payload ("Running"). */
function groupValue(p: temporal.api.common.v1.IPayload | null | undefined): string {
  try {
    return String(JSON.parse(Buffer.from(p?.data ?? []).toString('utf8')));
  } catch {
    return 'other';
  }
}

async function count(s: InFlightSource): Promise<Counts> {
  const base = `WorkflowType = 'hybridPipeline' AND TaskQueue = ${quote(s.taskQueue)}`;
  const byStatus = new Map<string, number>(STATUSES.map((st) => [st, 0]));
  const grouped = await s.service.countWorkflowExecutions({ namespace: s.namespace, query: `${base} GROUP BY ExecutionStatus` });
  for (const g of grouped.groups ?? []) {
    const st = groupValue(g.groupValues?.[0]);
    byStatus.set(STATUSES.includes(st) ? st : 'other', (byStatus.get(st) ?? 0) + Number(g.count ?? 0));
  }
  const stages = new Map<string, number>();
  await Promise.all(
    STAGES.map(async (stage) => {
      const r = await s.service.countWorkflowExecutions({ namespace: s.namespace, query: `${base} AND ExecutionStatus = 'Running' AND TandemStage = ${quote(stage)}` });
      stages.set(stage, Number(r.count ?? 0));
    }),
  );
  return { byStatus, stages };
}

/** The sum over every source; a source whose read fails (its worker's connection closed) is left out. */
async function countAll(): Promise<Counts> {
  const read = await Promise.allSettled([...sources.values()].map(count));
  const ok = read.filter((r): r is PromiseFulfilledResult<Counts> => r.status === 'fulfilled').map((r) => r.value);
  if (!ok.length) throw new Error('no source of in-flight counts answered');
  const sum = (maps: Map<string, number>[]) => maps.reduce((acc, m) => (m.forEach((n, k) => acc.set(k, (acc.get(k) ?? 0) + n)), acc), new Map<string, number>());
  return { byStatus: sum(ok.map((c) => c.byStatus)), stages: sum(ok.map((c) => c.stages)) };
}

function counts(): Promise<Counts> | undefined {
  if (!sources.size) return undefined;
  const now = Date.now();
  if (!cached || now - cached.at > CACHE_MS) {
    const value = countAll();
    cached = { at: now, value };
    value.catch(() => (cached = undefined)); // a failed read is tried again at the next scrape
  }
  return cached.value;
}

/** What one watch reports of its job's training: set on every observation, removed when it ends. */
export function trainingWatch(who: { tenant?: string; pipeline?: string; stage: string; site?: string; runtime?: string }) {
  const labels = { tenant: nameLabel(who.tenant), pipeline: nameLabel(who.pipeline), stage: stageLabel(who.stage), site: siteLabel(who.site, who.runtime) };
  let set = false;
  const training = labels.stage === 'train';
  return {
    progress(p: { step?: number; total?: number; loss?: number } | undefined): void {
      if (!training || !p || !Number.isFinite(p.step)) return;
      metrics.trainingStep.set(labels, p.step!);
      if (Number.isFinite(p.total)) metrics.trainingSteps.set(labels, p.total!);
      if (p.loss !== undefined && Number.isFinite(p.loss)) metrics.trainingLoss.set(labels, p.loss);
      set = true;
    },
    end(): void {
      if (!set) return;
      for (const g of [metrics.trainingStep, metrics.trainingSteps, metrics.trainingLoss]) g.remove(labels);
      set = false;
    },
  };
}
