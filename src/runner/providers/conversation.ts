/**
 * The provider-neutral conversation the turn loop keeps, and the shared
 * plumbing of the per-API request builders (`request-*.ts`).
 *
 * History is kept once, in this shape, and converted per request, so a
 * session can switch provider between turns. Opaque reasoning is tagged with
 * the API it came from and only replayed to that API; everything else is
 * silently dropped by the other builders.
 *
 * @module
 */

import type { Endpoint } from "../../config/providers.ts";
import type { Effort } from "../../policy/efforts.ts";

/** A tool as the model sees it. */
export interface ToolSpec {
  /** Tool name, as the model must call it. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** JSON Schema of the arguments object. */
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** One tool call the model made. `argumentsJson` is unparsed, as streamed. */
export interface ModelToolCall {
  /** Provider call id; pairs the call with its result. */
  readonly id: string;
  readonly name: string;
  /** The arguments exactly as the model streamed them. */
  readonly argumentsJson: string;
}

/**
 * Opaque reasoning to send back to the API that produced it. Anthropic checks
 * the signature against the thinking text, so both are kept per block.
 */
export type ReplayItem =
  | { readonly kind: "anthropic.thinking"; readonly thinking: string; readonly signature: string }
  | { readonly kind: "anthropic.redacted_thinking"; readonly data: string }
  | { readonly kind: "openai.reasoning"; readonly id: string | null; readonly encryptedContent: string };

/** One message of the neutral conversation. */
export type ModelMessage =
  | { readonly role: "system"; readonly text: string }
  | { readonly role: "user"; readonly text: string }
  | {
    readonly role: "assistant";
    readonly text: string;
    readonly toolCalls: readonly ModelToolCall[];
    readonly replay: readonly ReplayItem[];
  }
  | { readonly role: "tool"; readonly callId: string; readonly name: string; readonly output: string; readonly isError: boolean };

/** The assistant variant. */
export type AssistantMessage = Extract<ModelMessage, { role: "assistant" }>;
/** The tool result variant. */
export type ToolResultMessage = Extract<ModelMessage, { role: "tool" }>;

/** What every request builder takes besides the endpoint. */
export interface RequestParams {
  readonly model: string;
  /** Requested effort; `default` sends no reasoning settings. */
  readonly effort: Effort;
  /** The conversation so far, oldest first. */
  readonly messages: readonly ModelMessage[];
  /** Tools offered to the model. */
  readonly tools: readonly ToolSpec[];
  /** The key value, or `null` for keyless endpoints (no auth header at all). */
  readonly apiKey: string | null;
  /** Room for the visible answer, in tokens. */
  readonly maxOutputTokens: number;
}

/** A ready-to-send streaming POST. The key appears only in `headers`. */
export interface BuiltRequest {
  /** Absolute URL. */
  readonly url: string;
  /** Header names in lower case. */
  readonly headers: Record<string, string>;
  /** JSON text. */
  readonly body: string;
}

/**
 * Joins the endpoint's base URL and an API path. Path prefixes such as `/v1`
 * are part of the configured base, so they are kept, never guessed.
 */
export function joinUrl(endpoint: Endpoint, path: string): string {
  return `${endpoint.baseUrl.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

/** The headers every streaming JSON request carries. */
export function baseHeaders(): Record<string, string> {
  return { "content-type": "application/json", accept: "text/event-stream" };
}

/** History after {@link normalizeHistory}: system text apart, results next to their calls. */
export interface NormalizedHistory {
  /** System messages joined by a blank line, or `null` when there are none. */
  readonly system: string | null;
  /** Users, assistants and tool results, with every result directly after its call's assistant. */
  readonly messages: readonly Exclude<ModelMessage, { role: "system" }>[];
}

/**
 * Pairs every tool call with its result. Every API rejects a call without a
 * result (and a result without a call), and a cancelled turn can leave either
 * behind, so unpaired ones are dropped rather than failing the session
 * forever. A result pairs when it comes after its call and before the next
 * assistant message; results are moved to directly follow that assistant, in
 * call order, because chat and Anthropic require that adjacency. A call id
 * seen earlier in the history is a corrupt duplicate and is dropped too.
 */
export function normalizeHistory(messages: readonly ModelMessage[]): NormalizedHistory {
  const system: string[] = [];
  const rest: Exclude<ModelMessage, { role: "system" }>[] = [];
  for (const message of messages) {
    if (message.role === "system") system.push(message.text);
    else rest.push(message);
  }
  const out: Exclude<ModelMessage, { role: "system" }>[] = [];
  // Call ids must be unique across the whole request, not just within one turn.
  const used = new Set<string>();
  rest.forEach((message, index) => {
    if (message.role === "user") out.push(message);
    if (message.role !== "assistant") return;
    const results = new Map<string, ToolResultMessage>();
    for (let j = index + 1; j < rest.length; j++) {
      const next = rest[j]!;
      if (next.role === "assistant") break;
      if (next.role === "tool" && !results.has(next.callId)) results.set(next.callId, next);
    }
    const calls = message.toolCalls.filter((call) => results.has(call.id) && !used.has(call.id) && used.add(call.id));
    // An assistant turn with nothing to say and no call is rejected by Anthropic and useless elsewhere.
    if (message.text === "" && calls.length === 0) return;
    out.push({ ...message, toolCalls: calls });
    for (const call of calls) out.push(results.get(call.id)!);
  });
  return { system: system.length === 0 ? null : system.join("\n\n"), messages: out };
}
