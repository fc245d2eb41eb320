/**
 * The files of one session's checkpoint directory
 * (`$MC_HOME/checkpoints/<session id>/`, docs/storage.md): what a listing
 * finds there, how a checkpoint is published whole, and the eviction
 * markers that say which turns' checkpoints may be gone.
 *
 * - `<uuidv7>.checkpoint`: one checkpoint, a JSON header line and the
 *   replaced bytes. Published by renaming a synced temporary file, so a
 *   kill leaves it whole or absent; the header's `bytes` lets a reader
 *   refuse a torn one an earlier release wrote in place.
 * - `<turn id>.evicted`: an empty marker. Every turn whose id sorts at or
 *   before the greatest marker is evicted: its checkpoints may be gone,
 *   and no rewind trusts what is left of them. A marker is durable before
 *   any checkpoint it covers is removed, and markers are only added (a
 *   lower one is pruned once a higher one is durable), so two children
 *   evicting at once can only raise the floor.
 * - `.<uuid>.tmp`: a write in flight, or one a kill cut short.
 *
 * @module
 */

import { isRuntimeError, type Runtime } from "../host/runtime.ts";
import { joinPath } from "../util/paths.ts";
import { uuid7 } from "../util/uuid7.ts";

/** Entries one listing reads at most: the checkpoints' bound with room for markers and leftovers. */
export const LISTING_ENTRIES = 1024;
/** Bytes of a checkpoint's header line read at most (a workspace path is at most a few KiB). */
const HEADER_BYTES = 16 * 1024;
/** A name this version gives a marker: a turn id as the runner makes them. */
const TURN_ID = /^[A-Za-z0-9_-]{1,64}$/u;

/** One checkpoint file as a listing found it. */
export interface ListedCheckpoint {
  readonly name: string;
  /** Its turn; null when its header is not one this version reads (it is evicted first). */
  readonly turn: string | null;
  readonly size: number;
}

/** One session's checkpoint directory, listed. */
export interface Listing {
  /** Ascending by name: the order they were taken. */
  readonly checkpoints: ListedCheckpoint[];
  /** The greatest eviction marker's turn, or null when nothing was evicted. */
  readonly floor: string | null;
  readonly markers: readonly string[];
  readonly temporaries: readonly string[];
  /** Whether the directory held more entries than a listing reads: nothing in it can be trusted whole. */
  readonly overflow: boolean;
}

/** Whether `turn` is evicted under `floor`. */
export function evicted(turn: string | null, floor: string | null): boolean {
  return turn === null || (floor !== null && turn <= floor);
}

/** Whether `turn` can name a marker. */
export function markable(turn: string): boolean {
  return TURN_ID.test(turn);
}

const decoder = new TextDecoder();

/**
 * Reads the turn ids of checkpoint headers, each at most once per child:
 * a published checkpoint is never rewritten, so its name keeps its turn.
 */
export class CheckpointDirectory {
  readonly #runtime: Runtime;
  readonly #turns = new Map<string, string | null>();

  /** A reader over `runtime`'s file system. */
  constructor(runtime: Runtime) {
    this.#runtime = runtime;
  }

