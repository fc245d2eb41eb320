/**
 * One assistant message of a run (a "segment": tool calls separate them)
 * and the run's content budget.
 *
 * Text is accepted against the budget as it streams, shown best-effort as
 * redacted `message.delta` events, and finally reconciled: the whole
 * accepted text, redacted as one piece, goes out as authoritative
 * `message.reconcile` parts that replace whatever deltas arrived.
 *
 * @module
 */

import { LIMITS } from "../protocol/limits.ts";
import { redactSecrets } from "../util/redaction.ts";
import { sanitizeText, splitUtf8, utf8ByteCount } from "../util/utf8.ts";
import type { CriticalResult, StepChannel } from "./event-channel.ts";
import { StreamRedactor } from "./stream-redactor.ts";
import type { RunScope } from "./run-events.ts";

/**
 * Provider events a run may retain (coalesced; text is never retained): every
 * activity's start, arguments and end plus each step's reasoning, usage and
 * finish, with room to spare. A hostile stream of tiny interleaved events
 * hits this before it can grow the child's memory.
 */
export const RUN_PROVIDER_EVENTS = LIMITS.run_activities * 8;

/**
 * The run-wide bound on everything a provider can make the child hold: 8 MiB
 * shared by assistant text, reasoning (summaries, raw, opaque) and tool-call
 * arguments, 512 text segments and {@link RUN_PROVIDER_EVENTS} retained
 * events. One budget, so no mix of them can exceed what a single stored
 * record or the history snapshot may hold.
 */
export class ContentBudget {
  #bytes = 0;
  #segments = 0;
  #events = 0;

  /** Takes `bytes` more; false (taking nothing) when the run would exceed its bound. */
  takeBytes(bytes: number): boolean {
    if (this.#bytes + bytes > LIMITS.run_content_bytes) return false;
    this.#bytes += bytes;
    return true;
  }

  /** Takes one more segment; false when the run already has the most it may. */
  takeSegment(): boolean {
    if (this.#segments >= LIMITS.run_content_segments) return false;
    this.#segments++;
    return true;
  }

  /** Takes one more retained provider event; false when the run already holds the most it may. */
  takeEvent(): boolean {
    if (this.#events >= RUN_PROVIDER_EVENTS) return false;
    this.#events++;
    return true;
  }
}

/** One assistant message: accepted text, live deltas, and its reconciliation. */
export class AssistantSegment {
  /** The run-scoped message id. */
  readonly messageId: string;
  readonly #channel: StepChannel;
  readonly #budget: ContentBudget;
  readonly #secrets: readonly string[];
  readonly #redactor: StreamRedactor;
  #text = "";
  #counted = false;

  /** Creates the segment `messageId`, showing deltas on `channel`. */
  constructor(messageId: string, channel: StepChannel, budget: ContentBudget, secrets: readonly string[]) {
    this.messageId = messageId;
    this.#channel = channel;
    this.#budget = budget;
    this.#secrets = secrets;
    this.#redactor = new StreamRedactor(secrets);
  }

  /** The accepted text, unredacted (it goes back to the provider that wrote it). */
  get text(): string {
    return this.#text;
  }

  /**
   * Accepts `delta` and shows what redaction releases of it. False, with
   * nothing accepted, when the run's content bound would be exceeded.
   */
  push(delta: string): boolean {
    if (delta === "") return true;
    if (!this.#counted) {
      if (!this.#budget.takeSegment()) return false;
      this.#counted = true;
    }
    if (!this.#budget.takeBytes(utf8ByteCount(delta))) return false;
    this.#text += delta;
    // Released text never ends inside a surrogate pair (releases stop at whitespace), so a lone
    // half here is a lone half in the provider's text too.
    const shown = sanitizeText(this.#redactor.push(delta));
    if (shown !== "") this.#channel.delta(this.messageId, shown);
    return true;
  }

  /** The redacted text as stored and reconciled. */
  redacted(): string {
    return redactSecrets(this.#text, this.#secrets);
  }

  /**
   * Sends the authoritative text as `message.reconcile` parts from 0, the
   * last one marked `last_part`. Nothing is sent for a segment without text.
   */
  async reconcile(scope: RunScope, partial: boolean): Promise<CriticalResult> {
    if (this.#text === "") return { ok: true };
    // The message is over, so the held-back tail can no longer be the start of a secret: a client
    // rendering deltas then already shows the whole text when the reconciliation confirms it.
    const rest = sanitizeText(this.#redactor.flush());
    if (rest !== "") this.#channel.delta(this.messageId, rest);
    const parts = splitUtf8(sanitizeText(this.redacted()), LIMITS.event_chunk_bytes);
    for (const [part, piece] of parts.entries()) {
      const result = await this.#channel.critical({
        event: "message.reconcile",
        data: { ...scope, message_id: this.messageId, part, text: piece.text, last_part: part === parts.length - 1, partial },
      });
      if (!result.ok) return result;
    }
    return { ok: true };
  }
}
