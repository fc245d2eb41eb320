/**
 * Tools a client lends the agent (`client.tools`,
 * docs/features/local-agent-client-tools.md), each with the function that
 * runs it: `AgentClient` registers them in `initialize`, routes each
 * `client.tool.call` to its handler with the validated arguments, sends the
 * handler's answer as `client.tool.result`, and aborts the handler's signal
 * on `client.tool.cancel` (its answer is then dropped: the call is over).
 * The registry is checked with the server's own rules before anything is
 * sent, and an answer is cut to fit the result's bounds, so a handler can
 * neither send a refused registry nor a frame the child would refuse.
 *
 * @module
 */

import { type ClientToolSpec, MAX_RESULT_OUTPUT_BYTES, parseClientToolRegistry } from "../protocol/client-tool-registry.ts";
import type { EventData } from "../protocol/events.ts";
import type { JsonObject } from "../protocol/json-value.ts";
import { LIMITS } from "../protocol/limits.ts";
import type { ClientToolResultParams } from "../protocol/schemas.ts";
import { clampUtf8, utf8ByteCount } from "../util/utf8.ts";

/** What a handler gets besides the arguments. */
export interface ClientToolCallContext {
  /** Aborted when the call is cancelled (timeout, turn cancel, shutdown, EOF) or the connection ends. */
  readonly signal: AbortSignal;
  /** The call event's data: its session, run and call ids. */
  readonly call: EventData<"client.tool.call">;
}

/** A handler's answer: text for the model (a success), or an explicit outcome. */
export type ClientToolAnswer = string | { readonly ok: boolean; readonly output: string };

/** Runs one call; a thrown error or rejection is a failed result naming the error's message. */
export type ClientToolHandler = (args: JsonObject, context: ClientToolCallContext) => ClientToolAnswer | Promise<ClientToolAnswer>;

/** A tool to lend: the registry entry the child sees, and its handler. */
export interface ClientToolDefinition extends ClientToolSpec {
  readonly handler: ClientToolHandler;
}

/** Sends one `client.tool.result`; the host ignores how it is answered (a stale call is the run's business). */
export type SendResult = (params: ClientToolResultParams) => Promise<unknown>;

// Room a result frame needs besides its output: the envelope, the method, the field names and three 64-byte ids.
const FRAME_OVERHEAD = 512;

/** `output` cut so that its JSON text and the envelope fit the input frame, and it within the result bound. */
function fitted(output: string): string {
  let cut = clampUtf8(output, MAX_RESULT_OUTPUT_BYTES);
  // JSON escapes can make the text longer than its bytes (a control character takes 6): cut by the excess until it fits.
  for (let excess = utf8ByteCount(JSON.stringify(cut)) + FRAME_OVERHEAD - LIMITS.input_frame_bytes; excess > 0;) {
    cut = clampUtf8(cut, Math.max(0, utf8ByteCount(cut) - excess));
    excess = utf8ByteCount(JSON.stringify(cut)) + FRAME_OVERHEAD - LIMITS.input_frame_bytes;
  }
  return cut;
}

/**
 * The registry `tools` send in `initialize`; throws a `TypeError` naming
 * none of their content when they break one of the server's rules, so a
 * launcher can refuse them before it spawns a child.
 */
export function checkedRegistry(tools: readonly ClientToolDefinition[]): readonly ClientToolSpec[] {
  const registry = parseClientToolRegistry(tools.map(({ handler: _, ...spec }) => spec));
  if (registry === null) throw new TypeError("clientTools break a rule of docs/features/local-agent-client-tools.md (name, description, input_schema, timeout_ms, count or duplicates)");
  return registry;
}

/** The registered tools of one connection and their calls in flight. */
export class ClientToolHost {
  /** The registry `initialize` sends (the definitions without their handlers). */
  readonly registry: readonly ClientToolSpec[];
  readonly #handlers: ReadonlyMap<string, ClientToolHandler>;
  readonly #running = new Map<string, AbortController>();
  #send: SendResult | null = null;

  /** Checks `tools` with the server's rules; throws a `TypeError` naming none of their content when they break one. */
  constructor(tools: readonly ClientToolDefinition[]) {
    this.registry = checkedRegistry(tools);
    this.#handlers = new Map(tools.map((tool) => [tool.name, tool.handler]));
  }

  /** Starts answering calls through `send` (once `initialize` admitted the registry). */
  attach(send: SendResult): void {
    this.#send = send;
  }

  /** Routes `client.tool.call` or `client.tool.cancel`; returns a problem text for a call of an unknown tool, else null. */
  accept(event: { event: "client.tool.call"; data: EventData<"client.tool.call"> } | { event: "client.tool.cancel"; data: EventData<"client.tool.cancel"> }): string | null {
    if (event.event === "client.tool.cancel") {
      this.#running.get(event.data.call_id)?.abort();
      this.#running.delete(event.data.call_id);
      return null;
    }
    const handler = this.#handlers.get(event.data.name);
    if (handler === undefined || this.#send === null) return `client.tool.call of an unregistered tool`;
    void this.#run(handler, event.data, this.#send);
    return null;
  }

  /** Aborts every handler still running: the connection ended. */
  abandon(): void {
    for (const controller of this.#running.values()) controller.abort();
    this.#running.clear();
  }

  async #run(handler: ClientToolHandler, call: EventData<"client.tool.call">, send: SendResult): Promise<void> {
    const controller = new AbortController();
    this.#running.set(call.call_id, controller);
    let answer: { ok: boolean; output: string };
    try {
      const returned = await handler(call.arguments, { signal: controller.signal, call });
      answer = typeof returned === "string" ? { ok: true, output: returned } : { ok: returned.ok === true, output: String(returned.output) };
    } catch (error) {
      answer = { ok: false, output: `The client tool failed: ${error instanceof Error ? error.message : String(error)}` };
    }
    // Cancelled meanwhile: the call is over, and a result now would only be stale.
    if (controller.signal.aborted || this.#running.get(call.call_id) !== controller) return;
    this.#running.delete(call.call_id);
    const { session_id, run_id, call_id } = call;
    await send({ session_id, run_id, call_id, ok: answer.ok, output: fitted(answer.output) }).catch(() => {});
  }
}

/** `initialize`'s params for `capabilities`, with `client.tools` and the registry when `tools` exist. */
export function initializeParams(capabilities: readonly string[], tools: ClientToolHost | null): { required_capabilities: string[]; client_tools?: ClientToolSpec[] } {
  if (tools === null) return { required_capabilities: [...capabilities] };
  const required = capabilities.includes("client.tools") ? [...capabilities] : [...capabilities, "client.tools"];
  return { required_capabilities: required, client_tools: [...tools.registry] };
}
