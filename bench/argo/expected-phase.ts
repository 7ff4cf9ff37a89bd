// The phase Argo's controller reaches with an example, derived from the workflow's content and not from
// Tandem's interpreter (the bench compares the two). A small static model of the controller:
//   - loops expand over withItems, withSequence and a withParam list known statically; the workflow's
//     arguments are the entrypoint's inputs;
//   - a pod fails when its program definitely exits non-zero: a top-level `exit N` / `sys.exit(N)` /
//     `raise` / `false` after the inputs are substituted, or a deadline (activeDeadlineSeconds, timeout)
//     shorter than its top-level sleeps; retries do not change a deterministic exit;
//   - steps (workflow/controller/steps.go): a failed step fails its template unless `continueOn.failed`;
//     `when` is evaluated (govaluate) when its tags resolve statically, otherwise the step is taken to run;
//   - DAG (dag.go assessDAGPhase): a task whose `depends` is unmet is omitted and inherits its parents'
//     branch phase; the DAG fails when a target task's branch phase is Failed and that task does not
//     continue on it;
//   - an exit handler that fails fails the workflow (operator.go, the onExit node's phase).
// Undecidable cases are refused by reading the code: a program whose exit depends on randomness or the
// clock, or that never ends (no deadline, not a daemon), is excluded with the reason.
// Note: `workflows.argoproj.io/no-test: expected-failure` means Argo's own e2e suite skips the file
// (test/e2e/examples_test.go), not that it ends Failed; it plays no part here.
import { dependsOf, evaluateDepends, parseDepends, type NodePhase, type TaskResult } from '../../argo/lang/depends.js';
import { evaluateWhen } from '../../argo/lang/govaluate.js';
import { reachableTemplates } from '../../argo/lint/runnable.js';
import type { Json } from '../../argo/lint/load.js';

export type Verdict = { phase: 'Succeeded' | 'Failed'; why?: string } | { exclude: string };
type Params = Record<string, string>;
type Outcome = { phase: 'Succeeded' | 'Failed'; why?: string };

