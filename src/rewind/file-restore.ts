/**
 * The files a rewind can put back, from the checkpoints of the turns it
 * drops (`checkpoints.ts`): for each file, the content before the dropped
 * turns' first write of it, restorable only while the file holds exactly
 * what their last write of it left. Anything else (edited by hand, written
 * by a shell command, deleted) is `changed` and never touched.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { MAX_WRITE_BYTES, writeFileAtomic } from "../runner/tools/atomic-write.ts";
import type { Checkpoint, Checkpoints } from "./checkpoints.ts";

/** How one file stands, as the preview and the rewind report it. */
export type FileState = "restorable" | "changed" | "restored" | "kept" | "failed";

/** One file the dropped turns wrote through `write_file` or `edit_file`. */
export interface FileChange {
  /** Workspace-relative path. */
  readonly path: string;
  /** Whether the dropped turns created it, so restoring it removes it. */
  readonly created: boolean;
  readonly state: FileState;
}

/** A file to restore, with what it is put back to. */
interface Planned {
  readonly path: string;
  readonly before: Uint8Array | null;
  readonly afterSha256: string;
}

/** Each file of `checkpoints` (oldest first) once: its content before the first, the digest after the last. */
function byFile(checkpoints: readonly Checkpoint[]): Planned[] {
  const files = new Map<string, Planned>();
  for (const checkpoint of checkpoints) {
    const first = files.get(checkpoint.path);
    files.set(checkpoint.path, { path: checkpoint.path, before: first === undefined ? checkpoint.before : first.before, afterSha256: checkpoint.afterSha256 });
  }
  return [...files.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Whether the file at `path` holds exactly what the last dropped write left. */
async function unchanged(runtime: Runtime, path: string, afterSha256: string): Promise<boolean> {
  const now = await runtime.fs.readFile(path, MAX_WRITE_BYTES).catch(() => null);
  if (now === null) return false;
  const hash = runtime.createSha256();
  hash.update(now);
  return hash.digest() === afterSha256;
}

/** What restoring each file of `checkpoints` would do now; changes nothing. */
export async function previewFiles(runtime: Runtime, store: Checkpoints, checkpoints: readonly Checkpoint[]): Promise<FileChange[]> {
  const out: FileChange[] = [];
  for (const file of byFile(checkpoints)) {
    const state = await unchanged(runtime, store.absolute(file.path), file.afterSha256) ? "restorable" : "changed";
    out.push({ path: file.path, created: file.before === null, state });
  }
  return out;
}

/**
 * Puts back every file of `checkpoints` that is still unchanged since the
 * last dropped write, each checked right before and replaced atomically
 * (a file the dropped turns created is removed). `changed` ones are left
 * alone; `failed` ones could not be written and are as they were.
 */
export async function restoreFiles(runtime: Runtime, store: Checkpoints, checkpoints: readonly Checkpoint[]): Promise<FileChange[]> {
  const out: FileChange[] = [];
  for (const file of byFile(checkpoints)) {
    const path = store.absolute(file.path);
    const change = (state: FileState): FileChange => ({ path: file.path, created: file.before === null, state });
    // A path that is no longer its own canonical path (a directory swapped for a symlink) leads elsewhere.
    const canonical = await runtime.fs.realpath(path).catch(() => null);
    if (canonical !== path || !await unchanged(runtime, path, file.afterSha256)) {
      out.push(change("changed"));
      continue;
    }
    try {
      if (file.before === null) await runtime.fs.unlink(path);
      else {
        const mode = (await runtime.fs.lstat(path)).mode & 0o777;
        if (await writeFileAtomic(runtime, path, file.before, mode) === "moved") {
          out.push(change("failed"));
          continue;
        }
      }
      out.push(change("restored"));
    } catch {
      out.push(change("failed"));
    }
  }
  return out;
}

/** The files of `checkpoints` as a rewind without `restore_files` leaves them. */
export function keptFiles(checkpoints: readonly Checkpoint[]): FileChange[] {
  return byFile(checkpoints).map((file) => ({ path: file.path, created: file.before === null, state: "kept" }));
}
