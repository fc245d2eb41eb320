/**
 * Serves one immutable history snapshot as bounded `history.page` results, and
 * names revisions and cursors with opaque ids in the wire's 64-byte grammar.
 *
 * A cursor carries its offset plus a check tag computed from the revision and
 * that offset, so the snapshot needs no table of issued cursors and a cursor
 * from another revision, an edited offset or garbage fails the check as
 * `stale_revision` instead of silently skipping or repeating entries.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { LIMITS } from "../protocol/limits.ts";
import type { HistoryEntry, HistorySnapshot } from "./history-snapshot.ts";
import type { Card } from "../protocol/tool-cards.ts";

/** An entry as a page shows it: an activity's also carries its saved card (or null) for a `tool.cards` client. */
export type PageEntry = HistoryEntry | (HistoryEntry & { readonly card: Card | null });

/** One `history.page` result, exactly the wire shape. */
export type HistoryPage = {
  /** The attached session. */
  readonly session_id: string;
  /** The revision this page belongs to. */
  readonly revision: string;
  /** The next entries in stored order. */
  readonly entries: readonly PageEntry[];
  /** Where the next page starts, or null on the last page. */
  readonly next_cursor: string | null;
  /** True only on the last page of a complete snapshot. */
  readonly complete: boolean;
};

/** The outcome of {@link pageHistory}. */
export type PageResult =
  | { readonly ok: true; readonly result: HistoryPage }
  | { readonly ok: false; readonly code: typeof ErrorCode.staleRevision | typeof ErrorCode.contentLimit };

const encoder = new TextEncoder();
const bytesOf = (value: unknown): number => encoder.encode(JSON.stringify(value)).length;

const HEX_DIGEST = /^[0-9a-f]{40,}$/i;

/**
 * The opaque revision id of a projection: the attachment `generation` (a
 * reopen always names a new revision, even of identical bytes) and the first
 * 160 bits of the content `digest` (lowercase hex). At most 53 ASCII bytes.
 * Throws on a negative or fractional generation or a digest that is not
 * 40+ hex digits: both are backend bugs, never client input.
 */
export function revisionId(parts: { readonly digest: string; readonly generation: number }): string {
  if (!Number.isSafeInteger(parts.generation) || parts.generation < 0) throw new RangeError("Invalid revision generation");
  if (!HEX_DIGEST.test(parts.digest)) throw new RangeError("Invalid revision digest");
  return `r${parts.generation.toString(36)}-${parts.digest.slice(0, 40).toLowerCase()}`;
}

/**
 * A 64-bit check value of `text` as 14 base36 digits (cyrb53's two-lane
 * mixing, both lanes kept). Not a security boundary, since a client may read
 * every entry anyway; it only makes an accidental match implausible.
 */
function tag(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ unit, 2654435761);
    h2 = Math.imul(h2 ^ unit, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h1 >>> 0).toString(36).padStart(7, "0") + (h2 >>> 0).toString(36).padStart(7, "0");
}

const CURSOR = /^p([1-9a-z][0-9a-z]{0,5})\.([0-9a-z]{14})$/;

/**
 * The cursor naming `offset` within `revision`: `p<offset base36>.<tag>`, at
 * most 22 ASCII bytes. Session listing pages its snapshot with the same
 * cursors, tagged with its own revisions.
 */
export function cursorFor(revision: string, offset: number): string {
  const at = offset.toString(36);
  return `p${at}.${tag(`${revision}\n${at}`)}`;
}

/** The offset `cursor` names in a snapshot of `count` entries, or null when it is not one this revision issues. */
export function offsetOf(cursor: string, revision: string, count: number): number | null {
  const match = CURSOR.exec(cursor);
  if (match === null) return null;
  const offset = parseInt(match[1]!, 36);
  // Offset 0 is the null cursor's, and a cursor is only issued while entries remain.
  if (offset < 1 || offset >= count) return null;
  return match[2] === tag(`${revision}\n${match[1]}`) ? offset : null;
}

/**
 * Returns the page of `snapshot` starting at `cursor` (null: the first page).
 * A page holds at most `history_page_entries` entries and serializes to at
 * most `history_page_bytes`, filled greedily in stored order; it is never
 * empty while entries remain. `complete` is the snapshot's completeness on
 * the last page and false on every other. A cursor that this `revision` did
 * not issue is `stale_revision`; an entry too large for any page (which a
 * snapshot from `projectHistory` never holds) is `content_limit`. With
 * `withCards` (`tool.cards`) every activity entry carries `card`, its saved
 * card or null, counted in the page's bytes like the rest of the entry: a
 * card is at most `card_bytes`, so an entry with its card still fits a page.
 */
export function pageHistory(
  snapshot: HistorySnapshot,
  sessionId: string,
  revision: string,
  cursor: string | null,
  withCards = false,
): PageResult {
  const entries = snapshot.entries;
  // Only the entries a page considers get their card: paging cost stays that of the page.
  const shown = (entry: HistoryEntry): PageEntry => (withCards ? withCard(entry, snapshot) : entry);
  const start = cursor === null ? 0 : offsetOf(cursor, revision, entries.length);
  if (start === null) return { ok: false, code: ErrorCode.staleRevision };

  // Everything but the entries depends only on where the page ends (a cursor
  // or null, and completeness), so the greedy fill can size it up front.
  const frame = (end: number): HistoryPage => ({
    session_id: sessionId,
    revision,
    entries: [],
    next_cursor: end < entries.length ? cursorFor(revision, end) : null,
    complete: end < entries.length ? false : snapshot.complete,
  });

  let end = start;
  let entryBytes = 0;
  while (end < entries.length && end - start < LIMITS.history_page_entries) {
    const next = entryBytes + (end > start ? 1 : 0) + bytesOf(shown(entries[end]!));
    if (bytesOf(frame(end + 1)) + next > LIMITS.history_page_bytes) break;
    entryBytes = next;
    end++;
  }
  if (end === start && start < entries.length) return { ok: false, code: ErrorCode.contentLimit };
  const result: HistoryPage = { ...frame(end), entries: Object.freeze(entries.slice(start, end).map(shown)) };
  return { ok: true, result: Object.freeze(result) };
}

/** `entry` with its saved card, for an activity; as it is otherwise. */
function withCard(entry: HistoryEntry, snapshot: HistorySnapshot): PageEntry {
  return entry.kind === "activity" ? { ...entry, card: snapshot.cards.get(entry) ?? null } : entry;
}
