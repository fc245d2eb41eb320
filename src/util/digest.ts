/**
 * SHA-256 of small inputs (instruction files, profiles, catalog endpoint
 * names, selection revisions, MCP tool names) in JavaScript (`sha256.ts`),
 * not through Web Crypto or the runtime's hash: on Node either evaluates
 * `node:crypto` (about 2 ms of every cold start, as the catalog cache key
 * and the selection revision are hashed before the `initialize` answer).
 * Large inputs (session files) hash through the runtime's `createSha256`,
 * which is native.
 *
 * @module
 */

import { sha256 } from "./sha256.ts";

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** `bytes` as lowercase hex. */
export function toHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += HEX[byte];
  return hex;
}

/** Returns the lowercase hex SHA-256 digest of `bytes` (meant for inputs of at most a few hundred KiB). */
export function sha256HexSync(bytes: Uint8Array): string {
  return toHex(sha256(bytes));
}

/**
 * {@link sha256HexSync} for callers written against Web Crypto's promise;
 * it settles at once.
 */
export function sha256Hex(bytes: Uint8Array): Promise<string> {
  return Promise.resolve(sha256HexSync(bytes));
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
