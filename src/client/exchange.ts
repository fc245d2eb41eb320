/**
 * The requests of one connection, from the call to the answer: fresh ids
 * within the child's budget, the outbox's window and lane, the caller's
 * aborts and timeouts (with `operation.cancel` where it applies), the
 * `busy` a cancelled operation's tail causes, and matching each response to
 * its request. The client owns the streams and the runs; this owns nothing
 * but requests.
 *
 * @module
 */

import * as v from "valibot";
import type { ErrorFrame, ResultFrame } from "./frames.ts";
import { ErrorCode } from "../protocol/errors.ts";
import { PROTOCOL, PROTOCOL_VERSION } from "../protocol/identity.ts";
import { SENT_RESULTS, type SentMethod } from "./methods.ts";
import { ProtocolError, RequestAborted, RequestRefused } from "./errors.ts";
import { EXCLUSIVE, Outbox } from "./outbox.ts";
import { arm, CANCELLABLE, MAX_TIMEOUT_MS, type Pending, pending, type RequestOptions, settle } from "./requests.ts";

/** How often, and after how long a first wait (doubling), an exclusive request answered `busy` by a cancelled operation's tail is sent again. */
const BUSY_RETRIES = 10;
const BUSY_RETRY_MS = 5;

const encoder = new TextEncoder();

/** What the exchange asks of its connection. */
export interface ExchangePort {
  /** Writes one request frame (LF included). */
  write(bytes: Uint8Array): void;
  /** The child's published bounds (the protocol's own before `initialize`). */
  limits(): { readonly request_ids: number; readonly input_frame_bytes: number };
  /** Whether a run of this client is active (admitted, `run.finished` not yet read). */
  runActive(): boolean;
  /** Whether `operation.cancel` may be sent (advertised and required in `initialize`). */
  canCancel(): boolean;
}

/** The requests of one connection. */
export class Exchange {
  readonly #port: ExchangePort;
  readonly #outbox: Outbox<Pending>;
  readonly #sent = new Map<string, Pending>();
  /** The timers of requests waiting to be sent again after `busy`. */
  readonly #holds = new Set<ReturnType<typeof setTimeout>>();
  #nextId = 0;
  #shutdownSent = false;

  /** Creates the exchange over `port`. */
  constructor(port: ExchangePort) {
    this.#port = port;
    this.#outbox = new Outbox((entry) => this.#transmit(entry), () => port.runActive());
  }

  /** Whether `shutdown` was sent: the child reads nothing after it. */
  get shutdownSent(): boolean {
    return this.#shutdownSent;
  }

  /** Narrows the window to the child's published output bound. */
  fit(pendingOutputFrames: number): void {
    this.#outbox.fit(pendingOutputFrames);
  }

  /** Sends what the window admits now (a run ended: the full window reopened). */
  pump(): void {
    this.#outbox.pump();
  }

