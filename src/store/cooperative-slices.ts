/**
 * Time-sliced cooperation for the long loops of a session open: reading,
 * parsing and projecting a 64 MiB history takes about a second of CPU, and
 * the protocol loop must keep answering `status` within 50 ms meanwhile.
 * A loop reports its work to a {@link Slicer} and pauses whenever a slice is
 * over: after {@link SLICE_MS} by the caller's clock, or after a fixed amount
 * of work whatever the clock says, so a run without a clock (or with a manual
 * clock that never moves) still yields.
 *
 * @module
 */

/** Milliseconds of work after which a long loop yields: well inside the 50 ms `status` bound, even with a GC pause on top. */
export const SLICE_MS = 8;

/** How a long loop shares the event loop with the protocol. */
export interface Cooperation {
  /** Awaited between slices; it should resolve only after pending I/O had its turn (a timer, not a microtask). */
  readonly yieldEvery?: () => Promise<void>;
  /** Monotonic milliseconds (`Runtime.monotonicNow`) that time the slices; without it only the work bounds end them. */
  readonly now?: () => number;
  /** Checked after every pause: once aborted, the loop stops at its next pause. */
  readonly signal?: AbortSignal;
}

/** The most work a slice may hold whatever the clock says. */
export interface SliceBounds {
  /** Units of work (lines, records), counted by the loop. */
  readonly count: number;
  /** Bytes of work. */
  readonly bytes: number;
}

/** Decides when a long loop pauses, and pauses it. */
export class Slicer {
  readonly #cooperation: Cooperation;
  readonly #bounds: SliceBounds;
  #count = 0;
  #bytes = 0;
  #started: number;

  /** Starts the first slice now. */
  constructor(cooperation: Cooperation, bounds: SliceBounds) {
    this.#cooperation = cooperation;
    this.#bounds = bounds;
    this.#started = cooperation.now?.() ?? 0;
  }

  /** Adds `count` units and `bytes` bytes of work done; true when the slice is over and {@link pause} is due. */
  tick(count: number, bytes = 0): boolean {
    this.#count += count;
    this.#bytes += bytes;
    if (this.#count >= this.#bounds.count || this.#bytes >= this.#bounds.bytes) return true;
    const now = this.#cooperation.now;
    return now !== undefined && now() - this.#started >= SLICE_MS;
  }

  /**
   * The loop has just had a turn by other means (it awaited platform I/O,
   * whose completion the runtime delivers from its event loop, as it does a
   * pause's timer): the slice's clock restarts. The work bounds do not, so a
   * run whose clock never moves still pauses as often.
   */
  turned(): void {
    this.#started = this.#cooperation.now?.() ?? 0;
  }

  /** Yields to the caller's loop and starts the next slice; resolves true when the work was cancelled meanwhile. */
  async pause(): Promise<boolean> {
    await this.#cooperation.yieldEvery?.();
    this.#count = 0;
    this.#bytes = 0;
    this.#started = this.#cooperation.now?.() ?? 0;
    return this.#cooperation.signal?.aborted ?? false;
  }
}
