// The fuzz targets: the loaders of user input (pipeline spec, sites file, quotas file, Argo YAML,
// exported histories) fed structured mutations of valid documents and random YAML/JSON. Every case
// must end in success or a clean rejection: an InputError (or Argo lint issues) whose every issue has
// a path or a line. Anything else (a TypeError, a RangeError, a rejection nobody can locate) is a crash.
// Shared by `npm run bench:fuzz` (1,000+ cases each) and the unit lane's small subset.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { parse as yamlParse, stringify } from 'yaml';
import { parsePipelineSpec } from '../../contract/parse.js';
import { parseSitesFile } from '../../contract/sites.js';
import { parseQuotasFile } from '../../contract/quotas.js';
import { InputError, type InputIssue } from '../../contract/input-error.js';
import { lintText } from '../../argo/lint/validate.js';
import { historyFromFile } from '../../workers/replay.js';
import { analyseHistory } from '../../sdk/history.js';
import { defaultPayloadConverter } from '@temporalio/common';
import { parseJsonLimited } from '../../contract/limits.js';
import { parseTenantPolicy } from '../../contract/tenant-policy.js';
import { readTemplate, type ExecuteTemplateArgs } from '../../argo/executor-plugin/protocol.js';

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const read = (p: string) => readFileSync(root(p), 'utf8');

export type Outcome = 'accepted' | 'rejected' | 'crash';
export interface CaseResult {
  outcome: Outcome;
  /** CPU time the loader spent on the case (not wall time: see `cpuMs`). */
  ms: number;
  /** For a crash: what was thrown, or which issue had no location. */
  detail?: string;
}

export interface Target {
  name: string;
  /** Valid documents (as JS values) that mutations start from. */
  seeds: unknown[];
  /** How a document is turned into the loader's input text. */
  render: 'yaml-or-json' | 'json';
  load: (text: string) => InputIssue[] | undefined;
}

/** A line, or a path: a field (`stages.train.steps`), or '' for the whole input (an empty file, a list
 *  where a mapping belongs), which InputIssue documents as such. */
const located = (i: InputIssue) => (typeof i.line === 'number' && i.line >= 1) || typeof i.path === 'string';

/** Runs one case: success → accepted; InputError (or issues) all located → rejected; anything else → crash. */
/** CPU milliseconds this process has spent (user + system): a loader's cost that another process
 * keeping the cores busy does not inflate, unlike wall time. */
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

export function runCase(t: Target, text: string): CaseResult {
  const t0 = cpuMs();
  let issues: InputIssue[] | undefined;
  try {
    issues = t.load(text);
  } catch (e) {
    const ms = cpuMs() - t0;
    if (!(e instanceof InputError)) return { outcome: 'crash', ms, detail: `${(e as Error)?.name}: ${String((e as Error)?.message).slice(0, 200)}` };
    issues = e.issues;
    if (!issues.length) return { outcome: 'crash', ms, detail: 'InputError without issues' };
  }
  const ms = cpuMs() - t0;
  if (!issues || issues.length === 0) return { outcome: 'accepted', ms };
  const bad = issues.find((i) => !located(i));
  return bad ? { outcome: 'crash', ms, detail: `unlocated issue: ${bad.message.slice(0, 200)}` } : { outcome: 'rejected', ms };
}

const SITES = `sites:
  - name: zurich
    api: firecrest
    url: https://fc.example/v2
    tokenUrl: https://auth.example/token
    clientId: tandem
    clientSecretEnv: ZURICH_SECRET
    workDir: /scratch/tandem
  - name: lugano
    api: slurmrestd
    socket: /run/slurmrestd.socket
    workDir: /scratch/lugano
`;
const QUOTAS = 'retryInterval: 10s\nquotas:\n  zurich:\n    acme: {gpus: 4, cpus: 64, memoryMB: 256000}\n    beta: {cpus: 8}\n  lugano:\n    acme: {gpus: 1}\n';
const ARGO = ['steps.yaml', 'dag-diamond.yaml', 'loops-maps.yaml', 'conditionals.yaml'];
const HISTORIES = ['quotaLedger-admit-release.json', 'migrationPhase1-pass.json'];

