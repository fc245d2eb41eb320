/**
 * Whole-file replacement for `write_file` and `edit_file`, composed from the
 * runtime's `createExclusive` and `rename`: the bytes go to a fresh, synced
 * temporary file in the target's directory, which is then renamed over the
 * target. A reader (or a crash) sees the old file or the new one, never a
 * torn mix, and a symlink or hard link planted at the temporary name cannot
 * redirect the write because the create is exclusive.
 *
 * @module
 */

import { isRuntimeError, type Runtime } from "../../host/runtime.ts";
import { dirname, joinPath } from "../../util/paths.ts";
import { describeError } from "./tool-text.ts";
import type { ToolContext } from "./tool.ts";

/** Largest file `write_file` and `edit_file` produce. */
export const MAX_WRITE_BYTES = 4 * 1024 * 1024;

/** Mode of a newly created file (before the umask). */
export const NEW_FILE_MODE = 0o644;

/** The mode to write `path` with, or a reason it cannot be replaced. */
export async function existingMode(context: ToolContext, path: string): Promise<{ mode: number; created: boolean } | string> {
  try {
    const info = await context.runtime.fs.lstat(path);
    // Setuid and setgid bits are not carried over: a rewritten file should not gain privileges by inheritance.
    return info.kind === "file" ? { mode: info.mode & 0o777, created: false } : "not a regular file";
  } catch (error) {
    return isRuntimeError(error, "not_found") ? { mode: NEW_FILE_MODE, created: true } : describeError(error);
  }
}

/** The temporary name used next to `path`: fixed-length, so a long target name cannot overflow NAME_MAX. */
export function temporaryPath(runtime: Runtime, path: string): string {
  return joinPath(dirname(path), `.magi-code-write-${runtime.randomUUID()}.tmp`);
}

/**
 * Replaces (or creates) the regular file at canonical `path` with `bytes`,
 * created with `mode` (the umask applies). Rejects with the runtime's
 * {@link RuntimeError} and leaves no temporary file behind when it can help it.
 */
export async function writeFileAtomic(runtime: Runtime, path: string, bytes: Uint8Array, mode: number): Promise<void> {
  const temporary = temporaryPath(runtime, path);
  try {
    await runtime.fs.createExclusive(temporary, bytes, mode);
    await runtime.fs.rename(temporary, path);
  } catch (error) {
    // `exists` means the name was someone else's file: never delete that.
    if (!isRuntimeError(error, "exists")) await runtime.fs.unlink(temporary).catch(() => {});
    throw error;
  }
}
