// Argo's DAG `depends` logic: `A && (B.Failed || !C.Succeeded)`. A bare task name means
// (Succeeded || Skipped || Daemoned); `dependencies: [A, B]` is `A && B`. Sandbox-safe.
import { ExprError } from './expr-error.js';

export type NodePhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Error' | 'Skipped' | 'Omitted';

/** What depends needs to know about one finished task (loops have several children). */
export interface TaskResult {
  phase: NodePhase;
  daemoned?: boolean;
  children?: NodePhase[];
}

type Dep = { k: 'ref'; task: string; result?: string } | { k: 'not'; a: Dep } | { k: 'and' | 'or'; a: Dep; b: Dep };

const RESULTS = ['Succeeded', 'Failed', 'Errored', 'Skipped', 'Omitted', 'Daemoned', 'AnySucceeded', 'AllFailed'];

export function parseDepends(src: string): Dep {
  const toks = src.match(/&&|\|\||!|\(|\)|[A-Za-z0-9_][A-Za-z0-9_.-]*|\S/g) ?? [];
  let p = 0;
  const or = (): Dep => {
    let l = and();
    while (toks[p] === '||') {
      p++;
      l = { k: 'or', a: l, b: and() };
    }
    return l;
  };
  const and = (): Dep => {
    let l = unary();
    while (toks[p] === '&&') {
      p++;
      l = { k: 'and', a: l, b: unary() };
    }
    return l;
  };
  const unary = (): Dep => {
    const t = toks[p++];
    if (t === undefined) throw new ExprError(`depends "${src}": unexpected end`);
    if (t === '!') return { k: 'not', a: unary() };
    if (t === '(') {
      const e = or();
      if (toks[p++] !== ')') throw new ExprError(`depends "${src}": missing )`);
      return e;
    }
    if (!/^[A-Za-z0-9_]/.test(t)) throw new ExprError(`depends "${src}": unexpected "${t}"`);
    const dot = t.lastIndexOf('.');
    if (dot > 0 && RESULTS.includes(t.slice(dot + 1))) return { k: 'ref', task: t.slice(0, dot), result: t.slice(dot + 1) };
    if (dot > 0) throw new ExprError(`depends "${src}": unknown task result "${t.slice(dot + 1)}" (one of ${RESULTS.join(', ')})`);
    return { k: 'ref', task: t };
  };
  const e = or();
  if (p !== toks.length) throw new ExprError(`depends "${src}": unexpected "${toks[p]}"`);
  return e;
}

export function dependsTasks(dep: Dep): string[] {
  if (dep.k === 'ref') return [dep.task];
  if (dep.k === 'not') return dependsTasks(dep.a);
  return [...dependsTasks(dep.a), ...dependsTasks(dep.b)];
}

/**
 * What a bare task name in `depends` means. Argo (workflow/common/ancestry.go expandDependency):
 * `(A.Succeeded || A.Skipped || A.Daemoned)`, plus A.Errored / A.Failed when A has continueOn for
 * them; an Omitted A does not satisfy it. `loose` is the interpreter's reading before that was
 * fixed (Omitted satisfied it; continueOn did not), which runs recorded before the fix replay with.
 */
export type BareDepends = (task: string, r: TaskResult) => boolean;
const loose: BareDepends = (_t, r) => r.phase === 'Succeeded' || r.phase === 'Skipped' || r.phase === 'Omitted' || !!r.daemoned;

/** Argo's bare-name expansion, given each task's continueOn. */
export function argoBareDepends(continueOn: (task: string) => { failed?: boolean; error?: boolean } | undefined): BareDepends {
  return (task, r) => {
    const c = continueOn(task) ?? {};
    return r.phase === 'Succeeded' || r.phase === 'Skipped' || !!r.daemoned || (c.failed === true && r.phase === 'Failed') || (c.error === true && r.phase === 'Error');
  };
}

function check(task: string, result: string | undefined, r: TaskResult, bare: BareDepends): boolean {
  const children = r.children ?? [];
  switch (result) {
    case undefined:
      return bare(task, r);
    case 'Succeeded':
      return r.phase === 'Succeeded';
    case 'Failed':
      return r.phase === 'Failed';
    case 'Errored':
      return r.phase === 'Error';
    case 'Skipped':
      return r.phase === 'Skipped';
    case 'Omitted':
      return r.phase === 'Omitted';
    case 'Daemoned':
      return !!r.daemoned;
    case 'AnySucceeded':
      return children.some((c) => c === 'Succeeded');
    default:
      return children.length > 0 && children.every((c) => c === 'Failed');
  }
}

export function evaluateDepends(dep: Dep, results: Record<string, TaskResult>, bare: BareDepends = loose): boolean {
  switch (dep.k) {
    case 'ref': {
      const r = results[dep.task];
      if (!r) throw new ExprError(`depends: task ${dep.task} has not finished`);
      return check(dep.task, dep.result, r, bare);
    }
    case 'not':
      return !evaluateDepends(dep.a, results, bare);
    case 'and':
      return evaluateDepends(dep.a, results, bare) && evaluateDepends(dep.b, results, bare);
    default:
      return evaluateDepends(dep.a, results, bare) || evaluateDepends(dep.b, results, bare);
  }
}

/** The `depends` text a task's `dependencies` list stands for. */
export function dependsOf(task: { depends?: string; dependencies?: string[] }): string | undefined {
  if (task.depends) return task.depends;
  if (task.dependencies?.length) return task.dependencies.join(' && ');
  return undefined;
}
