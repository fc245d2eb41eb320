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

/** One part of a text, with the byte counts the snapshot budget needs. */
export type TextPart = {
  /** The part's text: a slice of the input that never splits a surrogate pair. */
  readonly text: string;
  /** UTF-8 bytes of the escaped text between (excluding) its JSON quotes. */
  readonly escapedBytes: number;
};

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

/** UTF-8 bytes `JSON.stringify` spends on the code point `code` inside a string. */
function escapedSize(code: number): number {
  if (code === 0x22 || code === 0x5c) return 2;
  if (code < 0x20) return code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6;
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if (code >= 0xd800 && code <= 0xdfff) return 6; // a lone half: only if the caller skipped sanitizeText
  return code < 0x10000 ? 3 : 4;
}

/** UTF-8 bytes of the code point `code` (a lone half counts as the U+FFFD it encodes to). */
function rawSize(code: number): number {
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  return code < 0x10000 ? 3 : 4;
}

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
): TextPart[] {
  const parts: TextPart[] = [];
  let start = 0;
  let raw = 0;
  let escaped = 0;
  let i = 0;
  while (i < text.length) {
    const unit = text.charCodeAt(i);
    let code = unit;
    let width = 1;
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        code = 0x10000 + ((unit - 0xd800) << 10) + (next - 0xdc00);
        width = 2;
      }
    }
    const r = rawSize(code);
    const e = escapedSize(code);
    // A part that is still empty takes the code point whatever its size: the
    // bounds are far above one code point's 4 (raw) or 6 (escaped) bytes.
    if (i > start && (raw + r > maxRawBytes || escaped + e > maxEscapedBytes)) {
      parts.push({ text: text.slice(start, i), escapedBytes: escaped });
      start = i;
      raw = 0;
      escaped = 0;
    }
    raw += r;
    escaped += e;
    i += width;
  }
  parts.push({ text: text.slice(start), escapedBytes: escaped });
  return parts;
}
