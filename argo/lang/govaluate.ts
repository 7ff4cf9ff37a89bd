// `when` conditions with govaluate semantics, as Argo evaluates them after substituting `{{…}}`:
// bare words (govaluate "variables") are turned into strings, so `heads == heads` is true without
// quotes; numbers are float64; `=~`/`!~` are regex matches; the result must be a boolean.
import { ExprError } from './expr-error.js';
import { safeRegExp } from './expr.js';

type Tok = { t: 'num'; v: number } | { t: 'str'; v: string } | { t: 'bool'; v: boolean } | { t: 'op'; v: string };

const OPS = ['==', '!=', '>=', '<=', '=~', '!~', '&&', '||', '??', '**', '>', '<', '+', '-', '*', '/', '%', '!', '(', ')', '?', ':', ',', '&', '|', '^'];

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const prev = out[out.length - 1];
    const numberAllowed = !prev || prev.t === 'op' && prev.v !== ')';
    const numMatch = /^\d+(\.\d+)?([eE][+-]?\d+)?/.exec(src.slice(i));
    if (numMatch && numberAllowed && !/[A-Za-z_]/.test(src[i + numMatch[0].length] ?? '')) {
      out.push({ t: 'num', v: Number(numMatch[0]) });
      i += numMatch[0].length;
      continue;
    }
    if (c === '"' || c === "'") {
      const j = src.indexOf(c, i + 1);
      if (j < 0) throw new ExprError(`unclosed string literal in ${JSON.stringify(src)}`);
      out.push({ t: 'str', v: src.slice(i + 1, j) });
      i = j + 1;
      continue;
    }
    if (c === '[') {
      // govaluate's escaped variable name: [some-name]
      const j = src.indexOf(']', i);
      if (j < 0) throw new ExprError(`unclosed [ in ${JSON.stringify(src)}`);
      out.push({ t: 'str', v: src.slice(i + 1, j) });
      i = j + 1;
      continue;
    }
    const word = /^[A-Za-z0-9_.$\\]+/.exec(src.slice(i));
    if (word) {
      const w = word[0];
      if (w === 'true' || w === 'false') out.push({ t: 'bool', v: w === 'true' });
      else if (w === 'in') out.push({ t: 'op', v: 'in' });
      else out.push({ t: 'str', v: w }); // a govaluate variable, which Argo turns into a string
      i += w.length;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new ExprError(`Invalid token: '${c}' in ${JSON.stringify(src)} (hint: try wrapping the affected expression in quotes)`);
    out.push({ t: 'op', v: op });
    i += op.length;
  }
  return out;
}

const PREC: Record<string, number> = { '??': 1, '||': 2, '&&': 3, '==': 4, '!=': 4, '=~': 4, '!~': 4, '>': 4, '<': 4, '>=': 4, '<=': 4, in: 4, '|': 5, '^': 5, '&': 5, '+': 6, '-': 6, '*': 7, '/': 7, '%': 7, '**': 8 };

type Val = number | string | boolean | Val[];

