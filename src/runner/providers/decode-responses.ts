/**
 * OpenAI Responses API streaming → normalized {@link ProviderEvent}s.
 *
 * Classification: `response.reasoning_summary_text.delta` is a provider
 * summary (parts concatenated with no separator); `response.reasoning_text.delta`
 * (gpt-oss behind vLLM/Ollama) is raw and stays internal; a reasoning item's
 * `encrypted_content` is opaque replay data. The terminal events are
 * `response.completed`, `response.incomplete` and `response.failed`; without
 * one the stream is `truncated`.
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
} from "./events.ts";
import { count, type JsonObject, nonEmpty, parseObject, record, text } from "./json-fields.ts";

/** A function call the decoder started: exactly the strings of its `tool_start`. */
interface Call {
  readonly key: string;
  readonly callId: string | null;
  readonly name: string | null;
}

/**
 * Decodes one Responses API stream. Only function calls are kept, by item
 * id and output index, because only their argument deltas and `done` refer
 * back; any other item (message, reasoning, web search) is forgotten once
 * its event is decoded.
 */
export class ResponsesDecoder implements StreamDecoder {
  readonly #byId = new Map<string, Call>();
  readonly #byIndex = new Map<number, Call>();
  #sawFunctionCall = false;
  #done = false;

  /** Decodes one SSE event. */
  onEvent(sse: { readonly data: string }): ProviderEvent[] {
    const event = parseObject(sse.data);
    if (event === null) return [streamError(StreamErrorCode.malformed)];
    switch (event.type) {
      case "response.output_item.added":
        return this.#itemAdded(event, record(event.item) ?? {});
      case "response.output_item.done":
        return this.#itemDone(event, record(event.item) ?? {});
      case "response.function_call_arguments.delta": {
        // A delta of a call never started could be folded into nothing: it is not kept.
        const call = this.#call(event, text(event.item_id));
        return call === undefined ? [] : nonEmpty(text(event.delta), (delta) => ({ type: "tool_delta", key: call.key, delta }));
      }
      case "response.output_text.delta":
        return nonEmpty(text(event.delta), (delta) => ({ type: "text", delta }));
      case "response.refusal.delta":
        return nonEmpty(text(event.delta), (delta) => ({ type: "refusal", delta }));
      case "response.reasoning_summary_text.delta":
        return nonEmpty(text(event.delta), (delta) => ({ type: "reasoning_summary", delta, provenance: "openai.reasoning_summary" }));
      case "response.reasoning_text.delta":
        return nonEmpty(text(event.delta), (delta) => ({ type: "reasoning_raw", delta, source: "openai.reasoning_text" }));
      case "response.completed":
      case "response.incomplete":
      case "response.failed":
        return this.#terminal(event.type, record(event.response) ?? {});
      case "error":
        this.#done = true;
        return [streamError(StreamErrorCode.providerError, safeProviderCode(event.code ?? record(event.error)?.code))];
      default:
        return [];
    }
  }

  /** Reports truncation when no terminal event (or error) came. */
  end(): ProviderEvent[] {
    return this.#done ? [] : [streamError(StreamErrorCode.truncated)];
  }

  /** The strings of the calls either map still refers to, each call once. */
  held(): number {
    return heldBytes(new Set([...this.#byId.values(), ...this.#byIndex.values()]));
  }

  #itemAdded(event: JsonObject, item: JsonObject): ProviderEvent[] {
    if (text(item.type) !== "function_call") return [];
    const outputIndex = count(event.output_index) ?? -1;
    const call: Call = { key: text(item.id) ?? `#${outputIndex}`, callId: text(item.call_id), name: text(item.name) };
    this.#byId.set(call.key, call);
    this.#byIndex.set(outputIndex, call);
    this.#sawFunctionCall = true;
    return [{ type: "tool_start", key: call.key, id: call.callId, name: call.name }];
  }

  #itemDone(event: JsonObject, item: JsonObject): ProviderEvent[] {
    const type = text(item.type);
    if (type === "function_call") {
      const call = this.#call(event, text(item.id));
      if (call === undefined) return [];
      return [{ type: "tool_end", key: call.key, id: call.callId ?? text(item.call_id), name: call.name ?? text(item.name) }];
    }
    const blob = text(item.encrypted_content);
    if (type === "reasoning" && blob !== null) {
      return [{ type: "reasoning_opaque", source: "openai.encrypted_content", itemId: text(item.id), data: blob }];
    }
    return [];
  }

  #terminal(kind: string, response: JsonObject): ProviderEvent[] {
    this.#done = true;
    const out: ProviderEvent[] = [];
    const usage = record(response.usage);
    if (usage !== null) {
      const input = record(usage.input_tokens_details);
      out.push({
        type: "usage",
        usage: {
          input: count(usage.input_tokens),
          output: count(usage.output_tokens),
          cacheRead: count(input?.cached_tokens),
          cacheWrite: count(input?.cache_write_tokens),
          reasoning: count(record(usage.output_tokens_details)?.reasoning_tokens),
        },
      });
    }
    if (kind === "response.failed") out.push(streamError(StreamErrorCode.providerError, safeProviderCode(record(response.error)?.code)));
    const raw = text(record(response.incomplete_details)?.reason) ?? text(response.status);
    out.push({ type: "finish", reason: this.#reason(kind, raw), raw: safeProviderCode(raw) });
    return out;
  }

  #reason(kind: string, raw: string | null): FinishReason {
    if (kind === "response.failed") return "error";
    if (raw === "max_output_tokens") return "length";
    if (raw === "content_filter") return "content_filter";
    // Responses has no "tool_calls" status: a completed response that called a function is one.
    return this.#sawFunctionCall ? "tool_calls" : "stop";
  }

  #call(event: JsonObject, id: string | null): Call | undefined {
    return (id === null ? undefined : this.#byId.get(id)) ?? this.#byIndex.get(count(event.output_index) ?? -1);
  }
}
