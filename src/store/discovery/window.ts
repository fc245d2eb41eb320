/**
 * The candidates one `session.discover` page keeps from its directory
 * iteration: the `capacity` smallest session ids after the pass's position,
 * ascending ASCII order, whatever order the directory yields them in. It
 * never holds more than `capacity` ids, so a page's memory is bounded by
 * its limit, not by the directory; it remembers only whether an id beyond
 * the kept ones was seen (the walk is not over yet).
 *
 * @module
 */

/** What {@link CandidateWindow.offer} did with an id. */
export type Offered = "kept" | "passed" | "duplicate";

/** The bounded, sorted set of a page's candidate ids. */
export class CandidateWindow {
  readonly #after: string | null;
  readonly #capacity: number;
  readonly #ids: string[] = [];
  #beyond = false;
  #peak = 0;

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

  /** The kept ids, ascending. */
  get ids(): readonly string[] {
    return this.#ids;
  }

  /** Whether an id greater than every kept one was seen (and not kept). */
  get beyond(): boolean {
    return this.#beyond;
  }

  /** The most ids the window held at once: the bound the memory tests check. */
  get peak(): number {
    return this.#peak;
  }
}
