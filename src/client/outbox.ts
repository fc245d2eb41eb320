/**
 * The client's flow control: which requests go to the child now and which
 * wait. The spec leaves bounding in-flight requests to the caller, and the
 * child holds at most `pending_output_frames` (32) frames its stdout could
 * not take yet, exiting 1 on the next; run events leave the last 4 of those
 * to responses (docs/protocol.md, "Output"). A caller that reads promptly
 * never comes near that, but an editor's extension host may stop reading
 * for a while, and then the answers it is owed pile up in the child. So:
 *
 * - at most {@link REQUEST_WINDOW} requests are unanswered, half the
 *   published bound;
 * - while a run is active, or a `turn.start` would start one, at most
 *   {@link RUN_REQUEST_WINDOW}, the slots the run's events leave free (or
 *   the narrowed window, if that is smaller);
 * - requests that stop or answer something ({@link URGENT}) skip the queue,
 *   and the last {@link URGENT_SLOTS} of either window are theirs alone, so
 *   a cancel never waits behind what it cancels; `shutdown` is never
 *   queued, not even behind an urgent request the window holds back;
 * - the child runs session, history, catalog and selection operations on
 *   one worker and answers an overlap `busy` (and `turn.start` too while
 *   that worker is occupied), so those ({@link EXCLUSIVE}) go one at a
 *   time: `busy` is then never the client's own doing.
 *
 * Everything else waits in call order; a request waiting for the exclusive
 * lane does not hold back the others behind it.
 *
 * @module
 */

import type { SentMethod } from "./methods.ts";

/** Requests the client keeps unanswered at most: half the published `pending_output_frames` (32). */
export const REQUEST_WINDOW = 16;

/** Requests unanswered at most while a run is active: the 4 output slots its events leave free. */
export const RUN_REQUEST_WINDOW = 4;

/** The last slots of either window, which only {@link URGENT} requests may take. */
export const URGENT_SLOTS = 2;

/** Requests that stop or answer something: they skip the queue. */
export const URGENT: ReadonlySet<SentMethod> = new Set<SentMethod>(["shutdown", "turn.cancel", "operation.cancel", "approval.answer", "client.tool.result"]);

/** Requests the child runs on its one session worker, plus `turn.start`, which that worker's work makes `busy`: one at a time. */
export const EXCLUSIVE: ReadonlySet<SentMethod> = new Set<SentMethod>([
  "session.create",
  "session.open",
  "session.list",
  "session.discover",
  "history.page",
  "model.catalog",
  "model.catalog.status",
  "model.refresh",
  "selection.set",
  "session.rewind.preview",
  "session.rewind",
  "turn.start",
]);

/** What the outbox needs to know of a request. */
export interface Outgoing {
  readonly method: SentMethod;
  /** True while it waits out a delay before it is sent again; it keeps the exclusive lane meanwhile. */
  held: boolean;
}

/** The queue, the window and the exclusive lane of one connection. */
export class Outbox<T extends Outgoing> {
  readonly #urgent: T[] = [];
  readonly #queue: T[] = [];
  readonly #inFlight = new Set<T>();
  #lane: T | null = null;
  #window = REQUEST_WINDOW;
  readonly #transmit: (entry: T) => boolean;
  readonly #runActive: () => boolean;

  /**
   * Creates the outbox. `transmit` writes a request and returns true, or
   * settles it itself and returns false (it could not be sent); `runActive`
   * says whether a run of this connection streams events.
   */
  constructor(transmit: (entry: T) => boolean, runActive: () => boolean) {
    this.#transmit = transmit;
    this.#runActive = runActive;
  }

  /** Narrows the window to a child's published bound (never above {@link REQUEST_WINDOW}; the run's never above this one). */
  fit(pendingOutputFrames: number): void {
    this.#window = Math.max(URGENT_SLOTS + 1, Math.min(REQUEST_WINDOW, Math.floor(pendingOutputFrames / 2)));
  }

  /** Queues a request and sends whatever may go now; `shutdown` goes out at once, whatever the window holds back. */
  enqueue(entry: T): void {
    // The child reads nothing after shutdown, so what still waits could never go first: queueing it would only hold it.
    if (entry.method === "shutdown") return this.#send(entry);
    (URGENT.has(entry.method) ? this.#urgent : this.#queue).push(entry);
    this.pump();
  }

  /** Takes back a request that was not sent (or waits to be sent again); false once it is with the child. */
  withdraw(entry: T): boolean {
    const queue = URGENT.has(entry.method) ? this.#urgent : this.#queue;
    const at = queue.indexOf(entry);
    if (at === -1) return false;
    queue.splice(at, 1);
    if (this.#lane === entry) this.#lane = null;
    this.pump();
    return true;
  }

  /** The child answered `entry`: frees its slot and its lane, and sends what may go now. */
  answered(entry: T): void {
    this.#inFlight.delete(entry);
    if (this.#lane === entry) this.#lane = null;
    this.pump();
  }

  /** The child refused `entry` without running it; it goes back first in line, held, keeping its lane until {@link release}. */
  requeue(entry: T): void {
    this.#inFlight.delete(entry);
    entry.held = true;
    this.#queue.unshift(entry);
    this.pump();
  }

  /** Ends the hold {@link requeue} put on `entry`. */
  release(entry: T): void {
    entry.held = false;
    this.pump();
  }

  /** Empties the queue (not what the child holds): `shutdown` was sent, nothing later will be read. */
  dropQueued(): T[] {
    const dropped = [...this.#urgent.splice(0), ...this.#queue.splice(0)];
    if (this.#lane !== null && !this.#inFlight.has(this.#lane)) this.#lane = null;
    return dropped;
  }

  /** Empties everything, sent or not: the connection is gone. */
  drain(): T[] {
    const all = [...this.#inFlight, ...this.dropQueued()];
    this.#inFlight.clear();
    this.#lane = null;
    return all;
  }

  /** Sends every request the window and the lane admit, in order. */
  pump(): void {
    while (this.#urgent.length > 0) {
      const entry = this.#urgent[0]!;
      if (this.#inFlight.size >= this.#limit(entry)) break;
      this.#urgent.shift();
      this.#send(entry);
    }
    for (let at = 0; at < this.#queue.length;) {
      const entry = this.#queue[at]!;
      const exclusive = EXCLUSIVE.has(entry.method);
      if (entry.held || (exclusive && this.#lane !== null && this.#lane !== entry)) {
        at++;
        continue;
      }
      if (this.#inFlight.size >= this.#limit(entry) - URGENT_SLOTS) break;
      this.#queue.splice(at, 1);
      this.#send(entry);
    }
  }

  /** The window `entry` is sent under (ordinary requests leave its last {@link URGENT_SLOTS} free). */
  #limit(entry: T): number {
    const running = entry.method === "turn.start" || this.#runActive() || [...this.#inFlight].some((sent) => sent.method === "turn.start");
    // A child publishing a smaller output bound narrows the run's window too.
    return running ? Math.min(RUN_REQUEST_WINDOW, this.#window) : this.#window;
  }

  #send(entry: T): void {
    if (EXCLUSIVE.has(entry.method)) this.#lane = entry;
    if (this.#transmit(entry)) this.#inFlight.add(entry);
    else if (this.#lane === entry) this.#lane = null;
  }
}
