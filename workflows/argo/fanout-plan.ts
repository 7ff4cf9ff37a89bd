// How big a template call is, and when a loop or a composite call leaves the workflow for child
// workflows (workflows/argo/fanout.ts runs them). Pure: no Temporal import (test/unit/argo/purity.test.ts).
//
// A template's weight is the number of leaf nodes (pods, HTTP calls, resources, suspends) one call of it
// makes, estimated from the spec: a loop counts its items when they are literal (withItems, numeric
// withSequence), a withParam loop counts one (its size is known when it runs: the loop decides again
// then). A workflow runs about `sliceNodes` leaves itself; what would take it past that runs in
// children, each child again within the same budget.
import type { Scope } from '../../argo/lang/tags.js';
import type { ArgoRunInput, Json, Phase } from '../../argo/lang/types.js';
import { arr, emptyOutputs, type Call, type NodeResult } from './model.js';

/** What a child workflow runs: a slice of a loop's items, or one call of a composite template. */
export type SliceJob =
  | { kind: 'loop'; step: Json; scope: Scope; items: unknown[]; offset: number; parentName: string; groupId: string; limit?: number; sequential?: boolean }
  | { kind: 'call'; call: Omit<Call, 'template' | 'daemons'> & { templateName?: string; template?: Json } };

export interface SliceInput {
  /** The run's input (spec, name, tuning…), the `reuse` map cut to this slice's nodes. */
  run: ArgoRunInput;
  /** This child's place among the run's children ("3", "3.7"): its node ids and workflow id carry it. */
  path: string;
  /** The parent's global scope when it started the child (workflow.*, globalName outputs so far). */
  global: Scope;
  job: SliceJob;
  /** The run's own workflow id: every child's id is `<it>--f<path>`. */
  rootWorkflowId: string;
}

export interface SliceResult {
  /** One per item of a loop slice (null: kept from starting by failFast), one for a call; a loop slice since ARGO_PATCHES.sliceItems: `items`. */
  results?: (NodeResult | null)[];
  /** A loop slice's items, as few bytes as its parent reads (ARGO_PATCHES.sliceItems). */
  items?: SliceItems;
  /**
   * Returned by children recorded before parents stopped copying a child's top nodes into their
   * parents' `children` (readers link them by parentId): no longer read, kept so those results still type.
   */
  roots?: { id: string; parentId: string }[];
  rootIds?: { prefix: string; byParent: Record<string, string[]> };
  /** Global outputs (`globalName`) the child's templates set. */
  globals: Scope;
}

/** The run's budgets, tuning over the defaults. */
export interface SliceBudget {
  /** Leaves a workflow runs itself. */
  nodes: number;
  /** Children per loop (more items: each child splits its share again). */
  fanOut: number;
}

/** Static loop multiplicity of a step or task: its literal item count, else 1. */
export function literalItems(step: Json): number {
  if (Array.isArray(step.withItems)) return step.withItems.length;
  const seq = step.withSequence as Json | undefined;
  if (seq) {
    const num = (v: unknown) => (typeof v === 'number' || (typeof v === 'string' && /^-?\d+$/.test(v)) ? Number(v) : undefined);
    const count = num(seq.count);
    if (count !== undefined) return Math.max(0, count);
    const start = num(seq.start ?? 0);
    const end = num(seq.end);
    if (start !== undefined && end !== undefined) return Math.abs(end - start) + 1;
  }
  return 1;
}

/** The calls a composite template makes: its steps (all groups) or DAG tasks. */
export function callsOf(tmpl: Json): Json[] {
  if (Array.isArray(tmpl.steps)) return (tmpl.steps as unknown[]).flatMap((g) => arr(g));
  if (tmpl.dag) return arr((tmpl.dag as Json).tasks);
  return [];
}

export const isComposite = (tmpl: Json): boolean => !!(tmpl.steps || tmpl.dag);

/**
 * Weight and fan-out safety of every template, computed once per run. A template is unsafe to run in a
 * child when anything it reaches needs the parent's own state: suspend nodes (resume signals reach the
 * parent), daemons (stopped with the parent's scopes), synchronization, template failFast (a shared
 * gate), or a recursion (its size is unknown).
 */
export class TemplateSizes {
  private readonly memo = new Map<string, { weight: number; safe: boolean }>();
  constructor(private readonly templates: Map<string, Json>) {}

  of(tmpl: Json): { weight: number; safe: boolean } {
    return this.visit(tmpl, new Set());
  }

  private visit(tmpl: Json, stack: Set<string>): { weight: number; safe: boolean } {
    const name = String(tmpl.name ?? '');
    const known = this.memo.get(name);
    if (known && tmpl === this.templates.get(name)) return known;
    let safe = !tmpl.suspend && tmpl.daemon !== true && !tmpl.synchronization && tmpl.failFast !== true;
    let weight = 0;
    if (!isComposite(tmpl)) weight = 1;
    else {
      if (stack.has(name)) return { weight: 1, safe: false };
      stack.add(name);
      for (const c of callsOf(tmpl)) {
        const callee = c.inline ? (c.inline as Json) : this.templates.get(String(c.template));
        const hooks = [c.onExit, ((c.hooks as Json | undefined)?.exit as Json | undefined)?.template].filter((h) => h !== undefined);
        for (const h of hooks) {
          const ht = this.templates.get(String(h));
          if (ht) safe = safe && this.visit(ht, stack).safe;
        }
        if (!callee) continue;
        const sub = this.visit(callee, stack);
        safe = safe && sub.safe;
        weight += literalItems(c) * sub.weight;
      }
      stack.delete(name);
    }
    const r = { weight: Math.max(1, weight), safe };
    if (name && tmpl === this.templates.get(name)) this.memo.set(name, r);
    return r;
  }
}

