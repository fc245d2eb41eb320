/**
 * Folds a provider's normalized events into the turn's result: the assistant
 * text, the tool calls with their streamed arguments, the surfaced reasoning
 * summary, and, separately, raw reasoning that must never be surfaced.
 *
 * @module
 */

import type { FinishReason, ProviderEvent, StreamError, SummaryProvenance, Usage } from "./events.ts";

/** One tool call as the model streamed it. `argumentsJson` is unparsed: "" is a real answer. */
export interface AccumulatedToolCall {
  /** Provider call id. */
  id: string | null;
  name: string | null;
  /** The concatenated argument deltas. */
  argumentsJson: string;
}

/** The folded stream. */
export interface Accumulated {
  text: string;
  /** Refusal text, kept apart from normal text. */
  refusal: string;
  /** Tool calls in start order. */
  toolCalls: AccumulatedToolCall[];
  /** Provider summary (surfaced with `provider_summary=true`), or `null` when none came. */
  reasoningSummary: string | null;
  /** Where the summary came from. */
  summaryProvenance: SummaryProvenance | null;
  /** Raw chain of thought: internal only, never surfaced, stored or logged. */
  rawReasoning: string | null;
  /** Opaque replay blobs, in order, for sending history back to the same provider. */
  opaque: Extract<ProviderEvent, { type: "reasoning_opaque" }>[];
  /** Unified finish reason, or `null` when the stream never finished. */
  finishReason: FinishReason | null;
  /** The provider's own finish string, when it was a safe identifier. */
  finishRaw: string | null;
  /** The first error, if any. */
  error: StreamError | null;
  /** Last usage report. */
  usage: Usage | null;
}

/** Folds `events`, in order, into an {@link Accumulated}. */
export function accumulate(events: Iterable<ProviderEvent>): Accumulated {
  const out: Accumulated = {
    text: "",
    refusal: "",
    toolCalls: [],
    reasoningSummary: null,
    summaryProvenance: null,
    rawReasoning: null,
    opaque: [],
    finishReason: null,
    finishRaw: null,
    error: null,
    usage: null,
  };
  const tools = new Map<string, AccumulatedToolCall>();
  for (const event of events) {
    switch (event.type) {
      case "text": out.text += event.delta; break;
      case "refusal": out.refusal += event.delta; break;
      case "reasoning_summary":
        out.reasoningSummary = (out.reasoningSummary ?? "") + event.delta;
        out.summaryProvenance = event.provenance;
        break;
      case "reasoning_raw": out.rawReasoning = (out.rawReasoning ?? "") + event.delta; break;
      case "reasoning_opaque": out.opaque.push(event); break;
      case "tool_start":
      case "tool_end": {
        const call = tools.get(event.key);
        if (call) {
          // A repeated start or the end may carry an id or name that came late; what is known stays.
          call.id ??= event.id;
          call.name ??= event.name;
        } else if (event.type === "tool_start") {
          const started = { id: event.id, name: event.name, argumentsJson: "" };
          tools.set(event.key, started);
          out.toolCalls.push(started);
        }
        break;
      }
      case "tool_delta": {
        const call = tools.get(event.key);
        if (call) call.argumentsJson += event.delta;
        break;
      }
      case "usage": out.usage = event.usage; break;
      case "finish": out.finishReason = event.reason; out.finishRaw = event.raw; break;
      case "error": out.error ??= event; break;
    }
  }
  return out;
}
