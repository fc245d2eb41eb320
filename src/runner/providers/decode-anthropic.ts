/**
 * Anthropic Messages streaming → normalized {@link ProviderEvent}s.
 *
 * Classification: `thinking_delta` is a provider summary (Claude 4+ return
 * summarized thinking; the full thinking is never sent), except for
 * `claude-3-7-sonnet*`, which returns its full thinking and so counts as raw.
 * `signature_delta` and `redacted_thinking` are opaque replay data.
 * The terminal event is `message_stop`; without it the stream is `truncated`.
 *
 * @module
 */

import {
  type FinishReason,
  heldBytes,
  type ProviderEvent,
  safeProviderCode,
  type StreamDecoder,
  StreamErrorCode,
  streamError,
  type Usage,
} from "./events.ts";
import { count, type JsonObject, nonEmpty, parseObject, record, text } from "./json-fields.ts";

const FINISH: Readonly<Record<string, FinishReason>> = {
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "refusal",
  pause_turn: "other",
};

/** True for models whose `thinking` blocks are raw chain of thought rather than a summary. */
export function anthropicThinkingIsRaw(model: string | null): boolean {
  return model !== null && model.startsWith("claude-3-7-sonnet");
}

type MutableUsage = { -readonly [K in keyof Usage]: Usage[K] };

/**
 * Decodes one Anthropic Messages stream; `model` is the requested model id,
 * if known. Only open `tool_use` blocks are kept, until their stop: no later
 * event refers back to any other block (`server_tool_use` and its input
 * included), so those are forgotten once decoded.
 */
export class AnthropicDecoder implements StreamDecoder {
  /** Open `tool_use` blocks by index: exactly the strings of their `tool_start`. */
  readonly #tools = new Map<number, { readonly id: string | null; readonly name: string | null }>();
  readonly #usage: MutableUsage = { input: null, output: null, cacheRead: null, cacheWrite: null, reasoning: null };
  #rawThinking: boolean;
  #stopReason: string | null = null;
  #done = false;

  /** `model` picks the thinking classification; `message_start`'s model can only make it raw. */
  constructor(model: string | null = null) {
    this.#rawThinking = anthropicThinkingIsRaw(model);
  }

  /** Decodes one SSE event. */
  onEvent(sse: { readonly data: string }): ProviderEvent[] {
    const event = parseObject(sse.data);
    if (event === null) return [streamError(StreamErrorCode.malformed)];
    const index = count(event.index) ?? -1;
    switch (event.type) {
      case "message_start": {
        const message = record(event.message);
        if (anthropicThinkingIsRaw(text(message?.model))) this.#rawThinking = true;
        this.#readUsage(record(message?.usage));
        return [];
      }
      case "content_block_start":
        return this.#blockStart(index, record(event.content_block) ?? {});
      case "content_block_delta":
        return this.#delta(index, record(event.delta) ?? {});
      case "content_block_stop": {
        const tool = this.#tools.get(index);
        if (tool === undefined) return [];
        this.#tools.delete(index);
        return [{ type: "tool_end", key: String(index), id: tool.id, name: tool.name }];
      }
      case "message_delta":
        this.#stopReason = text(record(event.delta)?.stop_reason) ?? this.#stopReason;
        this.#readUsage(record(event.usage));
        return [];
      case "message_stop":
        this.#done = true;
        return [
          { type: "usage", usage: { ...this.#usage } },
          { type: "finish", reason: FINISH[this.#stopReason ?? ""] ?? "other", raw: safeProviderCode(this.#stopReason) },
        ];
      case "error": {
        this.#done = true;
        return [streamError(StreamErrorCode.providerError, safeProviderCode(record(event.error)?.type))];
      }
      default: // ping and event types added after this was written
        return [];
    }
  }

  /** Reports truncation when `message_stop` (or an error) never came. */
  end(): ProviderEvent[] {
    return this.#done ? [] : [streamError(StreamErrorCode.truncated)];
  }

  /** The ids and names of the open `tool_use` blocks (their keys are indices, not kept strings). */
  held(): number {
    return heldBytes(this.#tools.values());
  }

  #blockStart(index: number, block: JsonObject): ProviderEvent[] {
    const type = text(block.type);
    // A block started at an index replaces whatever was open there.
    this.#tools.delete(index);
    if (type === "tool_use") {
      const tool = { id: text(block.id), name: text(block.name) };
      this.#tools.set(index, tool);
      return [{ type: "tool_start", key: String(index), ...tool }];
    }
    if (type === "redacted_thinking") {
      return [{ type: "reasoning_opaque", source: "anthropic.redacted_thinking", itemId: null, data: text(block.data) ?? "" }];
    }
    // Blocks normally start empty and fill by deltas; a non-empty start is kept, not dropped.
    if (type === "text") return nonEmpty(text(block.text), (delta) => ({ type: "text", delta }));
    if (type === "thinking") return nonEmpty(text(block.thinking), (delta) => this.#thinking(delta));
    return [];
  }

  #delta(index: number, delta: JsonObject): ProviderEvent[] {
    switch (delta.type) {
      case "text_delta":
        return nonEmpty(text(delta.text), (chunk) => ({ type: "text", delta: chunk }));
      case "input_json_delta":
        // Input of a block that is no open tool_use (a server tool's) is no call's arguments: not kept.
        if (!this.#tools.has(index)) return [];
        return nonEmpty(text(delta.partial_json), (chunk) => ({ type: "tool_delta", key: String(index), delta: chunk }));
      case "thinking_delta":
        return nonEmpty(text(delta.thinking), (chunk) => this.#thinking(chunk));
      case "signature_delta":
        return [{ type: "reasoning_opaque", source: "anthropic.signature", itemId: null, data: text(delta.signature) ?? "" }];
      default:
        return [];
    }
  }

  #thinking(delta: string): ProviderEvent {
    return this.#rawThinking
      ? { type: "reasoning_raw", delta, source: "anthropic.thinking" }
      : { type: "reasoning_summary", delta, provenance: "anthropic.thinking" };
  }

  #readUsage(usage: JsonObject | null): void {
    if (usage === null) return;
    const u = this.#usage;
    u.input = count(usage.input_tokens) ?? u.input;
    u.output = count(usage.output_tokens) ?? u.output;
    u.cacheRead = count(usage.cache_read_input_tokens) ?? u.cacheRead;
    u.cacheWrite = count(usage.cache_creation_input_tokens) ?? u.cacheWrite;
    u.reasoning = count(record(usage.output_tokens_details)?.thinking_tokens) ?? u.reasoning;
  }
}
