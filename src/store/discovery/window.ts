/**
 * The candidates one `session.discover` walk keeps for the pages after it:
 * the `capacity` smallest session ids after the pass's position, ascending
 * ASCII order, whatever order the directory yields them in, and which of
 * them a lease file names. It never holds more than `capacity` ids and
 * {@link LEASE_FACTOR} × `capacity` lease names, so the pass's memory is
 * bounded by constants, not by the directory; it remembers only whether an
 * id beyond the kept ones was seen (the phase is not over after them).
 *
 * @module
 */

/** What {@link CandidateWindow.offer} did with an id. */
export type Offered = "kept" | "passed" | "duplicate";

/** Lease names kept per candidate id at most (a session has up to three lease kinds); past that, lease presence is looked up per candidate. */
export const LEASE_FACTOR = 3;

/**
 * What a walk kept, held by the pass until its pages have examined every
 * id. The ids are packed into one string, each followed by a line feed
 * (never part of a session id): held for many pages, thousands of
 * separate ids, each a slice keeping its directory entry's whole name,
 * outlived young-generation collections at twice the size.
 */
export interface HeldWindow {
  /** The kept ids, ascending, each followed by `\n`. */
  readonly ids: string;
  /** How many ids `ids` holds. */
  readonly count: number;
  /** Whether the walk saw an id greater than every kept one. */
  readonly beyond: boolean;
  /** The ids in the window's range that a lease file names, or null when there were too many lease names to keep. */
  readonly leased: ReadonlySet<string> | null;
}

/** The bounded, sorted set of a walk's candidate ids and their lease names. */
export class CandidateWindow {
  readonly #after: string | null;
  readonly #capacity: number;
  readonly #ids: string[] = [];
  #leased: Set<string> | null = new Set();
  #beyond = false;
  #peak = 0;
  #leasePeak = 0;

  /** Keeps at most `capacity` (at least 1) ids greater than `after` (all ids when null). */
  constructor(after: string | null, capacity: number) {
    this.#after = after;
    this.#capacity = Math.max(1, capacity);
  }

  /**
   * Offers one id from the iteration: `passed` when it is at or before the
   * position, or beyond a full window (then {@link beyond} is set);
   * `duplicate` when the window holds it already (the directory listed a
   * name twice while it was read); else `kept`, evicting the greatest id of
   * a full window.
   */
  offer(id: string): Offered {
    if (this.#after !== null && id <= this.#after) return "passed";
    const ids = this.#ids;
    let low = 0;
    let high = ids.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (ids[middle]! < id) low = middle + 1;
      else high = middle;
    }
    if (ids[low] === id) return "duplicate";
    if (ids.length === this.#capacity) {
      this.#beyond = true;
      if (low === ids.length) return "passed";
      ids.pop();
    }
    ids.splice(low, 0, id);
    this.#peak = Math.max(this.#peak, ids.length);
    return "kept";
  }

  /**
   * Notes that a lease file names `id`, when `id` may still be kept. Lease
   * names of ids past a full window are dropped as the window narrows; when
   * more than {@link LEASE_FACTOR} × `capacity` remain even so (lease files
   * without a history), the window stops keeping them and {@link held}
   * reports lease presence as unknown.
   */
  offerLease(id: string): void {
    const leased = this.#leased;
    if (leased === null || (this.#after !== null && id <= this.#after) || this.#outside(id)) return;
    leased.add(id);
    if (leased.size <= LEASE_FACTOR * this.#capacity) {
      this.#leasePeak = Math.max(this.#leasePeak, leased.size);
      return;
    }
    for (const name of leased) if (this.#outside(name)) leased.delete(name);
    if (leased.size > LEASE_FACTOR * this.#capacity) this.#leased = null;
  }

  /** What the pass holds once the iteration is over. */
  held(): HeldWindow {
    const leased = this.#leased;
    if (leased !== null) for (const name of leased) if (this.#outside(name)) leased.delete(name);
    const ids = this.#ids;
    return { ids: ids.length === 0 ? "" : [...ids, ""].join("\n"), count: ids.length, beyond: this.#beyond, leased };
  }

  /** The most ids, and lease names, the window held at once: the bounds the memory tests check. */
  get peak(): { readonly candidates: number; readonly leases: number } {
    return { candidates: this.#peak, leases: this.#leasePeak };
  }

  /** Whether `id` is past a full window, so it can no longer be kept. */
  #outside(id: string): boolean {
    return this.#ids.length === this.#capacity && id > this.#ids[this.#ids.length - 1]!;
  }
}

/** The id of `held` that starts at offset `at` (below `held.ids.length`), and the offset of the next one. */
export function idAt(held: HeldWindow, at: number): { readonly id: string; readonly next: number } {
  const end = held.ids.indexOf("\n", at);
  return { id: held.ids.slice(at, end), next: end + 1 };
}
