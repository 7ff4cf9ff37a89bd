// `tandem dev` as a user runs it, a separate process: it never attaches to a server it did not start,
// its state directory is its own, the first Ctrl-C (SIGINT) stops the worker, the dev server and the
// model servers its runs started (`--keep` leaves them), and `tandem deployments … --home` is the
// handle on those local model servers: list, show, stop, rollback. Real Temporal dev servers (one per
// `tandem dev`), real training and model server processes.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, portInUse } from '../workers/dev-server.js';
import { isAlive } from '../backends/proc.js';
import { stopModelServersUnder } from '../backends/local-serving.js';
import { tempDir, waitFor } from './helpers.js';

const ENV = { ...process.env, NODE_OPTIONS: '' };

function tandem(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', env: ENV, timeout: 90_000 }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out, err });
    });
  });
}

interface Dev {
  proc: ChildProcess;
  out: () => string;
  address: string;
  exited: Promise<number | null>;
}

async function startDev(args: string[]): Promise<Dev> {
  const proc = spawn(process.execPath, ['bin/tandem.js', 'dev', ...args], { env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const address = await waitFor('tandem dev to print its server', () => /^Temporal: (\S+)/m.exec(out)?.[1] ?? (proc.exitCode !== null ? 'exited' : undefined), 90_000, 200);
  if (address === 'exited') throw new Error(`tandem dev exited:\n${out}`);
  return { proc, out: () => out, address, exited };
}

interface Row {
  name: string;
  pipeline?: string;
  revision?: number;
  state: string;
  pid: number;
  alive: boolean;
  endpoint?: string;
  retiredBy?: string;
}
const rows = async (home: string): Promise<Row[]> => {
  const r = await tandem(['deployments', 'list', '--home', home, '--json']);
  expect(r).toMatchObject({ code: 0, err: '' });
  return JSON.parse(r.out) as Row[];
};

let dir: string;
let spec: string;
beforeAll(() => {
  dir = tempDir('dev');
  spec = join(dir, 'p.yaml');
  writeFileSync(spec, 'name: devtest\nstages:\n  preprocess: { samples: 200, features: 8 }\n  train: { steps: 40, checkpointEvery: 20 }\n  deploy: { model: tandem/devtest, smokePrompt: "It is" }\n');
});
afterAll(async () => {
  // Nothing of this suite may be left serving (the assertions above say where it should have stopped).
  expect(await stopModelServersUnder(dir)).toEqual([]);
});

test('a port another server holds is an error naming it; nothing starts', async () => {
  const other: Server = createServer();
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
  const port = (other.address() as { port: number }).port;
  try {
    const r = await tandem(['dev', '--port', String(port), '--ui-port', String(await freePort()), '--state', join(dir, 'busy')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`^tandem: port ${port} \\(--port\\) is already in use on 127\\.0\\.0\\.1 .*never attaches to another`));
    expect(r.out).not.toMatch(/Temporal:/);
  } finally {
    other.close();
  }
});

test('tandem dev owns its server, state and model servers: Ctrl-C stops them, --keep leaves them, deployments stop/rollback handle them', async () => {
  const state = join(dir, 'state');
  const [port, uiPort] = [await freePort(), await freePort()];
  // Session 1, with --keep: two runs of one pipeline; the second's revision retires the first's.
  const dev = await startDev(['--port', String(port), '--ui-port', String(uiPort), '--state', state, '--keep']);
  expect(dev.address).toBe(`127.0.0.1:${port}`);
  // A second `tandem dev` on the same state directory is refused while the first runs.
  const second = await tandem(['dev', '--port', String(await freePort()), '--ui-port', String(await freePort()), '--state', state]);
  expect(second.code).toBe(2);
  expect(second.err).toMatch(/state directory .* is in use by another `tandem dev` \(pid \d+\)/);
  // A failed run shows its error and last progress lines in the assertion's diff.
  const ran = async (id: string, address = dev.address) => {
    const r = await tandem(['run', spec, '--address', address, '--id', id, '--json']);
    return { id, code: r.code, ...(r.code ? { err: r.err, last: r.out.trim().split('\n').slice(-3) } : {}) };
  };
  for (const id of ['dev-a', 'dev-b']) expect(await ran(id)).toEqual({ id, code: 0 });
  let list = await rows(state);
  expect(list.map((r) => [r.name, r.revision, r.state, r.retiredBy])).toEqual([
    ['devtest-dev-a', 1, 'retired', 'devtest-dev-b'],
    ['devtest-dev-b', 2, 'serving', undefined],
  ]);
  const b = list[1]!;
  dev.proc.kill('SIGINT'); // once
  expect(await dev.exited).toBe(0);
  expect(dev.out()).toMatch(/--keep: model server\(s\) devtest-dev-b at http:\/\/127\.0\.0\.1:\d+ stay up/);
  expect(await portInUse(port)).toBe(false); // its dev server is gone
  expect(isAlive(b.pid, undefined)).toBe(true); // --keep: revision 2 still serves
  expect((await fetch(`${b.endpoint}/health`)).status).toBe(200);

  // Session 2, without --keep: a third revision retires the kept one; Ctrl-C stops what it started.
  const dev2 = await startDev(['--port', String(port), '--ui-port', String(uiPort), '--state', state]);
  expect(await ran('dev-c', dev2.address)).toEqual({ id: 'dev-c', code: 0 });
  list = await rows(state);
  expect(list.map((r) => [r.revision, r.state])).toEqual([
    [1, 'retired'],
    [2, 'retired'],
    [3, 'serving'],
  ]);
  expect(isAlive(b.pid, undefined)).toBe(false);
  const c = list[2]!;
  dev2.proc.kill('SIGINT');
  expect(await dev2.exited).toBe(0);
  expect(dev2.out()).toMatch(/stopped model server\(s\) devtest-dev-c/);
  expect(isAlive(c.pid, undefined)).toBe(false);
  expect(await portInUse(port)).toBe(false);
  expect((await rows(state)).map((r) => r.state)).toEqual(['retired', 'retired', 'stopped']);

  // The local lifecycle through `tandem deployments`: show, rollback to the one before, stop.
  const show = await tandem(['deployments', 'show', 'devtest', '--home', state]);
  expect(show.out.split('\n')[0]).toBe('devtest (local): nothing serving, 3 revision(s)');
  expect(show.out).toMatch(/^3\s+devtest-dev-c\s+stopped\s+dev-c\s/m);
  expect(show.out).toMatch(/^1\s+devtest-dev-a\s+retired by devtest-dev-b\s+dev-a\s/m);
  const back = await tandem(['deployments', 'rollback', 'devtest', '--home', state]);
  expect(back).toMatchObject({ code: 0, out: expect.stringMatching(/^devtest \(local\): serving devtest-dev-b again at http:\/\/127\.0\.0\.1:\d+\n$/) });
  list = await rows(state);
  expect(list.map((r) => r.state)).toEqual(['retired', 'serving', 'stopped']);
  expect((await fetch(`${list[1]!.endpoint}/v1/models`)).status).toBe(200);
  expect(await tandem(['deployments', 'rollback', 'devtest', '--home', state, '--to-revision', '3'])).toMatchObject({ code: 0, out: expect.stringMatching(/serving devtest-dev-c again at .*; devtest-dev-b retired/) });
  expect((await rows(state)).map((r) => r.state)).toEqual(['retired', 'retired', 'serving']);
  expect(await tandem(['deployments', 'rollback', 'devtest', '--home', state, '--to-revision', '9'])).toMatchObject({ code: 2, err: expect.stringMatching(/^tandem: devtest: no revision 9 \(see `tandem deployments show devtest`\)/) });
  expect(await tandem(['deployments', 'stop', 'devtest', '--home', state])).toMatchObject({ code: 0, out: 'devtest (local): stopped devtest-dev-c\n' });
  expect(await tandem(['deployments', 'stop', 'devtest', '--home', state])).toMatchObject({ code: 0, out: 'devtest (local): nothing was running\n' });
  expect(await tandem(['deployments', 'show', 'nope', '--home', state])).toMatchObject({ code: 2, err: expect.stringMatching(/^tandem: no local deployment or pipeline named "nope"/) });
  expect((await rows(state)).every((r) => !r.alive)).toBe(true);
}, 300_000);

test('a terminal closed (SIGHUP) stops the dev server; a `tandem dev` killed outright has its server stopped by the next one on the same state', async () => {
  const state = join(dir, 'orphan');
  const port = await freePort();
  const ui = await freePort();
  const ports = () => ['--port', String(port), '--ui-port', String(ui)];
  // SIGHUP: handled like Ctrl-C (the server runs detached, so the default action would orphan it).
  const hup = await startDev([...ports(), '--state', state]);
  hup.proc.kill('SIGHUP');
  expect(await hup.exited).toBe(0);
  expect(hup.out()).toMatch(/stopping \(SIGHUP\)/);
  await waitFor('the port to be free after SIGHUP', async () => !(await portInUse(port)) || undefined, 30_000);
  // SIGKILL: nothing runs in the killed process; its server holds the port until the next `tandem dev`.
  const killed = await startDev([...ports(), '--state', state]);
  const serverPid = Number(/"server":\{"pid":(\d+)/.exec(readFileSync(join(state, 'dev.lock'), 'utf8'))?.[1]);
  killed.proc.kill('SIGKILL');
  await killed.exited;
  expect(isAlive(serverPid, undefined)).toBe(true);
  expect(await portInUse(port)).toBe(true);
  const next = await startDev([...ports(), '--state', state]);
  try {
    expect(next.out()).toContain(`stopped the Temporal dev server (pid ${serverPid}) that an earlier \`tandem dev\` on ${state} left running`);
    expect(isAlive(serverPid, undefined)).toBe(false);
  } finally {
    next.proc.kill('SIGINT');
    expect(await next.exited).toBe(0);
  }
}, 300_000); // three `tandem dev` starts, each a Temporal server: ~75 s on a loaded 2-core machine
