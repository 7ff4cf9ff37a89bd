// `--help` as users read it, from the real CLI process: every main command shows examples, and every
// example names a command that exists and only options that command (or the program) has — an example
// that went stale when an option was renamed fails here. And a namespace the server does not have reads
// the same from every command (it used to read three ways, one of them "no run with id …").
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { address, tempDir } from './helpers.js';

function tandem(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', TEMPORAL_ADDRESS: address() }, timeout: 60_000 }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out, err });
    });
  });
}

/** At most `n` at a time: each is a Node process. */
async function pool<T, R>(items: T[], n: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]!);
    }
  }));
  return out;
}

/** The long options a --help text lists. */
const optionsOf = (help: string) => new Set([...help.matchAll(/^\s+(?:-\w, )?(--[\w-]+)/gm)].map((m) => m[1]!));
/** The subcommand names a --help text lists under Commands:. */
const commandsOf = (help: string) => new Set([...(help.split(/^Commands:$/m)[1] ?? '').matchAll(/^ {2}([\w-]+)/gm)].map((m) => m[1]!));

const MAIN = ['run', 'status', 'cancel', 'validate', 'logs', 'demo', 'dev', 'completion', 'runs list', 'runs show', 'runs replay', 'runs retry', 'runs resume', 'runs export', 'argo submit', 'argo lint', 'argo get', 'deployments list', 'doctor', 'ui', 'checkpoints'];

test('every main command shows examples in --help, and each example names real commands and options', async () => {
  const top = await tandem(['--help']);
  const globals = optionsOf(top.out);
  const helps = new Map<string, string>();
  const help = async (cmd: string) => helps.get(cmd) ?? (helps.set(cmd, (await tandem([...cmd.split(' '), '--help'])).out), helps.get(cmd)!);
  await pool(MAIN, 4, help);
  const problems: string[] = [];
  for (const cmd of MAIN) {
    const text = helps.get(cmd)!;
    const block = text.split(/^Examples:$/m)[1];
    if (!block?.trim()) {
      problems.push(`${cmd}: no examples`);
      continue;
    }
    for (const line of block.split('\n').map((l) => l.split('  # ')[0]!.trim()).filter((l) => l.startsWith('tandem '))) {
      // tandem [global options] <command> [<subcommand>] [args and options]
      const words = line.split(/\s+/).slice(1).filter((w) => !w.includes('|') && w !== '>' && !w.startsWith('<'));
      while (words[0]?.startsWith('--') && globals.has(words[0])) words.splice(0, 2);
      let path = words.shift()!;
      if (!commandsOf(top.out).has(path)) {
        problems.push(`${cmd}: example "${line}" names no command ${path}`);
        continue;
      }
      const sub = commandsOf(await help(path));
      if (sub.size && words[0] && sub.has(words[0])) path = `${path} ${words.shift()}`;
      const own = optionsOf(await help(path));
      for (const w of words.filter((x) => x.startsWith('--'))) if (!own.has(w) && !globals.has(w)) problems.push(`${cmd}: example "${line}": ${path} has no option ${w}`);
    }
  }
  expect(problems).toEqual([]);
});

test('a namespace the server does not have: the same message and exit 2 from every command', async () => {
  const spec = join(tempDir('cli-ns'), 'p.yaml');
  writeFileSync(spec, 'name: ns-check\n');
  const commands = [['runs', 'list'], ['status', 'x-1'], ['cancel', 'x-1'], ['logs', 'x-1'], ['runs', 'show', 'x-1'], ['run', spec, '--detach'], ['argo', 'list']];
  const results = await pool(commands, 4, (c) => tandem(['--namespace', 'no-such-ns', ...c]));
  const message = 'tandem: namespace no-such-ns does not exist on this Temporal server: create it (`temporal operator namespace create no-such-ns`) or set TEMPORAL_NAMESPACE / --namespace (or the profile\'s namespace)\n';
  expect(results.map((r, i) => ({ command: commands[i]!.join(' '), code: r.code, out: r.out, err: r.err }))).toEqual(commands.map((c) => ({ command: c.join(' '), code: 2, out: '', err: message })));
  const doctor = await tandem(['--namespace', 'no-such-ns', 'doctor']);
  expect(doctor.out).toMatch(/FAIL {2}temporal +connected to .*, but namespace no-such-ns does not exist on it\n +fix: create it \(temporal operator namespace create no-such-ns\)/);
});

test('argo lint and submit name a file that cannot be read, without Node\'s error text', async () => {
  const r = await tandem(['argo', 'lint', '/nonexistent.yaml', 'templates/argo/hybrid-training.yaml']);
  expect(r).toMatchObject({ code: 1, err: '/nonexistent.yaml: cannot read /nonexistent.yaml: no such file\n' });
  expect(r.out).toContain('templates/argo/hybrid-training.yaml: no linting errors found');
  expect((await tandem(['argo', 'submit', 'templates'])).err).toBe('templates: cannot read templates: a directory, not a file\n');
});