  /** Queues one request; the promise settles once, with the child's answer or why there is none. */
  submit(method: SentMethod, params: unknown, options: RequestOptions, onResult?: (result: never) => void): Promise<unknown> {
    const refuse = (why: string) => Promise.reject(new RequestRefused(method, why));
    if (this.#shutdownSent) return refuse("shutdown was already sent");
    const timeout = options.timeoutMs;
    if (timeout !== undefined && !(timeout >= 0 && timeout <= MAX_TIMEOUT_MS)) return Promise.reject(new RangeError(`timeoutMs must be a number from 0 to ${MAX_TIMEOUT_MS}`));
    const limits = this.#port.limits();
    // An over-long frame would make the child close the connection; refuse it here, measured with the longest id.
    if (frame(`c${limits.request_ids}`, method, params).length - 1 > limits.input_frame_bytes) return refuse("the request is over the frame bound");
    return new Promise((resolve, reject) => {
      const entry = pending(method, params, { resolve, reject }, onResult);
      if (options.signal?.aborted) return settle(entry, { ok: false, error: new RequestAborted(method, "not_sent", false, options.signal.reason) });
      arm(entry, options, (timedOut, cause) => this.#abort(entry, timedOut, cause));
      this.#outbox.enqueue(entry);
    });
  }

  /**
   * Settles the request `frame` answers; returns what was wrong with it
   * (a response to nothing, a malformed result: the connection must fail
   * closed, and that request is still pending so it fails too), or null.
   */
  answer(frame: ResultFrame | (ErrorFrame & { readonly id: string })): string | null {
    const entry = this.#sent.get(frame.id);
    if (entry === undefined) return "a response to no pending request";
    if ("error" in frame) {
      this.#sent.delete(frame.id);
      const code = frame.error.code;
      // A request its caller gave up is never sent again (see refusal()).
      if (code === ErrorCode.busy && entry.cancelled === null && this.#retry(entry)) return null;
      this.#outbox.answered(entry);
      settle(entry, { ok: false, error: refusal(entry, code) });
      return null;
    }
    const result = v.safeParse(SENT_RESULTS[entry.method], frame.result);
    if (!result.success) return `malformed ${entry.method} result`;
    this.#sent.delete(frame.id);
    // A turn.start's run exists before the window is reconsidered, so what is sent next sees it active.
    entry.onResult?.(result.output as never);
    this.#outbox.answered(entry);
    settle(entry, { ok: true, value: result.output });
    return null;
  }

  /** Rejects every request, sent or queued, with `error`: the connection is gone. */
  failAll(error: Error): void {
    for (const entry of this.#outbox.drain()) settle(entry, { ok: false, error });
    this.#sent.clear();
    for (const hold of this.#holds) clearTimeout(hold);
    this.#holds.clear();
  }

  /** Writes `entry` with a fresh id; false (and the caller answered) when no id is left. */
  #transmit(entry: Pending): boolean {
    // One id is kept for shutdown: the child closes on the first id past its lifetime budget.
    const budget = this.#port.limits().request_ids - (entry.method === "shutdown" ? 0 : 1);
    if (this.#nextId >= budget) {
      settle(entry, { ok: false, error: new RequestRefused(entry.method, "the child's request id budget is spent") });
      return false;
    }
    const id = `c${++this.#nextId}`;
    entry.id = id;
    this.#sent.set(id, entry);
    this.#port.write(frame(id, entry.method, entry.params));
    if (entry.method === "shutdown") {
      // The child reads nothing after shutdown: what is still queued would never be answered.
      this.#shutdownSent = true;
      for (const dropped of this.#outbox.dropQueued()) settle(dropped, { ok: false, error: new RequestRefused(dropped.method, "shutdown was sent first") });
    }
    return true;
  }

  /** The caller's signal or timeout fired for `entry`. */
  #abort(entry: Pending, timedOut: boolean, cause: unknown): void {
    if (this.#outbox.withdraw(entry)) return settle(entry, { ok: false, error: new RequestAborted(entry.method, "not_sent", timedOut, cause) });
    const id = entry.id;
    if (id !== null && CANCELLABLE.has(entry.method) && this.#port.canCancel() && !this.#shutdownSent) {
      // The child answers the request exactly once: operation_cancelled, or its result if it completed first.
      entry.cancelled = { timedOut, cause };
      this.#outbox.enqueue(pending("operation.cancel", { id }, null));
      return;
    }
    settle(entry, { ok: false, error: new RequestAborted(entry.method, "discarded", timedOut, cause) });
  }

  /**
   * Sends an exclusive request answered `busy` back to the queue when no run
   * of this client is active: the lane ensures no other session operation
   * of ours runs, so the child's worker is still stopping an operation
   * cancelled by id (answered at once, it stops at its next check). `busy`
   * ran nothing, so sending it again is safe. False when that does not
   * apply: the `busy` is then the caller's answer.
   */
  #retry(entry: Pending): boolean {
    if (!EXCLUSIVE.has(entry.method) || this.#port.runActive() || this.#shutdownSent) return false;
    if (entry.caller === null || entry.busyRetries >= BUSY_RETRIES) return false;
    const delay = BUSY_RETRY_MS * 2 ** entry.busyRetries++;
    this.#outbox.requeue(entry);
    const hold = setTimeout(() => {
      this.#holds.delete(hold);
      this.#outbox.release(entry);
    }, delay);
    this.#holds.add(hold);
    return true;
  }
}

/**
 * The error a request the child refused with `code` settles with. For one
 * the client sent `operation.cancel` for, `operation_cancelled` and `busy`
 * are the caller's own abort: `busy` ran nothing, so nothing was done and
 * the request is over (`not_sent`), even if `busy` came from a cancelled
 * operation's tail that a retry would have waited out.
 */
function refusal(entry: Pending, code: ErrorCode): Error {
  const cancelled = entry.cancelled;
  if (cancelled === null || (code !== ErrorCode.operationCancelled && code !== ErrorCode.busy)) return new ProtocolError(entry.method, code);
  return new RequestAborted(entry.method, code === ErrorCode.busy ? "not_sent" : "cancelled", cancelled.timedOut, cancelled.cause);
}

/** The request frame, LF included. */
function frame(id: string, method: SentMethod, params: unknown): Uint8Array {
  return encoder.encode(`${JSON.stringify({ protocol: PROTOCOL, version: PROTOCOL_VERSION, id, method, params })}\n`);
}
