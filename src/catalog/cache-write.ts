/**
 * Replacing a provider's catalog cache atomically (`util/replace-file.ts`):
 * a reader sees the old cache or the new one, never a mix, and a failed or
 * cancelled refresh leaves the old one in place.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { joinPath } from "../util/paths.ts";
import { replaceFile } from "../util/replace-file.ts";
import { CATALOG_DIRECTORY, cachePath } from "./cache-read.ts";

/** The outcome of {@link writeCache}. */
export type WriteResult = { readonly ok: true } | { readonly ok: false };

/**
 * Writes `bytes` as `provider`'s cache under `home`, creating the catalog
 * directory (0700) on first use. `beforeRename` is the last chance to give
 * up (a cancelled refresh must not replace the cache): when it returns
 * false the temporary file is removed and nothing changes. A failed
 * directory fsync after the rename is reported as failure: the cache is
 * validated on every read, so no durable refresh is claimed.
 */
export async function writeCache(
  runtime: Runtime,
  home: string,
  provider: string,
  bytes: Uint8Array,
  beforeRename: () => boolean,
): Promise<WriteResult> {
  const directory = joinPath(home, CATALOG_DIRECTORY);
  try {
    await runtime.fs.mkdir(directory, 0o700);
  } catch {
    return { ok: false };
  }
  // A random name per attempt: a temporary file left by a crashed child never blocks a refresh.
  const temporary = joinPath(directory, `.${provider}.json.${runtime.randomUUID()}.tmp`);
  const written = await replaceFile(runtime.fs, directory, cachePath(home, provider), bytes, { temporary, mode: 0o600, beforeRename });
  return written ? { ok: true } : { ok: false };
}
