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

/** The most bytes of a session id (`SESSION_ID_PATTERN`: 1 to 64 ASCII characters). */
const ID_BYTES = 64;

/** What a walk kept, held by the pass until its pages have examined every id. */
export interface HeldWindow {
  /** How many ids the window holds. */
  readonly count: number;
  /** Whether the walk saw an id greater than every kept one. */
  readonly beyond: boolean;
  /** The ids in the window's range that a lease file names, or null when there were too many lease names to keep. */
  readonly leased: ReadonlySet<string> | null;
  /** The kept id at `index` (below {@link count}), ascending. */
  id(index: number): string;
}

/**
 * The bounded, sorted set of a walk's candidate ids and their lease names.
 *
 * The ids are ASCII bytes in fixed slots of byte arrays allocated once per
 * discovery and reused by every walk, and the order is an array of slot
 * numbers. Ids held as strings across a pass's pages, and kept and evicted
 * while a walk ran, outlived young-generation collections; V8 grows its
 * young generation with the bytes that do, so the child's peak grew with
 * the directory (bench/README.md). Reusing the arrays is sound because a
 * walk starts only when the child's one pass holds no window.
 */
export class CandidateWindow {
  readonly #capacity: number;
  /** Slot `n` holds an id's bytes at `n × ID_BYTES`; its length is `#lengths[n]`. */
  readonly #slots: Uint8Array;
  readonly #lengths: Uint8Array;
  /** Slot numbers in ascending id order; the first `#size` are in use. */
  readonly #order: Uint16Array;
  #after: string | null = null;
  /** Counts restarts, so a window held from before one can tell (see {@link held}). */
  #generation = 0;
  #size = 0;
  #leased: Set<string> | null = new Set();
  #beyond = false;
  #peak = 0;
  #leasePeak = 0;

  /** A window of at most `capacity` ids, from 1 to 65,536 (slot numbers are 16-bit). */
  constructor(capacity: number) {
    this.#capacity = Math.min(65_536, Math.max(1, capacity));
    this.#slots = new Uint8Array(this.#capacity * ID_BYTES);
    this.#lengths = new Uint8Array(this.#capacity);
    this.#order = new Uint16Array(this.#capacity);
  }

  /** Empties the window for a walk that keeps ids greater than `after` (all ids when null); what it held before is gone. */
  restart(after: string | null): void {
    this.#after = after;
    this.#generation++;
    this.#size = 0;
    this.#leased = new Set();
    this.#beyond = false;
    this.#peak = 0;
    this.#leasePeak = 0;
  }

  /**
   * Offers one session id from the iteration: `passed` when it is at or
   * before the position, or beyond a full window (then {@link beyond} is
   * set); `duplicate` when the window holds it already (the directory listed
   * a name twice while it was read); else `kept`, evicting the greatest id
   * of a full window.
   */
  offer(id: string): Offered {
    if (this.#after !== null && id <= this.#after) return "passed";
    const order = this.#order;
    let low = 0;
    let high = this.#size;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#compare(id, order[middle]!) > 0) low = middle + 1;
      else high = middle;
    }
    if (low < this.#size && this.#compare(id, order[low]!) === 0) return "duplicate";
    let slot = this.#size;
    if (this.#size === this.#capacity) {
      this.#beyond = true;
      if (low === this.#size) return "passed";
      slot = order[--this.#size]!; // the greatest id's slot takes the new one
    }
    order.copyWithin(low + 1, low, this.#size);
    order[low] = slot;
    const start = slot * ID_BYTES;
    for (let i = 0; i < id.length; i++) this.#slots[start + i] = id.charCodeAt(i);
    this.#lengths[slot] = id.length;
    this.#size++;
    this.#peak = Math.max(this.#peak, this.#size);
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

  /** What the pass holds once the iteration is over: valid until the next {@link restart}, after which its `id` throws. */
  held(): HeldWindow {
    const leased = this.#leased;
    if (leased !== null) for (const name of leased) if (this.#outside(name)) leased.delete(name);
    const generation = this.#generation;
    const id = (index: number): string => {
      if (generation !== this.#generation) throw new Error("The held window was restarted by a later walk");
      return this.#idAt(index);
    };
    return { count: this.#size, beyond: this.#beyond, leased, id };
  }

  /** The most ids, and lease names, the window held at once in its last walk: the bounds the memory tests check. */
  get peak(): { readonly candidates: number; readonly leases: number } {
    return { candidates: this.#peak, leases: this.#leasePeak };
  }

  #idAt(index: number): string {
    const slot = this.#order[index]!;
    const start = slot * ID_BYTES;
    return String.fromCharCode(...this.#slots.subarray(start, start + this.#lengths[slot]!));
  }

  /** Whether `id` is past a full window, so it can no longer be kept. */
  #outside(id: string): boolean {
    return this.#size === this.#capacity && this.#compare(id, this.#order[this.#size - 1]!) > 0;
  }

  /** `id` against the id in `slot`, in ASCII order (code units and bytes agree on ASCII): negative, 0 or positive. */
  #compare(id: string, slot: number): number {
    const length = this.#lengths[slot]!;
    const start = slot * ID_BYTES;
    const common = Math.min(id.length, length);
    for (let i = 0; i < common; i++) {
      const difference = id.charCodeAt(i) - this.#slots[start + i]!;
      if (difference !== 0) return difference;
    }
    return id.length - length;
  }
}
