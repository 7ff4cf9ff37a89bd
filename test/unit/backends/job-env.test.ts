// What a job inherits from the worker (backends/job-env.ts): the allowlist only, never its secrets.
import { jobBaseEnv, jobEnv, unspawnable } from '../../../backends/job-env.js';

const worker = {
  PATH: '/usr/bin:/bin', HOME: '/home/w', LANG: 'C.UTF-8', LC_ALL: 'C', LC_CTYPE: 'C', TZ: 'UTC', TMPDIR: '/tmp', USER: 'w', SHELL: '/bin/bash',
  TANDEM_FIRECREST_CLIENT_SECRET: 'canary-fc', TANDEM_SLURMRESTD_TOKEN: 'canary-jwt', TEMPORAL_ADDRESS: '127.0.0.1:7233', AWS_SECRET_ACCESS_KEY: 'canary-aws',
  NODE_OPTIONS: '--experimental-vm-modules', LD_PRELOAD: '/x.so', SLURM_JOB_ID: '7', SSH_AUTH_SOCK: '/tmp/agent',
};

test('only PATH, HOME, LANG, LC_*, TZ, TMPDIR, USER and SHELL pass from the worker', () => {
  expect(jobBaseEnv(worker)).toEqual({ PATH: '/usr/bin:/bin', HOME: '/home/w', LANG: 'C.UTF-8', LC_ALL: 'C', LC_CTYPE: 'C', TZ: 'UTC', TMPDIR: '/tmp', USER: 'w', SHELL: '/bin/bash' });
});

test("the process's own environment is filtered the same way; spec and Tandem layers come on top", () => {
  const env = jobEnv({ A: '1', PATH: '/opt/bin' }, { TANDEM_JOB_ID: 'j' });
  expect(env).toMatchObject({ A: '1', PATH: '/opt/bin', TANDEM_JOB_ID: 'j' });
  for (const k of Object.keys(env)) expect(['A', 'PATH', 'TANDEM_JOB_ID', 'HOME', 'LANG', 'TZ', 'TMPDIR', 'USER', 'SHELL'].includes(k) || k.startsWith('LC_')).toBe(true);
  expect(env.NODE_OPTIONS).toBeUndefined(); // jest runs with NODE_OPTIONS set
});

test('arguments and variables no process can receive are named', () => {
  expect(unspawnable(['/bin/echo', 'ok'], { A: 'x\ny' })).toBeUndefined();
  expect(unspawnable(['/bin/echo', 'a\0b'])).toBe('command[1]');
  expect(unspawnable(['/bin/echo'], { A: 'x\0' })).toBe('env.A');
  expect(unspawnable(['/bin/echo'], { 'A=B': 'x' })).toBe('env.A=B');
});
