/**
 * How full the model's context is (docs/features/runner.md, "Compaction"):
 * after each provider request, what the provider counted as that request's
 * input is the measure; before the next one, the messages appended since
 * are estimated from their bytes and added to it.
 *
 * The estimate is {@link BYTES_PER_TOKEN} UTF-8 bytes per token, the
 * figure OpenAI and Anthropic give for English text and code with their
 * tokenizers (about 3.5–4.5 bytes a token). It over-counts whitespace runs
 * and under-counts dense text: CJK runs about 1.5–3 bytes a token, so an
 * estimate of such text is up to 2.7 times low; no byte-level tokenizer
 * makes a token of less than one byte, so no estimate is ever more than 4
 * times low. Only what one step adds is estimated once a provider has
 * reported a count: the error never accumulates across steps.
 *
 * @module
 */

import type { ProviderApi } from "../config/settings.ts";
import { utf8ByteCount } from "../util/utf8.ts";
import type { ModelMessage } from "./providers/conversation.ts";
import type { Usage } from "./providers/events.ts";

/** The estimate's ratio: UTF-8 bytes per token. */
export const BYTES_PER_TOKEN = 4;

/** What a message costs beyond its text (role, separators, a call's id and type), in bytes. */
const MESSAGE_OVERHEAD_BYTES = 16;

/** The most output room a step's request asks for, in tokens. */
export const MAX_OUTPUT_TOKENS = 16_384;
/**
 * The least output room a request asks for, in tokens, however little the
 * window leaves: less would cut a reply or a tool call's arguments short, so
 * a request that full is sent asking this much, and a server that then
 * refuses it as too long leads to the reactive path.
 */
export const MIN_OUTPUT_TOKENS = 1_024;

/**
 * The output room (`max_tokens`, `max_output_tokens`) of a request whose
 * input is estimated at `estimate` tokens, `unmeasured` of them from bytes
 * rather than a provider's count, for a model holding `window` tokens
 * (null: unknown): what the window leaves beside the input and a quarter
 * of `unmeasured` more for the estimate's error (a request's JSON and tool
 * schemas tokenize denser than prose), between {@link MIN_OUTPUT_TOKENS}
 * and `most`. Servers that check input plus output room against the
 * window (vLLM, OpenRouter, Anthropic) would otherwise refuse every
 * request of a model whose window is under `most`.
 */
export function outputRoom(window: number | null, estimate: number, unmeasured: number, most: number = MAX_OUTPUT_TOKENS): number {
  if (window === null) return most;
  return Math.min(most, Math.max(MIN_OUTPUT_TOKENS, window - estimate - Math.ceil(unmeasured / 4)));
}

/** Tokens `bytes` UTF-8 bytes are estimated at, rounded up. */
export function tokensOfBytes(bytes: number): number {
  return Math.ceil(bytes / BYTES_PER_TOKEN);
}

/** The UTF-8 bytes of what `message` sends the model: its text, calls and output. */
export function messageBytes(message: ModelMessage): number {
  let bytes = MESSAGE_OVERHEAD_BYTES;
  if (message.role === "tool") return bytes + utf8ByteCount(message.name) + utf8ByteCount(message.output);
  bytes += utf8ByteCount(message.text);
  if (message.role === "assistant") {
    for (const call of message.toolCalls) bytes += MESSAGE_OVERHEAD_BYTES + utf8ByteCount(call.id) + utf8ByteCount(call.name) + utf8ByteCount(call.argumentsJson);
  }
  return bytes;
}

/** The estimated tokens of `messages`. */
export function estimateTokens(messages: readonly ModelMessage[]): number {
  let bytes = 0;
  for (const message of messages) bytes += messageBytes(message);
  return tokensOfBytes(bytes);
}

/**
 * The tokens a request's input held by `usage`, or null when the provider
 * did not say. Anthropic counts cache reads and writes apart from
 * `input_tokens`; OpenAI's input already includes its cached tokens.
 */
export function inputTokens(api: ProviderApi, usage: Usage): number | null {
  if (usage.input === null) return null;
  return api === "anthropic-messages" ? usage.input + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0) : usage.input;
}

/** The fill of one run's conversation, measured and estimated. */
export class ContextMeter {
  /** Tokens of what is always sent besides the messages (the tool definitions). */
  readonly #overhead: number;
  /** Tokens of the first `#covered` messages, as last measured; null: estimate everything. */
  #measured: number | null = null;
  #covered = 0;

  /** Creates a meter; `overheadBytes` is what every request sends besides its messages. */
  constructor(overheadBytes: number) {
    this.#overhead = tokensOfBytes(overheadBytes);
  }

  /** Tokens every request sends besides its messages. */
  get overhead(): number {
    return this.#overhead;
  }

  /** Whether a provider count is the base of the estimate (none since the start or the last reset). */
  get measured(): boolean {
    return this.#measured !== null;
  }

  /** The tokens a request of `messages` is estimated at. */
  estimate(messages: readonly ModelMessage[]): number {
    if (this.#measured === null) return this.#overhead + estimateTokens(messages);
    return this.#measured + estimateTokens(messages.slice(this.#covered));
  }

  /** Of the estimate of `messages`, the tokens estimated from bytes rather than counted by a provider. */
  unmeasured(messages: readonly ModelMessage[]): number {
    return this.#measured === null ? this.estimate(messages) : estimateTokens(messages.slice(this.#covered));
  }

  /** Records that the provider counted `tokens` for a request of the first `sent` messages. */
  measure(tokens: number, sent: number): void {
    this.#measured = tokens;
    this.#covered = sent;
  }

  /** Takes `tokens` off the measure: what pruning removed from messages it covers. */
  forget(tokens: number): void {
    if (this.#measured !== null) this.#measured = Math.max(0, this.#measured - tokens);
  }

  /** Drops the measure after the messages were replaced: the next estimate is of the bytes alone. */
  reset(): void {
    this.#measured = null;
    this.#covered = 0;
  }
}
