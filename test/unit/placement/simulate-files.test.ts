// `tandem simulate`'s files on hostile input: the trace, inventory and carbon files are read with a
// bound (a device that never ends is an error), a directory or a missing file is named in words, an
// inventory is checked field by field (path and line) before the replay builds it, and a trace with no
// job says so instead of blaming --from.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { machine, plotProblem, readTrace, registerSimulateCommand, runSimulation, traceText, type SimulateOptions } from '../../../cli/simulate.js';
import { InputError } from '../../../contract/input-error.js';
import { MAX_TRACE_SECONDS, parseCsv, parseSwf, type Trace } from '../../../cli/trace.js';
import { thrown } from '../thrown.js';

let dir: string;
beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'tandem-simfiles-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const inputError = (fn: () => unknown): InputError => thrown(InputError, fn);
const opts = (o: Partial<SimulateOptions> = {}): SimulateOptions => ({ policies: ['fcfs-easy'], from: 0, jobs: 100, ...o });
const noTrace: Trace = { jobs: [], maxProcs: 16, maxNodes: 4 };
/** `tandem simulate <a missing trace> ...args` as the CLI parses it: options first, then the trace. */
const simulateCli = (...args: string[]) => () => {
  const p = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
  registerSimulateCommand(p);
  return p.parse(['node', 'tandem', 'simulate', join(dir, 'missing.swf'), ...args]);
};

