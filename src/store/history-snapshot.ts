/**
 * What a projection produces: the entries `history.page` serves and the
 * immutable snapshot holding them.
 *
 * @module
 */

import type { ErrorCode } from "../protocol/errors.ts";
import type { Card } from "../protocol/tool-cards.ts";

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
  /**
   * The saved tool cards (`tool.cards`) attached, by the entry (its last
   * part) of the activity each belongs to; at most `history_card_bytes` of
   * them serialized, the earliest first.
   */
  readonly cards: ReadonlyMap<HistoryEntry, Card>;
  /** UTF-8 bytes of the attached cards, serialized. */
  readonly cardBytes: number;
  /** The turn of each user message, by its `message_id`: what a rewind to that message drops from. */
  readonly userTurns: ReadonlyMap<string, string>;
};

/** A message before its text is redacted and chunked; an activity's saved card, if any. */
export type Slot = { kind: HistoryKind; text: string; partial: boolean; card?: Card; turn?: string };

/** The projection of no records. */
export const EMPTY_HISTORY: HistorySnapshot = Object.freeze({
  entries: Object.freeze([]),
  complete: true,
  messages: 0,
  bytes: 2,
  tailNotice: false,
  userTurns: new Map(),
  cards: new Map(),
  cardBytes: 0,
});

/** The outcome of `projectHistory()`: a snapshot, or `history_limit` and nothing partial. */
export type ProjectionResult =
  | { readonly ok: true; readonly snapshot: HistorySnapshot }
  | { readonly ok: false; readonly code: typeof ErrorCode.historyLimit };
