/**
 * One `session.discover` page's directory iteration: `$MC_HOME/sessions`
 * read through the runtime's batched directory reader, one batch of
 * {@link DIRECTORY_BATCH} entries at a time, keeping only the page's
 * {@link CandidateWindow}. Every entry counts against
 * `discover_directory_entries` (sidecars, lease files and unrelated names
 * too); the root and file-name rules are `session.list`'s (`inventory.ts`):
 * an unsafe or unlistable root, or a `.jsonl` name whose stem is not a
 * session id, is `discovery_unavailable`. A candidate listed twice is
 * `stale_revision`. Subdirectories are never entered.
 *
 * @module
 */

import { ErrorCode } from "../../protocol/errors.ts";
import { SESSION_ID_PATTERN } from "../../protocol/identity.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type { DirReader, FileSystem } from "../../host/runtime.ts";
import type { Slicer } from "../cooperative-slices.ts";
import { CandidateWindow } from "./window.ts";

/** Entries asked of the reader at once: with the window, all a page holds of the directory. */
export const DIRECTORY_BATCH = 256;

/** Why a walk produced no candidates. */
export type WalkFailure =
  | typeof ErrorCode.discoveryLimit
  | typeof ErrorCode.discoveryUnavailable
  | typeof ErrorCode.staleRevision
  | typeof ErrorCode.operationCancelled;

/** The outcome of {@link walkDirectory}. */
export type WalkResult =
  | { readonly ok: true; readonly window: CandidateWindow; readonly largestBatch: number }
  | { readonly ok: false; readonly code: WalkFailure };

const PRIMARY_SUFFIX = ".jsonl";

/**
 * Iterates `directory` once, keeping the `capacity` smallest candidate ids
 * after `after`; `slicer` paces the iteration and reports cancellation.
 */
export async function walkDirectory(
  fs: FileSystem,
  directory: string,
  after: string | null,
  capacity: number,
  slicer: Slicer,
): Promise<WalkResult> {
  let reader: DirReader;
  try {
    const root = await fs.lstat(directory);
    if (root.kind !== "directory" || (root.mode & 0o022) !== 0) return { ok: false, code: ErrorCode.discoveryUnavailable };
    reader = await fs.openDir(directory);
  } catch {
    return { ok: false, code: ErrorCode.discoveryUnavailable };
  }
  const window = new CandidateWindow(after, capacity);
  let iterated = 0;
  let largestBatch = 0;
  try {
    for (;;) {
      let batch;
      try {
        batch = await reader.read(DIRECTORY_BATCH);
      } catch {
        return { ok: false, code: ErrorCode.discoveryUnavailable };
      }
      if (batch.length === 0) return { ok: true, window, largestBatch };
      largestBatch = Math.max(largestBatch, batch.length);
      iterated += batch.length;
      if (iterated > LIMITS.discover_directory_entries) return { ok: false, code: ErrorCode.discoveryLimit };
      for (const { name } of batch) {
        if (!name.endsWith(PRIMARY_SUFFIX)) continue;
        const id = name.slice(0, -PRIMARY_SUFFIX.length);
        if (!SESSION_ID_PATTERN.test(id)) return { ok: false, code: ErrorCode.discoveryUnavailable };
        if (window.offer(id) === "duplicate") return { ok: false, code: ErrorCode.staleRevision };
      }
      if (slicer.tick(batch.length) && await slicer.pause()) return { ok: false, code: ErrorCode.operationCancelled };
    }
  } finally {
    await reader.close().catch(() => {});
  }
}
