// Reading SWF logs other than the bench's own (bench:placement --swf, tandem simulate): records with
// no processor count, logs without requested times or without a machine header, -1 as the only
// negative a log writes, and windows where nothing ever queues.
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSwf } from '../../../cli/trace.js';
import { printSwfFile, printSwfTable, printVerdicts, runSwfRows, samplesAtOrBelow, swfInventory, swfSamples, VERDICTS, type SwfResult } from '../../../bench/placement/swf.js';
import { loadSwf } from '../../../bench/placement/traces.js';

/** SWF rows [id, submit, run, allocated procs, requested procs, requested time, user (1 if absent)]. */
const swf = (head: string[], rows: number[][]) => [...head, ...rows.map((r) => [r[0], r[1], -1, r[2], r[3], -1, -1, r[4], r[5], -1, 1, r[6] ?? 1, -1, -1, -1, -1, -1, -1].join(' '))].join('\n');

describe('parseSwf on real-world logs', () => {
  test('a record with no processor count is left out and counted; a missing request falls back to the run time and is counted', () => {
    const t = parseSwf(swf(['; MaxNodes: 4', '; MaxProcs: 16'], [[1, 0, 100, 4, 4, 600], [2, 5, 0, -1, -1, -1], [3, 9, 50, -1, -1, 300], [4, 12, 30, -1, 8, -1]]));
    // #2 ran 0 s (dropped as RLScheduler drops it); #3 names no processors.
    expect(t.jobs.map((j) => j.id)).toEqual([1, 4]);
    expect(t.unsized).toBe(1);
    expect(t.noRequest).toBe(1);
    expect(t.jobs[1]).toMatchObject({ procs: 8, reqTime: 30 });
    expect(t).toMatchObject({ maxNodes: 4, maxProcs: 16 });
  });

  test('-1 is "unknown" as RLScheduler reads it: a run time of 10 s, the run time as the request, no size; a job number or user of -1 is kept', () => {
    const t = parseSwf(swf(['; MaxNodes: 4'], [[-1, 0, -1, 4, 4, 600, -1], [2, 50, 100, 4, -1, -1], [3, 9, 100, -1, -1, 300]]));
    expect(t.jobs).toEqual([
      { id: -1, submit: 0, run: 10, procs: 4, reqTime: 600, user: -1 },
      { id: 2, submit: 50, run: 100, procs: 4, reqTime: 100, user: 1 },
    ]);
    expect(t).toMatchObject({ unsized: 1, noRequest: 1 });
    expect(t.malformed).toBeUndefined();
  });

  test('a negative submit time, -1 (unknown) too, is a malformed record: the job has no arrival to replay', () => {
    // Before: a -1 submit became the window's time 0 and moved every other arrival ~10^6 s later.
    for (const v of [-1, -50])
      expect(() => parseSwf(swf(['; MaxNodes: 4'], [[1, 1000000, 100, 4, 4, 600, 1], [2, v, 100, 4, 4, 600, 1]]), { source: 'x.swf' })).toThrow(`x.swf: invalid job trace\n  - record (line 3): field 2 (submit time) must be 0 or more, not ${v}`);
    expect(parseSwf(swf(['; MaxNodes: 4'], [[1, 1000000, 100, 4, 4, 600, 1], [2, -1, 100, 4, 4, 600, 1]]), { skipMalformed: true })).toMatchObject({ malformed: 1, firstMalformed: 3 });
  });

  test('any other negative in a job number, run time, processor count, requested time or user is a malformed record naming the field and value', () => {
    const ok = [1, 0, 100, 4, 4, 600, 1];
    const fields: [number, string][] = [[0, '1 (job number)'], [2, '4 (run time)'], [3, '5 (allocated processors)'], [4, '8 (requested processors)'], [5, '9 (requested time)'], [6, '12 (user id)']];
    for (const [k, field] of fields)
      for (const v of [-5, -2]) {
        const row = [2, ...ok.slice(1)];
        row[k] = v;
        // Before: a -5 run time replayed as 10 s, -5 processors beside 4 as 4, a -5 request as a 1 s estimate.
        expect(() => parseSwf(swf(['; MaxNodes: 4'], [ok, row]), { source: 'x.swf' })).toThrow(`x.swf: invalid job trace\n  - record (line 3): field ${field} must be ≥ 0 or -1 (unknown), not ${v}`);
      }
    // A fraction below 0 is no run time either; the value is shown as the log wrote it.
    expect(() => parseSwf(swf([], [[1, 0, -0.5, 4, 4, 600]]))).toThrow(/line 1\): field 4 \(run time\) must be ≥ 0 or -1 \(unknown\), not -0\.5/);
    // --skip-malformed counts them; the valid records around them are read as before.
    const t = parseSwf(swf([], [ok, [2, 5, -5, 4, 4, 600], [3, 6, 100, -3, -1, 600], [4, 7, 100, 4, 4, -600], [5, 8, 50, 2, 2, 60]]), { skipMalformed: true });
    expect(t.jobs.map((j) => j.id)).toEqual([1, 5]);
    expect(t).toMatchObject({ malformed: 3, firstMalformed: 2, unsized: 0 });
  });
});

