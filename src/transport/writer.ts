/**
 * The one ordered, non-blocking writer for protocol bytes. It bounds what may
 * wait (pending frames) and how long (an absolute deadline per frame from
 * enqueue, which partial progress cannot extend); breaking either bound, or a
 * broken pipe, is fatal for the connection and reported once.
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
  /** Frames that may be pending at once, the one being written included. */
  readonly maxPending: number;
  /** Milliseconds from enqueue by which each frame must be fully written. */
  readonly deadlineMs: number;
}

interface Pending {
  readonly bytes: Uint8Array;
  readonly deadline: number;
}

/** Writes enqueued frames in order, one write call at a time. */
export class OrderedWriter {
  readonly #out: ByteWriter;
  readonly #clock: WriterClock;
  readonly #options: WriterOptions;
  readonly #onFailure: (failure: WriterFailure) => void;
  readonly #queue: Pending[] = [];
  #writing = false;
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

  /** Frames enqueued and not yet fully written. */
  get pending(): number {
    return this.#queue.length;
  }

  /** The failure that stopped the writer, or `null`. */
  get failure(): WriterFailure | null {
    return this.#failed;
  }

  /** Enqueues one frame; returns `false` (and fails the writer) on overflow or after failure. */
  enqueue(bytes: Uint8Array): boolean {
    if (this.#failed !== null) return false;
    if (this.pending >= this.#options.maxPending) {
      this.#fail("overflow");
      return false;
    }
    this.#queue.push({ bytes, deadline: this.#clock.monotonicNow() + this.#options.deadlineMs });
    if (!this.#writing && !this.#corked) void this.#pump();
    return true;
  }

  /**
   * Holds back writing (not deadlines) until {@link uncork}, so the frames a
   * caller produces in one synchronous step leave in one write call, as
   * Node's `writable.cork()` does. Deadline timers start with writing, so a
   * caller must uncork before it awaits anything.
   */
  cork(): void {
    this.#corked = true;
  }

  /** Ends {@link cork} and starts writing what was queued meanwhile. */
  uncork(): void {
    this.#corked = false;
    if (!this.#writing && this.#queue.length > 0 && this.#failed === null) void this.#pump();
  }

  /** Resolves once nothing is pending, or the writer has failed. */
  whenIdle(): Promise<void> {
    if (this.pending === 0 || this.#failed !== null) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Resolves once fewer than `count` frames are pending, or the writer has failed. */
  whenPendingBelow(count: number): Promise<void> {
    if (this.pending < count || this.#failed !== null) return Promise.resolve();
    return new Promise((resolve) => this.#progressWaiters.push({ count, resolve }));
  }

  /**
   * Writes everything queued as one batch per write call: fewer system calls,
   * and frames produced while a write is in flight leave together next.
   */
  async #pump(): Promise<void> {
    this.#writing = true;
    while (this.#failed === null && this.#queue.length > 0) {
      const batch = this.#queue.length;
      const bytes = batch === 1 ? this.#queue[0]!.bytes : concatBytes(this.#queue.map((frame) => frame.bytes));
      if (this.#timer === null) this.#armDeadline();
      try {
        await this.#out.write(bytes);
      } catch {
        this.#fail("broken");
        break;
      }
      if (this.#failed !== null) break;
      this.#queue.splice(0, batch);
      this.#releaseProgress();
    }
    this.#writing = false;
    this.#timer?.dispose();
    this.#timer = null;
    if (this.#queue.length === 0 || this.#failed !== null) this.#releaseIdle();
  }

  /**
   * Arms one timer per busy period, for the oldest pending frame's deadline.
   * When it fires and that frame is gone, it re-arms for the new oldest one:
   * deadlines only grow along the queue, so the oldest frame is always the
   * first to expire, and no timer is created per write.
   */
  #armDeadline(): void {
    const head = this.#queue[0];
    if (head === undefined) return;
    const remaining = Math.max(0, head.deadline - this.#clock.monotonicNow());
    this.#timer = this.#clock.setTimer(remaining, () => {
      this.#timer = null;
      const oldest = this.#queue[0];
      if (oldest === undefined || this.#failed !== null) return;
      if (oldest.deadline <= this.#clock.monotonicNow()) this.#fail("deadline");
      else this.#armDeadline();
    });
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
    const ready = this.#progressWaiters.filter((waiter) => failed || this.pending < waiter.count);
    this.#progressWaiters = this.#progressWaiters.filter((waiter) => !ready.includes(waiter));
    for (const waiter of ready) waiter.resolve();
  }
}
