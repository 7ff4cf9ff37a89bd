// What a user reaches for after `tandem run --detach` or a Ctrl-C, through the real CLI process against
// a worker with the real activities (local runtime: real training and model server processes):
// `status --follow` re-attaches with `run`'s progress display, `logs` prints each job attempt's output
// (and `--follow` until the run closes), `cancel` of a closed run says so and exits 1, and `validate` on
// an Argo manifest points at `tandem argo lint`.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { address, startWorker, tempDir, uniqueQueue, waitFor } from './helpers.js';

function tandem(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', TEMPORAL_ADDRESS: address() }, timeout: 120_000 }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out, err });
    });
  });
}

test('validate on an Argo manifest points at tandem argo lint', async () => {
  const file = join(tempDir('argo-validate'), 'wf.yaml');
  writeFileSync(file, 'apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: { generateName: hello- }\nspec:\n  entrypoint: main\n');
  const r = await tandem(['validate', file]);
  expect(r).toMatchObject({ code: 2, out: '' });
  expect(r.err).toBe(`tandem: ${file} is an Argo Workflows manifest (apiVersion argoproj.io/v1alpha1, kind Workflow), not a Tandem pipeline spec: check it with \`tandem argo lint ${file}\` and run it with \`tandem argo submit ${file}\`\n`);
});

test('run --detach, then status --follow and logs [--follow] re-attach; cancel of the closed run exits 1', async () => {
  const queue = uniqueQueue('follow');
  const home = tempDir('follow');
  const w = await startWorker({ taskQueue: queue, home });
  try {
    const spec = join(home, 'p.json');
    writeFileSync(spec, JSON.stringify({ name: 'follow', retry: { initialInterval: '100ms' }, stages: { preprocess: { samples: 200 }, train: { steps: 60, checkpointEvery: 20, stepDelayMs: 60 }, deploy: { model: 'tandem/follow' } } }));
    const q = ['--task-queue', queue];
    const run = await tandem(['run', spec, '--detach', '--id', 'follow-1', ...q]);
    expect(run).toMatchObject({ code: 0, out: 'follow-1\n' });
    // Logs of a stage that has not started yet: following waits for it, then prints it to the end.
    const logsFollow = tandem(['logs', 'follow-1', '--stage', 'train', '--follow', '--home', home, ...q]);
    const followed = await tandem(['status', 'follow-1', '--follow', ...q]);
    expect(followed.code).toBe(0);
    // The display `run` prints: every stage's lines, the training progress, the final status.
    expect(followed.out).toMatch(/preprocess\s+completed/);
    expect(followed.out).toMatch(/train {6}#1 \[[#-]+\] +\d+% step \d+\/60 loss \d/);
    expect(followed.out).toMatch(/^follow-1 {2}pipeline=follow tenant=default phase=completed/m);
    const lf = await logsFollow;
    expect(lf.code).toBe(0);
    expect(lf.out.split('\n')[0]).toMatch(/^==> train attempt 1: local job \S+ <==$/);
    expect(lf.out).toMatch(/step 60/);
    expect(lf.out.trimEnd().split('\n').at(-1)).toBe('==> follow-1 closed <==');

    const all = await tandem(['logs', 'follow-1', '--home', home, ...q]);
    expect(all.code).toBe(0);
    expect(all.out.match(/^==> (\w+) attempt (\d+)/gm)).toEqual(['==> preprocess attempt 1', '==> train attempt 1', '==> deploy attempt 1']);
    const train = await tandem(['logs', 'follow-1', '--stage', 'train', '--attempt', '1', '--home', home, ...q]);
    expect(train.out).toBe(lf.out.slice(0, lf.out.lastIndexOf('==> follow-1 closed')));
    expect(await tandem(['logs', 'follow-1', '--stage', 'train', '--attempt', '2', '--home', home, ...q])).toMatchObject({ code: 2, err: 'tandem: no attempt 2 of stage train (attempts: 1)\n' });
    expect(await tandem(['logs', 'follow-1', '--stage', 'bogus', '--home', home, ...q])).toMatchObject({ code: 2, err: 'tandem: the run has no job for stage bogus (its jobs: preprocess, train, deploy)\n' });
    expect((await tandem(['logs', 'follow-1', '--home', tempDir('elsewhere'), ...q])).err).toMatch(/^tandem: job \S+ has no directory under .*: give the workers' TANDEM_HOME with --home/);

    const cancel = await tandem(['cancel', 'follow-1', ...q]);
    expect(cancel).toMatchObject({ code: 1, out: '', err: 'tandem: run follow-1 is already closed (completed); there is nothing to cancel\n' });
    // A running one is cancelled, as before.
    expect(await tandem(['run', spec, '--detach', '--id', 'follow-2', ...q])).toMatchObject({ code: 0 });
    expect(await tandem(['cancel', 'follow-2', ...q])).toMatchObject({ code: 0, out: expect.stringMatching(/^tandem: cancellation requested for follow-2/) });
    const st = await waitFor('follow-2 closed', async () => {
      const s = await tandem(['status', 'follow-2', '--json', ...q]);
      const phase = (JSON.parse(s.out) as { phase: string }).phase;
      return phase === 'cancelled' ? phase : undefined;
    }, 60_000, 500);
    expect(st).toBe('cancelled');
  } finally {
    await w.stop();
  }
}, 240_000);

test('tandem completion bash completes commands, group subcommands and options in a real bash', async () => {
  const r = await tandem(['completion', 'bash']);
  expect(r).toMatchObject({ code: 0, err: '' });
  const script = join(tempDir('completion'), 'tandem.bash');
  writeFileSync(script, r.out);
  const complete = (words: string[]) =>
    new Promise<string>((resolve, reject) =>
      execFile('bash', ['-c', `source ${script}; COMP_WORDS=(${words.map((w) => JSON.stringify(w)).join(' ')}); COMP_CWORD=${words.length - 1}; _tandem; echo "\${COMPREPLY[@]}"`], (e, out) => (e ? reject(e) : resolve(out.trim()))),
    );
  expect(await complete(['tandem', 'lo'])).toBe('logs');
  expect((await complete(['tandem', 'deployments', ''])).split(' ').sort()).toEqual(['delete', 'list', 'rollback', 'show', 'stop']);
  expect((await complete(['tandem', 'logs', 'run-1', '--'])).split(' ')).toEqual(expect.arrayContaining(['--stage', '--attempt', '--follow', '--home']));
  expect(await tandem(['completion', 'fish'])).toMatchObject({ code: 2, err: 'tandem: completion: shell must be bash or zsh, not "fish"\n' });
});
