/**
 * The client tool calls of one child in flight: each call is sent as the
 * critical event `client.tool.call` and waits for the first matching
 * `client.tool.result`, its tool's timeout, or the run's cancellation
 * (turn cancel, shutdown, EOF). A call that ends without a result after the
 * client heard of it is followed by `client.tool.cancel`, emitted before the
 * call returns to the run, so it precedes the run's `run.finished`. A result
 * that matches no pending call (never issued, already ended, another
 * session or run) is `stale_tool_call` and changes nothing
 * (docs/features/local-agent-client-tools.md).
 *
 * @module
 */

import type { Disposable, Runtime } from "../host/runtime.ts";
import { ErrorCode } from "../protocol/errors.ts";
import type { JsonObject } from "../protocol/json-value.ts";
import type { WorkerReplies } from "../protocol/replies.ts";
import type { ClientToolResultParams } from "../protocol/schemas.ts";
import type { RunScope } from "../runner/run-events.ts";
import type { RunEvents } from "../runner/tools/tool.ts";

/** How one call ended. */
export type CallEnding =
  | { readonly kind: "result"; readonly ok: boolean; readonly output: string }
  | { readonly kind: "timeout" | "cancelled" | "undelivered" };

/** One call to make: the registered tool, its validated arguments and its timeout. */
export interface CallRequest {
  readonly name: string;
  readonly arguments: JsonObject;
  readonly timeoutMs: number;
}

interface Pending {
  readonly scope: RunScope;
  end(ending: CallEnding): void;
}

/** The pending client tool calls of one child, and the answers to `client.tool.result`. */
export class ClientToolCalls {
  readonly #runtime: Pick<Runtime, "setTimer">;
  readonly #replies: WorkerReplies;
  readonly #pending = new Map<string, Pending>();
  // Call ids are never reused for the child's lifetime, so a late result can never match a later call.
  #issued = 0;

  /** Creates the calls of one child, timed by `runtime`'s timers and answering results through `replies`. */
  constructor(runtime: Pick<Runtime, "setTimer">, replies: WorkerReplies) {
    this.#runtime = runtime;
    this.#replies = replies;
  }

  /** How many calls wait for their result now. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Sends `request` to the client in `events`' run and waits until it ends; never throws. */
  async call(request: CallRequest, events: RunEvents, signal: AbortSignal): Promise<CallEnding> {
    if (signal.aborted) return { kind: "cancelled" };
    const callId = `ct${(++this.#issued).toString(36)}`;
    let settle!: (ending: CallEnding) => void;
    const ended = new Promise<CallEnding>((resolve) => (settle = resolve));
    const end = (ending: CallEnding) => {
      if (this.#pending.delete(callId)) settle(ending);
    };
    this.#pending.set(callId, { scope: events.scope, end });
    const cancelled = () => end({ kind: "cancelled" });
    signal.addEventListener("abort", cancelled, { once: true });
    let timer: Disposable | null = null;
    try {
      const data = { ...events.scope, call_id: callId };
      const delivered = await events.emit({ event: "client.tool.call", data: { ...data, name: request.name, arguments: request.arguments } });
      if (!delivered) end({ kind: "undelivered" });
      // Counted from the hand-over to the writer: the client cannot answer a call it has not been sent.
      else timer = this.#runtime.setTimer(request.timeoutMs, () => end({ kind: "timeout" }));
      const ending = await ended;
      // The client heard of the call, so it hears that the call ended without its result.
      if (delivered && ending.kind !== "result") await events.emit({ event: "client.tool.cancel", data });
      return ending;
    } finally {
      timer?.dispose();
      signal.removeEventListener("abort", cancelled);
      this.#pending.delete(callId);
    }
  }

  /** Answers `client.tool.result` request `id`: the pending call it names takes it, else `stale_tool_call`. */
  result(id: string, params: ClientToolResultParams): void {
    const pending = this.#pending.get(params.call_id);
    if (pending === undefined || pending.scope.session_id !== params.session_id || pending.scope.run_id !== params.run_id) {
      return this.#replies.error(id, ErrorCode.staleToolCall);
    }
    // Answered before the run goes on with the result, so the answer precedes every event that follows from it.
    this.#replies.result(id, { accepted: true });
    pending.end({ kind: "result", ok: params.ok, output: params.output });
  }
}
