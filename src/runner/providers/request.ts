/**
 * The turn loop's two conversions between the neutral conversation and a
 * provider: building the next streaming request for the endpoint's dialect,
 * and folding a streamed reply back into an assistant message, opaque
 * reasoning included, so the next request can replay it.
 *
 * @module
 */

import type { Endpoint } from "../../config/providers.ts";
import { accumulate } from "./accumulate.ts";
import type { AssistantMessage, BuiltRequest, ModelToolCall, ReplayItem, RequestParams } from "./conversation.ts";
import type { ProviderEvent } from "./events.ts";
import { buildAnthropicRequest } from "./request-anthropic.ts";
import { buildChatRequest } from "./request-chat.ts";
import { buildResponsesRequest } from "./request-responses.ts";

/**
 * Builds the streaming request for `endpoint.api`. Pure: no I/O, no
 * environment; the key comes in `params.apiKey` and leaves only as a header.
 */
export function buildRequest(endpoint: Endpoint, params: RequestParams): BuiltRequest {
  switch (endpoint.api) {
    case "anthropic-messages":
      return buildAnthropicRequest(endpoint, params);
    case "openai-responses":
      return buildResponsesRequest(endpoint, params);
    case "openai-chat":
      return buildChatRequest(endpoint, params);
  }
}

/**
 * The replay items of one streamed assistant turn, in order. Anthropic's
 * thinking text (summary or, for claude-3-7, raw) is buffered until the
 * block's signature arrives, because the signature is only valid with the
 * exact text it signed.
 */
export function replayFromEvents(events: Iterable<ProviderEvent>): ReplayItem[] {
  const out: ReplayItem[] = [];
  let thinking = "";
  for (const event of events) {
    if (event.type === "reasoning_summary" && event.provenance === "anthropic.thinking") thinking += event.delta;
    if (event.type === "reasoning_raw" && event.source === "anthropic.thinking") thinking += event.delta;
    if (event.type !== "reasoning_opaque") continue;
    if (event.source === "anthropic.signature") {
      out.push({ kind: "anthropic.thinking", thinking, signature: event.data });
      thinking = "";
    } else if (event.source === "anthropic.redacted_thinking") {
      out.push({ kind: "anthropic.redacted_thinking", data: event.data });
    } else {
      out.push({ kind: "openai.reasoning", id: event.itemId, encryptedContent: event.data });
    }
  }
  return out;
}

/**
 * The assistant message for history from one turn's events. A call that
 * never got an id or a name cannot be answered or replayed, so it is left
 * out here rather than breaking every later request.
 */
export function assistantFromEvents(events: readonly ProviderEvent[]): AssistantMessage {
  const folded = accumulate(events);
  const toolCalls: ModelToolCall[] = [];
  for (const call of folded.toolCalls) {
    if (call.id !== null && call.name !== null) toolCalls.push({ id: call.id, name: call.name, argumentsJson: call.argumentsJson });
  }
  return { role: "assistant", text: folded.text, toolCalls, replay: replayFromEvents(events) };
}