describe('tandem simulate files', () => {
  test('a device that never ends is an error at the bound, not memory without bound', () => {
    expect(inputError(() => traceText('/dev/zero', 1 << 20)).message).toMatch(/\/dev\/zero[\s\S]*holds more than 1 MiB of trace/);
    const e = inputError(() => machine(noTrace, opts({ inventory: '/dev/zero' })));
    expect(e.message).toMatch(/\/dev\/zero: invalid inventory[\s\S]*cannot be read: more than 16 MiB/);
  });

  test('a directory or a missing file is named, in words', () => {
    expect(inputError(() => readTrace(dir)).message).toMatch(/cannot be read: a directory, not a file/);
    expect(inputError(() => readTrace(join(dir, 'missing.swf'))).message).toMatch(/missing\.swf[\s\S]*cannot be read: no such file/);
    expect(inputError(() => runSimulation(noTrace, opts({ carbon: join(dir, 'none.csv') }))).message).toMatch(/invalid carbon series[\s\S]*no such file/);
  });

  test('an inventory is checked field by field, with the path and line, before anything is built', () => {
    const file = join(dir, 'inv.yaml');
    const at = (nodes: string) => {
      writeFileSync(file, `sites:\n  - name: a\n    clusters:\n      - name: c\n        partitions:\n          - name: p\n            nodes:\n${nodes}`);
      return inputError(() => machine(noTrace, opts({ inventory: file }))).message;
    };
    // Before: "s.clusters.flatMap is not a function" (a TypeError with a stack trace).
    writeFileSync(file, 'sites:\n  - name: a\n    clusters: 7\n');
    expect(inputError(() => machine(noTrace, opts({ inventory: file }))).message).toMatch(/sites\[0\]\.clusters \(line 3\): .*expected array/);
    const m = at('              - {id: n1, cpus: 0}\n              - {id: n2, cpus: -4}\n              - {id: n1, cpus: 8, memoryMb: 1}\n');
    expect(m).toMatch(/nodes\[0\]\.cpus \(line 8\): must be at least 1/);
    expect(m).toMatch(/nodes\[1\]\.cpus \(line 9\): must be at least 1/);
    expect(m).toMatch(/nodes\[2\]\.memoryMb \(line 10\): unknown field "memoryMb"/);
    expect(m).toMatch(/nodes\[2\]\.id \(line 10\): node id "n1" is also sites\[0\]\.clusters\[0\]\.partitions\[0\]\.nodes\[0\]/);
  });

  test('a valid inventory is the machine: nodes and the smallest node\'s processors', () => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(file, 'sites:\n  - name: a\n    clusters:\n      - name: c\n        partitions:\n          - name: p\n            nodes:\n              - {id: n1, cpus: 4}\n              - {id: n2, cpus: 8, gpus: 2}\n');
    const m = machine(noTrace, opts({ inventory: file }));
    expect({ nodes: m.nodes, perNode: m.perNode }).toEqual({ nodes: 2, perNode: 4 });
  });

  test('a time no log gives is an error naming the line and field (at 10^17 s a 1 s job ended as it started)', () => {
    expect(MAX_TRACE_SECONDS).toBe(1e11);
    const rec = (id: number, submit: string, run: string, req: string) => [id, submit, -1, run, 2, -1, -1, 2, req, -1, 1, 1, -1, -1, -1, -1, -1, -1].join(' ');
    const swf = ['; MaxNodes: 2', rec(1, '0', '10', '20'), rec(2, '1e17', '1', '1'), rec(3, '5', '1e300', '20'), rec(4, '6', '10', '-1e12')].join('\n');
    expect(inputError(() => parseSwf(swf, { source: 'x.swf' })).message).toMatch(/line 3\): field 2 \(submit time\) must be at most 10\^11 s \(over 3,000 years\), not 1e17/);
    const t = parseSwf(swf, { skipMalformed: true });
    expect(t.jobs.map((j) => j.id)).toEqual([1]);
    expect(t).toMatchObject({ malformed: 3, firstMalformed: 3 });
    // Epoch seconds are times a log may give.
    expect(parseSwf(['; MaxNodes: 2', rec(1, '1700000000', '10', '20')].join('\n')).jobs).toHaveLength(1);
    // Before: three 2-node jobs at once on a 2-node machine, utilisation 4.0.
    const csv = 'submit,run,procs,id\n1e17,1,2,1\n1e17,1,2,2\n5,1,2,4\n';
    expect(inputError(() => parseCsv(csv, 'x.csv')).message).toMatch(/submit \(line 2\): must be at most 10\^11 s/);
    expect(inputError(() => parseCsv('submit,run,procs,req\n0,10,1,1e300\n', 'x.csv')).message).toMatch(/req \(line 2\): must be at most 10\^11 s/);
  });

  test('the plot\'s place is checked before the replay (a directory or a missing folder failed after it, in Node\'s words)', () => {
    expect(plotProblem(dir)).toBe(`${dir} is a directory: give the plot's file name (e.g. ${join(dir, 'what-if.svg')})`);
    expect(plotProblem(join(dir, 'none', 'x.svg'))).toBe(`${join(dir, 'none')}: no such directory`);
    writeFileSync(join(dir, 'plain'), '');
    expect(plotProblem(join(dir, 'plain', 'x.svg'))).toBe(`${join(dir, 'plain')} is not a directory`);
    expect(plotProblem(join(dir, 'what-if.svg'))).toBeUndefined();
    expect(simulateCli('--plot', dir)).toThrow(/--plot: .* is a directory/);
  });

  test('counts are digits and at least 1 where 0 means nothing (--nodes 0 said the trace names no machine size)', () => {
    const run = simulateCli;
    expect(run('--nodes', '0')).toThrow('--nodes: expected a whole number of at least 1, got "0"');
    expect(run('--nodes', '0x10')).toThrow('--nodes: expected a whole number of at least 1, got "0x10"');
    expect(run('--jobs', '0')).toThrow('--jobs: expected a whole number of at least 1, got "0"');
    expect(run('--cpus-per-node', '')).toThrow('--cpus-per-node: expected a whole number of at least 1');
    expect(run('--idle-w', '0x10')).toThrow('--idle-w: expected a number ≥ 0, got "0x10"');
    // --from 0 is the first job; a missing trace is then the error, after the options.
    expect(run('--from', '0', '--plot', join(dir, 'p.svg'))).toThrow(/missing\.swf[\s\S]*no such file/);
  });

  test('a CSV header is the columns the replay reads, each once, and every row has its cells', () => {
    const csv = (text: string) => () => parseCsv(text, 'x.csv');
    // Before: a misspelt req was dropped (each job's run time then stood in: exact estimates), a
    // column given twice was read from its first place, and a short or long row shifted in silence.
    expect(csv('submit,run,procs,reqq\n0,10,1,5\n')).toThrow('x.csv: invalid job trace\n  - reqq (line 1): unknown column "reqq" (the columns are submit, run, procs; optional req, user, id)');
    expect(csv('submit,run,procs,procs\n0,10,1,4\n')).toThrow('procs (line 1): column "procs" is given twice (columns 3 and 4)');
    expect(csv('submit,run,procs\n0,10,1\n0,10\n')).toThrow('row (line 3): has 2 cell(s), the header 3');
    expect(csv('submit,run,procs\n0,10,1,7\n')).toThrow('row (line 2): has 4 cell(s), the header 3');
    // Case, spaces and Windows line ends are how spreadsheets write it.
    expect(parseCsv('Submit , RUN,Procs,req\r\n0,10,1,20\r\n', 'x.csv').jobs).toEqual([{ id: 1, submit: 0, run: 10, procs: 1, reqTime: 20, user: 1 }]);
  });

  test('a trace with no job says so (it blamed --from: "none from 0")', () => {
    const file = join(dir, 'comments.swf');
    writeFileSync(file, '; MaxNodes: 4\n; only comments\n');
    const e = inputError(() => runSimulation(readTrace(file), opts()));
    expect(e.message).toMatch(/file: the trace holds no job to replay/);
    expect(e.message).not.toMatch(/--from/);
  });
});
