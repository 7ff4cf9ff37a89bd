// The checkpoint catalog's recovery parts on a real filesystem: retention keep-last-K-and-every-Nth,
// copies verified after the copy, a failed or crashed copy removed, the corrupt newest one skipped, and
// the operators' listing of it all (`tandem checkpoints`).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyRetention, copyCheckpoint, latestValidCheckpoint, listCheckpoints, retained, stepDirName, writeCheckpoint, COPY_PREFIX } from '../../backends/checkpoints.js';
import { tempDir } from '../helpers.js';
import { createActivities } from '../../activities/index.js';
import { runDirs } from '../../activities/run-store.js';
import { validatePipelineSpec } from '../../contract/parse.js';
import { checkpointRows, formatCheckpoints } from '../../cli/checkpoints.js';
import { execFile } from 'node:child_process';

const meta = { job: 'j', site: 'zurich' };
function fill(root: string, steps: number[]): void {
  for (const s of steps) writeCheckpoint(root, s, { 'weights.json': JSON.stringify({ w: [s, s / 2], b: s }) }, meta);
}

test('retention keeps the newest K and every Nth step, and never the protected one', () => {
  const root = tempDir('ret');
  fill(root, [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110]);
  const removed = applyRetention(root, 2, join(root, stepDirName(30)), 50);
  expect(listCheckpoints(root).map((c) => c.step)).toEqual([110, 100, 50, 30]);
  expect(removed.map((p) => Number(/(\d+)$/.exec(p)![1])).sort((a, b) => a - b)).toEqual([10, 20, 40, 60, 70, 80, 90]);
  // Without everyNth it is the old keep-last-K rule.
  expect([0, 1, 2].map((i) => retained(50, i, 2))).toEqual([true, true, false]);
  expect(retained(40, 7, 2, 20)).toBe(true);
  expect(retained(30, 7, 2, 20)).toBe(false);
});

test('the checkpoint stage applies the spec\'s keep and keepEvery to the run\'s checkpoints', async () => {
  const home = tempDir('ret-stage');
  const acts = createActivities({ home });
  const spec = validatePipelineSpec({ name: 'ret', stages: { checkpoint: { keep: 2, keepEvery: 40 } } });
  fill(runDirs(home, 'run-1').checkpoints, [10, 20, 30, 40, 50, 60, 70, 80, 90]);
  const { verify, keep, keepEvery } = spec.stages.checkpoint;
  const entry = await acts.catalogCheckpoint({ runKey: 'run-1', verify, keep, keepEvery });
  expect(entry.step).toBe(90);
  expect(listCheckpoints(runDirs(home, 'run-1').checkpoints).map((c) => c.step)).toEqual([90, 80, 40]);
  expect(() => validatePipelineSpec({ name: 'ret', stages: { checkpoint: { keepEvery: 0 } } })).toThrow(/stages\.checkpoint\.keepEvery/);
});

test('a copy is verified after it lands and becomes visible only then', async () => {
  const src = tempDir('src');
  const dst = tempDir('dst');
  fill(src, [10, 20]);
  const r = await copyCheckpoint(join(src, stepDirName(20)), dst);
  expect(r).toMatchObject({ step: 20, copied: true });
  expect(r.bytes).toBeGreaterThan(0);
  expect((await latestValidCheckpoint(dst)).latest?.step).toBe(20);
  // A second copy of the same step finds a valid copy there and copies nothing.
  expect(await copyCheckpoint(join(src, stepDirName(20)), dst)).toMatchObject({ copied: false, bytes: 0 });
});

test('a transfer that corrupts a file fails verification and leaves nothing behind', async () => {
  const src = tempDir('src');
  const dst = tempDir('dst');
  fill(src, [10]);
  // The bytes are damaged in transit (after they were written at the destination).
  const damage = (name: string) => {
    const tmp = readdirSync(dst).find((n) => n.startsWith(COPY_PREFIX))!;
    const f = join(dst, tmp, name);
    writeFileSync(f, readFileSync(f, 'utf8').replace('1', '7'));
  };
  await expect(copyCheckpoint(join(src, stepDirName(10)), dst, { onFile: damage })).rejects.toThrow(/failed verification .*sha256/);
  expect(readdirSync(dst)).toEqual([]);
});

