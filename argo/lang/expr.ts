// A sandbox-safe interpreter for the subset of expr-lang (github.com/expr-lang/expr) that Argo's
// `{{=…}}` tags use: literals, member/index access, calls, unary/binary/ternary operators, `in`,
// `matches`, `contains`, `startsWith`, `endsWith`, `??`, arrays, maps, predicates `{ # > 1 }`, and the
// helpers Argo registers (asInt, asFloat, string, toJson, jsonpath, sprig.*). No eval/new Function:
// the text is tokenized and walked. Also used by the linter to reject bad expressions up front.
import { ExprError } from './expr-error.js';
import { jsonpath } from './jsonpath.js';
import { SPRIG } from './sprig.js';

export { ExprError };

type Tok = { t: 'num'; v: number } | { t: 'str'; v: string } | { t: 'id'; v: string } | { t: 'op'; v: string } | { t: 'eof' };

const OPS = ['**', '==', '!=', '<=', '>=', '&&', '||', '??', '?.', '..', '+', '-', '*', '/', '%', '<', '>', '!', '(', ')', '[', ']', '{', '}', ',', '.', ':', '?', '#', '|'];

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (/[0-9]/.test(c)) {
      const m = /^(0x[0-9a-fA-F]+|\d[\d_]*(\.\d+)?([eE][+-]?\d+)?)/.exec(src.slice(i))!;
      // `1..3` is a range, not the float "1."
      out.push({ t: 'num', v: Number(m[0].replace(/_/g, '')) });
      i += m[0].length;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      let s = '';
      while (j < src.length && src[j] !== c) {
        if (src[j] === '\\' && c !== '`') {
          const n = src[++j];
          s += n === 'n' ? '\n' : n === 't' ? '\t' : n === 'r' ? '\r' : (n ?? '');
        } else s += src[j];
        j++;
      }
      if (j >= src.length) throw new ExprError(`unterminated string in ${JSON.stringify(src)}`);
      out.push({ t: 'str', v: s });
      i = j + 1;
      continue;
    }
    if (/[A-Za-z_$]/.test(c)) {
      const m = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(src.slice(i))!;
      out.push({ t: 'id', v: m[0] });
      i += m[0].length;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new ExprError(`unexpected character ${JSON.stringify(c)} at ${i} in ${JSON.stringify(src)}`);
    out.push({ t: 'op', v: op });
    i += op.length;
  }
  out.push({ t: 'eof' });
  return out;
}

export type Node =
  | { k: 'lit'; v: unknown }
  | { k: 'id'; name: string }
  | { k: 'pointer'; member?: string }
  | { k: 'member'; obj: Node; prop: Node; optional: boolean }
  | { k: 'call'; fn: Node; args: Node[] }
  | { k: 'unary'; op: string; arg: Node }
  | { k: 'bin'; op: string; l: Node; r: Node }
  | { k: 'cond'; c: Node; a: Node; b: Node }
  | { k: 'array'; items: Node[] }
  | { k: 'map'; entries: [Node, Node][] }
  | { k: 'closure'; body: Node };

// Binding powers, lowest first, after expr-lang's operator table.
const BINARY: Record<string, number> = {
  '??': 1, '||': 2, or: 2, '&&': 3, and: 3,
  '==': 4, '!=': 4, '<': 4, '>': 4, '<=': 4, '>=': 4, in: 4, matches: 4, contains: 4, startsWith: 4, endsWith: 4,
  '..': 5, '+': 6, '-': 6, '*': 7, '/': 7, '%': 7, '**': 8,
};

