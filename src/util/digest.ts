/**
 * SHA-256 through the Web Crypto API, which Node 20 and Deno both expose as
 * `globalThis.crypto`; no runtime adapter is needed for a pure function.
 *
 * @module
 */

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** Returns the lowercase hex SHA-256 digest of `bytes`. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  let hex = "";
  for (const byte of digest) hex += HEX[byte];
  return hex;
}

/**
 * Encodes `parts` unambiguously (each as a 4-byte big-endian UTF-8 length and
 * the bytes), so no two different part lists hash alike.
 */
export function lengthPrefixed(parts: readonly string[]): Uint8Array {
  const encoder = new TextEncoder();
  const encoded = parts.map((part) => encoder.encode(part));
  const out = new Uint8Array(encoded.reduce((sum, bytes) => sum + 4 + bytes.length, 0));
  const view = new DataView(out.buffer);
  let offset = 0;
  for (const bytes of encoded) {
    view.setUint32(offset, bytes.length);
    out.set(bytes, offset + 4);
    offset += 4 + bytes.length;
  }
  return out;
}