class P {
  private p = 0;
  /** `syntaxOnly`: parse without applying operators, for the linter, which sees placeholders, not values. */
  constructor(
    private readonly toks: Tok[],
    private readonly src: string,
    private readonly syntaxOnly = false,
  ) {}
  private peek() {
    return this.toks[this.p];
  }
  run(): Val {
    const v = this.ternary();
    if (this.p < this.toks.length) throw new ExprError(`unexpected token ${JSON.stringify(this.peek()!.v)} in ${JSON.stringify(this.src)}`);
    return v;
  }
  private ternary(): Val {
    const c = this.bin(0);
    const t = this.peek();
    if (t?.t === 'op' && t.v === '?') {
      this.p++;
      const a = this.ternary();
      let b: Val = null as unknown as Val;
      if (this.peek()?.t === 'op' && this.peek()!.v === ':') {
        this.p++;
        b = this.ternary();
      }
      if (this.syntaxOnly) return a;
      return c === true ? a : b;
    }
    return c;
  }
  private bin(min: number): Val {
    let l = this.unary();
    for (;;) {
      const t = this.peek();
      if (!t || t.t !== 'op' || PREC[t.v] === undefined || PREC[t.v]! <= min) return l;
      this.p++;
      const r = this.bin(PREC[t.v]!);
      if (!this.syntaxOnly) l = apply(t.v, l, r, this.src);
    }
  }
  private unary(): Val {
    const t = this.peek();
    if (!t) throw new ExprError(`unexpected end of ${JSON.stringify(this.src)}`);
    if (t.t === 'op' && (t.v === '!' || t.v === '-')) {
      this.p++;
      const v = this.unary();
      if (this.syntaxOnly) return v;
      if (t.v === '!') {
        if (typeof v !== 'boolean') throw new ExprError(`! applied to a non-boolean in ${JSON.stringify(this.src)}`);
        return !v;
      }
      if (typeof v !== 'number') throw new ExprError(`- applied to a non-number in ${JSON.stringify(this.src)}`);
      return -v;
    }
    this.p++;
    if (t.t === 'op') {
      if (t.v !== '(') throw new ExprError(`unexpected ${JSON.stringify(t.v)} in ${JSON.stringify(this.src)}`);
      const items: Val[] = [this.ternary()];
      while (this.peek()?.t === 'op' && this.peek()!.v === ',') {
        this.p++;
        items.push(this.ternary());
      }
      const close = this.toks[this.p++];
      if (close?.t !== 'op' || close.v !== ')') throw new ExprError(`unbalanced parentheses in ${JSON.stringify(this.src)}`);
      return items.length === 1 ? items[0]! : items;
    }
    return t.v;
  }
}

function apply(op: string, l: Val, r: Val, src: string): Val {
  const bad = () => new ExprError(`cannot apply ${op} to ${JSON.stringify(l)} and ${JSON.stringify(r)} in ${JSON.stringify(src)}`);
  switch (op) {
    case '==':
      return l === r;
    case '!=':
      return l !== r;
    case '&&':
    case '||':
      if (typeof l !== 'boolean' || typeof r !== 'boolean') throw bad();
      return op === '&&' ? l && r : l || r;
    case '=~':
    case '!~':
      if (typeof l !== 'string' || typeof r !== 'string') throw bad();
      return safeRegExp(r).test(l) === (op === '=~');
    case '>':
    case '<':
    case '>=':
    case '<=':
      if (!((typeof l === 'number' && typeof r === 'number') || (typeof l === 'string' && typeof r === 'string'))) throw bad();
      return op === '>' ? l > r : op === '<' ? l < r : op === '>=' ? l >= r : l <= r;
    case '+':
      if (typeof l === 'number' && typeof r === 'number') return l + r;
      if (typeof l === 'string' || typeof r === 'string') return String(l) + String(r);
      throw bad();
    case 'in':
      return Array.isArray(r) ? r.includes(l) : l === r;
    case '??':
      return l ?? r;
    default:
      if (typeof l !== 'number' || typeof r !== 'number') throw bad();
      return op === '-' ? l - r : op === '*' ? l * r : op === '/' ? l / r : op === '%' ? l % r : op === '**' ? l ** r : op === '&' ? l & r : op === '|' ? l | r : l ^ r;
  }
}

/** Evaluates a substituted `when`; throws ExprError if it is malformed or not boolean. */
export function evaluateWhen(when: string): boolean {
  const v = new P(tokenize(when), when).run();
  if (typeof v !== 'boolean') throw new ExprError(`Expected boolean evaluation for '${when}'. Got ${JSON.stringify(v)}`);
  return v;
}

/**
 * Parses a `when` for the linter, with every `{{…}}` replaced by a placeholder word: tokens and
 * grammar (operands, operators, parentheses), not types, which depend on what the tags become.
 */
export function checkWhenSyntax(when: string): void {
  const src = when.replace(/\{\{[^}]*\}\}/g, 'x');
  new P(tokenize(src), when, true).run();
}
