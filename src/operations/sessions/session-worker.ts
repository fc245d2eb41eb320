/**
 * The single session/history worker: at most one `session.*` or
 * `history.page` operation runs at a time, off the protocol loop; an overlap
 * is answered `busy` without cancelling anything, and shutdown, EOF or
 * `operation.cancel` cancels the running one with `operation_cancelled`. A
 * cancelled operation is answered at once but keeps the worker until it has
 * actually stopped, so the next operation never races its cleanup (a
 * cancelled open releasing the lease a new open of the same session holds).
 *
 * @module
 */

import { ErrorCode as Codes } from "../../protocol/errors.ts";
import type { WorkerReplies } from "../../protocol/replies.ts";
import type { MethodParams } from "../../protocol/methods.ts";
import type { SessionDiscovery } from "../../store/discovery/discovery.ts";
import type { SessionListing } from "../../store/discovery/listing.ts";
import type { SessionStore, StoreResult } from "../../store/sessions.ts";

/** The read-only discovery a worker runs: `session.list`'s snapshot and `session.discover`'s pass. */
export interface Discovery {
  readonly listing: SessionListing;
  readonly discovery: SessionDiscovery;
}

/**
 * A session operation: runs against the store, honours the signal, and calls
 * `commit` once it can no longer be cancelled without undoing an effect.
 */
export type SessionTask = (store: SessionStore, signal: AbortSignal, commit: () => void) => Promise<StoreResult>;

/** The running operation: its request, its cancellation, and whether it was answered already. */
interface Running {
  readonly id: string;
  readonly abort: AbortController;
  /**
   * Whether `operation.cancel` may name it: `session.create` never is, and an
   * open stops being so once it replaced the attachment (a cancel must not
   * answer `operation_cancelled` for an attachment that already changed).
   */
  cancellable: boolean;
  /** Set once cancellation answered the request; its outcome is then dropped. */
  answered: boolean;
}

/** Serialises session operations and owns their cancellation. */
export class SessionWorker {
  readonly #store: SessionStore;
  readonly #discovery: Discovery;
  readonly #replies: WorkerReplies;
  #running: Running | null = null;
  readonly #blocked: () => boolean;
  readonly #quiet: () => Promise<void> | null;
  #last: Promise<unknown> = Promise.resolve();

  /**
   * Creates the worker for `store`. While `blocked()` is true (a turn runs
   * or cleans up) every operation is answered `busy`, as the spec's single
   * session-or-turn worker requires. An admitted operation first waits
   * for `quiet()` when it is not null: a session title being appended
   * (never longer than one write) finishes before the operation touches the
   * store.
   */
  constructor(store: SessionStore, discovery: Discovery, replies: WorkerReplies, blocked: () => boolean, quiet: () => Promise<void> | null = () => null) {
    this.#store = store;
    this.#discovery = discovery;
    this.#replies = replies;
    this.#blocked = blocked;
    this.#quiet = quiet;
  }

  /** Whether an operation is running. */
  get busy(): boolean {
    return this.#running !== null;
  }

  /** Resolves once the operation running now (if any) has ended and been answered. */
  async settled(): Promise<void> {
    await this.#last;
  }

  /** `session.create`: attaches a new, not yet durable session. */
  create(id: string): void {
    this.#submit(id, (store) => store.create(), false);
  }

  /** `session.open`: attaches a stored session; the signal lets a close cancel its load. */
  open(id: string, params: MethodParams<"session.open">): void {
    this.#submit(id, (store, signal, commit) => store.open(params.session_id, signal, commit));
  }

  /** `history.page`: one page of the attached session's history at the given revision. */
  page(id: string, params: MethodParams<"history.page">): void {
    this.#submit(id, (store) => store.page(params.session_id, params.revision, params.cursor ?? null));
  }

  /** `session.list`: one page of the child's discovery snapshot, read-only. */
  list(id: string, params: MethodParams<"session.list">): void {
    this.#submit(id, (_, signal) => this.#discovery.listing.list(params, signal));
  }

  /** `session.discover` (negotiated): the next page of the child's discovery pass, read-only. */
  discover(id: string, params: MethodParams<"session.discover">): void {
    this.#submit(id, (_, signal) => this.#discovery.discovery.discover(params, signal));
  }

  /**
   * Runs `task` for request `id` on this worker (catalog and selection
   * operations share it, as the spec serialises them with session work);
   * `cancellable` says whether `operation.cancel` may name it.
   */
  run(id: string, task: SessionTask, cancellable = true): void {
    this.#submit(id, task, cancellable);
  }

  /**
   * Runs `task` for request `id`, or answers `busy`. An unexpected exception
   * (a bug, or a platform failure an adapter did not normalise) is answered
   * `session_invalid`, a code that reveals nothing about it.
   */
  #submit(id: string, task: SessionTask, cancellable = true): void {
    if (this.#running !== null || this.#blocked()) return this.#replies.error(id, Codes.busy);
    const running: Running = { id, abort: new AbortController(), cancellable, answered: false };
    this.#running = running;
    const start = () => task(this.#store, running.abort.signal, () => (running.cancellable = false));
    const appending = this.#quiet();
    this.#last = (appending === null ? start() : appending.then(start))
      .catch((): StoreResult => ({ ok: false, code: Codes.sessionInvalid }))
      .then((outcome) => {
        if (this.#running === running) this.#running = null;
        if (running.answered) return;
        if (outcome.ok) this.#replies.result(id, outcome.result);
        else this.#replies.error(id, outcome.code);
      });
  }

  /** Cancels the running operation, answering it `operation_cancelled` if `answer` is set. */
  cancel(answer: boolean): void {
    const running = this.#running;
    if (running === null || running.answered) return;
    running.answered = true;
    running.abort.abort();
    if (answer) this.#replies.error(running.id, Codes.operationCancelled);
  }

  /**
   * `operation.cancel` of request `id`: when it names the running,
   * cancellable and not yet answered operation, that one is answered
   * `operation_cancelled` now and true is returned; otherwise nothing
   * happens and the answer is false (the caller's `stale_operation`).
   */
  cancelRequest(id: string): boolean {
    const running = this.#running;
    if (running === null || running.id !== id || !running.cancellable || running.answered) return false;
    this.cancel(true);
    return true;
  }

  /** Waits for the last operation (cancelled or not) to settle, then releases the attachment's leases. */
  async close(): Promise<void> {
    await this.#last;
    await this.#store.close();
  }
}
