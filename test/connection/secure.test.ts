// Secure connections as a team's cluster demands them: mTLS (server CA, server name, client
// certificate), an API key and extra gRPC metadata, all taken from Temporal's own environment
// configuration (a temporal.toml profile). The server is the real dev server behind a TLS front
// (tls-front.ts) that refuses anything less; the worker (Rust core) and the client (grpc-js) both go
// through it and a pipeline completes.
import { writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadClientConfig } from '../../config/worker.js';
import { ConfigError } from '../../config/errors.js';
import { createTandemWorker } from '../../workers/worker.js';
import { TandemClient } from '../../sdk/client.js';
import { temporalChecks } from '../../cli/doctor.js';
import { address, spec, stopLocalDeployments, tempDir, uniqueQueue, workflowBundle } from '../helpers.js';
import { makePki, startTlsFront, type Pki, type TlsFront } from './tls-front.js';

let pki: Pki;
let front: TlsFront;
let toml: string;
const apiKey = `tk-${randomBytes(12).toString('hex')}`;

beforeAll(async () => {
  const dir = tempDir('pki');
  pki = makePki(dir);
  front = await startTlsFront({ upstream: address(), pki, apiKey, requireHeader: ['x-gateway-tenant', 'acme'] });
  toml = join(dir, 'temporal.toml');
  writeFileSync(
    toml,
    `[profile.secure]
address = "${front.address}"
namespace = "default"
api_key = "${apiKey}"

[profile.secure.tls]
server_name = "temporal.test"
server_ca_cert_path = "${pki.ca}"
client_cert_path = "${pki.clientCert}"
client_key_path = "${pki.clientKey}"

[profile.secure.grpc_meta]
x-gateway-tenant = "acme"

[profile.plain]
address = "${front.address}"

[profile.nocert]
address = "${front.address}"
[profile.nocert.tls]
server_name = "temporal.test"
server_ca_cert_path = "${pki.ca}"

[profile.missingca]
address = "${front.address}"
[profile.missingca.tls]
server_name = "temporal.test"
server_ca_cert_path = "${join(dir, 'no-such-ca.pem')}"
`,
  );
}, 60_000);

afterAll(() => front?.close());

test('the profile resolves to TLS with the CA, server name and client pair, the API key and the metadata', () => {
  const c = loadClientConfig({ HOME: '/nonexistent' }, { profile: 'secure', configFile: toml });
  expect(c.address).toBe(front.address);
  expect(c.connection).toMatchObject({ address: front.address, apiKey, metadata: { 'x-gateway-tenant': 'acme' }, tls: { serverNameOverride: 'temporal.test', serverRootCACertificate: expect.any(Uint8Array), clientCertPair: { crt: expect.any(Uint8Array), key: expect.any(Uint8Array) } } });
  // TEMPORAL_* variables override the profile, as in Temporal's own CLI.
  expect(loadClientConfig({ TEMPORAL_NAMESPACE: 'other' }, { profile: 'secure', configFile: toml }).namespace).toBe('other');
});

test('a missing profile or certificate is a ConfigError naming it, and the API key is never printed', () => {
  expect(() => loadClientConfig({}, { profile: 'nope', configFile: toml })).toThrow(ConfigError);
  expect(() => loadClientConfig({}, { profile: 'nope', configFile: toml })).toThrow(/profile nope.*Profile 'nope' not found/s);
  const bad = join(pki.dir, 'bad.toml');
  writeFileSync(bad, `[profile.p]\naddress = "127.0.0.1:1"\napi_key = "${apiKey}"\n[profile.p.tls]\nclient_cert_path = "${pki.dir}/missing.pem"\nclient_key_path = "${pki.clientKey}"\n`);
  let message = '';
  try {
    loadClientConfig({}, { profile: 'p', configFile: bad });
  } catch (e) {
    message = (e as Error).message;
  }
  expect(message).toMatch(/missing\.pem/);
  expect(message).not.toContain(apiKey);
  const env = { TEMPORAL_API_KEY: apiKey, TEMPORAL_TLS_CLIENT_CERT_PATH: '/nonexistent.pem' };
  let envMessage = '';
  try {
    loadClientConfig(env);
  } catch (e) {
    envMessage = (e as Error).message;
  }
  expect(envMessage).toMatch(/TEMPORAL_TLS_CLIENT_CERT_PATH=\/nonexistent\.pem.*no such file/);
  expect(envMessage).not.toContain(apiKey);
});

