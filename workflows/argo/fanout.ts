// Large loops and composite calls in child workflows, so that no workflow's history or workflow task
// grows with the run (docs/argo-scale.md). A workflow runs about `sliceNodes` leaves itself
// (fanout-plan.ts weighs the calls); a loop that would take it past that runs in children of at most
// that many leaves each (at most `sliceFanOut` per loop: a child with more splits its share again), and
// a composite call (steps, DAG) that would, runs in a child of its own, whose tasks weigh again. A child
// (`argoSlice`) runs its part with the run's spec and global scope, its node ids `<run>-f<path>-<n>`,
// writes its node status to the run store (argoOffloadStatus: not into the parent's history) and
// returns only the items' results (a loop slice's as SliceItems, the few bytes its parent reads of them).
// Runs recorded before this patch never fan out.
import { CancellationScope, executeChild, isCancellation, patched } from '@temporalio/workflow';
import type { Scope } from '../../argo/lang/tags.js';
import type { ArgoRunInput, Json } from '../../argo/lang/types.js';
import { ARGO_SCALE_DEFAULTS, ARGO_WORKFLOW_TASK_TIMEOUT } from '../../contract/tuning.js';
import { ARGO_PATCHES } from './api.js';
import { runItems } from './call.js';
import { createContext, type RunContext } from './context.js';
import { encodeItems, isComposite, sliceResults, sliceSize, TemplateSizes, underRoot, type FanOut, type SliceBudget, type SliceInput, type SliceJob, type SliceResult } from './fanout-plan.js';
import { Gate } from './in-flight.js';
import { itemLabel } from './loops.js';
import { activityMessage, UserError, type NodeResult } from './model.js';
import { runTemplate } from './template.js';

export const SLICE_WORKFLOW_TYPE = 'argoSlice';

/** The workflow annotation that sets a run's sliceNodes (docs/argo-scale.md). */
export const SLICE_NODES_ANNOTATION = 'tandem.io/slice-nodes';

export function sliceBudget(input: ArgoRunInput): SliceBudget {
  const fromAnnotation = Number(input.annotations?.[SLICE_NODES_ANNOTATION]);
  const nodes = input.tuning?.sliceNodes ?? (Number.isFinite(fromAnnotation) && fromAnnotation > 0 ? fromAnnotation : ARGO_SCALE_DEFAULTS.sliceNodes);
  return { nodes: Math.max(1, Math.floor(nodes)), fanOut: ARGO_SCALE_DEFAULTS.sliceFanOut };
}

/** The reuse entries (argo retry) of the nodes under `prefix` only: a child gets its own share. */
function reuseUnder(input: ArgoRunInput, prefix: string): ArgoRunInput {
  if (!input.reuse) return input;
  const reuse = Object.fromEntries(Object.entries(input.reuse).filter(([k]) => k.startsWith(prefix)));
  return { ...input, reuse };
}

class Slicer implements FanOut {
  private used = 0;
  private started = 0;
  private readonly sizes: TemplateSizes;
  private readonly budget: SliceBudget;
  /**
   * At most childrenAtOnce children of this workflow run at once, loops' and composite calls' together:
   * a DAG of 30 composite tasks would otherwise start 30 children, each 22 of its own (660 workflows
   * live at once, a worker of 3.4 GB and 9 s workflow tasks at 30³). The bound is per workflow, and a
   * child waits only on its own children, so the tree cannot deadlock.
   */
  private readonly children = new Gate(ARGO_SCALE_DEFAULTS.childrenAtOnce, ARGO_PATCHES.childrenAtOnce);

  constructor(
    private readonly ctx: RunContext,
    private readonly roots: ReadonlySet<string>,
    private readonly path: string,
    private readonly rootWorkflowId: string,
  ) {
    this.sizes = new TemplateSizes(ctx.templates);
    this.budget = sliceBudget(ctx.input);
  }

  loop(req: Parameters<FanOut['loop']>[0], inline: () => Promise<(NodeResult | undefined)[]>): Promise<(NodeResult | undefined)[]> {
    const { weight, safe } = this.sizes.of(req.callee);
    const total = req.items.length * weight;
    const top = underRoot(this.roots, req.parentName);
    const over = total > this.budget.nodes || (top && this.used + total > this.budget.nodes);
    // patched() asked only of a loop that would fan out: other runs record no marker.
    if (!safe || req.enclosing.gate || !over || !patched(ARGO_PATCHES.fanOut)) {
      if (top) this.used += total;
      return inline();
    }
    const limit = req.parallel?.limited ? req.parallel.size : undefined;
    return this.fanLoop({ kind: 'loop', step: req.step, scope: req.scope, items: req.items, offset: 0, parentName: req.parentName, groupId: req.groupId, limit, sequential: limit !== undefined || this.ctx.workflowParallelism.limited }, weight);
  }

  call(call: Parameters<FanOut['call']>[0], parentName: string, enclosing: { gate?: unknown }): Promise<NodeResult> {
    const tmpl = call.template;
    const top = underRoot(this.roots, parentName);
    if (!isComposite(tmpl) || this.roots.has(call.name)) {
      if (top) this.used += 1;
      return this.ctx.runTemplate(call);
    }
    const { weight, safe } = this.sizes.of(tmpl);
    const over = weight > this.budget.nodes || (top && this.used + weight > this.budget.nodes);
    if (!safe || enclosing.gate || !over || !patched(ARGO_PATCHES.fanOut)) {
      if (top) this.used += weight;
      return this.ctx.runTemplate(call);
    }
    const named = this.ctx.templates.get(String(tmpl.name)) === tmpl;
    const { template: _t, daemons: _d, ...rest } = call;
    void _t;
    void _d;
    return this.start({ kind: 'call', call: { ...rest, ...(named ? { templateName: String(tmpl.name) } : { template: tmpl }) } }, call.name).then((r) => r[0]!);
  }

