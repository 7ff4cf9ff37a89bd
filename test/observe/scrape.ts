// A Prometheus text-format reader for the tests: sample name + labels → value.
export type Samples = Map<string, number>;

/** `name{a="x",b="y"}` with labels sorted, the key samples are stored under. */
export const key = (name: string, labels: Record<string, string> = {}) => {
  const l = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return l.length ? `${name}{${l.join(',')}}` : name;
};

export function parseExposition(text: string): Samples {
  const out: Samples = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = JSON.parse(`"${l[2]}"`);
    out.set(key(m[1]!, labels), Number(m[3]));
  }
  return out;
}

/** The sum of every sample of `name` whose labels include `match`. */
export function total(s: Samples, name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const [k, v] of s) {
    const brace = k.indexOf('{');
    if ((brace < 0 ? k : k.slice(0, brace)) !== name) continue;
    if (Object.entries(match).every(([lk, lv]) => k.includes(`${lk}=${JSON.stringify(lv)}`))) sum += v;
  }
  return sum;
}

export async function scrape(url: string): Promise<Samples> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  return parseExposition(await res.text());
}
