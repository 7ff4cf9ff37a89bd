// The JSONPath subset Argo's `jsonpath()` expression helper is used with: $, .key, ['key'], [n],
// [*], [a:b], and filters [?(@.field op value && …)]. Definite paths return the value; paths with
// a wildcard, slice or filter return a list (as the Go library does). Sandbox-safe.
import { ExprError } from './expr-error.js';

type Seg = { k: 'key'; v: string } | { k: 'index'; v: number } | { k: 'all' } | { k: 'slice'; a?: number; b?: number } | { k: 'filter'; v: string };

function parse(path: string): Seg[] {
  if (!path.startsWith('$')) throw new ExprError(`jsonpath must start with $: ${path}`);
  const segs: Seg[] = [];
  let i = 1;
  while (i < path.length) {
    if (path[i] === '.') {
      const m = /^\.(\*|[A-Za-z0-9_-]+)/.exec(path.slice(i));
      if (!m) throw new ExprError(`bad jsonpath ${path}`);
      segs.push(m[1] === '*' ? { k: 'all' } : { k: 'key', v: m[1]! });
      i += m[0].length;
    } else if (path[i] === '[') {
      let depth = 0;
      let j = i;
      for (; j < path.length; j++) {
        if (path[j] === '[') depth++;
        else if (path[j] === ']' && --depth === 0) break;
      }
      const body = path.slice(i + 1, j).trim();
      i = j + 1;
      if (body === '*') segs.push({ k: 'all' });
      else if (body.startsWith('?(') && body.endsWith(')')) segs.push({ k: 'filter', v: body.slice(2, -1) });
      else if (/^-?\d+$/.test(body)) segs.push({ k: 'index', v: Number(body) });
      else if (/^-?\d*:-?\d*$/.test(body)) {
        const [a, b] = body.split(':');
        segs.push({ k: 'slice', a: a ? Number(a) : undefined, b: b ? Number(b) : undefined });
      } else if (/^(['"]).*\1$/.test(body)) segs.push({ k: 'key', v: body.slice(1, -1) });
      else throw new ExprError(`unsupported jsonpath segment [${body}] in ${path}`);
    } else throw new ExprError(`bad jsonpath ${path}`);
  }
  return segs;
}

function literal(s: string): unknown {
  const t = s.trim();
  if (/^(['"]).*\1$/.test(t)) return t.slice(1, -1);
  if (t === 'true' || t === 'false') return t === 'true';
  if (t === 'null') return null;
  const n = Number(t);
  if (!Number.isNaN(n)) return n;
  throw new ExprError(`unsupported jsonpath filter operand ${s}`);
}

function operand(s: string, item: unknown): unknown {
  const t = s.trim();
  if (t.startsWith('@')) {
    let v: unknown = item;
    for (const key of t.slice(1).split('.').filter(Boolean)) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
    return v;
  }
  return literal(t);
}

function test(expr: string, item: unknown): boolean {
  const ors = expr.split('||');
  return ors.some((or) =>
    or.split('&&').every((cond) => {
      const m = /^(.*?)(==|!=|<=|>=|<|>)(.*)$/.exec(cond);
      if (!m) return operand(cond, item) !== undefined;
      const l = operand(m[1]!, item) as number;
      const r = operand(m[3]!, item) as number;
      switch (m[2]) {
        case '==':
          return l === r;
        case '!=':
          return l !== r;
        case '<':
          return l < r;
        case '>':
          return l > r;
        case '<=':
          return l <= r;
        default:
          return l >= r;
      }
    }),
  );
}

export function jsonpath(doc: unknown, path: string): unknown {
  const segs = parse(path);
  let values: unknown[] = [doc];
  let definite = true;
  for (const s of segs) {
    const next: unknown[] = [];
    for (const v of values) {
      if (s.k === 'key') {
        if (v && typeof v === 'object' && !Array.isArray(v) && s.v in v) next.push((v as Record<string, unknown>)[s.v]);
      } else if (s.k === 'index') {
        if (Array.isArray(v)) {
          const i = s.v < 0 ? v.length + s.v : s.v;
          if (i >= 0 && i < v.length) next.push(v[i]);
        }
      } else {
        definite = false;
        const list = Array.isArray(v) ? v : v && typeof v === 'object' ? Object.values(v) : [];
        if (s.k === 'all') next.push(...list);
        else if (s.k === 'slice') next.push(...list.slice(s.a ?? 0, s.b));
        else next.push(...list.filter((x) => test(s.v, x)));
      }
    }
    values = next;
  }
  if (definite) {
    if (values.length === 0) throw new ExprError(`jsonpath ${path}: not found`);
    return values[0];
  }
  return values;
}
