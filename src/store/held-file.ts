/**
 * The checked open of a primary history, the first half of a safe read
 * (`docs/storage.md#bounded-reads`): `lstat` the path, refuse anything but a
 * private regular file before opening it (a FIFO is never opened, so it
 * cannot block), open it, and refuse a handle that is not the object the
 * `lstat` saw. Split from the read so a listing can open the next history
 * while it parses this one.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { type FileInfo, type FileSystem, isRuntimeError, type ReadHandle } from "../host/runtime.ts";

/** Whether `info` may hold a history we write to: a regular file nobody else can write. */
export function isPrivateFile(info: FileInfo): boolean {
  return info.kind === "file" && (info.mode & 0o022) === 0;
}

/** Whether `a` and `b` describe the same filesystem object. */
export function sameObject(a: FileInfo, b: FileInfo): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** A history opened and checked: the caller owns `handle` and closes it. */
export type HeldFile =
  | { readonly ok: true; readonly handle: ReadHandle; readonly info: FileInfo }
  | { readonly ok: false; readonly code: typeof ErrorCode.sessionMissing | typeof ErrorCode.sessionInvalid };

const refused = (error: unknown): HeldFile => ({
  ok: false,
  code: isRuntimeError(error, "not_found") ? ErrorCode.sessionMissing : ErrorCode.sessionInvalid,
});

/**
 * Opens the history at `path`, checked against `lstat` (the caller's own,
 * just taken) or a fresh one. Never rejects: a missing file is
 * `session_missing`, anything else that fails is `session_invalid`.
 */
export async function holdFile(fs: FileSystem, path: string, lstat?: FileInfo): Promise<HeldFile> {
  let before: FileInfo;
  try {
    before = lstat ?? await fs.lstat(path);
  } catch (error) {
    return refused(error);
  }
  // Decided on the lstat alone, so a FIFO is never opened and cannot block us.
  if (!isPrivateFile(before)) return { ok: false, code: ErrorCode.sessionInvalid };
  let handle: ReadHandle;
  try {
    handle = await fs.openRead(path);
  } catch (error) {
    return refused(error);
  }
  const { info } = handle;
  if (isPrivateFile(info) && sameObject(before, info)) return { ok: true, handle, info };
  handle.close().catch(() => {});
  return { ok: false, code: ErrorCode.sessionInvalid };
}
