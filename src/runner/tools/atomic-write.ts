/**
 * Whole-file replacement for `write_file` and `edit_file`, composed from the
 * runtime's `createExclusive` and `rename`: the bytes go to a fresh, synced
 * temporary file in the target's directory, which is then renamed over the
 * target. A reader (or a crash) sees the old file or the new one, never a
 * torn mix, and a symlink or hard link planted at the temporary name cannot
 * redirect the write because the create is exclusive.
 *
 * The directory is checked twice: before the temporary file is created and
 * again immediately before the rename, it must still be its own canonical
 * path (no component swapped for a symlink) and the same directory. Only
 * `O_NOFOLLOW`-style checks on the last component exist in the runtimes
 * (and none on Deno), so this narrows the window a concurrent local process
 * has to redirect the write to the instant between the last check and the
 * rename; `docs/security.md` says so.
 *
 * @module
 */

import { type FileInfo, type FileSystem, isRuntimeError, type Runtime } from "../../host/runtime.ts";
import { dirname, joinPath } from "../../util/paths.ts";
import { sameObject } from "./call-target.ts";

/** Largest file `write_file` and `edit_file` produce. */
export const MAX_WRITE_BYTES = 4 * 1024 * 1024;

/** Mode of a newly created file (before the umask). */
export const NEW_FILE_MODE = 0o644;

/**
 * The mode to write a file with, given what `lstat` found at its path when
 * the call was prepared (`null`: nothing, so it is created), or the reason it
 * cannot be replaced.
 */
export function writableMode(info: FileInfo | null): { mode: number; created: boolean } | string {
  if (info === null) return { mode: NEW_FILE_MODE, created: true };
  // Setuid and setgid bits are not carried over: a rewritten file should not gain privileges by inheritance.
  return info.kind === "file" ? { mode: info.mode & 0o777, created: false } : "not a regular file";
}

/** The directory at `path` if it is its own canonical path (nothing on it is a symlink), else null. */
async function canonicalDirectory(fs: FileSystem, path: string): Promise<FileInfo | null> {
  if (await fs.realpath(path) !== path) return null;
  const info = await fs.lstat(path);
  return info.kind === "directory" ? info : null;
}

/** The temporary name used next to `path`: fixed-length, so a long target name cannot overflow NAME_MAX. */
export function temporaryPath(runtime: Runtime, path: string): string {
  return joinPath(dirname(path), `.magi-code-write-${runtime.randomUUID()}.tmp`);
}

/**
 * Replaces (or creates) the regular file at canonical `path` with `bytes`,
 * created with `mode` (the umask applies). Resolves `"moved"`, having
 * written nothing at `path`, when its directory is not (or no longer) its
 * own canonical path or was replaced between the checks. Rejects with the
 * runtime's {@link RuntimeError} and leaves no temporary file behind when it
 * can help it.
 */
export async function writeFileAtomic(runtime: Runtime, path: string, bytes: Uint8Array, mode: number): Promise<"written" | "moved"> {
  const directory = dirname(path);
  const before = await canonicalDirectory(runtime.fs, directory);
  if (before === null) return "moved";
  const temporary = temporaryPath(runtime, path);
  try {
    await runtime.fs.createExclusive(temporary, bytes, mode);
    // The last check before the rename: the window that remains is between this line and the next.
    // A moved directory took the temporary file with it; unlinking it by name could reach the
    // directory that replaced it, so it is left where it went.
    if (!sameObject(before, await canonicalDirectory(runtime.fs, directory))) return "moved";
    await runtime.fs.rename(temporary, path);
    return "written";
  } catch (error) {
    // `exists` means the name was someone else's file: never delete that.
    if (!isRuntimeError(error, "exists")) await runtime.fs.unlink(temporary).catch(() => {});
    throw error;
  }
}
