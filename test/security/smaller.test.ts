// The smaller holes of issue #27, each closed where it was: `--failover ""` is refused (it read as "no
// failover"), the env deny-list is re-checked by the worker without a tenant policy (a raw start
// skips the spec's validation), TANDEM_SLURMRESTD_URL and the FireCREST URLs take the sites file's rule
// (no metadata or link-local host, no credentials, http(s) only), and start-up problems — TANDEM_HOME a
// file, a newline in TEMPORAL_API_KEY — are configuration errors naming the variable, before connecting.
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { failoverTuning } from '../../cli/failover.js';
import { createActivities } from '../../activities/index.js';
import { loadCliConfig, loadWorkerConfig } from '../../config/worker.js';
import { ConfigError } from '../../config/errors.js';

const base = mkdtempSync(join(process.cwd(), '.security-small-'));
afterAll(() => import('node:fs').then((fs) => fs.rmSync(base, { recursive: true, force: true })));

const configError = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    throw e;
  }
  throw new Error('no ConfigError');
};

test('--failover "" (and " , ") names no site: refused, not read as no failover', () => {
  expect(() => failoverTuning({ failover: '' })).toThrow(/comma-separated list of site names/);
  expect(() => failoverTuning({ failover: ' , ' })).toThrow(/comma-separated list of site names/);
  expect(failoverTuning({})).toBeUndefined();
  expect(failoverTuning({ failover: true })).toEqual({});
  expect(failoverTuning({ failover: 'a,b' })).toEqual({ sites: ['a', 'b'] });
});

test('without a tenant policy the worker refuses a denied variable in a raw start, before any directory exists', async () => {
  const home = join(base, 'home');
  const activities = createActivities({ home });
  const input = { runKey: 'raw-start', stage: 'train' as const, name: 'raw-start-train-1', runtime: 'local' as const, command: ['/bin/true'], resources: { nodes: 1, tasksPerNode: 1, cpusPerTask: 1, gpusPerNode: 0, memoryMB: 64, walltime: 60 }, params: {} };
  for (const name of ['LD_PRELOAD', 'NODE_OPTIONS', 'BASH_ENV', 'DYLD_INSERT_LIBRARIES']) {
    await expect(activities.submitJob({ ...input, env: { [name]: '/tmp/evil.so' } })).rejects.toMatchObject({ type: 'InvalidRequest', message: expect.stringContaining(`env.${name} may not be set`) });
  }
  await expect(activities.deployModel({ name: 'm', model: 'm', checkpoint: '/nowhere', runtime: 'local', env: { LD_PRELOAD: 'x' } } as never)).rejects.toMatchObject({ type: 'InvalidRequest' });
  expect(existsSync(join(home, 'runs', 'raw-start'))).toBe(false);
});

test('TANDEM_SLURMRESTD_URL and the FireCREST URLs refuse metadata hosts, credentials and non-http schemes', () => {
  const slurm = { TANDEM_SLURM_API: 'slurmrestd', TANDEM_SLURM_SITE: 's', TANDEM_SLURM_WORKDIR: '/w' };
  for (const [url, why] of [
    ['http://169.254.169.254/latest', /link-local/],
    ['http://metadata.google.internal/', /cloud metadata/],
    ['http://[::ffff:169.254.169.254]/', /link-local/],
    ['http://user:secret@slurm.example:6820', /must not carry credentials/],
    ['unix:/var/run/slurmrestd.sock', /http or https/],
    ['file:///etc/passwd', /http or https/],
  ] as const) {
    expect(configError(() => loadWorkerConfig({ ...slurm, TANDEM_SLURMRESTD_URL: url }))).toMatch(why);
    expect(configError(() => loadWorkerConfig({ TANDEM_FIRECREST_URL: url }))).toMatch(why);
  }
  expect(configError(() => loadWorkerConfig({ ...slurm, TANDEM_SLURMRESTD_URL: 'http://user:hunter2pw@slurm.example:6820' }))).not.toContain('hunter2pw');
});

test('start-up problems are configuration errors naming the variable', () => {
  const file = join(base, 'a-file');
  writeFileSync(file, 'x');
  expect(configError(() => loadCliConfig({ TANDEM_HOME: file }))).toMatch(/TANDEM_HOME=.*a-file: is not a directory/);
  expect(configError(() => loadWorkerConfig({ TANDEM_HOME: file }))).toMatch(/is not a directory/);
  const e = configError(() => loadCliConfig({ TEMPORAL_API_KEY: 'abc\ndef-the-key' }));
  expect(e).toMatch(/TEMPORAL_API_KEY: must not contain a newline/);
  expect(e).not.toContain('def-the-key');
});
