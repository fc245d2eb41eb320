/**
 * The bounded channel between a turn worker and the protocol writer: the
 * spec's separate 32-event turn channel. Best-effort `message.delta` text may
 * coalesce or drop under pressure; every other event is critical, waits at
 * most 2,000 ms for room and is never dropped; after the terminal event
 * nothing more is accepted.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { LIMITS } from "../protocol/limits.ts";
import type { Disposable } from "../host/runtime.ts";
import type { SetTimer } from "../util/async.ts";
import { splitUtf8 } from "../util/utf8.ts";
import type { CriticalEvent, RunEvent, RunScope, TerminalEvent } from "./run-events.ts";


/** How a critical event fared: accepted in order, undeliverable within the wait bound, or refused after the terminal event. */
export type CriticalResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: typeof ErrorCode.outputUnavailable }
  | { readonly ok: false; readonly code: "closed" };

/**
 * Where accepted events go: in production, the ordered writer (room is its
 * free pending slots). `whenRoom` must resolve only once `room()` is positive,
 * or the channel would wait again at once; an adapter over a failed writer
 * reports room so the channel drains into its refusing `enqueue`.
 */
export interface RunEventSink {
  /** Events `send` may take now without blocking. */
  room(): number;
  /** Resolves once `room()` is positive. */
  whenRoom(): Promise<void>;
  /** Takes one event; only called while `room()` is positive. */
  send(event: RunEvent): void;
}

/** Options of a {@link RunEventChannel}. */
export interface RunEventChannelOptions {
  /** Where events go, in order, as its room allows (see {@link RunEventSink}). */
  readonly sink: RunEventSink;
  /** The runtime's timers, which bound the critical wait. */
  readonly setTimer: SetTimer;
  /** The run the channel's own `message.delta` events are stamped with. */
  readonly scope: RunScope;
  /**
   * After a delta is handed to an idle sink, later text of the stream waits
   * up to this long and leaves as one delta (absent or 0: never held). For a
   * sink whose every write call is costly (`ByteWriter.batchMs`); the first
   * delta after a pause and every critical event still go at once.
   */
  readonly deltaHoldMs?: number;
}


type DeltaData = { session_id: string; run_id: string; message_id: string; part: number; text: string };

type Waiter = { readonly event: RunEvent; readonly timer: Disposable; readonly resolve: (result: CriticalResult) => void };

const OK: CriticalResult = Object.freeze({ ok: true });
const UNAVAILABLE: CriticalResult = Object.freeze({ ok: false, code: ErrorCode.outputUnavailable });
const CLOSED: CriticalResult = Object.freeze({ ok: false, code: "closed" });

/** What a run's steps use of its channel: a subagent's run gets one that keeps its text off the wire (`src/agents/`). */
export type StepChannel = Pick<RunEventChannel, "delta" | "whenDeltaRoom" | "critical">;

/** The bounded, ordered event channel of one run. */
export class RunEventChannel {
  readonly #sink: RunEventSink;
  readonly #setTimer: SetTimer;
  readonly #scope: RunScope;
  readonly #holdMs: number;
  // Open while deltas are held: from a delta's hand-over until `#holdMs` later.
  #hold: Disposable | null = null;
  #idleRoom = 0; // The most room the sink has shown: its room when idle.
  readonly #queue: RunEvent[] = [];
  // Critical events waiting for a slot, oldest first; they are ahead of anything produced later.
  readonly #waiters: Waiter[] = [];
  readonly #nextPart = new Map<string, number>();
  // Callbacks of critical events that want to know when they reach the sink (an approval's expiry starts then).
  readonly #onSent = new Map<RunEvent, () => void>();
  // The queue's tail when it is a delta that later text of its message may still join.
  #open: { data: DeltaData; bytes: number } | null = null;
  #waitingForRoom = false;
  // Producers pausing until a delta would get a slot of its own (see whenDeltaRoom).
  readonly #roomWaiters = new Set<() => void>();
  #closed = false;
  #failed = false;

  /** Creates the channel for one run. */
  constructor(options: RunEventChannelOptions) {
    this.#sink = options.sink;
    this.#setTimer = options.setTimer;
    this.#scope = options.scope;
    this.#holdMs = options.deltaHoldMs ?? 0;
  }

  /** Events accepted and not yet handed to the sink (never more than `LIMITS.worker_events`). */
  get queued(): number {
    return this.#queue.length;
  }

