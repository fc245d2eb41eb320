/**
 * Replacing a file atomically: the new content goes to a fresh temporary file
 * in the same directory (created exclusively with its mode, written, fsynced
 * and closed by `createExclusive`), is renamed over the target, and the
 * directory is fsynced so the rename survives a power loss. A reader sees the
 * old file or the new one, never a mix, and a failed or abandoned write
 * leaves the old one in place. The catalog caches and the approvals file are
 * written this way.
 *
 * @module
 */

import { type FileSystem, isRuntimeError, RuntimeErrorCode } from "../host/runtime.ts";

/** How {@link replaceFile} writes. */
export interface ReplaceOptions {
  /** The temporary file's path, in the target's directory: a fresh random name per attempt. */
  readonly temporary: string;
  /** Permission bits of the new file. */
  readonly mode: number;
  /** The last chance to give up: false removes the temporary file and changes nothing. */
  readonly beforeRename: () => boolean | Promise<boolean>;
}

/**
 * Replaces `target` (in `directory`) with `bytes`; resolves whether the new
 * content is in place and durable. After a false answer the target holds the
 * old content, except when only the directory fsync failed: the rename
 * happened but its durability across a power loss is uncertain, which
 * callers treat as failure rather than claim it.
 */
export async function replaceFile(fs: FileSystem, directory: string, target: string, bytes: Uint8Array, options: ReplaceOptions): Promise<boolean> {
  try {
    await fs.createExclusive(options.temporary, bytes, options.mode);
  } catch (error) {
    // A short write (a full disk) leaves a prefix under this attempt's own random name.
    if (!isRuntimeError(error, RuntimeErrorCode.exists)) await fs.unlink(options.temporary).catch(() => undefined);
    return false;
  }
  try {
    if (!await options.beforeRename()) throw new Error("abandoned before the rename");
    await fs.rename(options.temporary, target);
  } catch {
    await fs.unlink(options.temporary).catch(() => undefined);
    return false;
  }
  try {
    await fs.syncDirectory(directory);
  } catch {
    return false;
  }
  return true;
}
