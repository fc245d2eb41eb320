/**
 * The one ordered, non-blocking writer for protocol bytes. It bounds what may
 * wait (pending frames: what the child holds because the OS has not taken
 * it) and how long (an absolute deadline per frame from enqueue, which
 * partial progress cannot extend); breaking either bound, or a broken pipe,
 * is fatal for the connection and reported once.
 *
 * @module
 */

import type { ByteWriter, Disposable } from "../host/runtime.ts";
import { concatBytes } from "../util/bytes.ts";

/** Why the writer gave up. */
export type WriterFailure = "overflow" | "deadline" | "broken";

/** The clock the writer needs. */
export interface WriterClock {
  /** Runs `callback` after `ms` unless disposed. */
  setTimer(ms: number, callback: () => void): Disposable;
  /** Monotonic milliseconds. */
  monotonicNow(): number;
}

/** Bounds of an {@link OrderedWriter}. */
export interface WriterOptions {
  /**
   * Slots pending output may fill: pending frames (enqueued, and not yet
   * accepted by the OS) are packed in enqueue order into slots of at most
   * `slotBytes`, a frame never split, and the frame that would need one
   * slot more is an overflow.
   */
  readonly maxPending: number;
  /** The slot size: the output frame bound in production; 1 gives every frame a slot of its own. */
  readonly slotBytes: number;
  /**
   * Most bytes one write call carries (at least one frame, never split). A
   * sink reporting {@link ByteWriter.heldBytes} may count a write it could
   * not finish as held whole (Node's `writableLength` does); one that cannot
   * tell counts every unsettled write whole (Deno's blocking write settles
   * only once the pipe took all of it). Either way what the pipe took is
   * overstated by less than one such write, never by all that was queued.
   */
  readonly writeBytes: number;
  /** Milliseconds from enqueue by which the OS must have accepted each frame whole. */
  readonly deadlineMs: number;
}

interface Pending {
  readonly bytes: Uint8Array;
  readonly deadline: number;
  readonly slot: number;
}

/** One write call whose promise has not settled yet: how many frames it carries. */
interface Write {
  readonly frames: number;
  done: boolean;
}

/**
 * Writes enqueued frames in order, in as few write calls as the bound allows.
 * A frame is pending (counts against the bound and its deadline) from
 * enqueue until the OS has accepted its bytes, not until the write's promise
 * settles: a sink reporting {@link ByteWriter.heldBytes} tells, right after
 * a write call, whether the pipe took everything (its callback comes a tick
 * later). Without that report every unsettled write counts whole.
 */
export class OrderedWriter {
  readonly #out: ByteWriter;
  readonly #clock: WriterClock;
  readonly #options: WriterOptions;
  readonly #onFailure: (failure: WriterFailure) => void;
  /** Frames not yet handed to a write call. */
  readonly #queue: Pending[] = [];
  /** Frames handed to write calls that have not settled, oldest first. */
  readonly #handed: Pending[] = [];
  readonly #writes: Write[] = [];
  /** The slot the newest frame went into, and the bytes packed into it. */
  #slot = 0;
  #slotFill = 0;
  #corked = false;
  #failed: WriterFailure | null = null;
  #timer: Disposable | null = null;
  #idleWaiters: (() => void)[] = [];
  #progressWaiters: { count: number; resolve(): void }[] = [];

  /** Creates a writer over `out`; `onFailure` runs at most once. */
  constructor(
    out: ByteWriter,
    clock: WriterClock,
    options: WriterOptions,
    onFailure: (failure: WriterFailure) => void,
  ) {
    this.#out = out;
    this.#clock = clock;
    this.#options = options;
    this.#onFailure = onFailure;
  }

  /** Frames enqueued whose bytes the OS has not accepted yet. */
  get pending(): number {
    return this.#queue.length + this.#held();
  }

  /** The failure that stopped the writer, or `null`. */
  get failure(): WriterFailure | null {
    return this.#failed;
  }

