// The failure converter under the codec (codec/failure-converter.cjs): messages and stack traces move
// into an encoded payload the codec encrypts; a process with the key reads them back; one without it
// reads the placeholder instead of throwing (Temporal's default converter throws "Unknown encoding");
// the keyless client's converter writes failures plain. And the wiring: the paths the data converters
// and the TandemPlugin's bundler hook hand to the SDK.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { ApplicationFailure, DefaultFailureConverter, defaultPayloadConverter, type FailureConverter, type ProtoFailure } from '@temporalio/common';
import { AesGcmCodec, FAILURE_CONVERTER_PATH, FAILURE_READER_PATH, clientDataConverter, codecDataConverter } from '../../../codec/index.js';
import { TandemPlugin } from '../../../workers/plugin.js';
import { loadWorkerConfig } from '../../../config/worker.js';

// Loaded as the SDK loads them: require() by path.
const require = createRequire(import.meta.url);
const encoding: FailureConverter = require(FAILURE_CONVERTER_PATH).failureConverter;
const reader: FailureConverter = require(FAILURE_READER_PATH).failureConverter;
const SECRET = `secret-${randomBytes(4).toString('hex')}`;
const codec = new AesGcmCodec({ keys: [{ id: 'k1', key: randomBytes(32) }] });

function thrown(): Error {
  try {
    throw ApplicationFailure.create({ type: 'JobFailed', message: `job ended FAILED\n${SECRET}`, details: [{ tail: SECRET }], cause: new Error(`inner ${SECRET}`) });
  } catch (e) {
    return e as Error;
  }
}

/** The failure as the codec leaves it on the server: encodedAttributes and details encrypted, recursively. */
async function encrypt(f: ProtoFailure): Promise<ProtoFailure> {
  const out: ProtoFailure = { ...f };
  if (f.encodedAttributes) out.encodedAttributes = (await codec.encode([f.encodedAttributes]))[0];
  const details = f.applicationFailureInfo?.details?.payloads;
  if (details) out.applicationFailureInfo = { ...f.applicationFailureInfo, details: { payloads: await codec.encode(details) } };
  if (f.cause) out.cause = await encrypt(f.cause);
  return out;
}

describe('failure converter', () => {
  test('message and stack trace move into encodedAttributes, at every level of the cause chain', async () => {
    const f = encoding.errorToFailure(thrown(), defaultPayloadConverter);
    expect(f.message).toBe('Encoded failure');
    expect(f.stackTrace).toBe('');
    expect(f.cause?.message).toBe('Encoded failure');
    expect(defaultPayloadConverter.fromPayload(f.encodedAttributes!)).toMatchObject({ message: expect.stringContaining(SECRET), stack_trace: expect.stringContaining('failure-converter.test') });
    // Encrypted, nothing of it is left in clear.
    const stored = await encrypt(f);
    expect(JSON.stringify(stored, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v))).not.toContain(SECRET);
    // Decrypted (what the SDK does with the client's codec first), the error reads as it was thrown.
    const decoded = { ...stored, encodedAttributes: (await codec.decode([stored.encodedAttributes!]))[0], applicationFailureInfo: { ...stored.applicationFailureInfo, details: { payloads: await codec.decode(stored.applicationFailureInfo!.details!.payloads!) } }, cause: { ...stored.cause!, encodedAttributes: (await codec.decode([stored.cause!.encodedAttributes!]))[0] } };
    const err = encoding.failureToError(decoded, defaultPayloadConverter) as ApplicationFailure;
    expect(err.message).toContain(SECRET);
    expect(err.type).toBe('JobFailed');
    expect(err.details).toEqual([{ tail: SECRET }]);
    expect(err.cause?.message).toBe(`inner ${SECRET}`);
  });

  test('without the key: the placeholder, never a throw (where the default converter throws)', async () => {
    const stored = await encrypt(encoding.errorToFailure(thrown(), defaultPayloadConverter));
    expect(() => new DefaultFailureConverter().failureToError(stored, defaultPayloadConverter)).toThrow(/Unknown encoding: binary\/encrypted/);
    for (const c of [encoding, reader]) {
      const err = c.failureToError(stored, defaultPayloadConverter) as ApplicationFailure;
      expect(err.message).toBe('Encoded failure (binary/encrypted: this client has no codec key to read it)');
      expect(err.type).toBe('JobFailed');
      expect(err.details).toEqual([]);
      expect(err.cause?.message).toMatch(/^Encoded failure \(binary\/encrypted/);
      expect(`${err.message}${err.stack}${err.cause?.stack}`).not.toContain(SECRET);
    }
  });

  test('plain failures (the codec off, old histories) read as before; the keyless reader writes them plain', () => {
    const plain = new DefaultFailureConverter().errorToFailure(thrown(), defaultPayloadConverter);
    expect(encoding.failureToError(plain, defaultPayloadConverter).message).toContain(SECRET);
    const written = reader.errorToFailure(thrown(), defaultPayloadConverter);
    expect(written.message).toContain(SECRET);
    expect(written.encodedAttributes).toBeFalsy();
  });

  test('the data converters and the plugin hand the SDK these paths', () => {
    const keys = { keys: [{ id: 'k1', key: randomBytes(32) }] };
    expect(existsSync(FAILURE_CONVERTER_PATH) && existsSync(FAILURE_READER_PATH)).toBe(true);
    expect(codecDataConverter(keys)).toMatchObject({ failureConverterPath: FAILURE_CONVERTER_PATH });
    expect(codecDataConverter(undefined)).toBeUndefined();
    expect(clientDataConverter(keys)).toMatchObject({ failureConverterPath: FAILURE_CONVERTER_PATH });
    expect(clientDataConverter(undefined)).toEqual({ failureConverterPath: FAILURE_READER_PATH });
    expect(codecDataConverter(keys)!.payloadCodecs).toHaveLength(1);

    const home = `/tmp/tandem-unit-${randomBytes(3).toString('hex')}`;
    const withKey = new TandemPlugin({ config: loadWorkerConfig({ TANDEM_HOME: home, TANDEM_CODEC_KEY: randomBytes(32).toString('base64'), TANDEM_CODEC_KEY_ID: 'k1' }), activities: {} });
    expect(withKey.configureBundler({ workflowsPath: '/w.ts' }).failureConverterPath).toBe(FAILURE_CONVERTER_PATH);
    const without = new TandemPlugin({ config: loadWorkerConfig({ TANDEM_HOME: home }), activities: {} });
    expect(without.configureBundler({ workflowsPath: '/w.ts' }).failureConverterPath).toBeUndefined();
  });
});