  /** What `directory` holds; an absent directory holds nothing. */
  async list(directory: string): Promise<Listing> {
    const entries = await this.#runtime.fs.readDir(directory, LISTING_ENTRIES).catch((error: unknown) => {
      if (isRuntimeError(error, "not_found")) return [];
      throw error;
    });
    const checkpoints: ListedCheckpoint[] = [];
    const markers: string[] = [];
    const temporaries: string[] = [];
    for (const entry of entries) {
      if (entry.kind !== "file") continue;
      if (entry.name.endsWith(".evicted")) markers.push(entry.name.slice(0, -".evicted".length));
      else if (entry.name.endsWith(".tmp")) temporaries.push(entry.name);
      else if (entry.name.endsWith(".checkpoint")) {
        const listed = await this.#listed(joinPath(directory, entry.name), entry.name);
        if (listed !== null) checkpoints.push(listed);
      }
    }
    checkpoints.sort((a, b) => (a.name < b.name ? -1 : 1));
    const floor = markers.reduce<string | null>((max, marker) => (max === null || marker > max ? marker : max), null);
    return { checkpoints, floor, markers, temporaries, overflow: entries.length > LISTING_ENTRIES };
  }

  /** The greatest marker in `directory` now, read again. */
  async floor(directory: string): Promise<string | null> {
    return (await this.list(directory)).floor;
  }

  async #listed(path: string, name: string): Promise<ListedCheckpoint | null> {
    try {
      const { size } = await this.#runtime.fs.lstat(path);
      return { name, turn: await this.#turn(path, name), size };
    } catch (error) {
      // Gone since the listing: only an eviction removes one, and its marker says so. Unreadable: its turn is unknown.
      return isRuntimeError(error, "not_found") ? null : { name, turn: null, size: 0 };
    }
  }

  async #turn(path: string, name: string): Promise<string | null> {
    if (this.#turns.has(name)) return this.#turns.get(name)!;
    // A read that failed (EIO, EMFILE) may succeed later: only what a read found is kept.
    return await this.#readHeaderTurn(path).then((turn) => {
      this.#turns.set(name, turn);
      return turn;
    }, () => null);
  }

  async #readHeaderTurn(path: string): Promise<string | null> {
    const handle = await this.#runtime.fs.openRead(path);
    try {
      const buffer = new Uint8Array(HEADER_BYTES);
      let filled = 0;
      while (filled < buffer.length) {
        const count = await handle.read(buffer.subarray(filled), filled);
        if (count === 0) break;
        filled += count;
        if (buffer.subarray(0, filled).includes(0x0a)) break;
      }
      const end = buffer.subarray(0, filled).indexOf(0x0a);
      if (end < 0) return null;
      let header: Record<string, unknown>;
      try {
        header = JSON.parse(decoder.decode(buffer.subarray(0, end))) as Record<string, unknown>;
      } catch {
        return null;
      }
      // A turn id that could not name a marker could not be evicted by one: no turn a rewind may trust.
      return header.v === 1 && typeof header.turn_id === "string" && markable(header.turn_id) ? header.turn_id : null;
    } finally {
      await handle.close();
    }
  }

  /**
   * Evicts every turn at or before `floor` in `directory` as `listing`
   * found it: the marker first, durable, then each checkpoint it covers and
   * the lower markers. A kill at any point leaves the marker (so nothing
   * left of those turns is trusted) or nothing removed at all.
   */
  async evictThrough(directory: string, listing: Listing, floor: string): Promise<Listing> {
    const fs = this.#runtime.fs;
    if (!markable(floor)) throw new Error("no marker names this turn");
    const effective = listing.floor !== null && listing.floor > floor ? listing.floor : floor;
    if (listing.floor !== effective) {
      await fs.createExclusive(joinPath(directory, `${effective}.evicted`), new Uint8Array(0), 0o600).catch((error: unknown) => {
        if (!isRuntimeError(error, "exists")) throw error;
      });
      await fs.syncDirectory(directory);
    }
    const kept: ListedCheckpoint[] = [];
    for (const checkpoint of listing.checkpoints) {
      if (!evicted(checkpoint.turn, effective)) kept.push(checkpoint);
      else await fs.unlink(joinPath(directory, checkpoint.name)).catch(ignoreMissing);
    }
    for (const marker of listing.markers) if (marker < effective) await fs.unlink(joinPath(directory, `${marker}.evicted`)).catch(ignoreMissing);
    return { ...listing, checkpoints: kept, floor: effective, markers: [effective] };
  }
}

/**
 * The name of a checkpoint taken after `last` (the newest one listed): a
 * UUIDv7 of the wall clock, or of one millisecond past `last`'s time when
 * the clock has not moved past it, so names sort in the order taken even
 * for writes within one millisecond (a UUIDv7's random bits do not).
 */
export function nextName(nowMs: number, randomV4: string, last: string | undefined): string {
  const lastMs = last === undefined ? Number.NaN : parseInt(`${last.slice(0, 8)}${last.slice(9, 13)}`, 16);
  return `${uuid7(Number.isNaN(lastMs) ? nowMs : Math.max(nowMs, lastMs + 1), randomV4)}.checkpoint`;
}

/** Rethrows anything but a file already gone. */
export function ignoreMissing(error: unknown): void {
  if (!isRuntimeError(error, "not_found")) throw error;
}