describe('bench:placement --swf', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'tandem-swf-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const quiet = () => jest.spyOn(console, 'log').mockImplementation(() => undefined);

  test('a log without a MaxNodes/MaxProcs header is refused with what to pass; --nodes gives the machine', () => {
    const file = join(dir, 'headerless.swf');
    writeFileSync(file, swf([], [[1, 0, 100, 2, 2, 200], [2, 10, 100, 2, 2, 200]]));
    expect(() => printSwfFile(file, loadSwf)).toThrow(/headerless\.swf has no MaxNodes\/MaxProcs header line: give the machine as --nodes N/);
    const log = quiet();
    try {
      printSwfFile(file, loadSwf, { nodes: 2, perNode: 2 });
      expect(log.mock.calls.flat().join('\n')).toMatch(/2 nodes × 2 processors, as given/);
    } finally {
      log.mockRestore();
    }
  });

  test('hostile logs: no job, no job that fits, a machine too large to build, a malformed record (a table of zeros, or a heap dump, before)', () => {
    const at = (name: string, text: string) => {
      const file = join(dir, name);
      writeFileSync(file, text);
      return file;
    };
    expect(() => printSwfFile(at('empty.swf', '; MaxNodes: 4\n; MaxProcs: 4\n'), loadSwf)).toThrow('empty.swf holds no job to replay');
    expect(() => printSwfFile(at('wide.swf', swf(['; MaxNodes: 4', '; MaxProcs: 4'], [[1, 0, 100, 64, 64, 200], [2, 10, 100, 8, 8, 200]])), loadSwf)).toThrow("every job of wide.swf asks for more than the machine's 4 node(s) × 1 processor(s)");
    expect(() => printSwfFile(at('huge.swf', swf(['; MaxNodes: 100000000', '; MaxProcs: 100000000'], [[1, 0, 100, 2, 2, 200]])), loadSwf)).toThrow('huge.swf: a machine of 100,000,000 nodes (the header) is more than the 500,000 a replay builds');
    const log = quiet();
    try {
      printSwfFile(at('some.swf', swf(['; MaxNodes: 4', '; MaxProcs: 4'], [[1, 0, 100, 2, 2, 200], [2, 10, 100, 64, 64, 200], [3, -1, 100, 2, 2, 200], [4, 20, 100, 2, 2, 200]])), loadSwf);
      const out = log.mock.calls.flat().join('\n');
      expect(out).toMatch(/1 of 3 job\(s\) ask for more than the machine and are left out of the samples/);
      expect(out).toMatch(/1 malformed record\(s\) left out \(the first on line 5/);
    } finally {
      log.mockRestore();
    }
  });

  test('a window where no job waits under any order is reported as not testing the goal, not as a miss', () => {
    const jobs = Array.from({ length: 20 }, (_, k) => ({ id: k + 1, submit: k * 1000, run: 100, procs: 1, reqTime: 200, user: 1 }));
    const c = { nodes: 4, perNode: 1 };
    const log = quiet();
    try {
      expect(printSwfTable('idle', 'idle.swf', runSwfRows(swfSamples(jobs, c), swfInventory(c)))).toBe(true);
      expect(log.mock.calls.flat().join('\n')).toMatch(/Goal: not tested on this trace: no job waited under any row/);
      // The same jobs on one node queue: the verdict is computed, naming the baseline.
      log.mockClear();
      const busy = jobs.map((j) => ({ ...j, submit: j.id * 10 }));
      printSwfTable('busy', 'busy.swf', runSwfRows(swfSamples(busy, { nodes: 1, perNode: 1 }), swfInventory({ nodes: 1, perNode: 1 })));
      expect(log.mock.calls.flat().join('\n')).toMatch(/Goal: Tandem default .* ≤ best engine baseline .* → bsld (PASS|FAIL), max wait (PASS|FAIL)/);
    } finally {
      log.mockRestore();
    }
  });

  test('the verdict table counts, per sample, whether the default is at or below the best baseline in that sample', () => {
    const row = (perSample: number[]): SwfResult => ({ name: 'r', bsld: 0, maxWait: 0, p99Wait: 0, util: 0, rejected: 0, perSample, row: { name: 'r', pol: {} as SwfResult['row']['pol'] } });
    // Ties count as at or below; a mean below the baseline's can still lose most samples.
    expect(samplesAtOrBelow(row([1, 5, 2, 9]), row([2, 5, 1, 1]))).toBe(2);
    expect(samplesAtOrBelow(row([1, 1]), row([1.5, 3]))).toBe(2);
    VERDICTS.length = 0;
    const jobs = Array.from({ length: 20 }, (_, k) => ({ id: k + 1, submit: (k + 1) * 10, run: 100, procs: 1, reqTime: 200, user: 1 }));
    const log = quiet();
    try {
      printSwfTable('busy', 'busy.swf', runSwfRows(swfSamples(jobs, { nodes: 1, perNode: 1 }), swfInventory({ nodes: 1, perNode: 1 })));
      printVerdicts();
      const out = log.mock.calls.flat().join('\n');
      expect(VERDICTS[0].samples).toBe(1);
      expect(out).toMatch(/\| busy\.swf \| [\d.]+ \| .* \| (PASS|FAIL) \| [01]\/1 \|/);
    } finally {
      log.mockRestore();
      VERDICTS.length = 0;
    }
  });
});
