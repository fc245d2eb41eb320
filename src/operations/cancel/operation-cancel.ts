/**
 * `operation.cancel` (negotiated; `docs/features/local-agent-extensions.md`):
 * stops an in-flight cancellable operation of this child by its request id.
 * The named request is answered `operation_cancelled` first, then the cancel
 * itself `{ "cancellation_requested": true }`, so a client holding the
 * cancel's result already holds the named request's answer. An id that names
 * nothing cancellable in flight (finished, never sent, `initialize`, a turn,
 * `session.create`, this very request) is `stale_operation`. Cancelling rolls
 * nothing back and never changes the attachment.
 *
 * @module
 */

import { ErrorCode as Codes } from "../../protocol/errors.ts";
import type { WorkerReplies } from "../../protocol/replies.ts";
import type { MethodParams } from "../../protocol/methods.ts";
import type { MethodResult } from "../../protocol/results.ts";

/** A worker whose operations `operation.cancel` can name. */
export interface CancellableWorker {
  /** Cancels and answers request `id` if it is this worker's running cancellable operation; whether it was. */
  cancelRequest(id: string): boolean;
}

/** Answers `operation.cancel` over the workers that run cancellable operations. */
export class OperationCanceller {
  readonly #workers: readonly CancellableWorker[];
  readonly #replies: WorkerReplies;

  /** Creates the canceller over `workers`, answering through `replies`. */
  constructor(workers: readonly CancellableWorker[], replies: WorkerReplies) {
    this.#workers = workers;
    this.#replies = replies;
  }

  /** Handles `operation.cancel` request `id`. */
  cancel(id: string, params: MethodParams<"operation.cancel">): void {
    if (!this.#workers.some((worker) => worker.cancelRequest(params.id))) return this.#replies.error(id, Codes.staleOperation);
    this.#replies.result(id, { cancellation_requested: true } satisfies MethodResult<"operation.cancel">);
  }
}
