/**
 * What a listing's fingerprint records of one examined history: the file
 * object, its permissions, length and modification time as `lstat` saw
 * them, and for a history that was read the bytes read and their SHA-256,
 * as bytes, which `lengthPrefixed` then frames among the listing's other
 * parts.
 *
 * Why bytes and not the decimal text of the numbers: every number turned
 * into a string passes through V8's number-string cache, whose entries
 * outlive young-generation collections; with five or six of them per
 * examined history they were about a sixth of what a 10,000-session
 * discovery pass kept alive that way on Deno (bench/README.md).
 *
 * @module
 */

import type { FileInfo, FileKind } from "../../host/runtime.ts";

const KINDS: readonly FileKind[] = ["file", "directory", "symlink", "fifo", "socket", "device", "other"];
const IDENTITY_BYTES = 1 + 5 * 8;
const DIGEST_CHARS = 64;
const scratch = new DataView(new ArrayBuffer(IDENTITY_BYTES + 8 + DIGEST_CHARS));

/** A history that could not even be described: its fingerprint. */
export const UNREADABLE: Uint8Array = new TextEncoder().encode("unreadable");
/** A history over the per-file bound, which a discovery page omits with its own notice: its fingerprint. */
export const OVER_LIMIT: Uint8Array = new TextEncoder().encode("limit");

/**
 * The fingerprint of the file `info` describes; with `read`, also of the
 * bytes read from it (`size` of them, hex SHA-256 `digest`). Distinct
 * inputs give distinct bytes: the kind, five float64 fields (exactly the
 * values a `FileInfo` holds, which are float64s already), then the read's
 * length and its 64 digest characters.
 */
export function fingerprintOf(info: FileInfo, read: { readonly size: number; readonly digest: string } | null): Uint8Array {
  scratch.setUint8(0, KINDS.indexOf(info.kind));
  scratch.setFloat64(1, info.dev);
  scratch.setFloat64(9, info.ino);
  scratch.setFloat64(17, info.mode);
  scratch.setFloat64(25, info.size);
  scratch.setFloat64(33, info.mtimeMs);
  if (read === null) return new Uint8Array(scratch.buffer.slice(0, IDENTITY_BYTES));
  scratch.setFloat64(IDENTITY_BYTES, read.size);
  for (let index = 0; index < DIGEST_CHARS; index++) scratch.setUint8(IDENTITY_BYTES + 8 + index, read.digest.charCodeAt(index));
  return new Uint8Array(scratch.buffer.slice(0));
}
