// AES-256-GCM payload encryption, compatible with Temporal's encryption samples: the whole Payload
// (metadata and data) is serialized with protobuf and encrypted, the result is `iv (12 bytes) ||
// ciphertext || tag (16 bytes)`, and the new payload says `encoding: binary/encrypted` and
// `encryption-key-id: <id>` in its metadata. A fresh random IV per payload: GCM must never reuse an
// IV under one key. Payloads that are not encrypted (written before the codec was turned on) decode
// as they are, so a codec can be enabled on a namespace with existing runs — except on a worker that
// refuses plaintext (`refusePlaintext`, Tandem's worker by default): there a plaintext payload, or one
// it cannot decrypt, decodes to the refusal marker (contract/refused-payload.ts) instead of throwing,
// and the workflow fails the run with the reason (a throw would fail the workflow task forever).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { METADATA_ENCODING_KEY, defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { REFUSED_PAYLOAD_KEY } from '../contract/refused-payload.js';
// A CommonJS module: Node's ESM loader gives it only as a default export.
import proto from '@temporalio/proto';
import type { CodecKey, CodecKeys } from './keys.js';

export const ENCODING_ENCRYPTED = 'binary/encrypted';
export const METADATA_KEY_ID = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const ALGORITHM = 'aes-256-gcm';
const PayloadProto = proto.temporal.api.common.v1.Payload;

/** A payload the codec cannot decrypt: the message names the key id, never a key. */
export class CodecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CodecError';
  }
}

const utf8 = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | null | undefined) => (b ? Buffer.from(b).toString('utf8') : undefined);

export class AesGcmCodec implements PayloadCodec {
  private readonly byId: Map<string, Buffer>;
  private readonly encryptWith: CodecKey;

  private readonly refusePlaintext: boolean;

  constructor(keys: CodecKeys, opts: { refusePlaintext?: boolean } = {}) {
    if (keys.keys.length === 0) throw new CodecError('the payload codec needs at least one key');
    this.byId = new Map(keys.keys.map((k) => [k.id, k.key]));
    this.encryptWith = keys.keys.at(-1)!;
    this.refusePlaintext = opts.refusePlaintext === true;
  }

  /** The id new payloads are encrypted with. */
  get keyId(): string {
    return this.encryptWith.id;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(ALGORITHM, this.encryptWith.key, iv);
      const plain = PayloadProto.encode(p).finish();
      const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return { metadata: { [METADATA_ENCODING_KEY]: utf8(ENCODING_ENCRYPTED), [METADATA_KEY_ID]: utf8(this.encryptWith.id) }, data };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    if (!this.refusePlaintext) return payloads.map((p) => this.decodeOne(p));
    return payloads.map((p) => {
      const encoding = text(p.metadata?.[METADATA_ENCODING_KEY]);
      // binary/null carries no data (an absent argument): nothing to refuse.
      if (encoding !== ENCODING_ENCRYPTED && encoding !== 'binary/null') return refused(`a payload is not encrypted (${encoding ?? 'no encoding'}); this worker takes only payloads encrypted with its keys: give the client the workers' keys (TANDEM_CODEC_KEYS_FILE, or TANDEM_CODEC_KEY and TANDEM_CODEC_KEY_ID)`);
      try {
        return this.decodeOne(p);
      } catch (e) {
        if (e instanceof CodecError) return refused(`${e.message} (the client's key is not this worker's)`);
        throw e;
      }
    });
  }

  private decodeOne(p: Payload): Payload {
    if (text(p.metadata?.[METADATA_ENCODING_KEY]) !== ENCODING_ENCRYPTED) return p;
    const id = text(p.metadata?.[METADATA_KEY_ID]);
    if (!id) throw new CodecError(`an encrypted payload has no ${METADATA_KEY_ID} in its metadata`);
    const key = this.byId.get(id);
    if (!key) throw new CodecError(`a payload is encrypted with key id "${id}", which this codec does not know (known: ${[...this.byId.keys()].join(', ')}); add that key to the keyring to read it`);
    const data = p.data ?? new Uint8Array();
    if (data.length < IV_BYTES + TAG_BYTES) throw new CodecError(`a payload encrypted with key id "${id}" is too short to be AES-GCM (${data.length} bytes)`);
    const decipher = createDecipheriv(ALGORITHM, key, data.subarray(0, IV_BYTES));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new CodecError(`a payload encrypted with key id "${id}" does not decrypt: it was altered, or the key with that id is not the one it was encrypted with`);
    }
    return PayloadProto.decode(plain);
  }
}

const refused = (reason: string): Payload => defaultPayloadConverter.toPayload({ [REFUSED_PAYLOAD_KEY]: reason })!;
