// Argo's template tags: simple `{{inputs.parameters.x}}` lookups in a flat scope, and expression
// tags `{{=…}}` evaluated with the sandbox-safe expr interpreter over the same scope expanded into
// nested maps. Unresolvable simple tags are left verbatim, as Argo does at run time.
import { evaluateExpr, type Env } from './expr.js';
import { SPRIG } from './sprig.js';

export type Scope = Record<string, string>;

const TAG = /\{\{(=?)([\s\S]*?)\}\}/g;

/** Expands "a.b.c" keys into nested maps (keeping JSON values parsed where the key is a leaf). */
export function scopeEnv(scope: Scope, extra: Env = {}): Env {
  const env: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(scope)) {
    const parts = key.split('.');
    let cur = env;
    for (let i = 0; i < parts.length - 1; i++) {
      const p = parts[i]!;
      const next = cur[p];
      if (next === null || typeof next !== 'object' || Array.isArray(next)) cur[p] = {};
      cur = cur[p] as Record<string, unknown>;
    }
    const leaf = parts[parts.length - 1]!;
    if (!(leaf in cur) || typeof cur[leaf] !== 'object') cur[leaf] = value;
  }
  // `item` keeps its JSON shape so `{{=item}}` and `item.x` work on structured items.
  if (scope.item !== undefined) env.item = parseJsonish(scope.item);
  env.sprig = SPRIG;
  return { ...env, ...extra };
}

export function parseJsonish(v: string): unknown {
  const t = v.trim();
  if (/^[[{]/.test(t) || /^-?\d+(\.\d+)?$/.test(t)) {
    try {
      return JSON.parse(t);
    } catch {
      return v;
    }
  }
  return v;
}

export function stringify(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  return JSON.stringify(v);
}

/** Substitutes every tag in `text`. */
export function substitute(text: string, scope: Scope, extra: Env = {}): string {
  if (!text.includes('{{')) return text;
  let env: Env | undefined;
  return text.replace(TAG, (whole, eq: string, body: string) => {
    if (eq) {
      env ??= scopeEnv(scope, extra);
      return stringify(evaluateExpr(body.trim(), env));
    }
    const key = body.trim();
    return Object.prototype.hasOwnProperty.call(scope, key) ? scope[key]! : whole;
  });
}

/** Substitutes tags in every string inside a JSON value (templates, arguments). */
export function substituteDeep<T>(value: T, scope: Scope, extra: Env = {}): T {
  if (typeof value === 'string') return substitute(value, scope, extra) as T;
  if (Array.isArray(value)) return value.map((v) => substituteDeep(v, scope, extra)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteDeep(v, scope, extra)])) as T;
  }
  return value;
}

/** Every tag in a text: [isExpression, body]. */
export function tagsIn(text: string): [boolean, string][] {
  return [...text.matchAll(TAG)].map((m) => [m[1] === '=', m[2]!.trim()]);
}
