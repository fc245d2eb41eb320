/**
 * OpenAI(-compatible) Chat Completions streaming → normalized {@link ProviderEvent}s.
 *
 * Choice 0 only (we never request `n > 1`). Classification:
 * `delta.reasoning_content` / `delta.reasoning` is the model's raw chain of
 * thought (DeepSeek-R1, Qwen3, gpt-oss) and stays internal.
 *
 * Completion is `data: [DONE]` or, failing that, a `finish_reason` seen
 * before the body ended: four of the six recorded chat streams (OpenAI's own
 * included) have no `[DONE]`. A body that ends with neither is `truncated`.
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
import { DONE_DATA } from "./sse.ts";
import { count, type JsonObject, list, parseObject, record, text } from "./json-fields.ts";

const FINISH: Readonly<Record<string, FinishReason>> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  content_filter: "content_filter",
};

/** Decodes one Chat Completions stream. */
export class ChatDecoder implements StreamDecoder {
  /** Started calls by index: exactly the strings of their `tool_start` events. */
  readonly #tools = new Map<number, { id: string | null; name: string | null }>();
  #finishRaw: string | null = null;
  #usage: Usage | null = null;
  #sawError = false;
  #finished = false;

  /** Decodes one SSE event. */
  onEvent(sse: { readonly data: string }): ProviderEvent[] {
    if (sse.data === DONE_DATA) return this.#finish();
    const chunk = parseObject(sse.data);
    if (chunk === null) return [streamError(StreamErrorCode.malformed)];
    const out: ProviderEvent[] = [];
    // OpenRouter and others put an `error` object in a normal chunk, then still send usage and [DONE].
    if (chunk.error != null && !this.#sawError) {
      this.#sawError = true;
      out.push(streamError(StreamErrorCode.providerError, safeProviderCode(record(chunk.error)?.code)));
    }
    const usage = record(chunk.usage);
    if (usage !== null) {
      this.#usage = {
        input: count(usage.prompt_tokens),
        output: count(usage.completion_tokens),
        cacheRead: count(record(usage.prompt_tokens_details)?.cached_tokens),
        cacheWrite: null,
        reasoning: count(record(usage.completion_tokens_details)?.reasoning_tokens),
      };
    }
    const choice = list(chunk.choices).map(record).find((c) => c !== null && (count(c.index) ?? 0) === 0);
    if (choice) this.#choice(choice, out);
    return out;
  }

  /** Finishes on a seen `finish_reason`, else reports truncation (unless the provider already errored). */
  end(): ProviderEvent[] {
    if (this.#finished) return [];
    if (this.#finishRaw !== null) return this.#finish();
    return this.#sawError ? [] : [streamError(StreamErrorCode.truncated)];
  }

  /** The ids and names of the started calls (their keys are indices, not kept strings). */
  held(): number {
    return heldBytes(this.#tools.values());
  }

  #choice(choice: JsonObject, out: ProviderEvent[]): void {
    const delta = record(choice.delta) ?? {};
    const reasoning = text(delta.reasoning_content) ?? text(delta.reasoning);
    if (reasoning) out.push({ type: "reasoning_raw", delta: reasoning, source: "chat.reasoning" });
    const content = text(delta.content);
    if (content) out.push({ type: "text", delta: content });
    const refusal = text(delta.refusal);
    if (refusal) out.push({ type: "refusal", delta: refusal });
    for (const call of list(delta.tool_calls).map(record)) {
      if (call === null) continue;
      const index = count(call.index) ?? 0;
      const fn = record(call.function);
      const id = text(call.id);
      const name = text(fn?.name);
      const known = this.#tools.get(index);
      if (known === undefined) {
        this.#tools.set(index, { id, name });
        out.push({ type: "tool_start", key: String(index), id, name });
      } else {
        // Some compatible servers send the id or name in a later chunk than the first. What fills a
        // gap goes out at once in a repeated start, so the run charges it when the decoder keeps it.
        const late = { id: known.id === null ? id : null, name: known.name === null ? name : null };
        if (late.id !== null || late.name !== null) {
          known.id ??= late.id;
          known.name ??= late.name;
          out.push({ type: "tool_start", key: String(index), ...late });
        }
      }
      const args = text(fn?.arguments);
      if (args) out.push({ type: "tool_delta", key: String(index), delta: args });
    }
    this.#finishRaw = text(choice.finish_reason) ?? this.#finishRaw;
  }

  #finish(): ProviderEvent[] {
    if (this.#finished) return [];
    this.#finished = true;
    const out: ProviderEvent[] = [];
    for (const [index, tool] of this.#tools) out.push({ type: "tool_end", key: String(index), id: tool.id, name: tool.name });
    if (this.#usage !== null) out.push({ type: "usage", usage: this.#usage });
    out.push({ type: "finish", reason: FINISH[this.#finishRaw ?? ""] ?? "other", raw: safeProviderCode(this.#finishRaw) });
    return out;
  }
}
