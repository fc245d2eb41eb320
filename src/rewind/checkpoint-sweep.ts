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
import { type CheckpointDirectory, ignoreMissing, LISTING_ENTRIES } from "./checkpoint-files.ts";

/** Session directories one sweep looks at most. */
const SESSIONS_SWEPT = 4096;
const SESSION_ID = /^[A-Za-z0-9_-]{1,64}$/u;

/** One session's checkpoint directory as the sweep measured it, without reading a checkpoint. */
interface Measured {
  readonly path: string;
  /** Every file in it. */
  readonly names: readonly string[];
  readonly bytes: number;
  /** Its newest checkpoint's name (names sort in the order taken), or null without any. */
  readonly newest: string | null;
}

/** The files of the directory at `path` and the bytes of its checkpoints; only `lstat`s, so a large `MC_HOME` is measured cheaply. */
async function measure(runtime: Runtime, path: string): Promise<Measured> {
  const entries = await runtime.fs.readDir(path, LISTING_ENTRIES);
  const names = entries.filter((entry) => entry.kind === "file").map((entry) => entry.name);
  let bytes = 0;
  let newest: string | null = null;
  for (const name of names.filter((file) => file.endsWith(".checkpoint"))) {
    bytes += await runtime.fs.lstat(joinPath(path, name)).then((info) => info.size, () => 0);
    if (newest === null || name > newest) newest = name;
  }
  return { path, names, bytes, newest };
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
  const candidates: (Measured & { readonly lease: string })[] = [];
  let total = 0;
  for (const entry of entries) {
    if (entry.kind !== "directory" || !SESSION_ID.test(entry.name)) continue;
    const measured = await measure(runtime, joinPath(root, entry.name));
    total += measured.bytes;
    const lease = joinPath(sessions, `${entry.name}.writer.lease`);
    if (own.has(entry.name) || await exists(runtime, lease)) continue;
    if (!await exists(runtime, joinPath(sessions, `${entry.name}.jsonl`))) {
      await removeGone(runtime, measured);
      total -= measured.bytes;
    } else if (measured.newest !== null) candidates.push({ ...measured, lease });
  }
  candidates.sort((a, b) => (a.newest! < b.newest! ? -1 : 1));
  for (const candidate of candidates) {
    if (total <= totalBytes) break;
    if (await exists(runtime, candidate.lease)) continue;
    const listing = await directory.list(candidate.path);
    // A child that took the lease since the measure writes only turns it began after: checkpoints named later are theirs.
    const measured = listing.checkpoints.filter((checkpoint) => checkpoint.name <= candidate.newest!);
    const turns = measured.flatMap((checkpoint) => (checkpoint.turn === null ? [] : [checkpoint.turn]));
    if (turns.length === 0) continue;
    await directory.evictThrough(candidate.path, listing, turns.reduce((max, turn) => (turn > max ? turn : max)));
    total -= candidate.bytes;
  }
}

/**
 * Removes every file of a gone session's checkpoint directory, then the
 * directory. Its history is gone, so no rewind can name its turns again: a
 * kill part way leaves files nothing reads, which the next sweep removes.
 */
async function removeGone(runtime: Runtime, measured: Measured): Promise<void> {
  for (const name of measured.names) await runtime.fs.unlink(joinPath(measured.path, name)).catch(ignoreMissing);
  await runtime.fs.removeDirectory(measured.path).catch(() => {});
}
