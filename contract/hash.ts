// A small deterministic hash for names derived in workflow code, where Node's crypto is not available
// (the workflow sandbox) and the result must be the same on every replay, worker and platform.
// FNV-1a 64-bit over the UTF-8 bytes: not cryptographic, but names are not adversarial; it only has
// to tell apart identities whose readable prefix a length limit has cut to the same text.

const OFFSET = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;

/** FNV-1a 64-bit of the UTF-8 encoding of `text`. */
export function fnv1a64(text: string): bigint {
  let h = OFFSET;
  const byte = (b: number) => {
    h = BigInt.asUintN(64, (h ^ BigInt(b)) * PRIME);
  };
  for (const ch of text) {
    // UTF-8 by hand (TextEncoder is not guaranteed in every sandbox); for...of yields code points.
    const c = ch.codePointAt(0)!;
    if (c < 0x80) byte(c);
    else if (c < 0x800) {
      byte(0xc0 | (c >> 6));
      byte(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      byte(0xe0 | (c >> 12));
      byte(0x80 | ((c >> 6) & 0x3f));
      byte(0x80 | (c & 0x3f));
    } else {
      byte(0xf0 | (c >> 18));
      byte(0x80 | ((c >> 12) & 0x3f));
      byte(0x80 | ((c >> 6) & 0x3f));
      byte(0x80 | (c & 0x3f));
    }
  }
  return h;
}

/** The hash in base 36, fixed width: 13 characters hold all 64 bits; fewer keep its low digits. */
export function shortHash(text: string, chars = 13): string {
  return fnv1a64(text).toString(36).padStart(13, '0').slice(-chars);
}