test('a copy interrupted half-way is removed, and a crashed one is cleaned by the next copy', async () => {
  const src = tempDir('src');
  const dst = tempDir('dst');
  writeCheckpoint(src, 10, { 'a.json': '{"a":1}', 'b.json': '{"b":2}' }, meta);
  let n = 0;
  await expect(copyCheckpoint(join(src, stepDirName(10)), dst, { onFile: () => { if (++n === 1) throw new Error('link dropped'); } })).rejects.toThrow('link dropped');
  expect(readdirSync(dst)).toEqual([]);
  // A worker that crashed mid-copy left a hidden directory: invisible to the catalog, removed next time.
  mkdirSync(join(dst, `${COPY_PREFIX}step-00000010-999`));
  writeFileSync(join(dst, `${COPY_PREFIX}step-00000010-999`, 'a.json'), '{"a"');
  expect(listCheckpoints(dst)).toEqual([]);
  await copyCheckpoint(join(src, stepDirName(10)), dst);
  expect(readdirSync(dst)).toEqual([stepDirName(10)]);
});

test('a corrupt source is refused; the newest valid one is what a restore takes', async () => {
  const src = tempDir('src');
  fill(src, [10, 20, 30]);
  writeFileSync(join(src, stepDirName(30), 'weights.json'), '{"w":[0,0],"b":0}  ');
  await expect(copyCheckpoint(join(src, stepDirName(30)), tempDir('dst'))).rejects.toThrow(/is not valid: weights.json has \d+ bytes/);
  const { latest, skipped } = await latestValidCheckpoint(src);
  expect(latest?.step).toBe(20);
  expect(skipped).toEqual([{ path: join(src, stepDirName(30)), reason: expect.stringMatching(/weights.json has \d+ bytes, manifest says \d+/) }]);
  expect(existsSync(join(src, stepDirName(20)))).toBe(true);
});

test('`tandem checkpoints` lists home and site checkpoints, verified, with why one is invalid', async () => {
  const home = tempDir('ck-home');
  const site = tempDir('ck-site');
  const run = 'pipe-1';
  const homeCk = join(home, 'runs', run, 'checkpoints');
  fill(homeCk, [10, 20, 30]);
  fill(join(site, 'runs', run, 'checkpoints'), [40]);
  const w = join(homeCk, stepDirName(30), 'weights.json');
  writeFileSync(w, readFileSync(w, 'utf8').replace(/\d/, (d) => String((Number(d) + 1) % 10)));
  writeFileSync(join(home, 'runs', run, 'catalog.json'), JSON.stringify([{ runKey: run, path: join(homeCk, stepDirName(20)), step: 20, job: 'j', site: 'zurich', created: '', skipped: [], removed: [] }]));
  const rows = await checkpointRows(home, run, [{ name: 'lugano', root: site }], true);
  expect(rows.map((r) => [r.location, r.step, r.valid, r.catalogued])).toEqual([
    ['home', 30, false, false],
    ['home', 20, true, true],
    ['home', 10, true, false],
    ['lugano', 40, true, false],
  ]);
  const text = formatCheckpoints(rows);
  expect(text.split('\n')[0]).toMatch(/^LOCATION\s+STEP\s+CREATED\s+JOB\s+FILES\s+SIZE\s+STATUS$/);
  expect(text).toMatch(/home\s+30 .*INVALID: weights\.json sha256 \w+… does not match manifest/);
  expect(text).toMatch(/home\s+20 .*valid, catalogued/);
  // Sizes alone (--quick) cannot see a same-size corruption.
  expect((await checkpointRows(home, run, [], false)).map((r) => r.valid)).toEqual([true, true, true]);
  // The command itself, as operators run it.
  const out = await new Promise<string>((res, rej) => execFile(process.execPath, ['bin/tandem.js', 'checkpoints', run, '--home', home], { env: { ...process.env, NODE_OPTIONS: '', TANDEM_SITES_FILE: '' } }, (e, o, err) => (e ? rej(new Error(err)) : res(o))));
  expect(out).toMatch(/home\s+20 .*valid, catalogued/);
}, 60_000);
