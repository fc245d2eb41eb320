/**
 * Scripted provider replies in each API's real SSE wire format, for turn
 * tests: a text answer (optionally in many deltas, with a reasoning summary
 * or a max-tokens stop) and tool calls (parallel ones too). Built from the
 * same event shapes the recorded fixtures carry.
 *
 * @module
 */

import type { ProviderApi } from "../../src/config/settings.ts";
import type { Gate, Script } from "./fake-provider.ts";
import { frameEvent } from "./provider-fixtures.ts";

/** One tool call to script. */
export interface ScriptedCall {
  readonly id: string;
  readonly name: string;
  readonly args: unknown;
}

/** What one reply holds. */
export interface ReplyOptions {
  /** Text deltas, in order. */
  readonly text?: readonly string[];
  /** Tool calls after the text. */
  readonly calls?: readonly ScriptedCall[];
  /** A provider reasoning summary before the text. */
  readonly summary?: string;
  /** Stop for the output token limit instead of normally. */
  readonly maxTokens?: boolean;
  /** Gates to insert after the delta with that index. */
  readonly gates?: ReadonlyMap<number, Gate>;
  /** Leave out the terminal event (a stream that just ends). */
  readonly truncate?: boolean;
  /** A refusal instead of text (Chat Completions and Responses stream refusals as their own deltas). */
  readonly refusal?: string;
  /** The input tokens the reply reports (default 11), when `usage` does not say. */
  readonly inputTokens?: number;
  /** The usage to report (default: `inputTokens` prompt tokens, none cached, 7 output tokens), each API in its own fields. */
  readonly usage?: ScriptedUsage;
}

/**
 * Token counts of one scripted reply, API-neutral: `prompt` counts every
 * prompt token, `cached` of them too. The OpenAI APIs report `prompt`
 * whole with `cached` inside it; Anthropic reports `prompt - cached` as
 * `input_tokens` and `cached` apart, as `cache_read_input_tokens`.
 * `reasoning` is reported by the OpenAI APIs only.
 */
export interface ScriptedUsage {
  readonly prompt: number;
  readonly cached: number;
  readonly output: number;
  readonly reasoning?: number;
}

/** The usage `options` asks for. */
function usageOf(options: ReplyOptions): ScriptedUsage {
  return options.usage ?? { prompt: options.inputTokens ?? 11, cached: 0, output: 7 };
}

/** `usage` with what the OpenAI APIs report in their `*_details` objects, under the given names. */
function openAiUsage(usage: ScriptedUsage, names: { prompt: string; output: string }): Record<string, unknown> {
  return {
    [`${names.prompt}_tokens`]: usage.prompt,
    [`${names.output}_tokens`]: usage.output,
    ...(usage.cached === 0 ? {} : { [`${names.prompt}_tokens_details`]: { cached_tokens: usage.cached } }),
    ...(usage.reasoning === undefined ? {} : { [`${names.output}_tokens_details`]: { reasoning_tokens: usage.reasoning } }),
  };
}

/** A scripted streaming reply for `api`. */
export function reply(api: ProviderApi, options: ReplyOptions): Script {
  const events = api === "openai-chat" ? chat(options) : api === "anthropic-messages" ? anthropic(options) : responses(options);
  const chunks: (string | Gate)[] = [];
  events.forEach((event, index) => {
    if (event === "[DONE]") chunks.push("data: [DONE]\n\n");
    else chunks.push(frameEvent(api, event));
    const gate = options.gates?.get(index);
    if (gate !== undefined) chunks.push(gate);
  });
  return { chunks };
}

type Event = Record<string, unknown> | "[DONE]";

function chat(options: ReplyOptions): Event[] {
  const out: Event[] = [];
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  for (const text of options.text ?? []) out.push(chunk({ content: text }));
  if (options.refusal !== undefined) out.push(chunk({ refusal: options.refusal }));
  (options.calls ?? []).forEach((call, index) =>
    out.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.args) } }] }))
  );
  if (options.truncate) return out;
  const finish = options.maxTokens ? "length" : (options.calls ?? []).length > 0 ? "tool_calls" : "stop";
  out.push(chunk({}, finish));
  out.push({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [], usage: openAiUsage(usageOf(options), { prompt: "prompt", output: "completion" }) });
  out.push("[DONE]");
  return out;
}

