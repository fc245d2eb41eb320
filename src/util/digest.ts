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

const encoder = new TextEncoder();

/**
 * Encodes `parts` unambiguously (each as a 4-byte big-endian length and its
 * bytes, a string's as UTF-8), so no two different part lists hash alike;
 * a string and its UTF-8 bytes frame alike, as two strings whose lone
 * surrogates the encoder replaces do.
 */
export function lengthPrefixed(parts: readonly (string | Uint8Array)[]): Uint8Array {
  const encoded = parts.map((part) => typeof part === "string" ? encoder.encode(part) : part);
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
