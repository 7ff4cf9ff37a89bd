// The payload codec as Temporal's DataConverter takes it, for workers, clients and the replayer alike
// (all three must agree, or a worker cannot read what a client wrote).
import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { AesGcmCodec } from './aes-gcm.js';
import type { CodecKeys } from './keys.js';

export { AesGcmCodec, CodecError, ENCODING_ENCRYPTED, METADATA_KEY_ID } from './aes-gcm.js';

export { codecProblem } from './problem.js';
export type { CodecKey, CodecKeys } from './keys.js';

// The failure converters go by path: the SDK requires the module, and bundles it into the workflow
// code. CommonJS files beside this one, in the checkout and in dist/ alike (failure-converter.cjs says why).
const own = (file: string) => fileURLToPath(new URL(`./${file}`, import.meta.url));
/** Encodes failure messages and stack traces (codec/failure-converter.cjs). */
export const FAILURE_CONVERTER_PATH = own('failure-converter.cjs');
/** Plain failures, encoded ones read as a placeholder: clients without keys (codec/failure-reader.cjs). */
export const FAILURE_READER_PATH = own('failure-reader.cjs');

/**
 * `{ payloadCodecs: [AES-GCM], failureConverterPath }` for the keys (config/worker.ts
 * loadCodecConfig), or undefined when no key is configured (payloads and failures stay plain JSON,
 * Temporal's default). The failure converter moves failure messages and stack traces into an encoded
 * payload, so the codec encrypts them too; the history keeps "Encoded failure" in their place. A
 * worker's workflow bundle must be built with the same `failureConverterPath` (workers/worker.ts
 * `bundleWorkflows({ dataConverter })`, or the TandemPlugin's bundler hook), or the failures the
 * workflow code raises stay in clear.
 */
export function codecDataConverter(keys: CodecKeys | undefined, opts: { refusePlaintext?: boolean } = {}): DataConverter | undefined {
  if (!keys || keys.keys.length === 0) return undefined;
  return { payloadCodecs: [new AesGcmCodec(keys, opts)], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/**
 * Tandem's worker's data converter: the codec's, refusing plaintext and undecryptable payloads
 * (contract/refused-payload.ts) unless the keys say plaintext is accepted (TANDEM_CODEC_PLAINTEXT=accept,
 * while a namespace still has runs started before encryption).
 */
export function workerDataConverter(keys: CodecKeys | undefined): DataConverter | undefined {
  return codecDataConverter(keys, { refusePlaintext: keys?.acceptPlaintext !== true });
}

/**
 * A client's data converter: the codec's with keys; without, Temporal's default except that a
 * failure encoded by a codec this client lacks reads as "Encoded failure (…)" instead of throwing.
 */
export function clientDataConverter(keys: CodecKeys | undefined): DataConverter {
  return codecDataConverter(keys) ?? { failureConverterPath: FAILURE_READER_PATH };
}
