// The sprig functions Argo exposes as `sprig.*` in expressions, the commonly used ones. Sandbox-safe:
// base64 is done by hand because the workflow sandbox has no Buffer.
import { ExprError } from './expr-error.js';

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function utf8Encode(s: string): number[] {
  const out: number[] = [];
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return out;
}

function utf8Decode(b: number[]): string {
  let s = '';
  for (let i = 0; i < b.length; ) {
    const c = b[i]!;
    let cp: number;
    if (c < 0x80) {
      cp = c;
      i += 1;
    } else if (c < 0xe0) {
      cp = ((c & 31) << 6) | (b[i + 1]! & 63);
      i += 2;
    } else if (c < 0xf0) {
      cp = ((c & 15) << 12) | ((b[i + 1]! & 63) << 6) | (b[i + 2]! & 63);
      i += 3;
    } else {
      cp = ((c & 7) << 18) | ((b[i + 1]! & 63) << 12) | ((b[i + 2]! & 63) << 6) | (b[i + 3]! & 63);
      i += 4;
    }
    s += String.fromCodePoint(cp);
  }
  return s;
}

export function b64enc(s: string): string {
  const b = utf8Encode(s);
  let out = '';
  for (let i = 0; i < b.length; i += 3) {
    const n = (b[i]! << 16) | ((b[i + 1] ?? 0) << 8) | (b[i + 2] ?? 0);
    out += B64[(n >> 18) & 63]! + B64[(n >> 12) & 63]! + (i + 1 < b.length ? B64[(n >> 6) & 63]! : '=') + (i + 2 < b.length ? B64[n & 63]! : '=');
  }
  return out;
}

export function b64dec(s: string): string {
  const clean = s.replace(/[\s=]/g, '');
  const bytes: number[] = [];
  let buf = 0;
  let bits = 0;
  for (const ch of clean) {
    const v = B64.indexOf(ch);
    if (v < 0) throw new ExprError(`b64dec: invalid base64 ${JSON.stringify(s)}`);
    buf = (buf << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((buf >> bits) & 255);
    }
  }
  return utf8Decode(bytes);
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Go's reference-time layout ("2006-01-02T15:04:05Z07:00"), in UTC. */
export function goDate(layout: string, when: unknown): string {
  const d = new Date(typeof when === 'number' ? when : String(when));
  if (Number.isNaN(d.getTime())) throw new ExprError(`date: ${JSON.stringify(when)} is not a time`);
  const tokens: [string, () => string][] = [
    ['2006', () => String(d.getUTCFullYear())],
    ['January', () => MONTHS[d.getUTCMonth()]!],
    ['Monday', () => DAYS[d.getUTCDay()]!],
    ['Jan', () => MONTHS[d.getUTCMonth()]!.slice(0, 3)],
    ['Mon', () => DAYS[d.getUTCDay()]!.slice(0, 3)],
    ['MST', () => 'UTC'],
    ['Z07:00', () => 'Z'],
    ['-0700', () => '+0000'],
    ['01', () => pad(d.getUTCMonth() + 1)],
    ['02', () => pad(d.getUTCDate())],
    ['15', () => pad(d.getUTCHours())],
    ['03', () => pad(d.getUTCHours() % 12 || 12)],
    ['04', () => pad(d.getUTCMinutes())],
    ['05', () => pad(d.getUTCSeconds())],
    ['06', () => pad(d.getUTCFullYear() % 100)],
    ['PM', () => (d.getUTCHours() < 12 ? 'AM' : 'PM')],
  ];
  let out = '';
  for (let i = 0; i < layout.length; ) {
    const t = tokens.find(([k]) => layout.startsWith(k, i));
    if (t) {
      out += t[1]();
      i += t[0].length;
    } else out += layout[i++];
  }
  return out;
}

const toNum = (v: unknown) => {
  const n = typeof v === 'number' ? v : Number(v);
  if (Number.isNaN(n)) throw new ExprError(`expected a number, got ${JSON.stringify(v)}`);
  return n;
};
const isEmpty = (v: unknown) => v === null || v === undefined || v === '' || v === 0 || v === false || (Array.isArray(v) && v.length === 0);

export const SPRIG: Record<string, (...a: unknown[]) => unknown> = {
  add: (...a) => a.reduce<number>((s, x) => s + toNum(x), 0),
  add1: (a) => toNum(a) + 1,
  sub: (a, b) => toNum(a) - toNum(b),
  mul: (...a) => a.reduce<number>((s, x) => s * toNum(x), 1),
  div: (a, b) => Math.trunc(toNum(a) / toNum(b)),
  mod: (a, b) => toNum(a) % toNum(b),
  max: (...a) => Math.max(...a.map(toNum)),
  min: (...a) => Math.min(...a.map(toNum)),
  atoi: (a) => Math.trunc(toNum(a)),
  int: (a) => Math.trunc(toNum(a)),
  int64: (a) => Math.trunc(toNum(a)),
  float64: (a) => toNum(a),
  toString: (a: unknown) => String(a),
  b64enc: (s) => b64enc(String(s)),
  b64dec: (s) => b64dec(String(s)),
  upper: (s) => String(s).toUpperCase(),
  lower: (s) => String(s).toLowerCase(),
  title: (s) => String(s).replace(/\b\w/g, (c) => c.toUpperCase()),
  trim: (s) => String(s).trim(),
  trimPrefix: (p, s) => (String(s).startsWith(String(p)) ? String(s).slice(String(p).length) : String(s)),
  trimSuffix: (p, s) => (String(s).endsWith(String(p)) ? String(s).slice(0, -String(p).length) : String(s)),
  replace: (old, nw, s) => String(s).split(String(old)).join(String(nw)),
  contains: (sub, s) => String(s).includes(String(sub)),
  hasPrefix: (p, s) => String(s).startsWith(String(p)),
  hasSuffix: (p, s) => String(s).endsWith(String(p)),
  repeat: (n, s) => String(s).repeat(toNum(n)),
  quote: (s) => JSON.stringify(String(s)),
  squote: (s) => `'${String(s)}'`,
  cat: (...a) => a.filter((x) => x !== null && x !== undefined).map(String).join(' '),
  join: (sep, a) => (a as unknown[]).map(String).join(String(sep)),
  splitList: (sep, s) => String(s).split(String(sep)),
  list: (...a) => a,
  first: (a) => (a as unknown[])[0] ?? null,
  last: (a) => (a as unknown[]).at(-1) ?? null,
  default: (d, v) => (isEmpty(v) ? d : v),
  empty: (v) => isEmpty(v),
  coalesce: (...a) => a.find((x) => !isEmpty(x)) ?? null,
  ternary: (a, b, c) => (c === true ? a : b),
  toJson: (v) => JSON.stringify(v),
  fromJson: (s) => JSON.parse(String(s)),
  date: (layout, when) => goDate(String(layout), when),
  seq: (...a) => {
    const n = a.map(toNum);
    const [start, end] = n.length === 1 ? [1, n[0]!] : [n[0]!, n[n.length - 1]!];
    const step = n.length === 3 ? n[1]! : start <= end ? 1 : -1;
    const out: number[] = [];
    for (let i = start; step > 0 ? i <= end : i >= end; i += step) out.push(i);
    return out.join(' ');
  },
};
