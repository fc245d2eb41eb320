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

/**
 * The content of the file at `path` when it holds exactly what the last
 * dropped write left, at that very path; else null. One no longer its own
 * canonical path (it, or a directory above it, swapped for a symlink) leads
 * elsewhere, so the preview and the rewind both call it changed.
 */
async function unchanged(runtime: Runtime, path: string, afterSha256: string): Promise<Uint8Array | null> {
  if (await runtime.fs.realpath(path).catch(() => null) !== path) return null;
  const now = await runtime.fs.readFile(path, MAX_WRITE_BYTES).catch(() => null);
  if (now === null) return null;
  const hash = runtime.createSha256();
  hash.update(now);
  return hash.digest() === afterSha256 ? now : null;
}

/** One file as a preview found it: its change, what restoring puts back, and its content now when restorable. */
export interface PreviewedFile {
  readonly change: FileChange;
  /** The content restoring puts back; null when restoring removes the file. */
  readonly before: Uint8Array | null;
  /** The content now; null unless `restorable`. */
  readonly now: Uint8Array | null;
}

/** What restoring each file of `checkpoints` would do now; changes nothing. */
export async function previewFiles(runtime: Runtime, store: Checkpoints, checkpoints: readonly Checkpoint[]): Promise<PreviewedFile[]> {
  const out: PreviewedFile[] = [];
  for (const file of byFile(checkpoints)) {
    const now = await unchanged(runtime, store.absolute(file.path), file.afterSha256);
    out.push({ change: { path: file.path, created: file.before === null, state: now === null ? "changed" : "restorable" }, before: file.before, now });
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
    if (await unchanged(runtime, path, file.afterSha256) === null) {
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
