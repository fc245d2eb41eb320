/**
 * Splits one projected history text into wire parts.
 *
 * A part has two bounds: its raw UTF-8 size (`history_chunk_bytes`) and its
 * size once `JSON.stringify` has escaped it, because a page must hold at least
 * one part plus all entry and page metadata inside `history_page_bytes`. A text
 * of control characters grows sixfold when escaped, so the second bound is the
 * one that bites there; a text of quotes or backslashes doubles.
 *
 * @module
 */

import { LIMITS } from "../protocol/limits.ts";
import { splitUtf8, type Utf8Part } from "../util/utf8.ts";

// The largest page that can carry a single part with an empty text: every id
// at the 64-byte bound, the longest kind, `false` where it is longer than
// `true`, and a part number wider than any a snapshot can reach. Whatever is
// left of the page bound is what one part's escaped text may use.
const WORST_CASE_EMPTY_PAGE = JSON.stringify({
  session_id: "x".repeat(LIMITS.identifier_bytes),
  revision: "x".repeat(LIMITS.identifier_bytes),
  entries: [{
    message_id: "x".repeat(LIMITS.identifier_bytes),
    kind: "reasoning_summary",
    text: "",
    partial: false,
    part: Number.MAX_SAFE_INTEGER,
    last_part: false,
  }],
  next_cursor: "x".repeat(LIMITS.identifier_bytes),
  complete: false,
});

/**
 * Most escaped UTF-8 bytes one part's text may take so that a page holding
 * just that part, with worst-case metadata, still fits `history_page_bytes`.
 */
export const PART_ESCAPED_BUDGET = LIMITS.history_page_bytes - WORST_CASE_EMPTY_PAGE.length;

/**
 * Splits `text` greedily into parts of at most `maxRawBytes` UTF-8 bytes and
 * `maxEscapedBytes` escaped bytes, cutting only between code points. An empty
 * text is one empty part, so every message has a part 0 and a last part.
 * Concatenating the parts' texts gives back `text` exactly.
 */
export function splitText(
  text: string,
  maxRawBytes: number = LIMITS.history_chunk_bytes,
  maxEscapedBytes: number = PART_ESCAPED_BUDGET,
): Utf8Part[] {
  // The bounds are far above one code point's 4 (raw) or 6 (escaped) bytes,
  // so the first code point a part always takes never overshoots them.
  return splitUtf8(text, maxRawBytes, { maxEscapedBytes, emptyPart: true });
}