function anthropic(options: ReplyOptions): Event[] {
  const usage = usageOf(options);
  const cache = usage.cached === 0 ? {} : { cache_read_input_tokens: usage.cached, cache_creation_input_tokens: 0 };
  const out: Event[] = [{
    type: "message_start",
    message: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], usage: { input_tokens: usage.prompt - usage.cached, ...cache, output_tokens: 1 } },
  }];
  let index = 0;
  if (options.summary !== undefined) {
    out.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
    out.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: options.summary } });
    out.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: "c2lnbmF0dXJl" } });
    out.push({ type: "content_block_stop", index });
    index++;
  }
  if ((options.text ?? []).length > 0) {
    out.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
    for (const text of options.text ?? []) out.push({ type: "content_block_delta", index, delta: { type: "text_delta", text } });
    out.push({ type: "content_block_stop", index });
    index++;
  }
  for (const call of options.calls ?? []) {
    out.push({ type: "content_block_start", index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } });
    out.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(call.args) } });
    out.push({ type: "content_block_stop", index });
    index++;
  }
  if (options.truncate) return out;
  const stop = options.maxTokens ? "max_tokens" : (options.calls ?? []).length > 0 ? "tool_use" : "end_turn";
  out.push({ type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output } });
  out.push({ type: "message_stop" });
  return out;
}

function responses(options: ReplyOptions): Event[] {
  const out: Event[] = [{ type: "response.created", response: { id: "resp_1", status: "in_progress", output: [] } }];
  let outputIndex = 0;
  if (options.summary !== undefined) {
    const item = { id: "rs_1", type: "reasoning", summary: [] };
    out.push({ type: "response.output_item.added", output_index: outputIndex, item });
    out.push({ type: "response.reasoning_summary_text.delta", item_id: "rs_1", output_index: outputIndex, summary_index: 0, delta: options.summary });
    out.push({ type: "response.reasoning_summary_text.done", item_id: "rs_1", output_index: outputIndex, summary_index: 0, text: options.summary });
    out.push({ type: "response.output_item.done", output_index: outputIndex, item: { ...item, encrypted_content: "ZW5j" } });
    outputIndex++;
  }
  if ((options.text ?? []).length > 0) {
    const item = { id: "msg_1", type: "message", role: "assistant", status: "in_progress", content: [] };
    out.push({ type: "response.output_item.added", output_index: outputIndex, item });
    for (const text of options.text ?? []) {
      out.push({ type: "response.output_text.delta", item_id: "msg_1", output_index: outputIndex, content_index: 0, delta: text });
    }
    out.push({ type: "response.output_item.done", output_index: outputIndex, item: { ...item, status: "completed" } });
    outputIndex++;
  }
  if (options.refusal !== undefined) {
    const item = { id: "msg_r", type: "message", role: "assistant", status: "in_progress", content: [] };
    out.push({ type: "response.output_item.added", output_index: outputIndex, item });
    out.push({ type: "response.refusal.delta", item_id: "msg_r", output_index: outputIndex, content_index: 0, delta: options.refusal });
    out.push({ type: "response.output_item.done", output_index: outputIndex, item: { ...item, status: "completed" } });
    outputIndex++;
  }
  for (const call of options.calls ?? []) {
    const item = { id: `fc_${call.id}`, type: "function_call", call_id: call.id, name: call.name, arguments: "" };
    out.push({ type: "response.output_item.added", output_index: outputIndex, item });
    out.push({ type: "response.function_call_arguments.delta", item_id: item.id, output_index: outputIndex, delta: JSON.stringify(call.args) });
    out.push({ type: "response.output_item.done", output_index: outputIndex, item: { ...item, arguments: JSON.stringify(call.args), status: "completed" } });
    outputIndex++;
  }
  if (options.truncate) return out;
  const usage = openAiUsage(usageOf(options), { prompt: "input", output: "output" });
  out.push(
    options.maxTokens
      ? { type: "response.incomplete", response: { id: "resp_1", status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, usage } }
      : { type: "response.completed", response: { id: "resp_1", status: "completed", usage } },
  );
  return out;
}
