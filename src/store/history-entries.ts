/**
 * What a projection produces: the entries `history.page` serves, the
 * snapshot holding them, and the last step that turns projected messages
 * ("slots") into redacted, sanitized, bounded entry parts.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { LIMITS } from "../protocol/limits.ts";
import { redactSecrets } from "../util/safe-names.ts";
import { sanitizeText, splitUtf8, utf8ByteCount } from "../util/utf8.ts";
import type { ProjectionResult } from "./projection.ts";
import { splitText } from "./text-parts.ts";

/** What an entry shows. */
export type HistoryKind = "user" | "assistant" | "reasoning_summary" | "activity" | "compaction" | "diagnostic";

/** One part of one projected message, exactly as `history.page` sends it. */
export type HistoryEntry = {
  /** Opaque id scoped to the snapshot's revision; the same on every part of a message. */
  readonly message_id: string;
  /** What the message is. */
  readonly kind: HistoryKind;
  /** This part's text: redacted, free of lone surrogates, within the part bounds. */
  readonly text: string;
  /** Whether the message is known to be unfinished. */
  readonly partial: boolean;
  /** Position of this part within its message, from 0. */
  readonly part: number;
  /** Whether this is the message's final part. */
  readonly last_part: boolean;
};

/** One immutable projection of a session's history. */
export type HistorySnapshot = {
  /** Every part of every projected message, in stored order. */
  readonly entries: readonly HistoryEntry[];
  /** False when the history ends in (or contains) a turn that never durably finished. */
  readonly complete: boolean;
  /** Messages projected (the next message's ordinal). */
  readonly messages: number;
  /** UTF-8 bytes of `JSON.stringify(entries)`, which the snapshot bound counts. */
  readonly bytes: number;
  /**
   * Whether the last message is an interruption notice caused only by how
   * the history ends (a torn tail, or content of a turn that never started
   * or finished): a next turn's records move it past themselves, or the
   * appender's tail repair removes it, so the next message takes its place.
   */
  readonly tailNotice: boolean;
};

/** A message before its text is redacted and chunked. */
export type Slot = { kind: HistoryKind; text: string; partial: boolean };


/** The projection of no records. */
export const EMPTY_HISTORY: HistorySnapshot = Object.freeze({
  entries: Object.freeze([]),
  complete: true,
  messages: 0,
  bytes: 2,
  tailNotice: false,
});


/** Kinds whose text is a summary, bounded to 1,024 UTF-8 bytes after redaction (a marker can lengthen it). */
const SUMMARY_KINDS: ReadonlySet<HistoryKind> = new Set(["activity", "diagnostic"]);

/** Cuts `text` to at most `maxBytes` UTF-8 bytes at a code-point boundary, ending with an ellipsis when cut. */
function clampUtf8(text: string, maxBytes: number): string {
  if (utf8ByteCount(text) <= maxBytes) return text;
  // The ellipsis is 3 bytes in UTF-8.
  return `${splitUtf8(text, maxBytes - 3)[0]!.text}…`;
}

/** Redacts, sanitizes and chunks every slot, enforcing the snapshot bounds as it goes; yields after each slot. */
export function* chunkSlots(
  slots: readonly Slot[],
  secrets: readonly string[],
  ending: { readonly complete: boolean; readonly tailNotice: boolean },
  after: HistorySnapshot,
): Generator<number, ProjectionResult> {
  const entries: HistoryEntry[] = [];
  const earlier = after.entries.length;
  let bytes = after.bytes; // the array's brackets and every earlier entry
  for (const [index, slot] of slots.entries()) {
    const messageId = `m${(after.messages + index).toString(36)}`;
    // Redaction is one synchronous pass; a text that could not fit the snapshot even after
    // shrinking every byte into a marker is refused before it can hold the loop for long.
    if (slot.text.length > LIMITS.history_snapshot_bytes) return { ok: false, code: ErrorCode.historyLimit };
    const redacted = sanitizeText(redactSecrets(slot.text, secrets));
    const text = SUMMARY_KINDS.has(slot.kind) ? clampUtf8(redacted, LIMITS.summary_bytes) : redacted;
    // Escaped bytes never undercount UTF-16 units, so this rejects a huge
    // text before the work of splitting it.
    if (bytes + text.length > LIMITS.history_snapshot_bytes) return { ok: false, code: ErrorCode.historyLimit };
    const parts = splitText(text);
    for (const [part, piece] of parts.entries()) {
      const entry: HistoryEntry = Object.freeze({
        message_id: messageId,
        kind: slot.kind,
        text: piece.text,
        partial: slot.partial,
        part,
        last_part: part === parts.length - 1,
      });
      // Everything but the text is ASCII, so its string length is its byte size.
      bytes += (earlier + entries.length === 0 ? 0 : 1) + JSON.stringify({ ...entry, text: "" }).length + piece.escapedBytes;
      entries.push(entry);
      if (bytes > LIMITS.history_snapshot_bytes || earlier + entries.length > LIMITS.history_snapshot_parts) {
        return { ok: false, code: ErrorCode.historyLimit };
      }
    }
    yield parts.length;
  }
  return {
    ok: true,
    snapshot: Object.freeze({
      entries: Object.freeze(entries),
      complete: ending.complete && after.complete,
      messages: after.messages + slots.length,
      bytes,
      tailNotice: ending.tailNotice,
    }),
  };
}
