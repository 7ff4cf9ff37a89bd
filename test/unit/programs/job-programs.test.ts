// The built-in preprocess and train programs as Tandem runs them: separate processes, configured only
// by the job environment. The job contract other suites rely on (progress file, checkpoints with a
// manifest, lineage, TANDEM_FAIL_AT_STEP) holds, and a run that crashed and was restarted ends with
// the same weights, byte for byte, as a run that never stopped.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { latestValidCheckpoint, listCheckpoints } from '../../../backends/checkpoints.js';
import { builtinCommand, type BuiltinProgram } from '../../../programs/commands.js';

const base = mkdtempSync(join(tmpdir(), 'tandem-programs-'));
const data = join(base, 'data');

function runProgram(program: BuiltinProgram, env: Record<string, string>) {
  const [cmd, ...args] = builtinCommand(program);
  const r = spawnSync(cmd!, args, { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: r.stdout, err: r.stderr };
}
const train = (ckpt: string, extra: Record<string, string> = {}) =>
  runProgram('train', { TANDEM_DATA_DIR: data, TANDEM_CHECKPOINT_DIR: ckpt, TANDEM_STEPS: '60', TANDEM_CHECKPOINT_EVERY: '20', TANDEM_LEARNING_RATE: '1', TANDEM_BATCH: '16', TANDEM_JOB_ID: 'job-1', TANDEM_PROGRESS_FILE: join(ckpt, '..', `${extra.TANDEM_JOB_ID ?? 'job-1'}.progress.json`), ...extra });

beforeAll(() => {
  const r = runProgram('preprocess', { TANDEM_DATA_DIR: data, TANDEM_FEATURES: '6', TANDEM_SAMPLES: '300', TANDEM_SEED: '5' });
  expect(r).toMatchObject({ status: 0, out: expect.stringMatching(/preprocess: .*pride-and-prejudice-1-20\.txt: \d+ characters, vocabulary of \d+/) });
}, 60_000);

test('preprocess writes the data set; a bad parameter is refused by name', () => {
  const meta = JSON.parse(readFileSync(join(data, 'meta.json'), 'utf8'));
  expect(meta).toMatchObject({ format: 'tandem-chars/1', context: 6, seed: 5, validWindows: 300 });
  expect(readFileSync(join(data, 'train.txt'), 'utf8').length + readFileSync(join(data, 'valid.txt'), 'utf8').length).toBe(meta.source.chars);
  const bad = runProgram('preprocess', { TANDEM_DATA_DIR: join(base, 'bad'), TANDEM_FEATURES: '500' });
  expect(bad).toMatchObject({ status: 2, err: expect.stringContaining('TANDEM_FEATURES=500 (stages.preprocess.features') });
  const missing = runProgram('preprocess', { TANDEM_DATA_DIR: join(base, 'bad'), TANDEM_CORPUS: join(base, 'nope.txt') });
  expect(missing).toMatchObject({ status: 2, err: expect.stringContaining('cannot read the corpus') });
}, 60_000);

test('train keeps the job contract, and a crashed run resumed from its checkpoint ends identical to an uninterrupted one', async () => {
  const straight = join(base, 'straight', 'ck');
  expect(train(straight)).toMatchObject({ status: 0 });
  expect(listCheckpoints(straight).map((c) => c.step)).toEqual([60, 40, 20]);
  const { latest } = await latestValidCheckpoint(straight);
  expect(latest!.manifest).toMatchObject({ step: 60, job: 'job-1', site: 'local', files: [{ path: 'weights.json' }, { path: 'state.json' }], metrics: { loss: expect.any(Number), validLoss: expect.any(Number), context: 6 } });
  expect(JSON.parse(readFileSync(join(straight, '..', 'job-1.progress.json'), 'utf8'))).toEqual({ step: 60, total: 60, loss: expect.any(Number), accuracy: expect.any(Number), resumedFromStep: 0 });

  const crashed = join(base, 'crashed', 'ck');
  const first = train(crashed, { TANDEM_FAIL_AT_STEP: '30' });
  expect(first).toMatchObject({ status: 1, err: expect.stringContaining('injected failure at step 30') });
  const second = train(crashed, { TANDEM_JOB_ID: 'job-2' });
  expect(second).toMatchObject({ status: 0, out: expect.stringContaining('resuming from') });
  expect(JSON.parse(readFileSync(join(crashed, '..', 'job-2.progress.json'), 'utf8'))).toMatchObject({ step: 60, resumedFromStep: 20 });
  const lineage = readFileSync(join(crashed, 'lineage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { job: string; resumedFromStep: number });
  expect(lineage.map((l) => [l.job, l.resumedFromStep])).toEqual([['job-1', 0], ['job-2', 20]]);
  for (const f of ['weights.json', 'state.json']) {
    expect(readFileSync(join(crashed, 'step-00000060', f), 'utf8')).toBe(readFileSync(join(straight, 'step-00000060', f), 'utf8'));
  }
  // Restarted once more, it finds the run complete.
  expect(train(crashed, { TANDEM_JOB_ID: 'job-3' })).toMatchObject({ status: 0, out: expect.stringContaining('already complete at step 60') });
}, 120_000);
