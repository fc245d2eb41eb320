/**
 * One `session.discover` walk: `$MC_HOME/sessions` iterated once through
 * the runtime's batched directory reader, one batch of
 * {@link DIRECTORY_BATCH} entries at a time, keeping only a
 * {@link CandidateWindow} (the next candidate ids and the lease names among
 * them), which the pass then serves pages from. Every entry counts against
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
import { LEASE_NAME } from "./inventory.ts";
import type { CandidateWindow, HeldWindow } from "./window.ts";

/** Entries asked of the reader at once: with the window, all a walk holds of the directory. */
export const DIRECTORY_BATCH = 256;

/** Why a walk produced no candidates. */
export type WalkFailure =
  | typeof ErrorCode.discoveryLimit
  | typeof ErrorCode.discoveryUnavailable
  | typeof ErrorCode.staleRevision
  | typeof ErrorCode.operationCancelled;

/** The outcome of {@link walkDirectory}. */
export type WalkResult =
  | {
    readonly ok: true;
    readonly window: HeldWindow;
    /** The most ids and lease names the window held, and the largest batch: the walk's memory bound. */
    readonly peak: { readonly candidates: number; readonly leases: number; readonly batch: number };
  }
  | { readonly ok: false; readonly code: WalkFailure };

const PRIMARY_SUFFIX = ".jsonl";

/**
 * Iterates `directory` once, keeping in `window` (restarted at `after`) its
 * smallest candidate ids after `after` and the lease names among them;
 * `slicer` paces the iteration and reports cancellation.
 */
export async function walkDirectory(
  fs: FileSystem,
  directory: string,
  after: string | null,
  window: CandidateWindow,
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
  window.restart(after);
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
      if (batch.length === 0) return { ok: true, window: window.held(), peak: { ...window.peak, batch: largestBatch } };
      largestBatch = Math.max(largestBatch, batch.length);
      iterated += batch.length;
      if (iterated > LIMITS.discover_directory_entries) return { ok: false, code: ErrorCode.discoveryLimit };
      for (const { name } of batch) {
        if (!name.endsWith(PRIMARY_SUFFIX)) {
          const lease = LEASE_NAME.exec(name);
          if (lease !== null) window.offerLease(lease[1]!);
          continue;
        }
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
