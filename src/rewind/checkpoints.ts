/**
 * File checkpoints for `session.rewind`'s `restore_files`: right before
 * `write_file` or `edit_file` changes a file, the content it is about to
 * replace (or that there was none) and a digest of what it writes are kept
 * under `$MC_HOME/checkpoints/<session id>/`, one owner-only file per write
 * (docs/features/local-agent-extensions.md, "Checkpoint retention"). A
 * rewind puts back the content from before the dropped turns' first write
 * of a file, and only when the file still holds exactly what their last
 * write left: a file changed since, by hand or by anything else, is not
 * touched.
 *
 * Taken only in a child whose client negotiated `session.rewind`: nobody
 * else can ever restore them. Bounded per session: a checkpoint that would
 * pass the bound evicts the oldest turns' checkpoints first, whole turns at
 * a time, and marks them evicted (`checkpoint-files.ts`), so a rewind to a
 * recent turn keeps working and one to an evicted turn is refused rather
 * than restoring half of what that turn changed.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { relativeTo } from "../policy/workspace-paths.ts";
import type { TakeCheckpoint } from "../runner/tools/tool.ts";
import { joinPath } from "../util/paths.ts";
import { CheckpointDirectory, evicted, ignoreMissing, type Listing, type ListedCheckpoint, markable, nextName } from "./checkpoint-files.ts";
import { sweepCheckpoints } from "./checkpoint-sweep.ts";

/** Checkpoints kept per session at most. */
export const CHECKPOINTS_PER_SESSION = 256;
/** Bytes of checkpoints kept per session at most (each holds at most one file of `MAX_WRITE_BYTES`). */
export const CHECKPOINT_BYTES_PER_SESSION = 32 * 1024 * 1024;

/** The bounds one store keeps each session within. */
export interface CheckpointBounds {
  readonly count: number;
  readonly bytes: number;
  /** Bytes of every session's checkpoints together, above which a sweep evicts whole sessions (`checkpoint-sweep.ts`). */
  readonly totalBytes: number;
}

/** The bounds of docs/storage.md. */
export const CHECKPOINT_BOUNDS: CheckpointBounds = { count: CHECKPOINTS_PER_SESSION, bytes: CHECKPOINT_BYTES_PER_SESSION, totalBytes: 1024 * 1024 * 1024 };

/** One kept checkpoint. */
export interface Checkpoint {
  readonly turnId: string;
  /** Workspace-relative path of the file. */
  readonly path: string;
  /** The content before the write; null when the write created the file. */
  readonly before: Uint8Array | null;
  /** SHA-256 (hex) of what the write wrote. */
  readonly afterSha256: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The checkpoints of one child, in `home`, for files of `workspace`. */
export class Checkpoints {
  readonly #runtime: Runtime;
  readonly #home: string;
  readonly #workspace: string;
  readonly #bounds: CheckpointBounds;
  readonly #directory: CheckpointDirectory;
  /** Per session, the take in progress: one session's takes run one at a time (a step's calls may write in parallel). */
  readonly #queues = new Map<string, Promise<void>>();
  /** The sessions this child took checkpoints for: a sweep never evicts them. */
  readonly #own = new Set<string>();
  #swept: Promise<void> | null = null;
  /** `<session id>/<turn id>` of each turn a checkpoint of which could be neither kept nor marked evicted. */
  readonly #unmarked = new Set<string>();

  /** Creates the store; nothing is written until a checkpoint is taken. */
  constructor(runtime: Runtime, home: string, workspace: string, bounds: CheckpointBounds = CHECKPOINT_BOUNDS) {
    this.#runtime = runtime;
    this.#home = home;
    this.#workspace = workspace;
    this.#bounds = bounds;
    this.#directory = new CheckpointDirectory(runtime);
  }

