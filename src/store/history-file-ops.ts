/**
 * The file operations under the session appender (`appender.ts`): creating
 * a history exclusively with its first records, and finding where its last
 * complete line ends, by reading backwards, so a torn tail can be cut.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { type FileInfo, type FileSystem, isRuntimeError } from "../host/runtime.ts";
import { concatBytes } from "../util/bytes.ts";
import { dirname } from "../util/paths.ts";
import { encodeRecord, type SessionRecord } from "./records.ts";
import { type FileIdentity, sameObject } from "./session-file.ts";

/** Session files are private to the user. */
export const FILE_MODE = 0o600;

const LF = 0x0a;
// The last line is usually short, so the first look back is small; later ones are large.
const FIRST_SCAN_BYTES = 4_096;
const SCAN_BYTES = 1_048_576;

/** A creation failure: `exists` says the file was already there. */
type CreateFailure = { ok: false; code: typeof ErrorCode.persistenceFailed; exists?: true };
const FAILED: CreateFailure = Object.freeze({ ok: false, code: ErrorCode.persistenceFailed });

/**
 * Creates the file exclusively (mode 0600) with `records`, which the runtime
 * writes in one write and fsyncs, then fsyncs the directory, so the file and
 * its entry are both durable before anything is acknowledged. `exists` says
 * the file was already there.
 */
export async function createFile(
  fs: FileSystem,
  path: string,
  sessionId: string,
  records: readonly SessionRecord[],
): Promise<{ ok: true; length: number } | CreateFailure> {
  const lines: Uint8Array[] = [];
  for (const [index, record] of records.entries()) {
    if (record.session_id !== sessionId || (record.type === "session") !== (index === 0)) return FAILED;
    const line = encodeRecord(record);
    if (line === null) return FAILED;
    lines.push(line);
  }
  if (lines.length === 0) return FAILED;
  const bytes = concatBytes(lines);
  try {
    await fs.createExclusive(path, bytes, FILE_MODE);
    // Until the directory is synced, a power loss could drop the new entry with its synced bytes.
    await fs.syncDirectory(dirname(path));
  } catch (error) {
    return isRuntimeError(error, "exists") ? { ...FAILED, exists: true } : FAILED;
  }
  return { ok: true, length: bytes.length };
}

/**
 * Finds the end of the last complete line by reading backwards from the end
 * of the file through a second, read-only handle on the same object. Returns
 * null if that handle names another object.
 */
export async function intactLength(fs: FileSystem, path: string, file: FileInfo): Promise<number | null> {
  const reader = await fs.openRead(path);
  try {
    if (!sameObject(reader.info, file)) return null;
    let end = file.size;
    let window = FIRST_SCAN_BYTES;
    while (end > 0) {
      const start = Math.max(0, end - window);
      const buffer = new Uint8Array(end - start);
      let filled = 0;
      while (filled < buffer.length) {
        const count = await reader.read(buffer.subarray(filled), start + filled);
        if (count === 0) return null; // shrank under us
        filled += count;
      }
      const last = buffer.lastIndexOf(LF);
      if (last !== -1) return start + last + 1;
      end = start;
      window = SCAN_BYTES;
    }
    return 0;
  } finally {
    await reader.close().catch(() => {});
  }
}

/** Whether `info` is the same object, length and modification time as `expected`. */
export function sameState(info: FileInfo, expected: FileIdentity): boolean {
  return info.dev === expected.dev && info.ino === expected.ino && info.size === expected.size && info.mtimeMs === expected.mtimeMs;
}
