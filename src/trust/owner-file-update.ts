/**
 * Changing an owner-only file in `$MC_HOME` without losing a concurrent
 * change: the approvals file (`approvals-write.ts`) and the MCP OAuth
 * tokens file (`mcp/oauth-tokens.ts`) are both changed this way. The new
 * file replaces the old one atomically (`util/replace-file.ts`) with mode
 * 0600, so a reader sees the old content or the new, never a mix.
 *
 * Each attempt reads the file, decides what to write, writes it under a
 * temporary name, and renames it over the old one only if the file still
 * holds the bytes that were read; otherwise the change is applied again to
 * what is there now, a few times at most. Updates of one file within this
 * process go one after another: a child stores the refreshed tokens of
 * servers that connect concurrently, and two of its updates could both pass
 * the check before either renamed, each reporting success while one change
 * was lost. Between processes the window between that last check and the
 * rename is left open: two writers in the same millisecond are not a case
 * worth a lock file that a crash could leave behind.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { readOwnerOnlyFile } from "../config/credentials.ts";
import { replaceFile } from "../util/replace-file.ts";
import { joinPath } from "../util/paths.ts";

/** Attempts before giving up on a file that keeps changing. */
const ATTEMPTS = 5;

/** The owner-only file to change: its name inside `home`, and the largest size read. */
export interface OwnerFile {
  readonly home: string;
  readonly name: string;
  readonly maxBytes: number;
}

/**
 * What one attempt decided, given the file as it is now: `done` resolves
 * with its value at once and writes nothing (a refusal, or nothing to
 * change); `write` replaces the file, which held `read` (null: there was no
 * file), with `bytes`, and resolves with `result` once that is in place.
 */
export type UpdatePlan<T> =
  | { readonly done: T }
  | { readonly read: Uint8Array | null; readonly bytes: Uint8Array; readonly result: T };

/** Whether `a` and `b` hold the same bytes (both null: both files missing). */
export function sameBytes(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

/** Per file path, the settling of the last update queued in this process. */
const queued = new Map<string, Promise<void>>();

/**
 * Changes `file` (creating `home` 0700 if missing) as `plan` decides on
 * each attempt's fresh read, and resolves with the plan's value, or with
 * `contended` (the file kept changing) or `failed` (`home` or the file
 * could not be created or written).
 */
export function updateOwnerFile<T>(runtime: Runtime, file: OwnerFile, plan: () => Promise<UpdatePlan<T>>): Promise<T | "contended" | "failed"> {
  const path = joinPath(file.home, file.name);
  const update = (queued.get(path) ?? Promise.resolve()).then(() => updateNow(runtime, file, path, plan));
  const settled = update.then(() => {}, () => {});
  queued.set(path, settled);
  // The last update of a file takes its entry away, so the map holds only files being changed.
  void settled.then(() => queued.get(path) === settled && queued.delete(path));
  return update;
}

async function updateNow<T>(runtime: Runtime, file: OwnerFile, path: string, plan: () => Promise<UpdatePlan<T>>): Promise<T | "contended" | "failed"> {
  try {
    await runtime.fs.mkdir(file.home, 0o700);
  } catch {
    return "failed";
  }
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const planned = await plan();
    if ("done" in planned) return planned.done;
    const { read, bytes, result } = planned;
    let moved = false;
    const written = await replaceFile(runtime.fs, file.home, path, bytes, {
      temporary: joinPath(file.home, `.${file.name}.${runtime.randomUUID()}.tmp`),
      mode: 0o600,
      beforeRename: async () => {
        const now = await readOwnerOnlyFile(runtime.fs, path, file.maxBytes);
        moved = !now.ok || !sameBytes(now.bytes, read);
        return !moved;
      },
    });
    if (written) return result;
    if (!moved) return "failed";
  }
  return "contended";
}
