// Errors from payloads a client cannot read, said as what to do. Light (no imports): cli/errors.ts
// loads it at start-up, before any command.
const KEY_HINT = "set TANDEM_CODEC_KEYS_FILE (or TANDEM_CODEC_KEY and TANDEM_CODEC_KEY_ID) to the workers' keys";

/**
 * What an error means when it comes from payloads this client cannot read (an encrypted run and no
 * key, or not the key), as one sentence with what to do; undefined for any other error. The SDK says
 * only "Unknown encoding: binary/encrypted", or throws the codec's error from deep inside a call.
 */
export function codecProblem(e: unknown): string | undefined {
  for (let x = e as { name?: unknown; message?: unknown; cause?: unknown } | undefined, i = 0; x && typeof x === 'object' && i < 6; x = x.cause as typeof x, i++) {
    const message = typeof x.message === 'string' ? x.message : '';
    if (/Unknown encoding: binary\/encrypted/.test(message)) return `the run's payloads are encrypted and this client has no codec key: ${KEY_HINT}`;
    if (x.name === 'CodecError' || /which this codec does not know|does not decrypt: it was altered/.test(message)) return `the run's payloads cannot be decrypted with this client's key: ${message.replace(/\.$/, '')}; ${KEY_HINT}`;
  }
  return undefined;
}
