// The payload codec as Temporal's DataConverter takes it, for workers, clients and the replayer alike
// (all three must agree, or a worker cannot read what a client wrote).
import type { DataConverter } from '@temporalio/common';
import { AesGcmCodec } from './aes-gcm.js';
import type { CodecKeys } from './keys.js';

export { AesGcmCodec, CodecError, ENCODING_ENCRYPTED, METADATA_KEY_ID } from './aes-gcm.js';
export type { CodecKey, CodecKeys } from './keys.js';

/**
 * `{ payloadCodecs: [AES-GCM] }` for the keys (config/worker.ts loadCodecConfig), or undefined when no
 * key is configured (payloads stay plain JSON, Temporal's default). Not covered: failure messages and
 * stack traces, which Temporal encrypts only with a failure converter whose `encodeCommonAttributes`
 * is on; the TypeScript SDK takes that one as a module path bundled into the workflow code
 * (`failureConverterPath`), which the worker's bundle must be built with.
 */
export function codecDataConverter(keys: CodecKeys | undefined): DataConverter | undefined {
  if (!keys || keys.keys.length === 0) return undefined;
  return { payloadCodecs: [new AesGcmCodec(keys)] };
}