class Parser {
  private p = 0;
  constructor(private readonly toks: Tok[], private readonly src: string) {}
  private peek(): Tok {
    return this.toks[this.p]!;
  }
  private next(): Tok {
    return this.toks[this.p++]!;
  }
  private isOp(v: string): boolean {
    const t = this.peek();
    return t.t === 'op' && t.v === v;
  }
  private expect(v: string): void {
    const t = this.next();
    if (t.t !== 'op' || t.v !== v) throw new ExprError(`expected "${v}" in ${JSON.stringify(this.src)}`);
  }
  parseAll(): Node {
    const n = this.expr(0);
    if (this.peek().t !== 'eof') throw new ExprError(`unexpected ${JSON.stringify(tokText(this.peek()))} in ${JSON.stringify(this.src)}`);
    return n;
  }
  expr(minBp: number): Node {
    let left = this.unary();
    for (;;) {
      const t = this.peek();
      if (t.t === 'op' && t.v === '?' && minBp === 0) {
        this.next();
        const a = this.expr(0);
        this.expect(':');
        const b = this.expr(0);
        left = { k: 'cond', c: left, a, b };
        continue;
      }
      if (t.t === 'op' && t.v === '|' && minBp === 0) {
        // pipe: `x | f(y)` is f(x, y)
        this.next();
        const call = this.postfix(this.primary());
        if (call.k !== 'call') throw new ExprError(`a pipe must end in a call in ${JSON.stringify(this.src)}`);
        left = { ...call, args: [left, ...call.args] };
        continue;
      }
      let op: string | undefined;
      let negate = false;
      if ((t.t === 'op' || t.t === 'id') && BINARY[t.v] !== undefined) op = t.v;
      else if (t.t === 'id' && t.v === 'not') {
        const n = this.toks[this.p + 1];
        if (n?.t === 'id' && (n.v === 'in' || n.v === 'matches' || n.v === 'contains' || n.v === 'startsWith' || n.v === 'endsWith')) {
          op = n.v;
          negate = true;
        }
      }
      if (!op) return left;
      const bp = BINARY[op]!;
      if (bp <= minBp && !(op === '**' && bp === minBp)) return left;
      this.next();
      if (negate) this.next();
      const right = this.expr(op === '**' ? bp - 1 : bp);
      const bin: Node = { k: 'bin', op: op === 'and' ? '&&' : op === 'or' ? '||' : op, l: left, r: right };
      left = negate ? { k: 'unary', op: '!', arg: bin } : bin;
    }
  }
  unary(): Node {
    const t = this.peek();
    if ((t.t === 'op' && (t.v === '!' || t.v === '-' || t.v === '+')) || (t.t === 'id' && t.v === 'not')) {
      this.next();
      return { k: 'unary', op: t.v === 'not' ? '!' : t.v, arg: this.expr(7.5) };
    }
    return this.postfix(this.primary());
  }
  primary(): Node {
    const t = this.next();
    switch (t.t) {
      case 'num':
        return { k: 'lit', v: t.v };
      case 'str':
        return { k: 'lit', v: t.v };
      case 'id':
        if (t.v === 'true') return { k: 'lit', v: true };
        if (t.v === 'false') return { k: 'lit', v: false };
        if (t.v === 'nil') return { k: 'lit', v: null };
        return { k: 'id', name: t.v };
      case 'op':
        if (t.v === '(') {
          const e = this.expr(0);
          this.expect(')');
          return e;
        }
        if (t.v === '#') {
          const n = this.peek();
          if (n.t === 'id' && !(n.v in BINARY)) {
            this.next();
            return { k: 'pointer', member: n.v };
          }
          return { k: 'pointer' };
        }
        if (t.v === '.') {
          const n = this.next();
          if (n.t !== 'id') throw new ExprError(`expected a field after "." in ${JSON.stringify(this.src)}`);
          return { k: 'pointer', member: n.v };
        }
        if (t.v === '[') {
          const items: Node[] = [];
          while (!this.isOp(']')) {
            items.push(this.expr(0));
            if (!this.isOp(']')) this.expect(',');
          }
          this.next();
          return { k: 'array', items };
        }
        if (t.v === '{') return this.mapOrClosure();
        break;
      default:
        break;
    }
    throw new ExprError(`unexpected ${JSON.stringify(tokText(t))} in ${JSON.stringify(this.src)}`);
  }
  private mapOrClosure(): Node {
    // `{a: 1}` is a map; `{ # > 1 }` a predicate. Look for `key:` to tell them apart.
    const save = this.p;
    const first = this.peek();
    if (this.isOp('}')) {
      this.next();
      return { k: 'map', entries: [] };
    }
    if ((first.t === 'id' || first.t === 'str' || first.t === 'num') && this.toks[this.p + 1]?.t === 'op' && (this.toks[this.p + 1] as { v: string }).v === ':') {
      const entries: [Node, Node][] = [];
      while (!this.isOp('}')) {
        const k = this.next();
        if (k.t !== 'id' && k.t !== 'str' && k.t !== 'num') throw new ExprError(`bad map key in ${JSON.stringify(this.src)}`);
        this.expect(':');
        entries.push([{ k: 'lit', v: String(k.v) }, this.expr(0)]);
        if (!this.isOp('}')) this.expect(',');
      }
      this.next();
      return { k: 'map', entries };
    }
    this.p = save;
    const body = this.expr(0);
    this.expect('}');
    return { k: 'closure', body };
  }
  postfix(node: Node): Node {
    for (;;) {
      if (this.isOp('.') || this.isOp('?.')) {
        const optional = (this.next() as { v: string }).v === '?.';
        const n = this.next();
        if (n.t !== 'id') throw new ExprError(`expected a field name after "." in ${JSON.stringify(this.src)}`);
        node = { k: 'member', obj: node, prop: { k: 'lit', v: n.v }, optional };
      } else if (this.isOp('[')) {
        this.next();
        // slices a[i:j]
        let from: Node | undefined;
        if (!this.isOp(':')) from = this.expr(0);
        if (this.isOp(':')) {
          this.next();
          const to = this.isOp(']') ? undefined : this.expr(0);
          this.expect(']');
          node = { k: 'call', fn: { k: 'id', name: '$slice' }, args: [node, from ?? { k: 'lit', v: 0 }, to ?? { k: 'lit', v: null }] };
          continue;
        }
        this.expect(']');
        node = { k: 'member', obj: node, prop: from!, optional: false };
      } else if (this.isOp('(')) {
        this.next();
        const args: Node[] = [];
        while (!this.isOp(')')) {
          args.push(this.expr(0));
          if (!this.isOp(')')) this.expect(',');
        }
        this.next();
        node = { k: 'call', fn: node, args };
      } else return node;
    }
  }
}