  /** A loop's items in children, `job.items` split by sliceSize; results in item order. */
  async fanLoop(job: Extract<SliceJob, { kind: 'loop' }>, weight: number): Promise<(NodeResult | undefined)[]> {
    const size = sliceSize(job.items.length, weight, this.budget);
    const jobs: Extract<SliceJob, { kind: 'loop' }>[] = [];
    for (let i = 0; i < job.items.length; i += size) jobs.push({ ...job, items: job.items.slice(i, i + size), offset: job.offset + i });
    const prefix = `${job.parentName}.${String(job.step.name)}(`;
    // At most childrenAtOnce children at a time (one, under a parallelism limit), started in item order.
    const out: (NodeResult | undefined)[][] = new Array(jobs.length);
    let next = 0;
    const lane = async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await this.start(jobs[i]!, prefix);
      }
    };
    await Promise.all(Array.from({ length: job.sequential ? 1 : Math.min(ARGO_SCALE_DEFAULTS.childrenAtOnce, jobs.length) }, lane));
    return out.flat();
  }

  /** Runs a slice here (it fits) or splits it again: what a loop child does. */
  runSlice(job: Extract<SliceJob, { kind: 'loop' }>): Promise<(NodeResult | undefined)[]> {
    const callee = job.step.inline ? ({ name: `${String(job.step.name)}-inline`, ...(job.step.inline as Json) } as Json) : this.ctx.templates.get(String(job.step.template));
    const weight = callee ? this.sizes.of(callee).weight : 1;
    if (job.items.length > 1 && job.items.length * weight > this.budget.nodes) return this.fanLoop(job, weight);
    const parallel = job.limit !== undefined ? this.ctx.semaphore(job.limit) : undefined;
    return runItems(this.ctx, job.step, job.scope, job.items, job.offset, job.parentName, job.groupId, parallel);
  }

  private async start(job: SliceJob, reusePrefix: string): Promise<(NodeResult | undefined)[]> {
    const path = this.path ? `${this.path}.${++this.started}` : String(++this.started);
    const workflowId = `${this.rootWorkflowId}--f${path}`;
    let r: SliceResult;
    try {
      r = await this.children.call(() => {
        // Listed once it starts: `argo get` reads each listed child (a waiting one does not exist yet).
        (this.ctx.status.slices ??= []).push(workflowId);
        // The global scope as it is when the child starts (a sibling that ended meanwhile may have set some).
        const input: SliceInput = { run: reuseUnder(this.ctx.input, reusePrefix), path, global: { ...this.ctx.global }, job, rootWorkflowId: this.rootWorkflowId };
        // The run's own workflow task timeout (contract/tuning.ts): a start option, not part of what replay compares.
        return executeChild<(i: SliceInput) => Promise<SliceResult>>(SLICE_WORKFLOW_TYPE, { workflowId, args: [input], workflowTaskTimeout: ARGO_WORKFLOW_TASK_TIMEOUT });
      });
    } catch (e) {
      if (isCancellation(e)) throw e;
      // Its nodes are in its own status; here the call (or loop) ends in Error with its reason.
      throw new UserError(`child workflow ${workflowId} failed: ${activityMessage(e)}`);
    }
    Object.assign(this.ctx.global, r.globals);
    // The child's top nodes are not copied into their parents' `children` here: at 50,000 items their ids
    // alone made the run's result 1.1 MB (Temporal refuses one over 2 MB). Each node names its parent,
    // and readers link the tree from that (argo/slices.ts mergeSlices), as they do for a running child.
    return sliceResults(r);
  }
}

/** Gives a run (or a child) its slicer; `roots`: the calls this workflow was started for. */
export function attachFanOut(ctx: RunContext, roots: string[], path = '', rootWorkflowId = ctx.info.workflowId): Slicer {
  const s = new Slicer(ctx, new Set(roots), path, rootWorkflowId);
  ctx.fanOut = s;
  return s;
}

/** A child workflow: a slice of a loop's items or one composite call of the run `input.run`. */
export async function argoSlice(input: SliceInput): Promise<SliceResult> {
  const { run, job } = input;
  const ctx = createContext(run, runTemplate, { nodeIdPrefix: `${run.name}-f${input.path}` });
  Object.assign(ctx.global, input.global);
  const roots = job.kind === 'call' ? [job.call.name] : job.items.length === 1 ? [`${job.parentName}.${String(job.step.name)}(${job.offset}:${itemLabel(job.items[0])})`] : [];
  const slicer = attachFanOut(ctx, roots, input.path, input.rootWorkflowId);
  let results: (NodeResult | undefined)[];
  try {
    if (job.kind === 'call') {
      const template = job.call.template ?? ctx.templates.get(job.call.templateName ?? '');
      if (!template) throw new UserError(`template "${job.call.templateName}" not found`);
      results = [await ctx.runTemplate({ ...job.call, template })];
    } else results = await slicer.runSlice(job);
  } finally {
    // However it ends (also cancelled with the parent), its nodes are kept where `argo get` reads them.
    await CancellationScope.nonCancellable(() => ctx.acts.argoOffloadStatus({ workflowId: ctx.info.workflowId, status: ctx.status }));
  }
  const globals: Scope = {};
  for (const [k, v] of Object.entries(ctx.global)) if (input.global[k] !== v) globals[k] = v;
  // A loop slice's items as the few bytes its parent reads of them; patched() asked only by a loop slice.
  if (job.kind === 'loop' && patched(ARGO_PATCHES.sliceItems)) return { items: encodeItems(results), globals };
  return { results: results.map((r) => r ?? null), globals };
}
