// The AES-256-GCM payload codec (codec/aes-gcm.ts) and its keys (codec/keys.ts, config/worker.ts):
// round trips, a fresh IV per payload, key ids in metadata, rotation, tampering, and configuration
// errors that name the variable or the keyring's line without ever printing a key.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { AesGcmCodec, CodecError, ENCODING_ENCRYPTED, METADATA_KEY_ID, codecDataConverter } from '../../../codec/index.js';
import { parseKeyring } from '../../../codec/keys.js';
import { loadCodecConfig, loadCodecServerConfig, loadWorkerConfig } from '../../../config/worker.js';
import { configError } from '../config-error.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-codec-'));
const keyring = (name: string, text: string, mode = 0o600) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  chmodSync(p, mode);
  return p;
};
const k = () => randomBytes(32);
const b64 = (b: Buffer) => b.toString('base64');
const utf8 = (b: Uint8Array | null | undefined) => Buffer.from(b ?? []).toString('utf8');
const SECRET_SPEC = { name: 'p', env: { HF_TOKEN: 'hf_secret_value_123' } };
const plain = (): Payload => defaultPayloadConverter.toPayload(SECRET_SPEC)!;

describe('AesGcmCodec', () => {
  test('encrypts the whole payload, names the key id, and decrypts it back exactly', async () => {
    const codec = new AesGcmCodec({ keys: [{ id: 'k1', key: k() }] });
    const [enc] = await codec.encode([plain()]);
    expect(utf8(enc!.metadata!.encoding)).toBe(ENCODING_ENCRYPTED);
    expect(utf8(enc!.metadata![METADATA_KEY_ID])).toBe('k1');
    expect(Object.keys(enc!.metadata!).sort()).toEqual(['encoding', METADATA_KEY_ID].sort()); // json/plain is inside
    expect(Buffer.from(enc!.data!).toString('latin1')).not.toContain('hf_secret_value_123');
    const [dec] = await codec.decode([enc!]);
    expect(defaultPayloadConverter.fromPayload(dec!)).toEqual(SECRET_SPEC);
    expect(utf8(dec!.metadata!.encoding)).toBe('json/plain');
  });

  test('a fresh random IV per payload: the same value never encrypts to the same bytes', async () => {
    const codec = new AesGcmCodec({ keys: [{ id: 'k1', key: k() }] });
    const out = await codec.encode(Array.from({ length: 50 }, plain));
    const ivs = new Set(out.map((p) => Buffer.from(p.data!).subarray(0, 12).toString('hex')));
    expect(ivs.size).toBe(50);
    expect(new Set(out.map((p) => Buffer.from(p.data!).toString('hex'))).size).toBe(50);
  });

  test('rotation: the newest key encrypts, every known key decrypts', async () => {
    const old = { id: 'k-2024', key: k() };
    const fresh = { id: 'k-2025', key: k() };
    const [before] = await new AesGcmCodec({ keys: [old] }).encode([plain()]);
    const rotated = new AesGcmCodec({ keys: [old, fresh] });
    expect(rotated.keyId).toBe('k-2025');
    expect(utf8((await rotated.encode([plain()]))[0]!.metadata![METADATA_KEY_ID])).toBe('k-2025');
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([before!]))[0]!)).toEqual(SECRET_SPEC);
  });

  test('an unknown key id is a clear error naming the id, never a key', async () => {
    const secret = k();
    const [enc] = await new AesGcmCodec({ keys: [{ id: 'gone', key: k() }] }).encode([plain()]);
    const err = (await new AesGcmCodec({ keys: [{ id: 'k1', key: secret }] }).decode([enc!]).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(CodecError);
    expect(err.message).toMatch(/key id "gone", which this codec does not know \(known: k1\)/);
    expect(err.message).not.toContain(b64(secret));
  });

  test('a payload altered by one bit does not decrypt (GCM authenticates it)', async () => {
    const codec = new AesGcmCodec({ keys: [{ id: 'k1', key: k() }] });
    const [enc] = await codec.encode([plain()]);
    const data = Buffer.from(enc!.data!);
    data[20]! ^= 1;
    await expect(codec.decode([{ ...enc!, data }])).rejects.toThrow(/key id "k1" does not decrypt: it was altered/);
    await expect(codec.decode([{ ...enc!, data: data.subarray(0, 10) }])).rejects.toThrow(/too short/);
  });

  test('payloads written before the codec was enabled decode as they are', async () => {
    const codec = new AesGcmCodec({ keys: [{ id: 'k1', key: k() }] });
    const p = plain();
    expect(await codec.decode([p])).toEqual([p]);
  });

  test('no keys: no codec (payloads stay Temporal default JSON)', () => {
    expect(codecDataConverter(undefined)).toBeUndefined();
    expect(codecDataConverter({ keys: [{ id: 'a', key: k() }] })!.payloadCodecs).toHaveLength(1);
  });
});