function tokText(t: Tok): string {
  return t.t === 'eof' ? 'end of expression' : String(t.v);
}

const cache = new Map<string, Node>();

/** Parses an expression; throws ExprError with the reason when it is not valid expr syntax. */
export function parseExpr(src: string): Node {
  let n = cache.get(src);
  if (!n) {
    n = new Parser(tokenize(src), src).parseAll();
    if (cache.size > 500) cache.clear();
    cache.set(src, n);
  }
  return n;
}

export type Env = Record<string, unknown>;

function truthy(v: unknown): boolean {
  return v === true;
}

function num(v: unknown, what: string): number {
  if (typeof v === 'number') return v;
  throw new ExprError(`${what}: expected a number, got ${JSON.stringify(v)}`);
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'object' && typeof b === 'object' && a && b) return JSON.stringify(a) === JSON.stringify(b);
  return false;
}

function member(obj: unknown, key: unknown, optional: boolean): unknown {
  if (obj === null || obj === undefined) {
    if (optional) return null;
    throw new ExprError(`cannot fetch ${String(key)} from nil`);
  }
  if (Array.isArray(obj) || typeof obj === 'string') {
    let i = num(key, 'index');
    if (i < 0) i += obj.length;
    if (i < 0 || i >= obj.length) throw new ExprError(`index out of range: ${String(key)} (length ${obj.length})`);
    return obj[i];
  }
  if (typeof obj === 'object') {
    const k = String(key);
    if (!Object.prototype.hasOwnProperty.call(obj, k)) {
      if (optional) return null;
      return undefined;
    }
    return (obj as Record<string, unknown>)[k];
  }
  throw new ExprError(`cannot fetch ${String(key)} from ${typeof obj}`);
}

export interface Closure {
  (item: unknown): unknown;
}

/** Built-in functions of expr-lang (the ones Argo users reach for) plus Argo's helpers. */
const BUILTINS: Record<string, (...args: unknown[]) => unknown> = {
  len: (v) => (Array.isArray(v) || typeof v === 'string' ? v.length : v && typeof v === 'object' ? Object.keys(v).length : 0),
  asInt: (v) => {
    const n = typeof v === 'number' ? v : Number(String(v).trim());
    if (!Number.isFinite(n) || !Number.isInteger(n)) throw new ExprError(`asInt: ${JSON.stringify(v)} is not an integer`);
    return n;
  },
  asFloat: (v) => {
    const n = typeof v === 'number' ? v : Number(String(v).trim());
    if (!Number.isFinite(n)) throw new ExprError(`asFloat: ${JSON.stringify(v)} is not a number`);
    return n;
  },
  int: (v) => Math.trunc(typeof v === 'number' ? v : Number(v)),
  float: (v) => Number(v),
  string: (v) => (typeof v === 'string' ? v : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v ?? 'nil')),
  toJson: (v) => JSON.stringify(v),
  toJSON: (v) => JSON.stringify(v),
  fromJson: (v) => JSON.parse(String(v)),
  fromJSON: (v) => JSON.parse(String(v)),
  jsonpath: (doc, path) => jsonpath(typeof doc === 'string' ? JSON.parse(doc) : doc, String(path)),
  lower: (s) => String(s).toLowerCase(),
  upper: (s) => String(s).toUpperCase(),
  trim: (s) => String(s).trim(),
  split: (s, sep) => String(s).split(String(sep)),
  join: (a, sep) => (a as unknown[]).map(String).join(sep === undefined ? '' : String(sep)),
  keys: (m) => Object.keys(m as object),
  values: (m) => Object.values(m as object),
  abs: (n) => Math.abs(num(n, 'abs')),
  max: (...a) => Math.max(...a.map((x) => num(x, 'max'))),
  min: (...a) => Math.min(...a.map((x) => num(x, 'min'))),
  first: (a) => (a as unknown[])[0] ?? null,
  last: (a) => (a as unknown[])[(a as unknown[]).length - 1] ?? null,
  $slice: (v, from, to) => (v as unknown[] | string).slice(num(from, 'slice'), to === null ? undefined : num(to, 'slice')),
};

