/**
 * How a connection ends (`docs/protocol.md#closing`): `shutdown`, EOF, a
 * closing protocol error or a transport failure each stop input and cancel
 * admitted work once; then output drains under the closing deadline (skipped
 * after a transport failure, when nothing more can be delivered), then
 * cancelled work gets its own cleanup wait, and the exit code follows: 0 only
 * if everything drained in time.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { LIMITS } from "../protocol/limits.ts";
import type { MethodResult } from "../protocol/results.ts";
import { deferred, settlesWithin } from "../util/async.ts";
import type { ProtocolOutput } from "./output.ts";

/** Why a connection closes; decides draining and the exit code. */
export type CloseReason = "eof" | "shutdown" | "protocol" | "transport";

/**
 * What a closing connection stops. The transport knows no operations, so
 * the layers above implement this port and hand it to the state machine.
 */
export interface ClosingWork {
  /**
   * Cancels everything admitted, answering the cancelled requests when
   * `answer` is set (false after a transport failure, when nothing more can
   * be delivered). Returns the cleanup still to finish, which exit waits for
   * under the cleanup bound.
   */
  cancel(answer: boolean): readonly Promise<unknown>[];
  /** Settles when the work whose last output belongs to the drain (a cancelled run's terminal event) has ended. */
  settled(): Promise<void>;
}

/** The close state machine of one connection: idempotent close, drain, cleanup wait, exit code. */
export class ConnectionClose {
  readonly #runtime: Runtime;
  readonly #output: ProtocolOutput;
  readonly #work: ClosingWork;
  readonly #exit = deferred<number>();
  #closing = false;

  /** Creates the state machine for the connection on `runtime`'s stdin and `output`, closing `work`. */
  constructor(runtime: Runtime, output: ProtocolOutput, work: ClosingWork) {
    this.#runtime = runtime;
    this.#output = output;
    this.#work = work;
  }

  /** Whether the connection is closing: no more input is admitted. */
  get closing(): boolean {
    return this.#closing;
  }

  /** Resolves with the process exit code once the connection has closed and cleanup ended or timed out. */
  get exitCode(): Promise<number> {
    return this.#exit.promise;
  }

  /** `shutdown`: the answer goes out before any cancellation, so it leads what drains. */
  shutdown(id: string): void {
    this.#output.result(id, { state: "stopping" } satisfies MethodResult<"shutdown">);
    this.close("shutdown");
  }

  /** Stops admission, cancels work and answers what it cancelled; idempotent. */
  close(reason: CloseReason): void {
    if (this.#closing) return;
    this.#closing = true;
    this.#runtime.stdin.close();
    const cleanups = this.#work.cancel(reason !== "transport");
    void this.#finish(reason, cleanups);
  }

  /** Drains output under the closing deadline, then waits for cleanup under its own bound. */
  async #finish(reason: CloseReason, cleanups: readonly Promise<unknown>[]): Promise<void> {
    const setTimer = (ms: number, callback: () => void) => this.#runtime.setTimer(ms, callback);
    const writer = this.#output.writer;
    let code = 1;
    if (reason !== "transport") {
      // A cancelled run's terminal event is part of what drains; its cleanup counts against this deadline.
      const drained = await settlesWithin(
        this.#work.settled().then(() => writer.whenIdle()),
        LIMITS.closing_deadline_ms,
        setTimer,
      );
      if (drained && writer.failure === null && writer.pending === 0) code = 0;
    }
    await settlesWithin(Promise.allSettled(cleanups), LIMITS.cleanup_wait_ms, setTimer);
    this.#exit.resolve(code);
  }
}