  /** The canonical path of a workspace-relative `path`. */
  absolute(path: string): string {
    return joinPath(this.#workspace, path);
  }

  #path(sessionId: string): string {
    return joinPath(this.#home, "checkpoints", sessionId);
  }

  /**
   * The checkpoint taker of one turn of one session. It never rejects: a
   * checkpoint that cannot be kept (a full disk, content that could not be
   * read) is not taken, its turn is marked evicted when it can be, and the
   * write goes on without one.
   */
  taker(sessionId: string, turnId: string): TakeCheckpoint {
    return (path, before, after) => {
      this.#own.add(sessionId);
      const previous = this.#queues.get(sessionId) ?? Promise.resolve();
      // Content that could not be read leaves its turn as incomplete as a checkpoint that could not be kept.
      const keep = () => (before === "unreadable" ? this.#giveUp(sessionId, turnId) : this.#take(sessionId, turnId, path, before, after).catch(() => this.#giveUp(sessionId, turnId)));
      const taken = previous.then(keep);
      this.#queues.set(sessionId, taken);
      return taken.then(() => this.#sweepOnce());
    };
  }

  /** The first checkpoint of this child starts one sweep of every session's, in the background (`checkpoint-sweep.ts`). */
  #sweepOnce(): void {
    this.#swept ??= sweepCheckpoints(this.#runtime, this.#home, this.#directory, this.#own, this.#bounds.totalBytes).catch(() => {});
  }

  /** A checkpoint that could not be kept leaves its turn incomplete: marked so, no rewind restores half of it. */
  async #giveUp(sessionId: string, turnId: string): Promise<void> {
    const directory = this.#path(sessionId);
    const marked = markable(turnId) && await this.#directory.list(directory).then((listing) => this.#directory.evictThrough(directory, listing, turnId)).then(() => true, () => false);
    // Without its marker only this child knows the turn is incomplete: it refuses it at least here.
    if (!marked) this.#unmarked.add(`${sessionId}/${turnId}`);
  }

  async #take(sessionId: string, turnId: string, path: string, before: Uint8Array | null, after: Uint8Array): Promise<void> {
    const fs = this.#runtime.fs;
    const directory = this.#path(sessionId);
    await fs.mkdir(directory, 0o700);
    const listed = await this.#directory.list(directory);
    if (evicted(turnId, listed.floor)) return;
    if (listed.overflow || !markable(turnId)) throw new Error("checkpoint directory not kept by this version");
    // Only this session's writer takes its checkpoints, one at a time: a temporary file here is a dead write's.
    for (const name of listed.temporaries) await fs.unlink(joinPath(directory, name)).catch(ignoreMissing);
    const body = this.#body(turnId, path, before, after);
    const listing = await this.#makeRoom(directory, listed, turnId, body.length);
    if (evicted(turnId, listing.floor)) return;
    const temporary = joinPath(directory, `.${this.#runtime.randomUUID()}.tmp`);
    await fs.createExclusive(temporary, body, 0o600);
    await fs.rename(temporary, joinPath(directory, nextName(this.#runtime.wallNow(), this.#runtime.randomUUID(), listed.checkpoints.at(-1)?.name)));
    await fs.syncDirectory(directory);
  }

  #body(turnId: string, path: string, before: Uint8Array | null, after: Uint8Array): Uint8Array {
    const hash = this.#runtime.createSha256();
    hash.update(after);
    const fields = { v: 1, turn_id: turnId, path: relativeTo(this.#workspace, path), existed: before !== null, after_sha256: hash.digest(), bytes: before?.length ?? 0 };
    const header = encoder.encode(`${JSON.stringify(fields)}\n`);
    const body = new Uint8Array(header.length + (before?.length ?? 0));
    body.set(header);
    if (before !== null) body.set(before, header.length);
    return body;
  }

  /**
   * `listing` with the oldest turns evicted until one more checkpoint of
   * `size` bytes fits the session's bounds. The turn being taken is evicted
   * last, and only when it alone does not fit: then it is marked, and none
   * of its writes can be restored.
   */
  async #makeRoom(directory: string, listing: Listing, turnId: string, size: number): Promise<Listing> {
    const fits = (now: Listing) => now.checkpoints.length < this.#bounds.count && now.checkpoints.reduce((sum, checkpoint) => sum + checkpoint.size, 0) + size <= this.#bounds.bytes;
    let now = listing;
    while (!fits(now)) {
      // Names sort in the order taken: an unreadable oldest checkpoint's turn is at most the first readable one's.
      const oldest = now.checkpoints.find((checkpoint) => checkpoint.turn !== null)?.turn ?? turnId;
      const floor = oldest >= turnId || size > this.#bounds.bytes ? turnId : oldest;
      now = await this.#directory.evictThrough(directory, now, floor);
      if (evicted(turnId, now.floor)) return now;
    }
    return now;
  }

  /**
   * The checkpoints of `sessionId` taken in `turns`, oldest first, or
   * `"evicted"` when any of those turns was evicted (before or while they
   * were read): then what is left of them would restore only part of what
   * the turns changed.
   */
  async of(sessionId: string, turns: ReadonlySet<string>): Promise<Checkpoint[] | "evicted"> {
    const directory = this.#path(sessionId);
    const anyEvicted = (floor: string | null) => [...turns].some((turn) => evicted(turn, floor) || this.#unmarked.has(`${sessionId}/${turn}`));
    const listing = await this.#directory.list(directory);
    if (listing.overflow || anyEvicted(listing.floor)) return "evicted";
    const out: Checkpoint[] = [];
    if (unknownAmong(listing.checkpoints, turns)) return "evicted";
    for (const { name, turn } of listing.checkpoints) {
      if (turn === null || !turns.has(turn)) continue;
      const bytes = await this.#runtime.fs.readFile(joinPath(directory, name), this.#bounds.bytes).catch(() => null);
      const parsed = bytes === null ? null : parse(bytes);
      // A checkpoint of a standing turn gone or torn under us: only an eviction removes one, so trust none.
      if (parsed === null || parsed.turnId !== turn) return "evicted";
      out.push(parsed);
    }
    // A marker is durable before anything it covers is removed: none now means every read above saw its file whole.
    return anyEvicted(await this.#directory.floor(directory)) ? "evicted" : out;
  }
}

/**
 * Whether a checkpoint whose turn could not be read may be one of `turns`':
 * names sort in the order taken, so one before a checkpoint of a turn older
 * than all of them is older too.
 */
function unknownAmong(checkpoints: readonly ListedCheckpoint[], turns: ReadonlySet<string>): boolean {
  for (let index = checkpoints.length - 1; index >= 0; index -= 1) {
    const turn = checkpoints[index]!.turn;
    if (turn === null) return true;
    if ([...turns].every((dropped) => dropped > turn)) return false;
  }
  return false;
}

/** A checkpoint file's content, or null when it is not one this version wrote whole. */
function parse(bytes: Uint8Array): Checkpoint | null {
  const end = bytes.indexOf(0x0a);
  if (end < 0) return null;
  try {
    const header = JSON.parse(decoder.decode(bytes.subarray(0, end))) as Record<string, unknown>;
    if (header.v !== 1 || typeof header.turn_id !== "string" || typeof header.path !== "string" || typeof header.after_sha256 !== "string") return null;
    if (header.path === "" || header.path.startsWith("/") || header.path.split("/").includes("..")) return null;
    const before = header.existed === true ? bytes.slice(end + 1) : null;
    // `bytes` is absent from an earlier release's checkpoints, written in place; this one's say how many follow.
    if (header.bytes !== undefined && header.bytes !== (before?.length ?? 0)) return null;
    return { turnId: header.turn_id, path: header.path, before, afterSha256: header.after_sha256 };
  } catch {
    return null;
  }
}
