/**
 * The non-text provider events of one step, kept for folding (tool calls,
 * reasoning, usage) and replay, under the run's {@link ContentBudget}. Text
 * lives in the segment instead; everything else a provider streams is
 * retained here, so this is where a hostile endpoint would grow memory.
 *
 * Consecutive deltas of one kind (one tool call's arguments, one reasoning
 * source) are joined into one event: folding concatenates them anyway, so
 * the result is unchanged, and a legitimate stream of thousands of argument
 * tokens costs one retained event. Every byte a provider sent still counts
 * against the budget, and so does everything a decoder keeps across events
 * (see `StreamDecoder`): it keeps only what it emitted in a call's
 * `tool_start`, charged here.
 *
 * @module
 */

import type { ProviderEvent } from "./providers/events.ts";
import type { ContentBudget } from "./segment.ts";
import { utf8ByteCount } from "../util/utf8.ts";

type Delta = Extract<ProviderEvent, { type: "tool_delta" | "reasoning_summary" | "reasoning_raw" }>;

/**
 * The bytes `event` makes the run hold. A `tool_start`'s key is charged with
 * its id and name: the decoder keeps all three until the stream ends (a
 * Responses key is the provider's item id, of any length); later events of
 * the call share the decoder's key, so theirs costs nothing more.
 */
function payloadBytes(event: ProviderEvent): number {
  switch (event.type) {
    case "tool_delta":
    case "reasoning_summary":
    case "reasoning_raw":
      return utf8ByteCount(event.delta);
    case "reasoning_opaque":
      return utf8ByteCount(event.data) + utf8ByteCount(event.itemId ?? "");
    case "tool_start":
      return utf8ByteCount(event.key) + utf8ByteCount(event.id ?? "") + utf8ByteCount(event.name ?? "");
    case "tool_end":
      return utf8ByteCount(event.id ?? "") + utf8ByteCount(event.name ?? "");
    default:
      return 0;
  }
}

/** Whether `next` continues `last`'s delta, so the two may be one event. */
function continues(last: ProviderEvent | undefined, next: Delta): last is Delta {
  if (last === undefined || last.type !== next.type) return false;
  switch (next.type) {
    case "tool_delta":
      return (last as typeof next).key === next.key;
    case "reasoning_summary":
      return (last as typeof next).provenance === next.provenance;
    case "reasoning_raw":
      return (last as typeof next).source === next.source;
  }
}

/** One step's retained provider events, charged to the run's budget. */
export class RetainedEvents {
  readonly #budget: ContentBudget;
  readonly #events: ProviderEvent[] = [];

  /** Creates an empty list charging `budget`. */
  constructor(budget: ContentBudget) {
    this.#budget = budget;
  }

  /** The events kept so far, in stream order (joined deltas as one). */
  get events(): readonly ProviderEvent[] {
    return this.#events;
  }

  /**
   * Keeps `event`; false, keeping nothing, when the run's budget (bytes or
   * retained events) would be exceeded: the step must stop the stream.
   */
  keep(event: ProviderEvent): boolean {
    if (!this.#budget.takeBytes(payloadBytes(event))) return false;
    if (event.type === "tool_delta" || event.type === "reasoning_summary" || event.type === "reasoning_raw") {
      const index = this.#events.length - 1;
      const last = this.#events[index];
      if (continues(last, event)) {
        this.#events[index] = { ...last, delta: last.delta + event.delta } as Delta;
        return true;
      }
    }
    if (!this.#budget.takeEvent()) return false;
    this.#events.push(event);
    return true;
  }
}
