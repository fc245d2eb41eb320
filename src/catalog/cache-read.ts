/**
 * Reading one catalog cache file with the catalog bounds. The file lives in
 * the user's storage root, but anything there may have been replaced, so the
 * read is as careful as a session read: `lstat` first (a symlink, FIFO or
 * device is never opened, so nothing can block or redirect the read), open
 * without following a final symlink, check the handle is the object the
 * `lstat` saw and is not group- or world-writable, and read at most
 * `catalog_file_bytes` plus one byte.
 *
 * @module
 */

import { type FileInfo, type FileSystem, isRuntimeError, type ReadHandle, RuntimeErrorCode } from "../host/runtime.ts";
import { LIMITS } from "../protocol/limits.ts";
import { joinPath } from "../util/paths.ts";

/** The directory under `MC_HOME` holding the caches. */
export const CATALOG_DIRECTORY = "catalog";

/** The cache path of `provider` under `home`. Provider names never hold `/`, and the suffix keeps `.`/`..` plain names. */
export function cachePath(home: string, provider: string): string {
  return joinPath(home, CATALOG_DIRECTORY, `${provider}.json`);
}

/** What reading one cache found. */
export type CacheRead =
  | { readonly kind: "bytes"; readonly bytes: Uint8Array }
  /** No file (or no catalog directory). */
  | { readonly kind: "missing" }
  /** A symlink, not a regular file, writable by others, swapped during open, or failing to read. */
  | { readonly kind: "unreadable" }
  /** More than `catalog_file_bytes`. */
  | { readonly kind: "too_large" };

const UNREADABLE: CacheRead = Object.freeze({ kind: "unreadable" });

function safe(info: FileInfo): boolean {
  return info.kind === "file" && (info.mode & 0o022) === 0;
}

/**
 * Reads to the end, at most `max` bytes plus the one that proves a file too
 * large. The buffer starts at the size `lstat` saw plus that byte and grows
 * only if the file grew meanwhile: a scan reads up to 32 files per page, and
 * a full 1 MiB buffer each was 32 MiB of garbage per page.
 */
async function readBounded(handle: ReadHandle, expected: number, max: number): Promise<Uint8Array | null> {
  let buffer = new Uint8Array(Math.min(expected, max) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      const grown = new Uint8Array(Math.min(buffer.length * 2, max + 1));
      grown.set(buffer);
      buffer = grown;
    }
    const count = await handle.read(buffer.subarray(length), length);
    if (count === 0) break;
    length += count;
    if (length > max) return null;
  }
  return buffer.subarray(0, length);
}

/** Reads `provider`'s cache under `home`. Never throws. */
export async function readCache(fs: FileSystem, home: string, provider: string): Promise<CacheRead> {
  const path = cachePath(home, provider);
  let before: FileInfo;
  try {
    before = await fs.lstat(path);
  } catch (error) {
    return isRuntimeError(error, RuntimeErrorCode.notFound) ? { kind: "missing" } : UNREADABLE;
  }
  if (!safe(before)) return UNREADABLE;
  if (before.size > LIMITS.catalog_file_bytes) return { kind: "too_large" };
  let handle: ReadHandle;
  try {
    handle = await fs.openRead(path);
  } catch (error) {
    return isRuntimeError(error, RuntimeErrorCode.notFound) ? { kind: "missing" } : UNREADABLE;
  }
  try {
    const opened = await handle.stat();
    if (!safe(opened) || opened.dev !== before.dev || opened.ino !== before.ino) return UNREADABLE;
    const bytes = await readBounded(handle, before.size, LIMITS.catalog_file_bytes);
    return bytes === null ? { kind: "too_large" } : { kind: "bytes", bytes };
  } catch {
    return UNREADABLE;
  } finally {
    await handle.close().catch(() => undefined);
  }
}