  /**
   * Enqueues one frame; returns `false` (and fails the writer) on overflow or
   * after failure. At the bound, what is only coalescing here is first
   * offered to the OS: a frame the pipe accepts is not buffered by us.
   */
  enqueue(bytes: Uint8Array): boolean {
    if (this.#failed !== null) return false;
    const fits = this.#slotFill + bytes.length <= this.#options.slotBytes;
    const slot = fits ? this.#slot : this.#slot + 1;
    if (this.#slotsUpTo(slot) > this.#options.maxPending) {
      this.#flush();
      if (this.#failed !== null || this.#slotsUpTo(slot) > this.#options.maxPending) {
        this.#fail("overflow");
        return false;
      }
    }
    this.#slotFill = fits ? this.#slotFill + bytes.length : bytes.length;
    this.#slot = slot;
    this.#queue.push({ bytes, deadline: this.#clock.monotonicNow() + this.#options.deadlineMs, slot });
    if (!this.#corked) this.#pump();
    return true;
  }

  /**
   * Holds back writing until {@link uncork}, so the frames a caller produces
   * in one synchronous step leave in few write calls, as Node's
   * `writable.cork()` does; at the bound they leave anyway (see
   * {@link enqueue}). Deadlines still run from enqueue, but their timer
   * waits for uncork, so a caller must uncork before it awaits anything.
   */
  cork(): void {
    this.#corked = true;
  }

  /** Ends {@link cork} and starts writing what was queued meanwhile. */
  uncork(): void {
    this.#corked = false;
    this.#pump();
  }

  /** Resolves once every frame is written and its write has settled, or the writer has failed. */
  whenIdle(): Promise<void> {
    if (this.#idle() || this.#failed !== null) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Resolves once fewer than `count` frames are pending, or the writer has failed. */
  whenPendingBelow(count: number): Promise<void> {
    if (this.pending < count || this.#failed !== null) return Promise.resolve();
    return new Promise((resolve) => this.#progressWaiters.push({ count, resolve }));
  }

  /**
   * Handed frames the sink still holds: the newest ones covering its held
   * bytes (a sink holds a suffix of what it was handed), or all of them
   * when it cannot tell.
   */
  #held(): number {
    if (this.#handed.length === 0) return 0;
    const heldBytes = this.#out.heldBytes?.() ?? Infinity;
    let frames = 0;
    for (let bytes = 0; bytes < heldBytes && frames < this.#handed.length; frames++) {
      bytes += this.#handed[this.#handed.length - 1 - frames]!.bytes.length;
    }
    return frames;
  }

  /** Slots pending once a frame in `slot` joins: from the oldest pending frame's slot to that one. */
  #slotsUpTo(slot: number): number {
    const oldest = this.#oldestPending();
    return oldest === undefined ? 1 : slot - oldest.slot + 1;
  }

  /** Whether a write call now would go straight to the OS rather than behind bytes the sink still holds. */
  #sinkHoldsNothing(): boolean {
    return this.#writes.length === 0 || this.#out.heldBytes?.() === 0;
  }

  #idle(): boolean {
    return this.#queue.length === 0 && this.#writes.length === 0;
  }

  /**
   * Writes what is queued unless corked or a write is unsettled: frames
   * produced meanwhile leave together when it settles (fewer system calls).
   */
  #pump(): void {
    if (this.#failed !== null || this.#corked) return;
    if (this.#writes.length === 0) this.#flush();
    this.#watch();
  }

  /** Hands queued frames to the sink for as long as it passes them straight to the OS. */
  #flush(): void {
    while (this.#queue.length > 0 && this.#failed === null && this.#sinkHoldsNothing()) this.#write();
  }

  /** Hands the oldest queued frames, up to `writeBytes`, to the sink in one write call. */
  #write(): void {
    let count = 1;
    let size = this.#queue[0]!.bytes.length;
    for (; count < this.#queue.length && size + this.#queue[count]!.bytes.length <= this.#options.writeBytes; count++) {
      size += this.#queue[count]!.bytes.length;
    }
    const frames = this.#queue.splice(0, count);
    const bytes = frames.length === 1 ? frames[0]!.bytes : concatBytes(frames.map((frame) => frame.bytes));
    for (const frame of frames) this.#handed.push(frame);
    const write: Write = { frames: frames.length, done: false };
    this.#writes.push(write);
    let written: Promise<void>;
    try {
      written = this.#out.write(bytes);
    } catch {
      this.#fail("broken");
      return;
    }
    written.then(() => this.#settled(write), () => this.#fail("broken"));
    this.#releaseProgress();
  }

  #settled(write: Write): void {
    write.done = true;
    // Sinks settle in call order; a prefix of settled writes is what leaves the books.
    while (this.#writes[0]?.done === true) this.#handed.splice(0, this.#writes.shift()!.frames);
    if (this.#failed !== null) return;
    this.#pump();
    this.#releaseProgress();
    if (this.#idle()) this.#releaseIdle();
  }

  /**
   * Keeps one deadline timer armed while anything is pending, for the oldest
   * pending frame. When it fires and that frame is no longer pending, it
   * re-arms for the new oldest one: deadlines only grow along the frames, and
   * what is pending only ever loses its oldest ones, so the oldest pending
   * frame is always the first to expire, and no timer is made per write.
   */
  #watch(): void {
    if (this.#failed !== null || this.#corked) return;
    const oldest = this.#oldestPending();
    if (oldest === undefined) {
      this.#timer?.dispose();
      this.#timer = null;
    } else if (this.#timer === null) {
      this.#arm(oldest.deadline);
    }
  }

  #arm(deadline: number): void {
    const remaining = Math.max(0, deadline - this.#clock.monotonicNow());
    this.#timer = this.#clock.setTimer(remaining, () => {
      this.#timer = null;
      const oldest = this.#oldestPending();
      if (oldest === undefined || this.#failed !== null) return;
      if (oldest.deadline <= this.#clock.monotonicNow()) this.#fail("deadline");
      else this.#arm(oldest.deadline);
    });
  }

  #oldestPending(): Pending | undefined {
    const held = this.#held();
    return held > 0 ? this.#handed[this.#handed.length - held] : this.#queue[0];
  }

  #fail(failure: WriterFailure): void {
    if (this.#failed !== null) return;
    this.#failed = failure;
    this.#timer?.dispose();
    this.#timer = null;
    this.#releaseIdle();
    this.#onFailure(failure);
  }

  #releaseIdle(): void {
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
    this.#releaseProgress();
  }

  #releaseProgress(): void {
    if (this.#progressWaiters.length === 0) return;
    const failed = this.#failed !== null;
    const pending = this.pending;
    const ready = this.#progressWaiters.filter((waiter) => failed || pending < waiter.count);
    this.#progressWaiters = this.#progressWaiters.filter((waiter) => !ready.includes(waiter));
    for (const waiter of ready) waiter.resolve();
  }
}