const PREDICATES = new Set(['filter', 'map', 'all', 'any', 'none', 'one', 'count', 'find', 'findIndex']);

function applyPredicate(name: string, list: unknown, fn: Closure): unknown {
  if (!Array.isArray(list)) throw new ExprError(`${name}: expected an array, got ${JSON.stringify(list)}`);
  switch (name) {
    case 'filter':
      return list.filter((x) => truthy(fn(x)));
    case 'map':
      return list.map((x) => fn(x));
    case 'all':
      return list.every((x) => truthy(fn(x)));
    case 'any':
      return list.some((x) => truthy(fn(x)));
    case 'none':
      return !list.some((x) => truthy(fn(x)));
    case 'one':
      return list.filter((x) => truthy(fn(x))).length === 1;
    case 'count':
      return list.filter((x) => truthy(fn(x))).length;
    case 'find':
      return list.find((x) => truthy(fn(x))) ?? null;
    default:
      return list.findIndex((x) => truthy(fn(x)));
  }
}

function evalNode(n: Node, env: Env, pointer: unknown[]): unknown {
  switch (n.k) {
    case 'lit':
      return n.v;
    case 'id': {
      if (Object.prototype.hasOwnProperty.call(env, n.name)) return env[n.name];
      if (n.name === 'sprig') return SPRIG;
      if (BUILTINS[n.name]) return BUILTINS[n.name];
      throw new ExprError(`unknown name ${n.name}`);
    }
    case 'pointer': {
      if (pointer.length === 0) throw new ExprError('# used outside a predicate');
      const cur = pointer[pointer.length - 1];
      return n.member ? member(cur, n.member, false) : cur;
    }
    case 'member':
      return member(evalNode(n.obj, env, pointer), evalNode(n.prop, env, pointer), n.optional);
    case 'call': {
      if (n.fn.k === 'id' && PREDICATES.has(n.fn.name) && !Object.prototype.hasOwnProperty.call(env, n.fn.name)) {
        const [listNode, body] = n.args;
        if (!listNode || !body) throw new ExprError(`${n.fn.name} needs a list and a predicate`);
        const list = evalNode(listNode, env, pointer);
        const pred = body.k === 'closure' ? body.body : body;
        return applyPredicate(n.fn.name, list, (x) => evalNode(pred, env, [...pointer, x]));
      }
      if (n.fn.k === 'id' && n.fn.name === 'now' && !env.now) return env.$now ?? 0;
      const fn = evalNode(n.fn, env, pointer);
      if (typeof fn !== 'function') throw new ExprError(`${describeNode(n.fn)} is not a function`);
      return (fn as (...a: unknown[]) => unknown)(...n.args.map((a) => evalNode(a, env, pointer)));
    }
    case 'unary': {
      const v = evalNode(n.arg, env, pointer);
      if (n.op === '!') {
        if (typeof v !== 'boolean') throw new ExprError(`! needs a boolean, got ${JSON.stringify(v)}`);
        return !v;
      }
      return n.op === '-' ? -num(v, 'negation') : num(v, 'unary +');
    }
    case 'bin':
      return binary(n, env, pointer);
    case 'cond': {
      const c = evalNode(n.c, env, pointer);
      return truthy(c) ? evalNode(n.a, env, pointer) : evalNode(n.b, env, pointer);
    }
    case 'array':
      return n.items.map((i) => evalNode(i, env, pointer));
    case 'map':
      return Object.fromEntries(n.entries.map(([k, v]) => [String(evalNode(k, env, pointer)), evalNode(v, env, pointer)]));
    case 'closure':
      return (x: unknown) => evalNode(n.body, env, [...pointer, x]);
  }
}

function describeNode(n: Node): string {
  return n.k === 'id' ? n.name : n.k === 'member' && n.prop.k === 'lit' ? `${describeNode(n.obj)}.${String(n.prop.v)}` : n.k;
}