const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);
const RANDOM = /\brandom\b|\$RANDOM|\bshuf\b|\/dev\/u?random|Math\.random|\brand\(|\buuid/i;
const CLOCK = /\$\(\s*date\b|`date\b|datetime\.now|time\.time\(\)|new Date\(/;
const EXITS = /\bexit\b|sys\.exit|process\.exit|\braise\b|\bfalse\b/;
const FOREVER = /sleep\s+(infinity|inf)\b|tail\s+-f\s+\/dev\/null|while\s+(true|:|\[\s*1\s*\])\s*;?\s*do(?![\s\S]*\b(break|exit)\b)|while True:(?![\s\S]*\b(break|sys\.exit|return)\b)/;

/** Longer than any example runs on Argo's e2e suite (its timeouts are minutes). */
const LONG_SECONDS = 600;

/**
 * The time a loop over sleeps takes: shell `for … in $(seq A B); do … sleep S …; done`, (B - A + 1) × S,
 * and Python `for … in range([A,] B):` over an indented `time.sleep(S)`, (B - A) × S.
 */
export function loopSeconds(text: string): number {
  let most = 0;
  for (const m of text.matchAll(/for\s+\w+\s+in\s+\$\(seq\s+(\d+)(?:\s+(\d+))?\)\s*;?\s*do([\s\S]*?)\bdone\b/g)) {
    const n = m[2] !== undefined ? Number(m[2]) - Number(m[1]) + 1 : Number(m[1]);
    const sleep = /sleep\s+(\d+(?:\.\d+)?)s?\b/.exec(m[3]!);
    if (sleep) most = Math.max(most, n * Number(sleep[1]));
  }
  for (const m of text.matchAll(/^([ \t]*)for\s+\w+\s+in\s+range\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)\s*:\s*\n((?:\1[ \t]+.*\n?)+)/gm)) {
    const n = m[3] !== undefined ? Number(m[3]) - Number(m[2]) : Number(m[2]);
    const sleep = /time\.sleep\(\s*(\d+(?:\.\d+)?)\s*\)/.exec(m[4]!);
    if (sleep) most = Math.max(most, n * Number(sleep[1]));
  }
  return most;
}

export function templateCode(t: Json): string {
  const c = (t.container ?? t.script ?? {}) as Json;
  return [...arr(c.command), ...arr(c.args), c.source ?? '', ...arr(t.initContainers).flatMap((i) => [...arr(i.command), ...arr(i.args)])].map(String).join('\n');
}

const durationSeconds = (v: unknown): number | undefined => {
  if (v === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)(s|m|h|d)?$/.exec(String(v).trim());
  return m ? Number(m[1]) * (m[2] === 'm' ? 60 : m[2] === 'h' ? 3600 : m[2] === 'd' ? 86_400 : 1) : undefined;
};

export function expectedPhase(spec: Json): Verdict {
  const wfDeadline = durationSeconds(spec.activeDeadlineSeconds);
  for (const t of reachableTemplates(spec)) {
    const text = templateCode(t);
    const name = String(t.name);
    const rnd = RANDOM.exec(text)?.[0];
    if (rnd && EXITS.test(text)) return { exclude: `random outcome: templates.${name} exits depending on ${rnd}` };
    const clock = CLOCK.exec(text)?.[0];
    if (clock && EXITS.test(text)) return { exclude: `clock-dependent outcome: templates.${name} exits depending on ${clock.trim()}` };
    const deadline = durationSeconds(t.activeDeadlineSeconds) ?? durationSeconds(t.timeout) ?? wfDeadline;
    if (t.daemon !== true && deadline === undefined && FOREVER.test(text)) return { exclude: `never ends: templates.${name} runs forever (no deadline, not a daemon)` };
    const long = loopSeconds(text);
    if (t.daemon !== true && deadline === undefined && long > LONG_SECONDS) return { exclude: `runs about ${long} s: templates.${name} loops over sleeps, longer than a bench run` };
    // One sleep as long as the bench allows or longer (Argo's e2e loop-sequence-many-long-pods.yaml: 10,000 pods of `sleep 600`).
    const slept = Math.max(0, ...[...text.matchAll(/\bsleep\s+(\d+)\b/g)].map((m) => Number(m[1])));
    if (t.daemon !== true && deadline === undefined && slept >= LONG_SECONDS) return { exclude: `runs at least ${slept} s: templates.${name} sleeps ${slept} s, longer than a bench run` };
  }
  const templates = new Map(arr(spec.templates).map((t) => [String(t.name), t]));
  const global: Params = {};
  for (const p of arr((spec.arguments as Json | undefined)?.parameters)) if (p.value !== undefined) global[`workflow.parameters.${String(p.name)}`] = String(p.value);
  const model = new Controller(templates, global);
  // The workflow's arguments are the entrypoint's inputs too (Argo passes them by name).
  const entryArgs: Params = {};
  for (const p of arr((spec.arguments as Json | undefined)?.parameters)) if (p.value !== undefined) entryArgs[String(p.name)] = String(p.value);
  const main = model.run(String(spec.entrypoint), entryArgs, 0);
  if (spec.onExit) {
    const exit = model.run(String(spec.onExit), {}, 0);
    if (exit.phase === 'Failed') return { phase: 'Failed', why: `exit handler: ${exit.why ?? ''}` };
  }
  return main;
}

class Controller {
  constructor(
    private readonly templates: Map<string, Json>,
    private readonly global: Params,
  ) {}

  run(name: string, args: Params, depth: number, inline?: Json): Outcome {
    const t = inline ?? this.templates.get(name);
    if (!t || depth > 20) return { phase: 'Succeeded' }; // recursion (coinflip-recursive) ends by its own condition
    const inputs: Params = { ...this.global };
    for (const p of arr((t.inputs as Json | undefined)?.parameters)) {
      const v = args[String(p.name)] ?? (p.value !== undefined ? String(p.value) : p.default !== undefined ? String(p.default) : undefined);
      if (v !== undefined) inputs[`inputs.parameters.${String(p.name)}`] = v;
    }
    if (t.steps) return this.steps(t, inputs, depth);
    if (t.dag) return this.dag(t, inputs, depth);
    if (t.container || t.script) return leaf(t, inputs);
    return { phase: 'Succeeded' };
  }

  /** One call (a step or a task), expanded over its items; Failed if any expansion fails. */
  private call(c: Json, scope: Params, depth: number): Outcome | 'Skipped' {
    const list: unknown[] = Array.isArray(c.withItems) ? (c.withItems as unknown[]) : c.withSequence ? sequence(c.withSequence as Json, scope) : c.withParam !== undefined ? paramItems(String(c.withParam), scope) : [undefined];
    let skipped = true;
    for (const item of list) {
      const s = { ...scope, ...itemScope(item) };
      if (c.when !== undefined && !whenHolds(String(c.when), s)) continue;
      skipped = false;
      const args: Params = {};
      for (const p of arr((c.arguments as Json | undefined)?.parameters)) if (p.value !== undefined) args[String(p.name)] = sub(String(p.value), s);
      const r = this.run(String(c.template ?? ''), args, depth + 1, c.inline as Json | undefined);
      if (r.phase === 'Failed') return { phase: 'Failed', why: `${String(c.name)}: ${r.why ?? 'failed'}` };
    }
    return skipped ? 'Skipped' : { phase: 'Succeeded' };
  }

  private steps(t: Json, scope: Params, depth: number): Outcome {
    for (const group of arr(t.steps)) {
      let failed: Outcome | undefined;
      for (const step of Array.isArray(group) ? (group as Json[]) : []) {
        const r = this.call(step, scope, depth);
        if (r !== 'Skipped' && r.phase === 'Failed' && (step.continueOn as Json | undefined)?.failed !== true) failed ??= r;
      }
      if (failed) return failed;
    }
    return { phase: 'Succeeded' };
  }

  private dag(t: Json, scope: Params, depth: number): Outcome {
    const tasks = arr((t.dag as Json).tasks);
    const byName = new Map(tasks.map((x) => [String(x.name), x]));
    const results: Record<string, TaskResult> = {};
    const branch: Record<string, Outcome> = {};
    const deps = (x: Json) => {
      const d = dependsOf(x as { depends?: string; dependencies?: string[] });
      if (!d) return undefined;
      // A bare reference to a task that continues on failure also accepts its failure (ancestry.go expandDependency).
      return d.replace(/(^|[^.\w-])([A-Za-z0-9_][A-Za-z0-9_-]*)(?![\w.-])/g, (m, pre: string, ref: string) =>
        ((byName.get(ref)?.continueOn as Json | undefined)?.failed === true ? `${pre}(${ref}.Succeeded || ${ref}.Skipped || ${ref}.Daemoned || ${ref}.Failed)` : m),
      );
    };
    const parents = (x: Json) => (byName.has(String(x.name)) && deps(x) ? [...new Set((deps(x)!.match(/[A-Za-z0-9_][A-Za-z0-9_-]*/g) ?? []).filter((n) => byName.has(n)))] : []);
    const pending = [...tasks];
    for (let guard = 0; pending.length && guard < 1000; guard++) {
      const i = pending.findIndex((x) => parents(x).every((p) => results[p]));
      if (i < 0) break;
      const x = pending.splice(i, 1)[0]!;
      const name = String(x.name);
      const d = deps(x);
      let ok = true;
      try {
        ok = d ? evaluateDepends(parseDepends(d), results) : true;
      } catch {
        ok = true;
      }
      const inherited = parents(x).map((p) => branch[p]!).find((b) => b.phase === 'Failed');
      if (!ok) {
        results[name] = { phase: 'Omitted' };
        branch[name] = inherited ?? { phase: 'Succeeded' };
        continue;
      }
      const r = this.call(x, scope, depth);
      const phase: NodePhase = r === 'Skipped' ? 'Skipped' : r.phase;
      results[name] = { phase };
      branch[name] = r === 'Skipped' ? (inherited ?? { phase: 'Succeeded' }) : r;
    }
    const dependedOn = new Set(tasks.flatMap((x) => parents(x)));
    const targets = (t.dag as Json).target ? String((t.dag as Json).target).split(/\s+/) : tasks.map((x) => String(x.name)).filter((n) => !dependedOn.has(n));
    for (const n of targets) {
      const b = branch[n];
      if (b?.phase === 'Failed' && (byName.get(n)?.continueOn as Json | undefined)?.failed !== true) return b;
    }
    return { phase: 'Succeeded' };
  }
}

function itemScope(item: unknown): Params {
  if (item === undefined) return {};
  if (item !== null && typeof item === 'object') {
    const out: Params = { item: JSON.stringify(item) };
    for (const [k, v] of Object.entries(item)) out[`item.${k}`] = typeof v === 'string' ? v : JSON.stringify(v);
    return out;
  }
  return { item: String(item) };
}

/** A withParam list that resolves statically (from the workflow's or a caller's parameters); otherwise one unknown item. */
function paramItems(param: string, scope: Params): unknown[] {
  try {
    const list: unknown = JSON.parse(sub(param, scope));
    return Array.isArray(list) ? list : [undefined];
  } catch {
    return [undefined];
  }
}

function sequence(s: Json, scope: Params): unknown[] {
  const n = (v: unknown) => Number(sub(String(v ?? ''), scope));
  const start = s.start !== undefined ? n(s.start) : 0;
  const end = s.end !== undefined ? n(s.end) : start + n(s.count) - 1;
  if (!Number.isFinite(start) || !Number.isFinite(end)) return [undefined];
  const out: number[] = [];
  for (let i = start; start <= end ? i <= end : i >= end; i += start <= end ? 1 : -1) out.push(i);
  return out.length ? out : [];
}

/** `{{name}}` tags with statically known values; unknown ones stay as they are. */
function sub(s: string, scope: Params): string {
  return s.replace(/\{\{\s*([^}]+?)\s*\}\}/g, (m, k: string) => scope[k] ?? m);
}

/** A `when` that resolves statically is evaluated as govaluate would; otherwise the step is taken to run. */
function whenHolds(when: string, scope: Params): boolean {
  const s = sub(when, scope);
  if (/\{\{/.test(s)) return true;
  try {
    return evaluateWhen(s);
  } catch {
    return true;
  }
}

/** Whether a pod's program definitely exits non-zero, from its substituted code. */
function leaf(t: Json, scope: Params): Outcome {
  const c = (t.container ?? t.script) as Json;
  const command = arr(c.command).map((x) => sub(String(x), scope));
  const args = arr(c.args).map((x) => sub(String(x), scope));
  const argv = [...command, ...args];
  const exe = (argv[0] ?? '').split('/').pop() ?? '';
  if (exe === 'false') return { phase: 'Failed', why: 'runs false' };
  let text = '';
  let python = false;
  if (t.script) {
    text = sub(String(c.source ?? ''), scope);
    python = /python/.test(exe);
  } else if (/^(ba|da|z)?sh$/.test(exe) && argv.includes('-c')) text = argv.slice(argv.indexOf('-c') + 1).join('\n');
  else if (/python/.test(exe) && argv.includes('-c')) {
    text = argv[argv.indexOf('-c') + 1] ?? '';
    python = true;
  }
  const exit = python ? pythonExit(text) : shellExit(text);
  if (exit !== undefined && exit !== 0) return { phase: 'Failed', why: `exits ${exit}` };
  const deadline = durationSeconds(sub(String(t.activeDeadlineSeconds ?? ''), scope) || undefined) ?? durationSeconds(sub(String(t.timeout ?? ''), scope) || undefined);
  const sleeps = python ? [...text.matchAll(/^time\.sleep\((\d+(?:\.\d+)?)\)/gm)].map((m) => Number(m[1])) : topLevel(text).flatMap((s) => (/^sleep\s+\S+$/.test(s) && durationSeconds(s.split(/\s+/)[1]) !== undefined ? [durationSeconds(s.split(/\s+/)[1])!] : []));
  if (exe === 'sleep' && durationSeconds(argv[1]) !== undefined) sleeps.push(durationSeconds(argv[1])!);
  const slept = sleeps.reduce((a, b) => a + b, 0);
  if (deadline !== undefined && slept > deadline) return { phase: 'Failed', why: `sleeps ${slept} s past its ${deadline} s deadline` };
  return { phase: 'Succeeded' };
}

/** Statements of a shell script outside if/case/loops/functions/subshells and `||` / `&&` chains. */
function topLevel(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  for (const raw of text.split(/\n|;(?!;)/)) {
    const s = raw.replace(/#.*$/, '').trim();
    if (!s) continue;
    const open = (s.match(/(^|\s)(if|case|for|while|until)\s|\{\s*$|^\(|\(\)\s*\{?/g) ?? []).length;
    const close = (s.match(/(^|\s)(fi|esac|done)\b|^\}|^\)/g) ?? []).length;
    if (depth === 0 && open === 0 && !/\|\||&&|\|/.test(s)) out.push(s);
    depth = Math.max(0, depth + open - close);
  }
  return out;
}

function shellExit(text: string): number | undefined {
  for (const s of topLevel(text)) {
    const m = /^exit(?:\s+(\d+))?$/.exec(s);
    if (m) return m[1] === undefined ? undefined : Number(m[1]);
    if (s === 'false') return 1;
  }
  return undefined;
}

function pythonExit(text: string): number | undefined {
  for (const line of text.split('\n')) {
    if (/^\s/.test(line) || !line.trim() || line.startsWith('#')) continue;
    const m = /^(?:sys\.)?exit\((\d+)?\)/.exec(line);
    if (m) return m[1] === undefined ? 0 : Number(m[1]);
    if (/^raise\b/.test(line)) return 1;
  }
  return undefined;
}
