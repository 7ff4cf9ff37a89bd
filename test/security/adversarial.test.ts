// Adversarial checks (docs/security.md): a local user without the audit key forges, cuts, rolls back
// and deletes the log — `verify` fails each time naming the record; a torn tail is quarantined; and a
// malicious local job (backends/local-jobs.ts, real bubblewrap) tries to read the secret store,
// TANDEM_HOME, another run's files and the worker's /proc, to write outside its directories and to
// reach a listening port on the host's 127.0.0.1 — every attempt fails; a malicious model server
// (backends/local-serving.ts, the same sandbox with the host network) reads nothing of the home but its
// checkpoint, and cannot point the readiness gate off the loopback. Homes sit outside /tmp (the
// sandbox's own /tmp hid the leak before) and inside the checkout, as the default .tandem does.
import { closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { AuditLog, canonicalJson, loadAuditKey, readAudit, recordHash, verifyAudit } from '../../audit/log.js';
import { LocalJobBackend } from '../../backends/local-jobs.js';
import { LocalServingBackend, loopbackProblem } from '../../backends/local-serving.js';
import { pinCheckpoint, sandboxedCommand } from '../../backends/local-sandbox.js';
import { writeCheckpoint } from '../../backends/checkpoints.js';
import { builtinCommand } from '../../programs/commands.js';
import { CharModel, weightsJson } from '../../programs/model.js';
import { Rng } from '../../programs/rng.js';
import { probePort } from './probe-port.js';

const base = mkdtempSync(join(process.cwd(), '.security-test-'));
afterAll(async () => {
  for (const home of ['home-serve', 'home-url', 'home-link', 'home-fifo']) for (const d of new LocalServingBackend(join(base, home)).list()) await new LocalServingBackend(join(base, home)).undeploy(d.name);
  rmSync(base, { recursive: true, force: true });
});

let n = 0;
async function keyedLog(count: number) {
  const dir = join(base, `log-${++n}`);
  const file = join(dir, 'audit.jsonl');
  const key = loadAuditKey(join(dir, 'keys', 'audit.key'), file, true);
  const log = new AuditLog(file, 'op', key);
  for (let i = 0; i < count; i++) await log.append({ who: { tenant: 'acme' }, what: 'job.submitted', where: { site: 'local' }, details: { i } });
  return { file, key, log };
}
const messages = (v: ReturnType<typeof verifyAudit>) => v.problems.map((p) => `${p.seq ?? '-'}: ${p.message}`);

test('a record rewritten with every hash and the head recomputed (no key) fails verify at that record', async () => {
  const { file, key } = await keyedLog(5);
  expect(verifyAudit(file, key).ok).toBe(true);
  const records = readAudit(file).records.map((r) => r.record);
  let prev = records[1]!.hash;
  for (const r of records.slice(2)) {
    if (r.seq === 3) r.what = 'nothing.happened';
    r.prevHash = prev;
    const rest: Partial<typeof r> = { ...r };
    delete rest.hash;
    delete rest.mac;
    r.hash = recordHash(rest as typeof r);
    prev = r.hash;
  }
  writeFileSync(file, records.map((r) => canonicalJson(r)).join('\n') + '\n');
  writeFileSync(`${file}.head`, JSON.stringify({ seq: 5, hash: prev }));
  const v = verifyAudit(file, key);
  expect(v.ok).toBe(false);
  expect(messages(v)).toEqual(expect.arrayContaining(['3: record seq 3 was forged or modified: its MAC does not match (written without the key)', expect.stringMatching(/head file .* was forged/)]));
});

test('cutting records off the end, rolling back to an older copy, and deleting the log all fail verify', async () => {
  const { file, key, log } = await keyedLog(3);
  const old = join(base, 'old.jsonl');
  copyFileSync(file, old);
  copyFileSync(`${file}.head`, `${old}.head`);
  for (let i = 0; i < 3; i++) await log.append({ who: {}, what: 'job.cancelled', where: {} });
  // Cut: the first four records and a head restored from before.
  writeFileSync(file, readFileSync(file, 'utf8').split('\n').slice(0, 4).join('\n') + '\n');
  expect(messages(verifyAudit(file, key))).toEqual(expect.arrayContaining([expect.stringMatching(/^4: the log ends at seq 4, but its anchor says seq 6: records seq 5 to 6 were cut off/)]));
  // Rollback: the older log and its (validly MACed) head.
  copyFileSync(old, file);
  copyFileSync(`${old}.head`, `${file}.head`);
  expect(messages(verifyAudit(file, key))).toEqual([expect.stringMatching(/^3: the log ends at seq 3, but its anchor says seq 6/)]);
  // Deletion.
  rmSync(file);
  rmSync(`${file}.head`);
  expect(messages(verifyAudit(file, key))).toEqual(expect.arrayContaining([expect.stringMatching(/the log was deleted: its anchor says it held 6 records/)]));
});

test('a torn last line is quarantined on the next append, which goes on; verify passes and the log says so', async () => {
  const { file, key, log } = await keyedLog(2);
  writeFileSync(file, readFileSync(file, 'utf8') + '{"seq":3,"half');
  await log.append({ who: {}, what: 'job.submitted', where: {} });
  const records = readAudit(file).records.map((r) => r.record);
  expect(records.map((r) => r.what)).toEqual(['job.submitted', 'job.submitted', 'audit.tornTail', 'job.submitted']);
  expect(readFileSync(records[2]!.details!.quarantined as string, 'utf8')).toBe('{"seq":3,"half');
  expect(verifyAudit(file, key)).toMatchObject({ ok: true, records: 4 });
});

test('without the key, verify refuses to call anything intact', async () => {
  const { file } = await keyedLog(1);
  expect(() => loadAuditKey(join(base, 'nowhere.key'), file, false)).toThrow(/no audit key at .*TANDEM_AUDIT_KEY_FILE/);
});

test('a malicious local job reads no secret, home, other run or worker /proc, writes nowhere else, reaches no host port', async () => {
  const home = join(base, 'home');
  mkdirSync(join(home, 'argo', 'secrets', 'other'), { recursive: true });
  writeFileSync(join(home, 'argo', 'secrets', 'other', 'password'), 'hunter2', { mode: 0o600 });
  mkdirSync(join(home, 'runs', 'other', 'data'), { recursive: true });
  writeFileSync(join(home, 'runs', 'other', 'data', 'private'), 'theirs');
  const mine = join(home, 'runs', 'mine', 'data');
  mkdirSync(mine, { recursive: true });
  const { server, port } = await probePort();
  const tries: Record<string, string> = {
    secret: `cat ${home}/argo/secrets/other/password`,
    otherRun: `cat ${home}/runs/other/data/private`,
    home: `ls ${home}/argo`,
    workerProc: `cat /proc/${process.pid}/environ`,
    writeUsr: 'echo x > /usr/planted',
    remount: 'mount -t tmpfs none /usr',
    port: `exec 3<>/dev/tcp/127.0.0.1/${port}`,
  };
  // A write to the home's path lands in the sandbox's own (empty) view of it at most: never on the host.
  const script = [`echo x > ${home}/planted 2>/dev/null; true`, ...Object.entries(tries).map(([k, c]) => `if (${c}) >/dev/null 2>&1; then echo "ESCAPED ${k}"; else echo "blocked ${k}"; fi`), `echo ok > ${mine}/own && echo wrote-own`].join('\n');
  const b = new LocalJobBackend(home, Date.now, { isolation: 'sandbox' });
  await b.submit({ name: 'evil', command: ['/bin/bash', '-c', script], env: {}, resources: { nodes: 1, tasksPerNode: 1, cpusPerTask: 1, gpusPerNode: 0, memoryMB: 64, walltime: '1m' }, walltimeMs: 60_000, sandbox: { writable: [mine] } });
  for (let st = await b.status('evil'); st.state === 'RUNNING'; st = await b.status('evil')) await new Promise((r) => setTimeout(r, 100));
  server.close();
  const out = readFileSync(join(b.jobDir('evil'), 'stdout'), 'utf8').trim().split('\n');
  expect(out).toEqual([...Object.keys(tries).map((k) => `blocked ${k}`), 'wrote-own']);
  expect(existsSync(join(home, 'planted'))).toBe(false);
  expect(readFileSync(join(mine, 'own'), 'utf8')).toBe('ok\n');
  expect(readdirSync(join(home, 'argo', 'secrets', 'other'))).toEqual(['password']);
});

/** A home with another workflow's secret and another run's file, and a real checkpoint of this run. */
function hostileHome(name: string) {
  const home = join(base, name);
  mkdirSync(join(home, 'argo', 'secrets', 'other'), { recursive: true });
  writeFileSync(join(home, 'argo', 'secrets', 'other', 'password'), 'hunter2', { mode: 0o600 });
  mkdirSync(join(home, 'runs', 'other', 'data'), { recursive: true });
  writeFileSync(join(home, 'runs', 'other', 'data', 'private'), 'theirs');
  const model = CharModel.init({ vocab: ['\n', 'a', 'b'], context: 2, embed: 2, hidden: 2 }, new Rng(1));
  const checkpoint = writeCheckpoint(join(home, 'runs', 'mine', 'checkpoints'), 1, { 'weights.json': weightsJson(model) }, { job: 'j', site: 'local' });
  return { home, checkpoint };
}

test('a malicious model server (a spec\'s deploy command) reads no secret, home, other run or worker /proc; it sees its checkpoint and serves', async () => {
  const { home, checkpoint } = hostileHome('home-serve');
  const tries: Record<string, string> = {
    secret: `cat ${home}/argo/secrets/other/password`,
    otherRun: `cat ${home}/runs/other/data/private`,
    home: `ls ${home}/argo`,
    serverLog: `cat ${home}/deployments/evil/server.log`, // exists before the server starts
    workerProc: `cat /proc/${process.pid}/environ`,
    writeCheckpoint: `echo x > ${checkpoint}/planted`,
    writeUsr: 'echo x > /usr/planted',
  };
  // The host network is the one capability a model server has (the readiness gate dials it on 127.0.0.1):
  // reaching a host port is the probe's positive control (the same /dev/tcp attempt a pipeline job fails).
  const { server, port } = await probePort();
  const control = `if (exec 3<>/dev/tcp/127.0.0.1/${port}) >/dev/null 2>&1; then echo "reached host port"; else echo "no host network"; fi`;
  const script = [...Object.entries(tries).map(([k, c]) => `if (${c}) >/dev/null 2>&1; then echo "ESCAPED ${k}"; else echo "blocked ${k}"; fi`), control, 'exec "$@"'].join('\n');
  const s = new LocalServingBackend(home, { isolation: 'sandbox' });
  const d = await s.deploy({ name: 'evil', model: 'm', checkpoint, command: ['/bin/bash', '-c', script, 'evil', ...builtinCommand('serve')] });
  expect(d.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  let health = 0;
  for (let i = 0; i < 200 && health !== 200; i++) {
    health = (await fetch(`${d.endpoint}/health`)).status;
    if (health !== 200) await new Promise((r) => setTimeout(r, 50));
  }
  expect(health).toBe(200); // the checkpoint inside the hidden home was loaded
  const log = readFileSync(join(home, 'deployments', 'evil', 'server.log'), 'utf8').trim().split('\n');
  server.close();
  expect(log.slice(0, Object.keys(tries).length + 1)).toEqual([...Object.keys(tries).map((k) => `blocked ${k}`), 'reached host port']);
  expect(existsSync(join(checkpoint, 'planted'))).toBe(false);
  // Stopping it stops the sandbox and the server in it (stop waits for its whole process group).
  await s.stop('evil');
  await expect(fetch(`${d.endpoint}/health`)).rejects.toThrow();
});

test('a checkpoint a training job replaced by a symlink (to the home) is refused, at deploy and at rollback', async () => {
  const { home, checkpoint } = hostileHome('home-link');
  const s = new LocalServingBackend(home, { isolation: 'sandbox' });
  await s.deploy({ name: 'linked', model: 'm', checkpoint });
  await s.stop('linked');
  // The run's train job can write its checkpoints directory: it swaps step-1 for a link to the home.
  rmSync(checkpoint, { recursive: true });
  symlinkSync(home, checkpoint);
  await expect(s.rollback('linked', 'linked')).rejects.toThrow(`deployment linked: checkpoint ${checkpoint} is not served: not a directory (a checkpoint is a directory; a symlink is refused)`);
  const parent = join(home, 'runs', 'mine', 'checkpoints');
  rmSync(checkpoint);
  mkdirSync(join(home, 'runs', 'elsewhere'), { recursive: true });
  renameSync(parent, join(home, 'runs', 'elsewhere', 'checkpoints'));
  symlinkSync(join(home, 'runs', 'elsewhere', 'checkpoints'), parent);
  mkdirSync(checkpoint, { recursive: true }); // through the link: a real directory, at the other run's
  await expect(s.deploy({ name: 'linked2', model: 'm', checkpoint })).rejects.toThrow(`${parent} is a symlink`);
  await expect(s.deploy({ name: 'home', model: 'm', checkpoint: home })).rejects.toThrow('it contains TANDEM_HOME');
  await expect(s.deploy({ name: 'secrets', model: 'm', checkpoint: join(home, 'argo', 'secrets') })).rejects.toThrow("inside TANDEM_HOME but not in a run's checkpoints");
  expect(s.rows().filter((r) => r.alive)).toEqual([]);
});

test('an endpoint file that is a FIFO, a symlink to a secret or huge blocks nothing and is never read', async () => {
  const { home, checkpoint } = hostileHome('home-fifo');
  const s = new LocalServingBackend(home, { isolation: 'sandbox' });
  const secret = join(home, 'argo', 'secrets', 'other', 'password');
  // Each server plants its endpoint file, then stays up without writing a real one: the deploy times out.
  const plants = { fifo: 'mkfifo "$TANDEM_ENDPOINT_FILE"', link: `ln -s ${secret} "$TANDEM_ENDPOINT_FILE"`, huge: 'head -c 100000 /dev/zero | tr "\\0" " " > "$TANDEM_ENDPOINT_FILE"' };
  for (const [name, plant] of Object.entries(plants)) {
    const err = (await s.deploy({ name, model: 'm', checkpoint, command: ['/bin/sh', '-c', `${plant}; exec sleep 60`], bindTimeoutMs: 1500 }).catch((e: unknown) => e)) as Error;
    expect(err.message).toBe(`model server for ${name} did not bind a port within 1500 ms`);
    expect(err.message).not.toContain('hunter2');
    expect(s.rows().find((r) => r.name === name)?.endpoint).toBeUndefined();
    await s.undeploy(name);
  }
});

test('a model server that writes an endpoint off the loopback fails its deploy and is stopped: the gate never dials it', async () => {
  const { home, checkpoint } = hostileHome('home-url');
  const s = new LocalServingBackend(home, { isolation: 'sandbox' });
  const plant = `printf '{"url":"http://169.254.169.254/latest/meta-data"}' > "$TANDEM_ENDPOINT_FILE"; exec sleep 60`;
  await expect(s.deploy({ name: 'ssrf', model: 'm', checkpoint, command: ['/bin/sh', '-c', plant] })).rejects.toThrow('model server for ssrf wrote endpoint "http://169.254.169.254/latest/meta-data": host 169.254.169.254 is not the loopback');
  expect(s.rows().find((r) => r.name === 'ssrf')?.alive).toBe(false);
  expect(loopbackProblem('http://user:pw@127.0.0.1:1')).toBe('credentials in the URL');
  expect(loopbackProblem('file:///etc/passwd')).toBe('scheme file: (only http and https)');
  expect(loopbackProblem('http://[::1]:8000/v1')).toBeUndefined();
});

test('a checkpoint swapped for a symlink after it was checked still binds the checked directory (the bind follows the descriptor), and the server never holds that descriptor', async () => {
  const { home, checkpoint } = hostileHome('home-swap');
  const { pinned, problem } = pinCheckpoint(checkpoint, home);
  expect(problem).toBeUndefined();
  // The race a train job of the run could win: between the check and bwrap's bind, step-1 becomes a link to the home.
  renameSync(checkpoint, `${checkpoint}.real`);
  symlinkSync(home, checkpoint);
  const dir = join(base, 'swap-sandbox');
  const probe = `ls ${checkpoint}; cat ${checkpoint}/argo/secrets/other/password 2>/dev/null; for f in /proc/$$/fd/*; do readlink "$f"; done`;
  const s = sandboxedCommand(['/bin/sh', '-c', probe], { what: 'probe', dir, home, readOnlyFds: [pinned!] });
  const r = spawnSync(s.command[0]!, s.command.slice(1), { cwd: s.work, stdio: ['ignore', 'pipe', 'pipe', ...s.fds], encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
  closeSync(pinned!.fd);
  expect(r.stderr).toBe('');
  const lines = r.stdout.trim().split('\n');
  expect(lines).toContain('weights.json'); // the checked directory, not the home the link points at
  expect(lines).not.toContain('argo');
  expect(r.stdout).not.toContain('hunter2');
  expect(lines.filter((l) => l.startsWith('/') && l.includes('checkpoints'))).toEqual([]); // no descriptor of it inside
  // Asked again now, the swapped path is refused.
  expect(pinCheckpoint(checkpoint, home).problem).toBe('not a directory (a checkpoint is a directory; a symlink is refused)');
});
