// Codec keys: AES-256 keys with ids, parsed from a keyring file or from one variable. Pure (no
// environment, no files): config/worker.ts reads the variables and the file and reports the problems
// these functions find, naming the variable or the file's line and never printing a key.
//
// Keyring file: one `id: base64key` a line, `#` comments and blank lines allowed. The last key is the
// newest: it encrypts; every key decrypts (rotation: append the new key, keep the old ones until no
// history needs them).

export interface CodecKey {
  id: string;
  /** 32 bytes (AES-256). */
  key: Buffer;
}

export interface CodecKeys {
  /** Every known key, oldest first; the last one encrypts. */
  keys: CodecKey[];
  /** A worker takes plaintext payloads too (TANDEM_CODEC_PLAINTEXT=accept); default: it refuses them. */
  acceptPlaintext?: boolean;
}

export const KEY_BYTES = 32;
/** Ids travel in payload metadata (`encryption-key-id`): short, printable, and without the file's `:`. */
export const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The key's bytes, or what is wrong with it (never quoting it). */
export function decodeKey(b64: string): Buffer | string {
  const text = b64.trim();
  if (!text) return 'is empty';
  if (!BASE64.test(text)) return 'is not valid base64 (standard alphabet, padded)';
  const key = Buffer.from(text, 'base64');
  if (key.length !== KEY_BYTES) return `decodes to ${key.length} bytes; an AES-256 key is ${KEY_BYTES} bytes (make one with \`openssl rand -base64 32\`)`;
  return key;
}

export function keyIdProblem(id: string): string | undefined {
  return KEY_ID.test(id) ? undefined : `key id ${JSON.stringify(id.slice(0, 80))} must be 1-64 letters, digits, '.', '_' or '-'`;
}

export interface KeyringIssue {
  line: number;
  message: string;
}

/** Parses a keyring file's text; every problem is reported with its line. */
export function parseKeyring(text: string): { keys: CodecKey[]; issues: KeyringIssue[] } {
  const keys: CodecKey[] = [];
  const issues: KeyringIssue[] = [];
  const seen = new Map<string, number>();
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = i + 1;
    const t = raw.trim();
    if (!t || t.startsWith('#')) continue;
    const colon = t.indexOf(':');
    if (colon < 0) {
      issues.push({ line, message: 'must look like `id: base64key`' });
      continue;
    }
    const id = t.slice(0, colon).trim();
    const idProblem = keyIdProblem(id);
    if (idProblem) {
      issues.push({ line, message: idProblem });
      continue;
    }
    const key = decodeKey(t.slice(colon + 1));
    if (typeof key === 'string') {
      issues.push({ line, message: `the key of ${id} ${key}` });
      continue;
    }
    if (seen.has(id)) {
      issues.push({ line, message: `key id ${id} is already defined on line ${seen.get(id)}` });
      continue;
    }
    seen.set(id, line);
    keys.push({ id, key });
  }
  return { keys, issues };
}
