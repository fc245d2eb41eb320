/**
 * The sweep over every session's checkpoints in `MC_HOME`
 * (docs/storage.md, "Checkpoint retention"), run once per child in the
 * background after its first checkpoint, so a child that never edits a
 * file never loads or runs it:
 *
 * - a session whose history is gone (`sessions/<id>.jsonl` absent, deleted
 *   or archived by the user) and that no child holds (no writer lease) can
 *   never be rewound: its checkpoints are removed;
 * - past the total bound, whole sessions' checkpoints are evicted, the
 *   least recently written first, never one this child took checkpoints
 *   for nor one another child holds the writer lease of, each through
 *   `CheckpointDirectory.evictThrough` so no later rewind trusts what a
 *   kill left of it.
 *
 * @module
 */

import { isRuntimeError, type Runtime } from "../host/runtime.ts";
import { joinPath } from "../util/paths.ts";
import { type CheckpointDirectory, ignoreMissing, type Listing } from "./checkpoint-files.ts";

/** Session directories one sweep looks at most. */
const SESSIONS_SWEPT = 4096;
const SESSION_ID = /^[A-Za-z0-9_-]{1,64}$/u;

/** One session's checkpoints as the sweep found them. */
interface Swept {
  readonly directory: string;
  readonly listing: Listing;
  readonly bytes: number;
  /** Its newest checkpoint's name: names sort in the order they were taken. */
  readonly newest: string;
}

/** Whether `path` exists (anything there, a dangling symlink included). */
async function exists(runtime: Runtime, path: string): Promise<boolean> {
  try {
    await runtime.fs.lstat(path);
    return true;
  } catch (error) {
    // Anything but "not there" (a permission problem, an I/O error) counts as there: never remove on doubt.
    return !isRuntimeError(error, "not_found");
  }
}

/**
 * Sweeps `home`'s checkpoints: removes those of gone sessions and evicts
 * whole sessions, least recently written first, while all of them together
 * exceed `totalBytes`. `own` (this child's sessions) are never evicted.
 */
export async function sweepCheckpoints(runtime: Runtime, home: string, directory: CheckpointDirectory, own: ReadonlySet<string>, totalBytes: number): Promise<void> {
  const root = joinPath(home, "checkpoints");
  const sessions = joinPath(home, "sessions");
  const entries = (await runtime.fs.readDir(root, SESSIONS_SWEPT)).slice(0, SESSIONS_SWEPT);
  const candidates: Swept[] = [];
  let total = 0;
  for (const entry of entries) {
    if (entry.kind !== "directory" || !SESSION_ID.test(entry.name)) continue;
    const path = joinPath(root, entry.name);
    const listing = await directory.list(path);
    const bytes = listing.checkpoints.reduce((sum, checkpoint) => sum + checkpoint.size, 0);
    total += bytes;
    if (own.has(entry.name) || await exists(runtime, joinPath(sessions, `${entry.name}.writer.lease`))) continue;
    if (!await exists(runtime, joinPath(sessions, `${entry.name}.jsonl`))) {
      await removeGone(runtime, path, listing);
      total -= bytes;
      continue;
    }
    const newest = listing.checkpoints.at(-1);
    if (newest !== undefined && newest.turn !== null) candidates.push({ directory: path, listing, bytes, newest: newest.name });
  }
  candidates.sort((a, b) => (a.newest < b.newest ? -1 : 1));
  for (const candidate of candidates) {
    if (total <= totalBytes) break;
    const turns = candidate.listing.checkpoints.flatMap((checkpoint) => (checkpoint.turn === null ? [] : [checkpoint.turn]));
    const floor = turns.reduce((max, turn) => (turn > max ? turn : max));
    await directory.evictThrough(candidate.directory, candidate.listing, floor);
    total -= candidate.bytes;
  }
}

/**
 * Removes every file of a gone session's checkpoint directory. Its history
 * is gone, so no rewind can name its turns again: a kill part way leaves
 * files nothing reads, which the next sweep removes.
 */
async function removeGone(runtime: Runtime, path: string, listing: Listing): Promise<void> {
  const names = [...listing.checkpoints.map((checkpoint) => checkpoint.name), ...listing.markers.map((marker) => `${marker}.evicted`), ...listing.temporaries];
  for (const name of names) await runtime.fs.unlink(joinPath(path, name)).catch(ignoreMissing);
  await runtime.fs.removeDirectory(path).catch(() => {});
}
