/**
 * One request as the client tracks it from the call to the child's answer
 * (who waits for it, its id once sent, how often `busy` sent it back), and
 * the caller's `signal` and `timeoutMs` on it.
 *
 * @module
 */

import type { SentMethod } from "./methods.ts";
import type { Outgoing } from "./outbox.ts";

/** The operations `operation.cancel` stops by request id (docs/features/local-agent-extensions.md). */
export const CANCELLABLE: ReadonlySet<SentMethod> = new Set<SentMethod>([
  "session.list",
  "session.discover",
  "session.open",
  "history.page",
  "model.catalog",
  "model.catalog.status",
  "model.refresh",
  "session.rewind.preview",
  "session.rewind",
]);

/** The longest `timeoutMs`, about 24.8 days: a timer's delay is a signed 32-bit count, and a longer one would fire at once. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Per-request options of `AgentClient.request`, `initialize` and `startTurn`. */
export interface RequestOptions {
  /**
   * Gives the request up when aborted: a request still queued is never
   * sent; a sent one is cancelled with `operation.cancel` when it is
   * cancellable and `operation.cancel` was required in `initialize` (the
   * promise then settles with the child's answer: `RequestAborted` after
   * `operation_cancelled`, or after `busy`, with `outcome: "not_sent"` and
   * never sent again; or the result when the operation completed first);
   * any other sent request rejects at once with `RequestAborted`
   * (`outcome: "discarded"`) and its response is dropped.
   */
  readonly signal?: AbortSignal;
  /**
   * Milliseconds from the call (queueing included) after which the request
   * is given up as an abort would; 0 to {@link MAX_TIMEOUT_MS}, else the
   * call rejects with a `RangeError`.
   */
  readonly timeoutMs?: number;
}

/** Who waits for a request's answer. */
export interface Caller {
  resolve(result: unknown): void;
  reject(reason: unknown): void;
}

/** A request from the call until the child answered it. */
export interface Pending extends Outgoing {
  readonly params: unknown;
  /** Its id once sent (a fresh one each time `busy` sends it back). */
  id: string | null;
  /** Null once the caller was answered otherwise (aborted, discarded): the child's response is then read and dropped. */
  caller: Caller | null;
  /** For `turn.start`: builds the run when the response is read, before any of its events. */
  readonly onResult?: ((result: never) => void) | undefined;
  /** How many times a `busy` answer sent it back to the queue. */
  busyRetries: number;
  /** Set once the client sent `operation.cancel` for it: its `operation_cancelled` is then the caller's abort. */
  cancelled: { readonly timedOut: boolean; readonly cause: unknown } | null;
  /** Detaches the signal and the timer; idempotent. */
  dispose(): void;
}

/** A request not yet sent; `caller` null for one the client sends on its own behalf. */
export function pending(method: SentMethod, params: unknown, caller: Caller | null, onResult?: (result: never) => void): Pending {
  return { method, params, held: false, id: null, caller, onResult, busyRetries: 0, cancelled: null, dispose: () => {} };
}

/** Attaches `options` to `entry`: `onAbort` runs at most once, and never after `entry.dispose()`. */
export function arm(entry: Pending, options: RequestOptions, onAbort: (timedOut: boolean, cause: unknown) => void): void {
  const { signal, timeoutMs } = options;
  if (signal === undefined && timeoutMs === undefined) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const fire = (timedOut: boolean, cause: unknown) => {
    entry.dispose();
    onAbort(timedOut, cause);
  };
  const aborted = () => fire(false, signal!.reason);
  signal?.addEventListener("abort", aborted, { once: true });
  if (timeoutMs !== undefined) timer = setTimeout(() => fire(true, undefined), timeoutMs);
  entry.dispose = () => {
    signal?.removeEventListener("abort", aborted);
    clearTimeout(timer);
    entry.dispose = () => {};
  };
}

/** Answers the caller once: later answers (the child's response to a discarded request) go nowhere. */
export function settle(entry: Pending, outcome: { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown }): void {
  entry.dispose();
  const caller = entry.caller;
  entry.caller = null;
  if (caller === null) return;
  if (outcome.ok) caller.resolve(outcome.value);
  else caller.reject(outcome.error);
}