function binary(n: Extract<Node, { k: 'bin' }>, env: Env, pointer: unknown[]): unknown {
  if (n.op === '&&') {
    const l = evalNode(n.l, env, pointer);
    if (l !== true && l !== false) throw new ExprError(`&& needs booleans, got ${JSON.stringify(l)}`);
    return l ? evalNode(n.r, env, pointer) === true : false;
  }
  if (n.op === '||') {
    const l = evalNode(n.l, env, pointer);
    if (l !== true && l !== false) throw new ExprError(`|| needs booleans, got ${JSON.stringify(l)}`);
    return l ? true : evalNode(n.r, env, pointer) === true;
  }
  if (n.op === '??') {
    let l: unknown;
    try {
      l = evalNode(n.l, env, pointer);
    } catch {
      l = null;
    }
    return l === null || l === undefined ? evalNode(n.r, env, pointer) : l;
  }
  const l = evalNode(n.l, env, pointer);
  const r = evalNode(n.r, env, pointer);
  switch (n.op) {
    case '==':
      return equal(l, r);
    case '!=':
      return !equal(l, r);
    case '<':
    case '>':
    case '<=':
    case '>=': {
      if (!((typeof l === 'number' && typeof r === 'number') || (typeof l === 'string' && typeof r === 'string'))) {
        throw new ExprError(`invalid operation: ${JSON.stringify(l)} ${n.op} ${JSON.stringify(r)} (mismatched types)`);
      }
      return n.op === '<' ? l < r : n.op === '>' ? l > r : n.op === '<=' ? l <= r : l >= r;
    }
    case '+':
      if (typeof l === 'string' && typeof r === 'string') return l + r;
      if (Array.isArray(l) && Array.isArray(r)) return [...l, ...r];
      return num(l, '+') + num(r, '+');
    case '-':
      return num(l, '-') - num(r, '-');
    case '*':
      return num(l, '*') * num(r, '*');
    case '/':
      return num(l, '/') / num(r, '/');
    case '%':
      return num(l, '%') % num(r, '%');
    case '**':
      return num(l, '**') ** num(r, '**');
    case '..': {
      const out: number[] = [];
      for (let i = num(l, '..'); i <= num(r, '..'); i++) out.push(i);
      return out;
    }
    case 'in':
      if (Array.isArray(r)) return r.some((x) => equal(x, l));
      if (r && typeof r === 'object') return Object.prototype.hasOwnProperty.call(r, String(l));
      throw new ExprError(`in needs an array or map on the right`);
    case 'matches':
      return safeRegExp(String(r)).test(String(l));
    case 'contains':
      return String(l).includes(String(r));
    case 'startsWith':
      return String(l).startsWith(String(r));
    case 'endsWith':
      return String(l).endsWith(String(r));
  }
  throw new ExprError(`unknown operator ${n.op}`);
}

/** Go's RE2 syntax is mostly a subset of JS's; reject only what cannot compile. */
export function safeRegExp(src: string): RegExp {
  try {
    return new RegExp(src);
  } catch (e) {
    throw new ExprError(`bad regular expression ${JSON.stringify(src)}: ${(e as Error).message}`);
  }
}

export function evaluateExpr(src: string, env: Env): unknown {
  return evalNode(parseExpr(src), env, []);
}

/** The identifiers an expression reads, as dotted paths ("inputs.parameters.x"), for the linter. */
export function referencedPaths(src: string): string[] {
  const out: string[] = [];
  const walk = (n: Node): void => {
    const path = dotted(n);
    if (path) {
      out.push(path);
      return;
    }
    switch (n.k) {
      case 'member':
        walk(n.obj);
        walk(n.prop);
        break;
      case 'call':
        if (!(n.fn.k === 'id' || (n.fn.k === 'member' && dotted(n.fn)?.startsWith('sprig.')))) walk(n.fn);
        n.args.forEach(walk);
        break;
      case 'unary':
        walk(n.arg);
        break;
      case 'bin':
        walk(n.l);
        walk(n.r);
        break;
      case 'cond':
        walk(n.c);
        walk(n.a);
        walk(n.b);
        break;
      case 'array':
        n.items.forEach(walk);
        break;
      case 'map':
        n.entries.forEach(([, v]) => walk(v));
        break;
      case 'closure':
        walk(n.body);
        break;
      default:
        break;
    }
  };
  walk(parseExpr(src));
  return out;
}

function dotted(n: Node): string | undefined {
  if (n.k === 'id') return n.name;
  if (n.k === 'member' && n.prop.k === 'lit' && typeof n.prop.v === 'string') {
    const base = dotted(n.obj);
    return base === undefined ? undefined : `${base}.${n.prop.v}`;
  }
  return undefined;
}
