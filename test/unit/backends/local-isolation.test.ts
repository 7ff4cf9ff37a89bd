// How a worker isolates local pipeline jobs (TANDEM_LOCAL_ISOLATION, backends/local-jobs.ts chooseIsolation):
// a host without a working bubblewrap runs them as plain processes with one loud warning, never silently
// and never with a tenant policy; explicit modes are taken as they are.
import { chooseIsolation } from '../../../backends/local-jobs.js';
import { loadWorkerConfig } from '../../../config/worker.js';
import { ConfigError } from '../../../config/errors.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const works = () => ({ bwrap: '/usr/bin/bwrap' });
const missing = () => ({ error: 'Tandem runs every local Argo pod and local pipeline job in a bubblewrap sandbox, and bwrap is not installed: run scripts/argo/install.sh (Debian package bubblewrap)' });

test('auto: the sandbox where bubblewrap works; elsewhere plain processes and a warning that says what to do', () => {
  expect(chooseIsolation('auto', false, works)).toEqual({ isolation: 'sandbox' });
  const fallback = chooseIsolation('auto', false, missing);
  expect(fallback.isolation).toBe('none');
  expect(fallback.warning).toMatch(/^tandem: local pipeline jobs run WITHOUT a sandbox on this worker .*: bwrap is not installed: run scripts\/argo\/install\.sh .*TANDEM_LOCAL_ISOLATION=sandbox/);
});

test('auto with a tenant policy never falls back: tenants must not read each other, so jobs fail saying why', () => {
  expect(chooseIsolation('auto', true, missing)).toEqual({ isolation: 'sandbox' });
});

test('explicit modes are taken as they are, without probing', () => {
  const probe = () => {
    throw new Error('probed');
  };
  expect(chooseIsolation('sandbox', false, probe)).toEqual({ isolation: 'sandbox' });
  expect(chooseIsolation('none', true, probe)).toEqual({ isolation: 'none' });
});

test('TANDEM_LOCAL_ISOLATION: auto by default, a bad value named', () => {
  // A home of its own: a fixed /tmp path may be a file on a shared machine (TANDEM_HOME is checked too).
  const home = mkdtempSync(join(tmpdir(), 'tandem-isolation-'));
  expect(loadWorkerConfig({ TANDEM_HOME: home }).localIsolation).toBe('auto');
  expect(loadWorkerConfig({ TANDEM_HOME: home, TANDEM_LOCAL_ISOLATION: 'none' }).localIsolation).toBe('none');
  expect(() => loadWorkerConfig({ TANDEM_HOME: home, TANDEM_LOCAL_ISOLATION: 'off' })).toThrow(ConfigError);
  expect(() => loadWorkerConfig({ TANDEM_HOME: home, TANDEM_LOCAL_ISOLATION: 'off' })).toThrow(/TANDEM_LOCAL_ISOLATION.*must be auto, sandbox or none/s);
  rmSync(home, { recursive: true });
});
