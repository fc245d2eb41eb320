/**
 * OpenAI Responses request builder: the neutral conversation as a streaming
 * `POST /responses` body.
 *
 * Stateless by design: `store: false` keeps nothing on the provider, so the
 * whole history is sent each turn, and `include: ["reasoning.encrypted_content"]`
 * returns reasoning as an encrypted blob we replay as a `reasoning` item ahead
 * of the calls it led to. Tool calls and results are `function_call` and
 * `function_call_output` items joined by `call_id`.
 *
 * @module
 */

import type { Endpoint } from "../../config/providers.ts";
import { baseHeaders, type BuiltRequest, joinUrl, normalizeHistory, type RequestParams } from "./conversation.ts";
import type { Effort } from "../../policy/efforts.ts";

// Responses has no `max`; `xhigh` is its strongest setting.
const EFFORT: Readonly<Record<Exclude<Effort, "default">, string>> = {
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "xhigh",
  max: "xhigh",
};

function toInput(params: RequestParams): { instructions: string | null; input: Record<string, unknown>[] } {
  const { system, messages } = normalizeHistory(params.messages);
  const input: Record<string, unknown>[] = [];
  for (const message of messages) {
    if (message.role === "user") {
      input.push({ role: "user", content: [{ type: "input_text", text: message.text }] });
    } else if (message.role === "tool") {
      input.push({ type: "function_call_output", call_id: message.callId, output: message.output });
    } else {
      for (const item of message.replay) {
        if (item.kind !== "openai.reasoning") continue;
        input.push({ type: "reasoning", ...(item.id === null ? {} : { id: item.id }), summary: [], encrypted_content: item.encryptedContent });
      }
      if (message.text !== "") input.push({ role: "assistant", content: [{ type: "output_text", text: message.text }] });
      for (const call of message.toolCalls) {
        input.push({ type: "function_call", call_id: call.id, name: call.name, arguments: call.argumentsJson });
      }
    }
  }
  return { instructions: system, input };
}

/** Builds the streaming Responses request; `default` effort sends no `reasoning` block. */
export function buildResponsesRequest(endpoint: Endpoint, params: RequestParams): BuiltRequest {
  const headers = baseHeaders();
  if (params.apiKey !== null) headers.authorization = `Bearer ${params.apiKey}`;
  const { instructions, input } = toInput(params);
  const body: Record<string, unknown> = {
    model: params.model,
    stream: true,
    store: false,
    include: ["reasoning.encrypted_content"],
    max_output_tokens: params.maxOutputTokens,
  };
  if (instructions !== null) body.instructions = instructions;
  body.input = input;
  if (params.tools.length > 0) {
    body.tools = params.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      // Strict mode rewrites what the schema allows (every property required); ours are not written for it.
      strict: false,
    }));
  }
  if (params.effort !== "default") body.reasoning = { effort: EFFORT[params.effort], summary: "auto" };
  return { url: joinUrl(endpoint, "responses"), headers, body: JSON.stringify(body) };
}