describe('keys', () => {
  test('a keyring: comments and blank lines, the last key encrypts', () => {
    const a = k();
    const b = k();
    const { keys, issues } = parseKeyring(`# old\nold: ${b64(a)}\n\nnew:${b64(b)}\n`);
    expect(issues).toEqual([]);
    expect(keys.map((x) => x.id)).toEqual(['old', 'new']);
    expect(keys[1]!.key.equals(b)).toBe(true);
  });

  test('every bad line of a keyring is named with its line, without the key', () => {
    const short = randomBytes(16).toString('base64');
    const good = b64(k());
    const { issues } = parseKeyring([`a: ${good}`, 'no colon here', `b: ${short}`, 'c: not*base64!', `bad id: ${good}`, `a: ${good}`, 'd:'].join('\n'));
    expect(issues.map((i) => i.line)).toEqual([2, 3, 4, 5, 6, 7]);
    expect(issues[1]!.message).toMatch(/decodes to 16 bytes; an AES-256 key is 32 bytes/);
    expect(issues[2]!.message).toMatch(/not valid base64/);
    expect(issues[4]!.message).toMatch(/already defined on line 1/);
    expect(issues[5]!.message).toMatch(/is empty/);
    expect(JSON.stringify(issues)).not.toContain(short);
  });

  test('config: a keyring file and TANDEM_CODEC_KEY together, the variable newest', () => {
    const old = k();
    const now = k();
    const file = keyring('ring', `old: ${b64(old)}\n`);
    const keys = loadCodecConfig({ TANDEM_CODEC_KEYS_FILE: file, TANDEM_CODEC_KEY: b64(now), TANDEM_CODEC_KEY_ID: 'now' })!;
    expect(keys.keys.map((x) => x.id)).toEqual(['old', 'now']);
    expect(loadCodecConfig({})).toBeUndefined();
  });

  test('config errors name the variable or the file line, never a key', () => {
    const short = randomBytes(31).toString('base64');
    const e1 = configError(() => loadCodecConfig({ TANDEM_CODEC_KEY: short, TANDEM_CODEC_KEY_ID: 'k1' }));
    expect(e1.message).toMatch(/TANDEM_CODEC_KEY: decodes to 31 bytes/);
    expect(e1.message).not.toContain(short);
    expect(configError(() => loadCodecConfig({ TANDEM_CODEC_KEY: b64(k()) })).message).toMatch(/TANDEM_CODEC_KEY_ID: must be set when TANDEM_CODEC_KEY is/);
    expect(configError(() => loadCodecConfig({ TANDEM_CODEC_KEY: '%%%', TANDEM_CODEC_KEY_ID: 'a b' })).issues.map((i) => i.source)).toEqual(['TANDEM_CODEC_KEY_ID=a b', 'TANDEM_CODEC_KEY']);
    const file = keyring('bad', `k1: ${b64(k())}\nk2: abc\n`);
    const e2 = configError(() => loadCodecConfig({ TANDEM_CODEC_KEYS_FILE: file }));
    expect(e2.issues).toEqual([expect.objectContaining({ source: `TANDEM_CODEC_KEYS_FILE=${file}`, line: 2, message: expect.stringMatching(/the key of k2 is not valid base64/) })]);
    expect(e2.message).toContain('(line 2)');
    expect(configError(() => loadCodecConfig({ TANDEM_CODEC_KEYS_FILE: keyring('open', `k1: ${b64(k())}\n`, 0o644) })).message).toMatch(/readable or writable by group or others/);
    expect(configError(() => loadCodecConfig({ TANDEM_CODEC_KEYS_FILE: keyring('empty', '# nothing\n') })).message).toMatch(/holds no key/);
    expect(configError(() => loadCodecConfig({ TANDEM_CODEC_KEYS_FILE: join(dir, 'missing') })).message).toMatch(/TANDEM_CODEC_KEYS_FILE=.*missing: no such file/);
    // The same id with another key in file and variable is refused rather than silently picking one.
    expect(configError(() => loadCodecConfig({ TANDEM_CODEC_KEYS_FILE: keyring('dup', `k1: ${b64(k())}\n`), TANDEM_CODEC_KEY: b64(k()), TANDEM_CODEC_KEY_ID: 'k1' })).message).toMatch(/key id k1 is also in TANDEM_CODEC_KEYS_FILE with a different key/);
  });

  test('the worker configuration reports codec problems with everything else', () => {
    const e = configError(() => loadWorkerConfig({ TEMPORAL_ADDRESS: 'nope', TANDEM_CODEC_KEY: 'abc', TANDEM_CODEC_KEY_ID: 'k' }));
    expect(e.issues.map((i) => i.source)).toEqual(expect.arrayContaining(['TEMPORAL_ADDRESS=nope', 'TANDEM_CODEC_KEY']));
    expect(loadWorkerConfig({ TANDEM_CODEC_KEY: b64(k()), TANDEM_CODEC_KEY_ID: 'k' }).codec!.keys[0]!.id).toBe('k');
  });

  test('the codec server needs keys; origins must be origins; a short token is refused', () => {
    expect(configError(() => loadCodecServerConfig({})).message).toMatch(/TANDEM_CODEC_KEYS_FILE or TANDEM_CODEC_KEY: must be set/);
    const env = { TANDEM_CODEC_KEY: b64(k()), TANDEM_CODEC_KEY_ID: 'k', TANDEM_CODEC_SERVER_TOKEN: 'a-long-enough-operator-token' };
    expect(loadCodecServerConfig(env).origins).toEqual(['http://localhost:8233', 'http://127.0.0.1:8233']);
    expect(configError(() => loadCodecServerConfig({ ...env, TANDEM_CODEC_SERVER_ORIGINS: 'http://ui.local:8080/path' })).message).toMatch(/must be an origin/);
    const e = configError(() => loadCodecServerConfig({ ...env, TANDEM_CODEC_SERVER_TOKEN: 'short' }));
    expect(e.message).toMatch(/TANDEM_CODEC_SERVER_TOKEN: must be at least 16/);
    expect(e.message).not.toContain('short:');
  });

  test('the codec server is authenticated unless --no-auth, which is loopback only; OIDC needs each tenant\'s keys', () => {
    const keys = { TANDEM_CODEC_KEY: b64(k()), TANDEM_CODEC_KEY_ID: 'k' };
    expect(configError(() => loadCodecServerConfig(keys)).message).toMatch(/TANDEM_CODEC_SERVER_TOKEN or TANDEM_CODEC_SERVER_OIDC_ISSUER: must be set.*--no-auth/);
    expect(loadCodecServerConfig(keys, { noAuth: true }).none).toBe(true);
    expect(configError(() => loadCodecServerConfig({ ...keys, TANDEM_CODEC_SERVER_HOSTS: 'codec.example.org' }, { noAuth: true })).message).toMatch(/TANDEM_CODEC_SERVER_HOSTS: names codec\.example\.org: --no-auth is for loopback only/);
    const issuer = { ...keys, TANDEM_CODEC_SERVER_OIDC_ISSUER: 'https://idp.example.org' };
    expect(configError(() => loadCodecServerConfig(issuer)).message).toMatch(/TANDEM_CODEC_SERVER_TENANT_KEYS: must be set/);
    expect(configError(() => loadCodecServerConfig({ ...issuer, TANDEM_CODEC_SERVER_TENANT_KEYS: 'acme=k,other' })).message).toMatch(/tenant acme: key id\(s\) other are not in the keyring/);
    expect(configError(() => loadCodecServerConfig({ ...issuer, TANDEM_CODEC_SERVER_TENANT_KEYS: 'acme k' })).message).toMatch(/must look like tenant=keyid/);
    expect(configError(() => loadCodecServerConfig({ ...issuer, TANDEM_CODEC_SERVER_OIDC_ISSUER: 'http://idp.example.org', TANDEM_CODEC_SERVER_TENANT_KEYS: 'acme=k' })).message).toMatch(/must be an https URL \(http only on loopback\)/);
    expect(configError(() => loadCodecServerConfig({ ...keys, TANDEM_CODEC_SERVER_TENANT_KEYS: 'acme=k' })).message).toMatch(/is set but TANDEM_CODEC_SERVER_OIDC_ISSUER is not/);
    const ok = loadCodecServerConfig({ ...issuer, TANDEM_CODEC_SERVER_TENANT_KEYS: 'acme=k; beta = k' });
    expect(ok.oidc).toEqual({ issuer: 'https://idp.example.org', jwksUrl: undefined, audience: undefined, claim: 'permissions', tenantKeys: { acme: ['k'], beta: ['k'] } });
  });
});
