// `tandem simulate` on bad or hostile input: a malformed SWF record is an error naming its line (or
// counted with --skip-malformed), so is a repeated job number or an absurd header, compressed input and the machine are bounded, jobs wider than the machine are
// counted, the wait plot shows the tail and its legend covers no curve; the bench's published-figure
// lookup finds gzipped traces.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parseCsv, parseSwf } from '../../../cli/trace.js';
import { MAX_SIM_NODES, plotSvg, readTrace, runSimulation } from '../../../cli/simulate.js';
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

  test('numbers SWF does not write, fractional counts and a job number given twice are errors naming the line', () => {
    const one = (bad: string) => () => parseSwf(log([rec(1, 0, 100, 4, 600), bad]), { source: 'x.swf' });
    // Number() takes all of these; a log means none of them.
    for (const v of ['0x10', 'Infinity', '1e400', '+', '.']) expect(one(rec(2, 5, 100, 4, 600).replace(/^(\S+ \S+ \S+) 100 /, `$1 ${v} `))).toThrow(/line 4\): field 4 \(run time\) is not a number/);
    expect(one(rec(2, 5, 100, 4, 600).replace(/ 4 -1 -1 4 /, ' 2.5 -1 -1 2.5 '))).toThrow(/line 4\): field 5 \(allocated processors\) must be a whole number, not 2\.5/);
    expect(one(rec(1, 5, 100, 4, 600))).toThrow(/line 4\): job number 1 was already given on line 3/);
    // Fractional times are numbers (converted logs have them), and --skip-malformed counts the duplicate.
    expect(parseSwf(log([rec(1, 0.5, 100.25, 4, 600), rec(2, 1e3, 50, 4, 300)])).jobs.map((j) => j.submit)).toEqual([0.5, 1000]);
    const t = parseSwf(log([rec(1, 0, 100, 4, 600), rec(1, 5, 100, 4, 600), rec(2, 9, 50, 4, 300)]), { skipMalformed: true });
    expect(t.jobs.map((j) => j.submit)).toEqual([0, 9]);
    expect(t).toMatchObject({ malformed: 1, firstMalformed: 4 });
  });

  test('a header size that is not a whole number, or no machine could have, is refused naming its line; -1 and a byte-order mark are read as SWF means them', () => {
    for (const [hdr, shown] of [['; MaxNodes: 1e400', '"1e400"'], ['; MaxProcs: -4', '"-4"'], ['; MaxNodes: 1000000000', '"1000000000"']])
      expect(() => parseSwf([hdr, rec(1, 0, 100, 4, 600)].join('\n'), { source: 'x.swf' })).toThrow(new RegExp(`line 1\\): must be a whole number of at most 100,000,000, not ${shown}`));
    expect(parseSwf(['; MaxNodes: -1', '; MaxProcs: 16', rec(1, 0, 100, 4, 600)].join('\n'))).toMatchObject({ maxNodes: 0, maxProcs: 16 });
    expect(parseSwf('\uFEFF' + log([rec(1, 0, 100, 4, 600)]))).toMatchObject({ maxNodes: 4, maxProcs: 16 });
  });

  test('a machine larger than a replay builds, or one no job fits, is refused before anything is built', () => {
    const t = parseSwf(log([rec(1, 0, 100, 4, 600)]));
    expect(() => runSimulation(t, { policies: ['default'], from: 0, jobs: 10, nodes: MAX_SIM_NODES + 1 })).toThrow(/--nodes: a machine of 500,001 nodes is more than the 500,000 a replay builds/);
    expect(() => runSimulation({ ...t, maxNodes: 10_000_000 }, { policies: ['default'], from: 0, jobs: 10 })).toThrow(/MaxNodes: a machine of 10,000,000 nodes/);
    expect(() => runSimulation(parseSwf(log([rec(1, 0, 100, 64, 600)])), { policies: ['default'], from: 0, jobs: 10 })).toThrow(/all 1 job\(s\) from #0 ask for more than the machine's 4 node\(s\) × 4 processor\(s\)/);
  });

  test('time 0 is the earliest arrival even when job numbers are not in submit order', () => {
    // Job 1 arrives 10^10 s after job 2: measured from job 1, job 2 would arrive before 0 and the
    // plot's hourly bins would start millions of bins before it (at 10^15 the replay never ended; a
    // time past 10^11 s is now refused, MAX_TRACE_SECONDS).
    const { jobs, outcomes, capacity } = runSimulation(parseSwf(log([rec(1, 1e10, 100, 4, 600), rec(2, 0, 100, 4, 600)])), { policies: ['fcfs-easy'], from: 0, jobs: 10 });
    expect(Math.min(...jobs.map((j) => j.req.submit))).toBe(0);
    expect(outcomes[0].res.outcomes.every((o) => o.firstStart >= o.submit && o.submit >= 0)).toBe(true);
    expect(plotSvg(outcomes, capacity, 't')).toMatch(/<svg/);
  });

  test('CSV: an empty cell, hex, a fractional count and a repeated id are errors naming line and column; a byte-order mark is not part of the header', () => {
    const csv = (rows: string[]) => ['\uFEFFid,submit,run,procs,req', ...rows].join('\n');
    expect(parseCsv(csv(['1,0,100,4,600', '2,5,50,2,60'])).jobs.map((j) => j.id)).toEqual([1, 2]);
    expect(() => parseCsv(csv(['1,,100,4,600']), 'x.csv')).toThrow(/submit \(line 2\): not a number: ""/);
    expect(() => parseCsv(csv(['1,0,0x10,4,600']), 'x.csv')).toThrow(/run \(line 2\): not a number: "0x10"/);
    expect(() => parseCsv(csv(['1,0,100,2.5,600']), 'x.csv')).toThrow(/procs \(line 2\): must be a whole number, not 2\.5/);
    expect(() => parseCsv(csv(['1,0,100,4,600', '1,5,100,4,600']), 'x.csv')).toThrow(/id \(line 3\): job 1 was already given on line 2/);
  });

  test('CSV: procs below 1, req of 0 or less and a negative user or id are errors naming line and column, in rows that never ran too; a negative submit is kept', () => {
    const csv = (rows: string[]) => ['id,submit,run,procs,req,user', ...rows].join('\n');
    const ok = '1,0,100,4,600,1';
    // Before: procs -4 and 0 replayed as 1 processor, req -600 and 0 as a 1 s estimate, -1 as a user and -2 as a job.
    const bad: [string, string, string][] = [
      ['2,5,100,-4,600,1', 'procs', 'a job needs at least one processor, not -4'],
      ['2,5,100,0,600,1', 'procs', 'a job needs at least one processor, not 0'],
      ['2,5,100,4,-600,1', 'req', "a requested time must be above 0 s, not -600 (without the req column, each job's run time stands in)"],
      ['2,5,100,4,0,1', 'req', 'a requested time must be above 0 s, not 0'],
      ['2,5,100,4,600,-1', 'user', 'must be 0 or more, not -1'],
      ['-2,5,100,4,600,1', 'id', 'must be 0 or more, not -2'],
      // A row that never ran is left out, but it is still a row of the file.
      ['2,5,0,-4,600,1', 'procs', 'a job needs at least one processor, not -4'],
      ['1,5,-1,4,600,1', 'id', 'job 1 was already given on line 2'],
    ];
    for (const [row, col, message] of bad) expect(() => parseCsv(csv([ok, row]), 'x.csv')).toThrow(`x.csv: invalid job trace\n  - ${col} (line 3): ${message}`);
    const t = parseCsv(csv([ok, '2,-30,100,4,600,0', '3,9,0,4,600,1', '4,9,-1,4,600,1']));
    expect(t.jobs.map((j) => [j.id, j.submit])).toEqual([[2, -30], [1, 0]]);
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
    // Said as the file is: a plain file is too big as read; a gzip that is too big compressed, once decompressed.
    expect(() => readTrace(plain, 'swf', { limit: 2 ** 20 })).toThrow(/holds more than 1 MiB of trace: replay a part of it \(head -n N FILE/);
    const dense = join(dir, 'dense.swf.gz');
    writeFileSync(dense, gzipSync(randomBytes(2 * 2 ** 20)));
    expect(() => readTrace(dense, 'swf', { limit: 2 ** 20 })).toThrow(/more than 1 MiB of trace once decompressed/);
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
