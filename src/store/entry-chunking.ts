/**
 * The last step of a projection: projected messages ("slots") become
 * redacted, sanitized, bounded entry parts, and the snapshot bounds are
 * enforced as the parts are counted. Redaction happens here, after
 * reconciliation and before chunking, as the spec orders it.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { LIMITS } from "../protocol/limits.ts";
import { redactSecrets } from "../util/redaction.ts";
import { clampUtf8, sanitizeText, utf8ByteCount } from "../util/utf8.ts";
import { CARD_LIMITS } from "../protocol/tool-cards.ts";
import { redactedCard } from "./tool-card-record.ts";
import type { HistoryEntry, HistoryKind, HistorySnapshot, ProjectionResult, Slot } from "./history-snapshot.ts";
import { splitText } from "./history-text-parts.ts";

/** Kinds whose text is a summary, bounded to 1,024 UTF-8 bytes after redaction (a marker can lengthen it). */
const SUMMARY_KINDS: ReadonlySet<HistoryKind> = new Set(["activity", "diagnostic"]);

/** Redacts, sanitizes and chunks every slot, enforcing the snapshot bounds as it goes; yields after each slot. */
export function* chunkSlots(
  slots: readonly Slot[],
  secrets: readonly string[],
  ending: { readonly complete: boolean; readonly tailNotice: boolean },
  after: HistorySnapshot,
): Generator<number, ProjectionResult> {
  const entries: HistoryEntry[] = [];
  const userTurns = new Map<string, string>();
  const cards = new Map(after.cards);
  let cardBytes = after.cardBytes;
  const earlier = after.entries.length;
  let bytes = after.bytes; // the array's brackets and every earlier entry
  for (const [index, slot] of slots.entries()) {
    const messageId = `m${(after.messages + index).toString(36)}`;
    if (slot.turn !== undefined) userTurns.set(messageId, slot.turn);
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
      if (slot.card !== undefined && entry.last_part) {
        // Cards have a budget of their own: a base client's snapshot bounds stay what they were.
        const card = redactedCard(slot.card, secrets);
        const size = utf8ByteCount(JSON.stringify(card));
        if (cardBytes + size <= CARD_LIMITS.history_card_bytes) {
          cards.set(entry, card);
          cardBytes += size;
        }
      }
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
      userTurns,
      cards,
      cardBytes,
    }),
  };
}
