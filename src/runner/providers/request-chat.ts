/**
 * OpenAI-compatible Chat Completions request builder: the neutral
 * conversation as a streaming `POST /chat/completions` body.
 *
 * This dialect mostly serves local and third-party servers (Ollama, vLLM,
 * OpenRouter), so the body sticks to the widely supported fields: `max_tokens`
 * rather than `max_completion_tokens`, and `reasoning_effort` only with the
 * three values every server that knows it accepts. Chat has no opaque
 * reasoning to replay; raw reasoning is never sent back.
 *
 * @module
 */

import type { Endpoint } from "../../config/providers.ts";
import { baseHeaders, type BuiltRequest, joinUrl, normalizeHistory, type RequestParams } from "./conversation.ts";
import type { Effort } from "../../policy/efforts.ts";

const REASONING_EFFORT: Readonly<Record<Exclude<Effort, "default">, string>> = {
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high",
  max: "high",
};

function toMessages(params: RequestParams): Record<string, unknown>[] {
  const { system, messages } = normalizeHistory(params.messages);
  const out: Record<string, unknown>[] = system === null ? [] : [{ role: "system", content: system }];
  for (const message of messages) {
    if (message.role === "user") {
      out.push({ role: "user", content: message.text });
    } else if (message.role === "tool") {
      out.push({ role: "tool", tool_call_id: message.callId, content: message.output });
    } else if (message.toolCalls.length === 0) {
      out.push({ role: "assistant", content: message.text });
    } else {
      out.push({
        role: "assistant",
        // Some servers reject "" next to tool_calls; null is the documented "no text".
        content: message.text === "" ? null : message.text,
        tool_calls: message.toolCalls.map((call) => ({
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: call.argumentsJson },
        })),
      });
    }
  }
  return out;
}

/** Builds the streaming Chat Completions request, asking for the final usage chunk. */
export function buildChatRequest(endpoint: Endpoint, params: RequestParams): BuiltRequest {
  const headers = baseHeaders();
  if (params.apiKey !== null) headers.authorization = `Bearer ${params.apiKey}`;
  const body: Record<string, unknown> = {
    model: params.model,
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: params.maxOutputTokens,
    messages: toMessages(params),
  };
  if (params.tools.length > 0) {
    body.tools = params.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  if (params.effort !== "default") body.reasoning_effort = REASONING_EFFORT[params.effort];
  return { url: joinUrl(endpoint, "chat/completions"), headers, body: JSON.stringify(body) };
}
