/**
 * Replacing a provider's catalog cache atomically: the new content goes to a
 * fresh temporary file in the same directory (created exclusively, written,
 * fsynced and closed by `createExclusive`), is renamed over the cache, and
 * the directory is fsynced so the rename survives a power loss. A reader
 * therefore sees the old cache or the new one, never a mix, and a failed or
 * cancelled refresh leaves the old one in place.
 *
 * @module
 */

import { isRuntimeError, type Runtime, RuntimeErrorCode } from "../host/runtime.ts";
import { joinPath } from "../util/paths.ts";
import { CATALOG_DIRECTORY, cachePath } from "./cache-read.ts";

/** The outcome of {@link writeCache}. */
export type WriteResult = { readonly ok: true } | { readonly ok: false };

/**
 * Writes `bytes` as `provider`'s cache under `home`, creating the catalog
 * directory (0700) on first use. `beforeRename` is the last chance to give
 * up (a cancelled refresh must not replace the cache): when it returns
 * false the temporary file is removed and nothing changes.
 */
export async function writeCache(
  runtime: Runtime,
  home: string,
  provider: string,
  bytes: Uint8Array,
  beforeRename: () => boolean,
): Promise<WriteResult> {
  const directory = joinPath(home, CATALOG_DIRECTORY);
  const target = cachePath(home, provider);
  // A random name per attempt: a temporary file left by a crashed child never blocks a refresh.
  const temporary = joinPath(directory, `.${provider}.json.${runtime.randomUUID()}.tmp`);
  try {
    await runtime.fs.mkdir(directory, 0o700);
  } catch {
    return { ok: false };
  }
  try {
    await runtime.fs.createExclusive(temporary, bytes, 0o600);
  } catch (error) {
    // A short write (a full disk) leaves a prefix under this attempt's own random name.
    if (!isRuntimeError(error, RuntimeErrorCode.exists)) await runtime.fs.unlink(temporary).catch(() => undefined);
    return { ok: false };
  }
  try {
    if (!beforeRename()) throw new Error("refresh cancelled before the rename");
    await runtime.fs.rename(temporary, target);
  } catch {
    await runtime.fs.unlink(temporary).catch(() => undefined);
    return { ok: false };
  }
  try {
    await runtime.fs.syncDirectory(directory);
  } catch {
    // The rename happened; only its durability across a power loss is uncertain. The cache is
    // validated on every read, so report failure rather than claim a durable refresh.
    return { ok: false };
  }
  return { ok: true };
}
