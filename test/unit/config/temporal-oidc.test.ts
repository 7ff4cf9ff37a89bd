// TEMPORAL_OIDC_* (config/worker.ts): the Temporal API key from an OIDC client-credentials grant. All
// three variables or none, the secret read from its file and never printed, https off loopback, and
// not together with a static API key.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadClientConfig, loadWorkerConfig, secretValues } from '../../../config/worker.js';
import { ConfigError } from '../../../config/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-oidc-config-'));
const SECRET = 'oidc-secret-do-not-print';
const secretFile = join(dir, 'secret');
writeFileSync(secretFile, `${SECRET}\n`);
const emptyFile = join(dir, 'empty');
writeFileSync(emptyFile, '');
const base = { TEMPORAL_CONFIG_FILE: join(dir, 'none.toml') };
writeFileSync(base.TEMPORAL_CONFIG_FILE, '[profile.default]\n');
const oidc = { TEMPORAL_OIDC_TOKEN_URL: 'https://auth.example/realms/hpc/protocol/openid-connect/token', TEMPORAL_OIDC_CLIENT_ID: 'tenant-a', TEMPORAL_OIDC_CLIENT_SECRET_FILE: secretFile };

function problems(env: Record<string, string>): string {
  try {
    loadClientConfig({ ...base, ...env });
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    throw e;
  }
  throw new Error('no ConfigError');
}

test('unset: no OIDC, the connection is as before', () => {
  expect(loadClientConfig(base).oidc).toBeUndefined();
});

test('the three variables give the credentials, the secret from its file without the trailing newline', () => {
  const c = loadClientConfig({ ...base, ...oidc, TEMPORAL_OIDC_SCOPE: 'temporal' });
  expect(c.oidc).toEqual({ tokenUrl: oidc.TEMPORAL_OIDC_TOKEN_URL, clientId: 'tenant-a', clientSecret: SECRET, scope: 'temporal' });
  expect(c.connection.apiKey).toBeUndefined();
  // The worker's logger redacts it (observe/log.ts).
  const w = loadWorkerConfig({ ...base, ...oidc });
  expect(secretValues({}, w)).toContain(SECRET);
});

test('a partial set names each missing variable', () => {
  const m = problems({ TEMPORAL_OIDC_TOKEN_URL: oidc.TEMPORAL_OIDC_TOKEN_URL });
  expect(m).toMatch(/TEMPORAL_OIDC_CLIENT_ID: must be set with TEMPORAL_OIDC_TOKEN_URL/);
  expect(m).toMatch(/TEMPORAL_OIDC_CLIENT_SECRET_FILE: must be set with TEMPORAL_OIDC_TOKEN_URL/);
});

test('plain http off loopback, an empty or missing secret file, and a static API key as well are refused; the secret is never printed', () => {
  const m = problems({ ...oidc, TEMPORAL_OIDC_TOKEN_URL: 'http://auth.example/token', TEMPORAL_API_KEY: 'static-key-do-not-print' });
  expect(m).toMatch(/TEMPORAL_OIDC_TOKEN_URL=http:\/\/auth.example\/token: must be https/);
  expect(m).toMatch(/unset TEMPORAL_API_KEY/);
  expect(m).not.toContain(SECRET);
  expect(m).not.toContain('static-key-do-not-print');
  expect(problems({ ...oidc, TEMPORAL_OIDC_CLIENT_SECRET_FILE: emptyFile })).toMatch(/TEMPORAL_OIDC_CLIENT_SECRET_FILE=.*empty: is empty/);
  expect(problems({ ...oidc, TEMPORAL_OIDC_CLIENT_SECRET_FILE: join(dir, 'missing') })).toMatch(/TEMPORAL_OIDC_CLIENT_SECRET_FILE=.*missing: no such file/);
  expect(problems({ ...oidc, TEMPORAL_OIDC_TOKEN_URL: 'ftp://x/token' })).toMatch(/TEMPORAL_OIDC_TOKEN_URL=ftp:\/\/x\/token: must be an http\(s\) URL/);
  // Loopback may be plain http (a local issuer, the test beds).
  expect(loadClientConfig({ ...base, ...oidc, TEMPORAL_OIDC_TOKEN_URL: 'http://127.0.0.1:9000/token' }).oidc?.tokenUrl).toBe('http://127.0.0.1:9000/token');
});
