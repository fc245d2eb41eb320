/**
 * The normalized provider stream: what every per-API decoder emits, so the
 * turn loop needs no per-API logic. Decided in docs/decisions/provider-library.md.
 *
 * Events are plain data. Nothing here carries provider error text, request or
 * response bodies, or keys: an error is a fixed {@link StreamErrorCode} plus at
 * most a whitelisted provider code (see {@link safeProviderCode}).
 *
 * Reasoning comes in three kinds that must never be confused, because only one
 * may leave the backend:
 * - `reasoning_summary`: a provider-written summary, surfaced with
 *   `provider_summary=true` and its {@link SummaryProvenance};
 * - `reasoning_raw`: the model's raw chain of thought (open-weight chat
 *   servers, Responses `reasoning_text`, claude-3-7-sonnet), kept internal only;
 * - `reasoning_opaque`: signatures and encrypted blobs, only ever sent back to
 *   the same provider for history replay.
 *
 * @module
 */

import { IDENTIFIER_PATTERN } from "../../protocol/identity.ts";
import { utf8ByteCount } from "../../util/utf8.ts";

/** Failure codes a provider stream can end with. Internal: mapped to wire codes by the turn loop. */
export const StreamErrorCode = {
  /** The body ended before the API's terminal event. */
  truncated: "truncated",
  /** An event's data was not the JSON object the API promises. */
  malformed: "malformed",
  /** A single SSE event exceeded the parser's bound. */
  eventTooLarge: "event_too_large",
  /** The provider reported an error inside the stream. */
  providerError: "provider_error",
  /** Reading the body failed (connection reset, network error). */
  connectionLost: "connection_lost",
} as const;

/** One of {@link StreamErrorCode}'s values. */
export type StreamErrorCode = typeof StreamErrorCode[keyof typeof StreamErrorCode];

/** Why the model stopped, unified across APIs. */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "refusal" | "error" | "other";

/** Where a surfaced reasoning summary came from. */
export type SummaryProvenance = "anthropic.thinking" | "openai.reasoning_summary";

/** Where internal raw reasoning came from. */
export type RawReasoningSource = "anthropic.thinking" | "openai.reasoning_text" | "chat.reasoning";

/** Which opaque replay blob this is. */
export type OpaqueSource = "anthropic.signature" | "anthropic.redacted_thinking" | "openai.encrypted_content";

/** Token counts for one provider response; `null` where the provider did not say. */
export interface Usage {
  /** Prompt tokens, as the provider counts them. */
  readonly input: number | null;
  /** Completion tokens, reasoning included where the provider includes it. */
  readonly output: number | null;
  /** Prompt tokens served from the provider's cache. */
  readonly cacheRead: number | null;
  /** Prompt tokens written to the provider's cache. */
  readonly cacheWrite: number | null;
  /** Reasoning tokens, where reported. */
  readonly reasoning: number | null;
}

/**
 * One normalized stream event. Tool call events share a decoder-local `key`;
 * `id` and `name` may be `null` at `tool_start` (chat servers may send them
 * late): a later `tool_start` with the same key carries what arrived since,
 * filling only what is still missing, and `tool_end` may fill it too.
 * Decoders emit `tool_delta` and `tool_end` only for keys they started.
 */
export type ProviderEvent =
  | { readonly type: "text"; readonly delta: string }
  | { readonly type: "refusal"; readonly delta: string }
  | { readonly type: "reasoning_summary"; readonly delta: string; readonly provenance: SummaryProvenance }
  | { readonly type: "reasoning_raw"; readonly delta: string; readonly source: RawReasoningSource }
  | { readonly type: "reasoning_opaque"; readonly source: OpaqueSource; readonly itemId: string | null; readonly data: string }
  | { readonly type: "tool_start"; readonly key: string; readonly id: string | null; readonly name: string | null }
  | { readonly type: "tool_delta"; readonly key: string; readonly delta: string }
  | { readonly type: "tool_end"; readonly key: string; readonly id: string | null; readonly name: string | null }
  | { readonly type: "usage"; readonly usage: Usage }
  | { readonly type: "finish"; readonly reason: FinishReason; readonly raw: string | null }
  | { readonly type: "error"; readonly code: StreamErrorCode; readonly providerCode: string | null };

/** The error event variant. */
export type StreamError = Extract<ProviderEvent, { type: "error" }>;

/** Builds an error event; the only way decoders report failure. */
export function streamError(code: StreamErrorCode, providerCode: string | null = null): StreamError {
  return { type: "error", code, providerCode };
}

/**
 * A provider's error or finish code, kept only when it is a short identifier.
 * Free text could carry an echoed key or prompt content, so anything else
 * becomes `null`.
 */
export function safeProviderCode(value: unknown): string | null {
  if (typeof value === "number" && Number.isInteger(value)) return String(value);
  return typeof value === "string" && IDENTIFIER_PATTERN.test(value) ? value : null;
}

/**
 * What every per-API decoder implements: SSE events in, normalized events out.
 *
 * Memory rule: across events a decoder keeps constant-size state (flags,
 * counts, at most one event's finish reason) and, for each tool call it
 * started, only the key, id and name it emitted in that call's `tool_start`
 * events. The run retains and charges those events, so everything a decoder
 * keeps is within the run's budget; items, blocks and deltas no later event
 * needs are not kept at all. {@link StreamDecoder.held} measures what it
 * keeps, so tests can hold a decoder to this rule.
 */
export interface StreamDecoder {
  /** Decodes one SSE event. A `malformed` error means the stream must stop. */
  onEvent(event: { readonly event: string; readonly data: string }): ProviderEvent[];
  /** Called once when the body ended cleanly; reports `truncated` when no terminal event came. */
  end(): ProviderEvent[];
  /**
   * The UTF-8 bytes of the provider strings this decoder keeps across events
   * right now, computed from what it holds when asked (nothing is counted on
   * the stream's path). By the memory rule it never exceeds the bytes of the
   * keys, ids and names its `tool_start` events carried so far. A field
   * added later that keeps provider strings must be counted here, or the
   * retention tests cannot see it.
   */
  held(): number;
}

/**
 * The UTF-8 bytes of every string field of `entries`, the records a decoder
 * keeps: counting all of an entry's fields, not a chosen few, means a field
 * added to an entry later is measured too.
 */
export function heldBytes(entries: Iterable<object>): number {
  let bytes = 0;
  for (const entry of entries) {
    for (const value of Object.values(entry)) if (typeof value === "string") bytes += utf8ByteCount(value);
  }
  return bytes;
}