/**
 * Items per child for a loop of `n` items of weight `w` each: a child takes at most `budget.nodes`
 * leaves (one item at least), and there are at most `budget.fanOut` children (each then splits its share).
 */
export function sliceSize(n: number, w: number, budget: SliceBudget): number {
  const fit = Math.max(1, Math.floor(budget.nodes / Math.max(1, w)));
  return Math.ceil(n / fit) > budget.fanOut ? Math.ceil(n / budget.fanOut) : fit;
}

/** Whether `parentName` is one of the workflow's roots or a retry attempt of one (`root(2)`). */
export function underRoot(roots: ReadonlySet<string>, parentName: string): boolean {
  if (roots.has(parentName)) return true;
  const m = /^(.*)\(\d+\)$/.exec(parentName);
  return !!m && roots.has(m[1]!);
}

/** A loop as runCall hands it over: its step, items and where its item nodes hang. */
export interface LoopRequest {
  step: Json;
  callee: Json;
  scope: Scope;
  items: unknown[];
  parentName: string;
  groupId: string;
  /** The enclosing template's parallelism, when it has one. */
  parallel?: { limited: boolean; size: number };
  enclosing: { gate?: unknown };
}

/**
 * The RunContext slot through which call.ts (pure) hands loops and calls to fanout.ts. Inline, each
 * returns the very promise it is given or makes (no extra tick: parallel branches keep their order).
 */
export interface FanOut {
  loop(req: LoopRequest, inline: () => Promise<(NodeResult | undefined)[]>): Promise<(NodeResult | undefined)[]>;
  call(call: Call, parentName: string, enclosing: { gate?: unknown }): Promise<NodeResult>;
}

/**
 * A loop slice's item results as its child returns them. The parent reads of an item only what the loop
 * node is made of (loops.ts loopOutcome, call.ts runCall): its phase, the first failed item's id and
 * message, the first item's id, and each item's `result` and output parameters for the aggregate. A full
 * NodeResult per item cost about 215 bytes of the parent's history (a 50,000-item loop: about 10 MB);
 * this about 8 for a trivial pod's. Output artifacts and exit codes stay in the child's node status.
 */
export interface SliceItems {
  /** One letter per item (PHASE_LETTERS); "-": kept from starting by failFast. */
  phases: string;
  /** Item index → node id: the first started item's and every item's whose phase is not Succeeded. */
  ids: Record<string, string>;
  /** Item index → message, of the items not Succeeded. */
  messages: Record<string, string>;
  /** Each item's `outputs.result` (null: none); absent when no item has one. */
  result?: (string | null)[];
  /** Each item's output parameters (null: none); absent when no item has any. */
  parameters?: (Record<string, string> | null)[];
}

const PHASE_LETTERS: Record<Phase, string> = { Pending: 'P', Running: 'R', Succeeded: 'S', Skipped: 'K', Failed: 'F', Error: 'E', Omitted: 'O' };
const LETTER_PHASES = Object.fromEntries(Object.entries(PHASE_LETTERS).map(([p, l]) => [l, p as Phase])) as Record<string, Phase>;

export function encodeItems(results: (NodeResult | undefined)[]): SliceItems {
  const items: SliceItems = { phases: '', ids: {}, messages: {} };
  const result: (string | null)[] = [];
  const parameters: (Record<string, string> | null)[] = [];
  let first = true;
  results.forEach((r, i) => {
    items.phases += r ? PHASE_LETTERS[r.phase] : '-';
    result.push(r?.outputs.result ?? null);
    parameters.push(r && Object.keys(r.outputs.parameters).length ? r.outputs.parameters : null);
    if (!r) return;
    if (first || r.phase !== 'Succeeded') items.ids[i] = r.id;
    first = false;
    if (r.phase !== 'Succeeded' && r.message !== undefined) items.messages[i] = r.message;
  });
  if (result.some((x) => x !== null)) items.result = result;
  if (parameters.some((x) => x !== null)) items.parameters = parameters;
  return items;
}

/** A slice's results in item order (undefined: not started), from either form its child returned. */
export function sliceResults(r: SliceResult): (NodeResult | undefined)[] {
  if (!r.items) return (r.results ?? []).map((x) => x ?? undefined);
  const { phases, ids, messages, result, parameters } = r.items;
  return [...phases].map((letter, i) => {
    if (letter === '-') return undefined;
    const outputs = emptyOutputs();
    const res = result?.[i];
    if (res !== undefined && res !== null) outputs.result = res;
    const params = parameters?.[i];
    if (params) outputs.parameters = { ...params };
    const out: NodeResult = { id: ids[i] ?? '', phase: LETTER_PHASES[letter]!, outputs };
    if (messages[i] !== undefined) out.message = messages[i];
    return out;
  });
}
