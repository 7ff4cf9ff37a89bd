// Bad CLI input that used to get far before failing: `tandem dev --port abc` waited a minute for
// "127.0.0.1:NaN", and `--id ..` put a run's directory outside TANDEM_HOME. Each is now refused at
// once, naming the option, and nothing is started. Runs the TypeScript CLI (no build needed).
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { address, tempDir } from './helpers.js';

function tandem(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', TEMPORAL_ADDRESS: address() }, timeout: 60_000 }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out, err });
    });
  });
}

test('tandem dev --port abc / --ui-port 70000: an error naming the option, before any server starts', async () => {
  const state = tempDir('cli-port');
  for (const [flag, value] of [['--port', 'abc'], ['--ui-port', '70000'], ['--port', '0']]) {
    const r = await tandem(['dev', flag!, value!, '--state', state]);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(new RegExp(`option '${flag} <port>' argument '${value}' is invalid\\. must be a TCP port number from 1 to 65535`));
    expect(r.out).not.toMatch(/Temporal:/);
  }
});

test('tandem run --id .. and runs resume --id ../../etc: refused naming the id, nothing started', async () => {
  const spec = join(tempDir('cli-id'), 'p.json');
  writeFileSync(spec, JSON.stringify({ name: 'cli-id' }));
  const run = await tandem(['run', spec, '--id', '..', '--detach', '--task-queue', 'cli-id-nowhere']);
  expect(run).toMatchObject({ code: 2, out: '' });
  expect(run.err).toMatch(/^workflow id "\.\." \(id\) is not allowed: use letters, digits/);
  const resume = await tandem(['runs', 'resume', 'no-such-run', '--id', '../../etc']);
  expect(resume.code).toBe(2);
  expect(resume.err).toMatch(/^workflow id "\.\.\/\.\.\/etc" \(newId\) is not allowed/);
});

test('tandem doctor: one line per check with what to fix, exit 1 when one fails; the real dev server passes its Temporal lines', async () => {
  const home = tempDir('cli-doctor');
  const bad = await tandemEnv(['doctor'], { TEMPORAL_TLS: 'maybe', TANDEM_HOME: home });
  expect(bad.code).toBe(1);
  expect(bad.out).toMatch(/^FAIL {2}configuration {6}TEMPORAL_TLS=maybe: must be true or false$/m);
  expect(bad.out).toMatch(/^FAIL {2}temporal {11}not checked: the connection settings above are invalid$/m);
  // Against the test run's dev server: connected, attributes registered; no worker polls this queue.
  const good = await tandemEnv(['doctor', '--task-queue', 'doctor-nobody', '--json'], { TANDEM_HOME: home });
  const checks = JSON.parse(good.out) as { name: string; ok: boolean; detail: string; fix?: string }[];
  expect(checks.map((c) => [c.name, c.ok])).toEqual([['configuration', true], ['temporal', true], ['search attributes', true], ['workers', false], ['kubernetes', true]]);
  expect(checks.find((c) => c.name === 'workers')!.fix).toMatch(/start one/);
  expect(good.code).toBe(1);
});

function tandemEnv(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', TEMPORAL_ADDRESS: address(), KUBECONFIG: '', ...env }, timeout: 60_000 }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out, err });
    });
  });
}