test('worker and client connect through mTLS + API key + metadata and run a pipeline', async () => {
  const cfg = loadClientConfig({}, { profile: 'secure', configFile: toml });
  const taskQueue = uniqueQueue('secure');
  const home = tempDir('secure-home');
  const { worker, connection } = await createTandemWorker({ address: cfg.address, connection: cfg.connection, taskQueue, home, workflowBundle: await workflowBundle() });
  const running = worker.run();
  const tandem = await TandemClient.connect({ profile: 'secure', configFile: toml, taskQueue });
  try {
    const before = front.forwarded;
    const h = await tandem.launch(spec({ stages: { train: { steps: 20, checkpointEvery: 10 } } }), { id: uniqueQueue('secure-run'), tuning: { pollMaxMs: 500 } });
    await expect(h.result().catch((e: { cause?: { message?: string; cause?: { message?: string } } }) => { throw new Error(`${e.cause?.message}: ${e.cause?.cause?.message}`); })).resolves.toMatchObject({ pipeline: 'test' });
    expect(front.forwarded).toBeGreaterThan(before);
    expect(front.lastHeaders?.['x-gateway-tenant']).toBe('acme');
    // The event history names what each activity does (user metadata summaries, shown by the Web UI).
    const summaries = ((await h.workflow.fetchHistory()).events ?? []).flatMap((e) => {
      const p = e.userMetadata?.summary;
      return p?.data ? [JSON.parse(Buffer.from(p.data).toString()) as string] : [];
    });
    expect(summaries).toEqual(expect.arrayContaining(['preprocess: place attempt 1', 'train: submit to local', expect.stringMatching(/^train: watch job \S+-train-1$/)]));
    // `tandem doctor`'s Temporal lines through the same front: TLS with a client certificate, the
    // namespace, the search attributes and the worker polling this queue.
    const checks = await temporalChecks({ connect: () => TandemClient.connect({ profile: 'secure', configFile: toml, taskQueue }), connectArgo: () => Promise.reject(new Error('unused')), target: () => ({ ...cfg, taskQueue }) }, taskQueue);
    expect(checks.map((c) => [c.name, c.ok])).toEqual([['temporal', true], ['search attributes', true], ['workers', true]]);
    expect(checks[0]!.detail).toMatch(/\(TLS, mTLS\) with API key, namespace default/);
  } finally {
    await tandem.close();
    worker.shutdown();
    await running;
    await connection.close();
    await stopLocalDeployments(home);
  }
}, 180_000);

test('the front refuses plain text, a stranger certificate and a wrong API key, and the errors say so', async () => {
  await expect(TandemClient.connect({ address: front.address })).rejects.toThrow(/cannot reach the Temporal server at 127\.0\.0\.1:\d+ /);
  const cfg = loadClientConfig({}, { profile: 'secure', configFile: toml });
  const tls = cfg.connection.tls as { serverNameOverride: string; serverRootCACertificate: Buffer };
  const { readFileSync } = await import('node:fs');
  await expect(TandemClient.connect({ address: front.address, tls: { ...tls, clientCertPair: { crt: readFileSync(pki.strangerCert), key: readFileSync(pki.strangerKey) } }, apiKey })).rejects.toThrow(/cannot reach the Temporal server at .* \(TLS\)/);
  const refused = front.refused;
  await expect(TandemClient.connect({ profile: 'secure', configFile: toml, apiKey: 'wrong-key' })).rejects.toThrow(/missing or wrong API key/);
  expect(front.refused).toBeGreaterThan(refused);
}, 60_000);

/** `tandem doctor` as a user runs it: a fresh CLI process, the profile named by --profile. */
const doctor = (profile: string) =>
  new Promise<{ code: number; out: string }>((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'doctor', '--profile', profile], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', TEMPORAL_CONFIG_FILE: toml, TEMPORAL_ADDRESS: '', KUBECONFIG: '', TANDEM_SLURM_API: '', TANDEM_SITES_FILE: '' }, timeout: 90_000 }, (error, out, err) =>
      resolve({ code: typeof error?.code === 'number' ? error.code : error ? -1 : 0, out: out + err }),
    );
  });

test('tandem doctor --profile: a missing CA file is named; a server that wants TLS or a client certificate gets a hint saying so', async () => {
  const missing = await doctor('missingca');
  expect(missing.code).toBe(1);
  expect(missing.out).toMatch(/FAIL\s+configuration\s+.*\(profile missingca\).*no-such-ca\.pem/);
  expect(missing.out).toMatch(/FAIL\s+temporal\s+not checked: the connection settings above are invalid/);
  expect(missing.out).not.toMatch(/ok\s+configuration/);
  const plain = await doctor('plain');
  expect(plain.code).toBe(1);
  expect(plain.out).toMatch(/FAIL\s+temporal\s+cannot connect to .*if the server requires TLS, set TEMPORAL_TLS=true or the profile's tls section/);
  const nocert = await doctor('nocert');
  expect(nocert.code).toBe(1);
  expect(nocert.out).toMatch(/FAIL\s+temporal\s+cannot connect to .*if the server requires a client certificate — mTLS —, set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH/);
  expect(nocert.out).not.toContain(apiKey);
}, 240_000);
