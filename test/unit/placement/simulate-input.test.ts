// `tandem simulate` on bad or hostile input: a malformed SWF record is an error naming its line (or
// counted with --skip-malformed), compressed input is bounded, jobs wider than the machine are
// counted, the wait plot shows the tail and its legend covers no curve; the bench's published-figure
// lookup finds gzipped traces.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parseSwf } from '../../../cli/trace.js';
import { plotSvg, readTrace, runSimulation } from '../../../cli/simulate.js';
import { InputError } from '../../../contract/input-error.js';
import { PUBLISHED } from '../../../bench/placement/swf.js';

const rec = (id: number, submit: number | string, run: number, procs: number, req: number) => [id, submit, -1, run, procs, -1, -1, procs, req, -1, 1, 1, -1, -1, -1, -1, -1, -1].join(' ');
const log = (rows: string[]) => ['; MaxNodes: 4', '; MaxProcs: 16', ...rows].join('\n');

let dir: string;
beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'tandem-sim-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tandem simulate input', () => {
  test('a field that is not a number is an error naming the line and field; --skip-malformed counts it', () => {
    const text = log([rec(1, 0, 100, 4, 600), rec(2, 'NaN', 50, 4, 300), rec(3, 9, 50, 4, 300), '4 10 -1 30']);
    let err: unknown;
    try {
      parseSwf(text, { source: 'x.swf' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect(String((err as Error).message)).toMatch(/line 4/);
    expect(String((err as Error).message)).toMatch(/field 2 \(submit time\) is not a number: "NaN"/);
    const t = parseSwf(text, { skipMalformed: true });
    expect(t.jobs.map((j) => j.id)).toEqual([1, 3]);
    expect(t).toMatchObject({ malformed: 2, firstMalformed: 4 });
  });

  test('gzip input is decompressed up to the stated limit, then refused naming the file', () => {
    const big = join(dir, 'bomb.swf.gz');
    writeFileSync(big, gzipSync(Buffer.alloc(4 * 2 ** 20, 0x20)));
    expect(() => readTrace(big, 'swf', { limit: 2 ** 20 })).toThrow(/bomb\.swf\.gz[\s\S]*more than 1 MiB of trace once decompressed/);
    const ok = join(dir, 'ok.swf.gz');
    writeFileSync(ok, gzipSync(log([rec(1, 0, 100, 4, 600)])));
    expect(readTrace(ok, 'swf', { limit: 2 ** 20 }).jobs).toHaveLength(1);
    const plain = join(dir, 'plain.swf');
    writeFileSync(plain, Buffer.alloc(2 * 2 ** 20, 0x20));
    expect(() => readTrace(plain, 'swf', { limit: 2 ** 20 })).toThrow(/more than 1 MiB/);
  });

  test('jobs wider than the machine are counted; the plot is a CCDF on log axes with the legend beside it', () => {
    const rows = [rec(1, 0, 3600, 16, 3600), rec(2, 10, 60, 4, 60), rec(3, 20, 60, 64, 60), rec(4, 30, 600, 8, 600), rec(5, 40, 60, 4, 60)];
    const { outcomes, skipped, jobs, capacity } = runSimulation(parseSwf(log(rows)), { policies: ['fcfs-easy', 'default'], from: 0, jobs: 10 });
    expect(skipped).toBe(1); // #3 asks for 64 processors of 16
    expect(jobs).toHaveLength(4);
    const svg = plotSvg(outcomes, capacity, 't');
    expect(svg).toMatch(/share of jobs waiting longer than x; both axes log/);
    // The legend's x lies past every plotted point.
    const legendX = Math.min(...[...svg.matchAll(/<rect x="([\d.]+)" y="[\d.]+" width="12"/g)].map((m) => Number(m[1])));
    const xs = [...svg.matchAll(/points="([^"]*)"/g)].flatMap((m) => m[1].split(' ').filter(Boolean).map((p) => Number(p.split(',')[0])));
    expect(xs.length).toBeGreaterThan(0);
    expect(Math.max(...xs)).toBeLessThan(legendX);
    expect(svg).toMatch(/max wait [\d.]+ h/);
  });

  test('the published figure is found for gzipped trace names', () => {
    for (const name of ['lublin_256.swf', 'lublin_256.swf.gz', 'HPC2N-2002-2.2-cln.swf.gz', 'lublin_256_new2.swf.gz']) expect(PUBLISHED.find((p) => p.match.test(name))).toBeDefined();
    expect(PUBLISHED.find((p) => p.match.test('lublin_256.swf.gz'))!.bsld).toBe(58.64);
  });
});
