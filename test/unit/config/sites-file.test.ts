// The sites file's refusals that keep a worker's credentials and requests where they belong: request
// timeouts a timer can hold, http(s) endpoints only and none at a link-local or metadata address, and
// secret variables that are not the system's own. Each names the field and its line, and the worker's
// configuration (config/worker.ts) refuses the file before anything starts.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSitesFile } from '../../../contract/sites.js';
import { SpecError } from '../../../contract/parse.js';
import { forbiddenHost } from '../../../contract/endpoint-url.js';
import { loadWorkerConfig } from '../../../config/worker.js';
import { ConfigError } from '../../../config/errors.js';

// Line numbers: name 2, api 3, url 4, tokenUrl 5, clientId 6, clientSecretEnv 7, workDir 8, timeoutMs 9.
const firecrest = (o: { url?: string; tokenUrl?: string; secretEnv?: string; timeoutMs?: number } = {}) => `sites:
  - name: lugano
    api: firecrest
    url: ${o.url ?? 'https://firecrest.example.org/v2'}
    tokenUrl: ${o.tokenUrl ?? 'https://auth.example.org/token'}
    clientId: tandem
    clientSecretEnv: ${o.secretEnv ?? 'LUGANO_SECRET'}
    workDir: /scratch/lugano
    timeoutMs: ${o.timeoutMs ?? 10000}
`;
// Line numbers: name 2, api 3, url 4, user 5, tokenEnv 6, workDir 7.
const slurmrestd = (url: string, tokenEnv = 'SLURM_JWT') => `sites:
  - name: zurich
    api: slurmrestd
    url: ${url}
    user: alice
    tokenEnv: ${tokenEnv}
    workDir: /scratch/zurich
`;

function problems(text: string): string[] {
  try {
    parseSitesFile(text, 'sites.yaml');
  } catch (e) {
    if (e instanceof SpecError) return e.message.split('\n').slice(1);
    throw e;
  }
  throw new Error('expected a SpecError');
}

test('a good file still parses: https and loopback endpoints, a secret variable of its own', () => {
  expect(parseSitesFile(firecrest()).sites[0]).toMatchObject({ url: 'https://firecrest.example.org/v2', clientSecretEnv: 'LUGANO_SECRET', timeoutMs: 10000 });
  expect(parseSitesFile(slurmrestd('http://127.0.0.1:6820')).sites[0]).toMatchObject({ url: 'http://127.0.0.1:6820', tokenEnv: 'SLURM_JWT' });
  expect(parseSitesFile(firecrest({ timeoutMs: 600_000 })).sites[0]!.timeoutMs).toBe(600_000);
});

test('timeoutMs at or beyond 2^31 ms (a timer that fires at once) is refused, naming the field and line', () => {
  expect(problems(firecrest({ timeoutMs: 2 ** 31 }))).toEqual(['  - sites[0].timeoutMs (line 9): must be at most 600000 ms (10 minutes) for one request']);
  expect(problems(firecrest({ timeoutMs: 600_001 }))).toEqual(['  - sites[0].timeoutMs (line 9): must be at most 600000 ms (10 minutes) for one request']);
  expect(problems(firecrest().replace('    timeoutMs: 10000\n', '    statusIntervalMs: 2147483648\n'))).toEqual([expect.stringMatching(/^ {2}- sites\[0\]\.statusIntervalMs \(line 9\): must be at most 2147483647 ms/)]);
});

test('only http(s) endpoints: file:, javascript: and friends are refused', () => {
  expect(problems(firecrest({ url: 'file:///etc/passwd' }))).toEqual(['  - sites[0].url (line 4): must be an http or https URL, not file:']);
  expect(problems(firecrest({ tokenUrl: 'javascript:alert(1)' }))).toEqual(['  - sites[0].tokenUrl (line 5): must be an http or https URL, not javascript:']);
  expect(problems(slurmrestd('ftp://slurm.example/'))).toEqual(['  - sites[0].url (line 4): must be an http or https URL, not ftp:']);
  expect(problems(firecrest({ tokenUrl: 'https://tandem:hunter2@auth.example.org/token' }))).toEqual([expect.stringMatching(/^ {2}- sites\[0\]\.tokenUrl \(line 5\): must not carry credentials/)]);
});

test('link-local and metadata hosts are refused in every spelling the URL parser accepts', () => {
  const refused = ['http://169.254.169.254/latest', 'http://2852039166/', 'http://0xa9.0xfe.0xa9.0xfe/', 'http://[fe80::1]:6820/', 'http://[FE80:0:0::1]/', 'http://[::ffff:169.254.169.254]/', 'http://[fd00:ec2::254]/', 'http://metadata.google.internal/', 'http://METADATA.google.internal./', 'http://100.100.100.200/', 'http://0.0.0.0:6820/'];
  for (const url of refused) {
    const p = problems(slurmrestd(url));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^ {2}- sites\[0\]\.url \(line 4\): must not point at (a|an|the) /);
  }
  expect(problems(firecrest({ tokenUrl: 'http://169.254.169.254/token' }))).toEqual(['  - sites[0].tokenUrl (line 5): must not point at a link-local address (169.254.0.0/16, where cloud metadata services answer)']);
  // Ordinary private, loopback and public addresses are endpoints like any other.
  for (const host of ['10.0.0.5', '192.168.1.2', '127.0.0.1', '[::1]', '[2001:db8::1]', 'slurm.cscs.ch', '169.255.0.1']) expect(forbiddenHost(host)).toBeUndefined();
});

test('secret variables must be upper-case names that are not the system\'s or the runtime\'s own', () => {
  for (const v of ['PATH', 'HOME', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'NODE_OPTIONS', 'SSH_AUTH_SOCK', 'TEMPORAL_API_KEY', 'KUBECONFIG']) {
    const p = problems(firecrest({ secretEnv: v }));
    expect(p).toEqual([expect.stringMatching(/^ {2}- sites\[0\]\.clientSecretEnv \(line 7\): .*(system variable|belong to the system or the runtime), not (a|to a) secret/)]);
  }
  expect(problems(firecrest({ secretEnv: 'lugano_secret' }))).toEqual([expect.stringMatching(/^ {2}- sites\[0\]\.clientSecretEnv \(line 7\): must be the name of an environment variable in upper case/)]);
  expect(problems(slurmrestd('http://127.0.0.1:6820', 'PATH'))).toEqual([expect.stringMatching(/^ {2}- sites\[0\]\.tokenEnv \(line 6\): PATH is a system variable/)]);
});

test('the worker refuses such a file at start-up, naming the variable, the file and the line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-sites-'));
  const file = join(dir, 'sites.yaml');
  writeFileSync(file, firecrest({ url: 'http://169.254.169.254/v2', secretEnv: 'PATH', timeoutMs: 2 ** 31 }));
  let err: unknown;
  try {
    loadWorkerConfig({ TANDEM_SITES_FILE: file, PATH: '/usr/bin' });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ConfigError);
  const lines = (err as Error).message.split('\n');
  expect(lines).toContain(`  TANDEM_SITES_FILE=${file} (line 4): sites[0].url: must not point at a link-local address (169.254.0.0/16, where cloud metadata services answer)`);
  expect(lines.some((l) => l.startsWith(`  TANDEM_SITES_FILE=${file} (line 7): sites[0].clientSecretEnv: PATH is a system variable`))).toBe(true);
  expect(lines.some((l) => l.startsWith(`  TANDEM_SITES_FILE=${file} (line 9): sites[0].timeoutMs: must be at most`))).toBe(true);
});