export function targets(): Target[] {
  const yamlSeeds = (texts: string[]) => texts.map((t) => yamlParse(t));
  const argoDir = '../shared/data/argo-examples';
  const argoTexts = ARGO.flatMap((f) => {
    try {
      return [read(`${argoDir}/${f}`)];
    } catch {
      return [];
    }
  });
  return [
    { name: 'spec', seeds: yamlSeeds([read('templates/examples/demo-pipeline.yaml')]), render: 'yaml-or-json', load: (t) => void parsePipelineSpec(t, 'fuzz.yaml') },
    { name: 'sites', seeds: yamlSeeds([SITES]), render: 'yaml-or-json', load: (t) => void parseSitesFile(t, 'sites.yaml') },
    { name: 'quotas', seeds: yamlSeeds([QUOTAS]), render: 'yaml-or-json', load: (t) => void parseQuotasFile(t, 'quotas.yaml') },
    { name: 'tenant-policy', seeds: yamlSeeds([read('templates/tenant-policy.yaml')]), render: 'yaml-or-json', load: (t) => void parseTenantPolicy(t, 'policy.yaml') },
    {
      // The executor plugin's pipeline text (an Argo parameter): a Failed node naming the field, never a crash.
      name: 'executor-plugin',
      seeds: yamlSeeds([read('templates/examples/demo-pipeline.yaml')]),
      render: 'yaml-or-json',
      load: (t) => {
        const r = readTemplate({ workflow: { metadata: { name: 'wf', uid: 'u' } }, template: { name: 't', plugin: { tandem: { pipeline: t } } } } as ExecuteTemplateArgs);
        return r.kind === 'invalid' ? [{ path: 'plugin.tandem.pipeline', message: r.message }] : undefined;
      },
    },
    { name: 'argo', seeds: yamlSeeds(argoTexts.length ? argoTexts : ['apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: x-}\nspec:\n  entrypoint: main\n  templates:\n  - name: main\n    container: {image: alpine, command: [echo, hi]}\n']), render: 'yaml-or-json', load: (t) => lintText(t, 'argo.yaml').issues },
    {
      name: 'history',
      seeds: HISTORIES.map((f) => JSON.parse(read(`test/histories/${f}`))),
      render: 'json',
      load: (t) => {
        let json: unknown;
        try {
          json = parseJsonLimited(t); // as `tandem runs replay --file` reads it (cli/runs.ts)
        } catch (e) {
          // What `tandem runs replay --file` says for a file that is not JSON.
          throw new InputError('history file', [{ path: '', line: 1, message: `is not JSON: ${(e as Error).message}` }]);
        }
        const h = historyFromFile(json, 'history.json');
        // A history that passes the shape check must also be readable by `tandem runs show`.
        analyseHistory('fuzz', h, defaultPayloadConverter);
        return undefined;
      },
    },
  ];
}

// ---- generation -------------------------------------------------------------------------------------

type Path = (string | number)[];

function paths(v: unknown, at: Path = [], out: Path[] = []): Path[] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) paths(x, [...at, k], out);
  return out;
}

function setAt(v: unknown, path: Path, fn: (old: unknown) => unknown): unknown {
  if (path.length === 0) return fn(v);
  const [k, ...rest] = path;
  if (Array.isArray(v)) return v.map((x, i) => (i === k ? setAt(x, rest, fn) : x));
  if (v && typeof v === 'object') return { ...(v as object), [k as string]: setAt((v as Record<string, unknown>)[k as string], rest, fn) };
  return v;
}

const DELETE = Symbol('delete');
function deleteAt(v: unknown, path: Path): unknown {
  if (path.length === 1) {
    if (Array.isArray(v)) return v.filter((_, i) => i !== path[0]);
    if (v && typeof v === 'object') {
      const o = { ...(v as Record<string, unknown>) };
      delete o[path[0] as string];
      return o;
    }
    return v;
  }
  if (path.length === 0) return DELETE;
  const [k, ...rest] = path;
  return setAt(v, [k!], (x) => deleteAt(x, rest));
}

/** Values that break loaders: wrong types, edge numbers, hostile strings, prototype keys. */
const nasty = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1e308, -1e308, 2 ** 31, 2 ** 53 + 1, 0.5, NaN, Infinity, '', ' ', '\u0000', 'a\u0000b', '..', '../../etc/passwd', '${HOME}', '{{workflow.name}}', '*', '&a', '!!binary', 'file:///etc/passwd', 'javascript:alert(1)', 'http://169.254.169.254/', '0x10', '1e999', '__proto__', 'constructor', 'toString', 'x'.repeat(5000), '\ud800', '🙂', '10s', '-5s', '99999999999d', [], {}, [[]], { __proto__: 1 }, { constructor: { prototype: 1 } }),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.jsonValue({ maxDepth: 3 }),
);

const key = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'hasOwnProperty', 'toString', 'valueOf', 'name', 'stages', 'env', 'sites', 'quotas', 'spec', 'templates', 'events', 'eventId', 'eventType', ''), fc.string({ maxLength: 12 }));

type Mutation = { kind: 'replace'; pick: number; value: unknown } | { kind: 'delete'; pick: number } | { kind: 'add'; pick: number; key: string; value: unknown } | { kind: 'wrap'; pick: number } | { kind: 'dup'; pick: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), pick: fc.nat(), value: nasty }),
  fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('add' as const), pick: fc.nat(), key, value: nasty }),
  fc.record({ kind: fc.constant('wrap' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('dup' as const), pick: fc.nat() }),
);