  /** Whether the terminal event was offered, after which nothing more is accepted. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Offers assistant text for `messageId`, best effort: parts of at most
   * `LIMITS.event_chunk_bytes` get per-message part numbers from 0. While
   * the writer is busy a part joins the queued tail delta of the same
   * message (if it fits), else takes a slot, else is dropped; a drop also stops later text joining that tail, so a gap in
   * part numbers is the client's only (and reliable) sign of missing text.
   */
  delta(messageId: string, text: string): void {
    if (this.#closed || this.#failed) return;
    // Room the sink has right now counts, even before its whenRoom continuation has run.
    this.#drain();
    for (const piece of splitUtf8(text, LIMITS.event_chunk_bytes)) {
      const part = this.#nextPart.get(messageId) ?? 0;
      // A queued tail delta is still waiting for the writer, so joining it costs no latency and saves a frame.
      const open = this.#open;
      if (open !== null && open.data.message_id === messageId && this.#waiters.length === 0 && open.bytes + piece.bytes <= LIMITS.event_chunk_bytes) {
        open.data.text += piece.text;
        open.bytes += piece.bytes;
        continue;
      }
      if (this.#hasRoom()) {
        this.#nextPart.set(messageId, part + 1);
        const data: DeltaData = { ...this.#scope, message_id: messageId, part, text: piece.text };
        this.#push({ event: "message.delta", data });
        this.#open = { data, bytes: piece.bytes };
        continue;
      }
      // Dropped for lack of room: its part number stays unused, a visible gap.
      this.#nextPart.set(messageId, part + 1);
      if (open?.data.message_id === messageId) this.#open = null;
    }
    this.#drain();
  }

  /**
   * Lets a producer pause while the queue is full: resolves once a delta
   * would get a slot of its own, or after `ms` (then it coalesces or drops
   * as usual). Returns null when there is room already. Without this a
   * producer that decodes hundreds of provider events per network read
   * would fill the queue before the writer's completions could run.
   */
  whenDeltaRoom(ms: number): Promise<void> | null {
    this.#drain();
    if (this.#closed || this.#failed || this.#hasRoom()) return null;
    return new Promise((resolve) => {
      const done = () => {
        timer.dispose();
        this.#roomWaiters.delete(done);
        resolve();
      };
      const timer = this.#setTimer(ms, done);
      this.#roomWaiters.add(done);
    });
  }

  /**
   * Offers a critical event. Resolves `ok` once it holds its place in order
   * (delivery follows as the sink makes room); `output_unavailable` when no
   * room appeared within `LIMITS.critical_event_wait_ms`, or when an earlier
   * critical event already failed, since the client's view has a hole then;
   * `closed` after the terminal event. `sent` runs when the event is
   * handed to the sink, which may be after the promise resolved; never for
   * an event that is not delivered.
   */
  critical(event: CriticalEvent, sent?: () => void): Promise<CriticalResult> {
    if (this.#closed) return Promise.resolve(CLOSED);
    if (this.#failed) return Promise.resolve(UNAVAILABLE);
    if (sent !== undefined) this.#onSent.set(event, sent);
    return this.#offer(event);
  }

  /**
   * Offers the terminal event, critically, and closes the channel at once so
   * nothing produced meanwhile can follow it. After a failed critical event
   * the terminal is still tried: it is what tells the client the run failed.
   */
  finish(event: TerminalEvent): Promise<CriticalResult> {
    if (this.#closed) return Promise.resolve(CLOSED);
    this.#closed = true;
    return this.#offer(event);
  }

  #hasRoom(): boolean {
    return this.#waiters.length === 0 && this.#queue.length < LIMITS.worker_events;
  }

  #offer(event: RunEvent): Promise<CriticalResult> {
    this.#drain();
    if (this.#hasRoom()) {
      this.#push(event);
      this.#drain();
      return Promise.resolve(OK);
    }
    return new Promise((resolve) => {
      const waiter: Waiter = {
        event,
        resolve,
        timer: this.#setTimer(LIMITS.critical_event_wait_ms, () => this.#expire(waiter)),
      };
      this.#waiters.push(waiter);
    });
  }

  #expire(waiter: Waiter): void {
    const index = this.#waiters.indexOf(waiter);
    if (index < 0) return;
    this.#waiters.splice(index, 1);
    this.#failed = true;
    this.#onSent.delete(waiter.event);
    waiter.resolve(UNAVAILABLE);
    // Later non-terminal events would reach the client past the hole; only the terminal may still go.
    for (const other of this.#waiters.splice(0)) {
      if (other.event.event === "run.finished") this.#waiters.push(other);
      else {
        other.timer.dispose();
        this.#onSent.delete(other.event);
        other.resolve(UNAVAILABLE);
      }
    }
  }

  #push(event: RunEvent): void {
    this.#queue.push(event);
    this.#open = null;
  }

  /** Hands queued events to the sink while it has room, admitting waiters as slots free up. */
  #drain(): void {
    while (this.#queue.length > 0) {
      if (this.#sink.room() <= 0) {
        this.#awaitRoom();
        break;
      }
      // Only the open tail delta is ever held: anything behind it, or a full tail, ends the hold.
      if (this.#hold !== null && this.#queue.length === 1 && this.#open?.data === this.#queue[0]!.data) break;
      const event = this.#queue.shift()!;
      // Once sent the event is the sink's; appending to it then would change a delivered frame.
      if (this.#open !== null && this.#open.data === event.data) this.#open = null;
      // Hold only after a delta that reached an idle sink (all its room free): that one costs a write of its own.
      const idle = this.#sink.room() >= this.#idleRoom;
      this.#idleRoom = Math.max(this.#idleRoom, this.#sink.room());
      this.#sink.send(event);
      const sent = this.#onSent.get(event);
      if (sent !== undefined) {
        this.#onSent.delete(event);
        sent();
      }
      if (idle && event.event === "message.delta" && this.#holdMs > 0 && !this.#closed) this.#startHold();
      this.#admitWaiters();
    }
    if (this.#closed && this.#queue.length === 0) this.#endHold();
    if (this.#roomWaiters.size > 0 && this.#hasRoom()) for (const done of [...this.#roomWaiters]) done();
  }

  #startHold(): void {
    if (this.#hold !== null) return;
    this.#hold = this.#setTimer(this.#holdMs, () => {
      this.#hold = null;
      this.#drain();
    });
  }

  #endHold(): void {
    this.#hold?.dispose();
    this.#hold = null;
  }

  #admitWaiters(): void {
    while (this.#waiters.length > 0 && this.#queue.length < LIMITS.worker_events) {
      const waiter = this.#waiters.shift()!;
      waiter.timer.dispose();
      this.#push(waiter.event);
      waiter.resolve(OK);
    }
  }

  #awaitRoom(): void {
    if (this.#waitingForRoom) return;
    this.#waitingForRoom = true;
    // A sink that rejects is broken: stop here, and waiting critical events run out their bound.
    this.#sink.whenRoom().then(() => {
      this.#waitingForRoom = false;
      this.#drain();
    }, () => undefined);
  }
}
