/**
 * The single session/history worker: at most one `session.*` or
 * `history.page` operation runs at a time, off the protocol loop; an overlap
 * is answered `busy` without cancelling anything, and shutdown or EOF cancels
 * the running one with `operation_cancelled`.
 *
 * @module
 */

import { ErrorCode as Codes } from "../../protocol/errors.ts";
import type { WorkerReplies } from "../../protocol/replies.ts";
import type { MethodParams } from "../../protocol/methods.ts";
import type { SessionStore, StoreResult } from "../../store/sessions.ts";

/** A session operation: runs against the store, honours the signal. */
export type SessionTask = (store: SessionStore, signal: AbortSignal) => Promise<StoreResult>;

/** Serialises session operations and owns their cancellation. */
export class SessionWorker {
  readonly #store: SessionStore;
  readonly #replies: WorkerReplies;
  #running: { readonly id: string; readonly abort: AbortController } | null = null;
  readonly #blocked: () => boolean;
  #last: Promise<unknown> = Promise.resolve();

  /**
   * Creates the worker for `store`. While `blocked()` is true (a turn runs
   * or cleans up) every operation is answered `busy`, as the spec's single
   * session-or-turn worker requires.
   */
  constructor(store: SessionStore, replies: WorkerReplies, blocked: () => boolean) {
    this.#store = store;
    this.#replies = replies;
    this.#blocked = blocked;
  }

  /** The attached session id, as `status` reports it. */
  get sessionId(): string | null {
    return this.#store.sessionId;
  }

  /** Whether an operation is running. */
  get busy(): boolean {
    return this.#running !== null;
  }

  /** `session.create`: attaches a new, not yet durable session. */
  create(id: string): void {
    this.#submit(id, (store) => store.create());
  }

  /** `session.open`: attaches a stored session; the signal lets a close cancel its load. */
  open(id: string, params: MethodParams<"session.open">): void {
    this.#submit(id, (store, signal) => store.open(params.session_id, signal));
  }

  /** `history.page`: one page of the attached session's history at the given revision. */
  page(id: string, params: MethodParams<"history.page">): void {
    this.#submit(id, (store) => store.page(params.session_id, params.revision, params.cursor ?? null));
  }

  /**
   * Runs `task` for request `id` on this worker (catalog and selection
   * operations share it, as the spec serialises them with session work).
   */
  run(id: string, task: SessionTask): void {
    this.#submit(id, task);
  }

  /**
   * Runs `task` for request `id`, or answers `busy`. An unexpected exception
   * (a bug, or a platform failure an adapter did not normalise) is answered
   * `session_invalid`, a code that reveals nothing about it.
   */
  #submit(id: string, task: SessionTask): void {
    if (this.#running !== null || this.#blocked()) return this.#replies.error(id, Codes.busy);
    const abort = new AbortController();
    const done = task(this.#store, abort.signal)
      .catch((): StoreResult => ({ ok: false, code: Codes.sessionInvalid }))
      .then((outcome) => {
        if (this.#running?.id !== id) return;
        this.#running = null;
        if (outcome.ok) this.#replies.result(id, outcome.result);
        else this.#replies.error(id, outcome.code);
      });
    this.#running = { id, abort };
    this.#last = done;
  }

  /** Cancels the running operation, answering it `operation_cancelled` if `answer` is set. */
  cancel(answer: boolean): void {
    const running = this.#running;
    if (running === null) return;
    this.#running = null;
    running.abort.abort();
    if (answer) this.#replies.error(running.id, Codes.operationCancelled);
  }

  /** Waits for the last operation (cancelled or not) to settle, then releases the attachment's leases. */
  async close(): Promise<void> {
    await this.#last;
    await this.#store.close();
  }
}