function mutate(doc: unknown, ms: Mutation[]): unknown {
  let v = doc;
  for (const m of ms) {
    const ps = paths(v);
    const p = ps[m.pick % ps.length]!;
    if (m.kind === 'replace') v = setAt(v, p, () => m.value);
    else if (m.kind === 'delete' && p.length) v = deleteAt(v, p);
    else if (m.kind === 'add') v = setAt(v, p, (o) => (o && typeof o === 'object' && !Array.isArray(o) ? Object.defineProperty({ ...(o as object) }, m.key, { value: m.value, enumerable: true, writable: true, configurable: true }) : Array.isArray(o) ? [...o, m.value] : o));
    else if (m.kind === 'wrap') v = setAt(v, p, (o) => [o]);
    else if (m.kind === 'dup') v = setAt(v, p, (o) => (Array.isArray(o) ? [...o, ...o] : o));
    if (v === DELETE) v = null;
  }
  return v;
}

/** Text-level damage a structured mutation cannot make: cut, duplicate lines, stray characters, aliases. */
const textDamage = fc.oneof(
  fc.record({ kind: fc.constant('cut' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), s: fc.constantFrom('\u0000', '\t', ':', '- ', '{', '}', '[', '"', "'", '&a ', '*a', '<<: *a', '\n---\n', '%YAML 1.1\n', '!!str ', '\ufeff', '#', '\\', '\r') }),
  fc.record({ kind: fc.constant('dupline' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
);

type Damage = typeof textDamage extends fc.Arbitrary<infer T> ? T : never;

function damage(text: string, d: Damage): string {
  const i = Math.floor(d.at * text.length);
  if (d.kind === 'cut') return text.slice(0, i);
  if (d.kind === 'insert') return text.slice(0, i) + d.s + text.slice(i);
  const lines = text.split('\n');
  const j = Math.floor(d.at * lines.length);
  lines.splice(j, 0, lines[j] ?? '');
  return lines.join('\n');
}

/** Hostile YAML the loaders must refuse quickly: alias bombs, deep nesting, huge keys. */
const HOSTILE = [
  'a: &a ["x","x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n',
  `${'['.repeat(5000)}${']'.repeat(5000)}`,
  `${'a:\n '.repeat(500)}x`,
  // Deep nesting that killed the executor plugin and Node (V8 out of memory) before contract/limits.ts.
  `name: x\nextra: ${'{"a":'.repeat(20000)}1${'}'.repeat(20000)}\n`,
  `${'{"a":'.repeat(20000)}1${'}'.repeat(20000)}`,
  `${'- '.repeat(20000)}x\n`,
  `name: x\nenv:\n${Array.from({ length: 20000 }, (_, i) => `  K${i}: v`).join('\n')}\n`,
  '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}',
  '\u0000\u0000\u0000',
  '',
  '---\n---\n---\n',
  '!!js/function "function(){}"',
];

/** `count` inputs for a target: mutated seeds (as YAML or JSON, some damaged as text) and random documents. */
export function generateCases(t: Target, count: number, seed: number): string[] {
  const structured = fc.record({ seed: fc.nat(), muts: fc.array(mutation, { minLength: 1, maxLength: 4 }), json: fc.boolean(), dmg: fc.option(textDamage, { freq: 4 }) });
  const random = fc.oneof(fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)), fc.jsonValue({ maxDepth: 4 }).map((v) => stringify(v)), fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 }));
  const nStructured = Math.floor(count * 0.8);
  const out: string[] = [];
  for (const c of fc.sample(structured, { numRuns: nStructured, seed })) {
    const doc = mutate(t.seeds[c.seed % t.seeds.length], c.muts);
    let text: string;
    try {
      text = t.render === 'json' || c.json ? JSON.stringify(doc) ?? 'null' : stringify(doc);
    } catch {
      text = JSON.stringify(doc) ?? 'null';
    }
    out.push(c.dmg ? damage(text, c.dmg) : text);
  }
  out.push(...HOSTILE.slice(0, Math.max(0, count - out.length)));
  out.push(...fc.sample(random, { numRuns: Math.max(0, count - out.length), seed: seed + 1 }));
  return out;
}

export interface Tally {
  target: string;
  cases: number;
  accepted: number;
  rejected: number;
  crashes: { text: string; detail: string }[];
  hangs: { text: string; ms: number }[];
  maxMs: number;
  totalMs: number;
}

/** A case whose loader spends more CPU than this is a hang. Measured: the slowest case is the first of
 * each loader (schema set-up, JIT), about 0.5 s of CPU; the mean is 1–11 ms. The bound is 20× that
 * slowest case, so a loaded machine cannot trip it, while a super-linear loader (a YAML alias bomb
 * takes minutes) still does. */
export const HANG_MS = 10_000;

export function fuzzTarget(t: Target, count: number, seed = 17): Tally {
  const tally: Tally = { target: t.name, cases: 0, accepted: 0, rejected: 0, crashes: [], hangs: [], maxMs: 0, totalMs: 0 };
  for (const text of generateCases(t, count, seed)) {
    const r = runCase(t, text);
    tally.cases++;
    tally.totalMs += r.ms;
    tally.maxMs = Math.max(tally.maxMs, r.ms);
    if (r.ms > HANG_MS) tally.hangs.push({ text: text.slice(0, 300), ms: r.ms });
    if (r.outcome === 'crash') tally.crashes.push({ text: text.slice(0, 300), detail: r.detail! });
    else tally[r.outcome]++;
  }
  return tally;
}
