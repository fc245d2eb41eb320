/**
 * UTF-8 sizes and cuts computed from UTF-16 code units, without encoding:
 * count, prefix/suffix within a byte bound, clamp with a marker, split into
 * bounded parts, and the lone-surrogate test and repair.
 *
 * A lone surrogate counts 3 bytes, as `TextEncoder` writes it (U+FFFD), so
 * every answer agrees with the bytes that actually reach the wire or disk.
 * No function here ever cuts between the two halves of a surrogate pair.
 *
 * @module
 */

/** What {@link clampUtf8} appends where it cut, unless told otherwise: 3 bytes. */
export const ELLIPSIS = "…";

/** UTF-8 bytes of one code point; a lone surrogate is encoded as U+FFFD, 3 bytes. */
function codePointBytes(code: number): number {
  return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
}

/**
 * UTF-8 bytes `JSON.stringify` spends on the code point `code` inside a
 * string literal: 2 for `"`, `\` and the short escapes, 6 for other
 * controls and for a lone surrogate (written as `\udXXX`).
 */
function escapedBytes(code: number): number {
  if (code === 0x22 || code === 0x5c) return 2;
  if (code < 0x20) return code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6;
  if (code >= 0xd800 && code <= 0xdfff) return 6;
  return codePointBytes(code);
}

/**
 * The UTF-8 length `new TextEncoder().encode(text).length` would report,
 * counted from UTF-16 code units. A lone surrogate counts 3 bytes because the
 * encoder writes U+FFFD in its place.
 */
export function utf8ByteCount(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * The UTF-8 length of `JSON.stringify(text)`, quotes included, counted
 * without building the string: a catalog sizes 2,048 choices against its
 * byte bounds, and serializing each one just to measure it was most of a
 * page's garbage.
 */
export function jsonStringBytes(text: string): number {
  let bytes = 2;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      index++;
    } else bytes += escapedBytes(unit);
  }
  return bytes;
}

/** The longest prefix of `text`, in code units, whose UTF-8 encoding fits `maxBytes`; never splits a pair. */
export function prefixWithinBytes(text: string, maxBytes: number): number {
  // Fast path: even at 3 bytes per code unit it fits.
  if (text.length * 3 <= maxBytes) return text.length;
  let bytes = 0;
  for (let index = 0; index < text.length;) {
    const code = text.codePointAt(index)!;
    const size = codePointBytes(code);
    if (bytes + size > maxBytes) return index;
    bytes += size;
    index += code > 0xffff ? 2 : 1;
  }
  return text.length;
}

/** The shortest suffix start, in code units, whose UTF-8 encoding fits `maxBytes`; never splits a pair. */
export function suffixWithinBytes(text: string, maxBytes: number): number {
  if (text.length * 3 <= maxBytes) return 0;
  let bytes = 0;
  let index = text.length;
  while (index > 0) {
    const low = text.charCodeAt(index - 1);
    const paired = index >= 2 && low >= 0xdc00 && low <= 0xdfff && (text.charCodeAt(index - 2) & 0xfc00) === 0xd800;
    const start = paired ? index - 2 : index - 1;
    const size = codePointBytes(text.codePointAt(start)!);
    if (bytes + size > maxBytes) break;
    bytes += size;
    index = start;
  }
  return index;
}

/**
 * `text` cut to at most `maxBytes` UTF-8 bytes, `marker` included when it had
 * to cut. The marker always fits: when `maxBytes` leaves no room beside it the
 * result is the marker alone (or, if even that is over, still just the marker).
 */
export function clampUtf8(text: string, maxBytes: number, marker = ELLIPSIS): string {
  if (prefixWithinBytes(text, maxBytes) === text.length) return text;
  const room = Math.max(0, maxBytes - utf8ByteCount(marker));
  return text.slice(0, prefixWithinBytes(text, room)) + marker;
}

/** The last at most `maxBytes` UTF-8 bytes of `text`. */
export function tailUtf8(text: string, maxBytes: number): string {
  return text.slice(suffixWithinBytes(text, maxBytes));
}

/** One part of a split text. */
export interface Utf8Part {
  /** A slice of the input that never splits a surrogate pair. */
  readonly text: string;
  /** Its UTF-8 length (lone surrogates as U+FFFD). */
  readonly bytes: number;
  /** Its UTF-8 length once `JSON.stringify` has escaped it, quotes excluded. */
  readonly escapedBytes: number;
}

/** How {@link splitUtf8} bounds and reports parts beyond the raw byte bound. */
export interface Utf8SplitOptions {
  /** Also bound each part's escaped size (see {@link Utf8Part.escapedBytes}); default unbounded. */
  readonly maxEscapedBytes?: number;
  /**
   * Whether an empty text yields one empty part (history: every message has
   * a part 0) rather than none (events: nothing to send). Default false.
   */
  readonly emptyPart?: boolean;
}

/**
 * Splits `text` greedily into parts of at most `maxBytes` UTF-8 bytes (and
 * `options.maxEscapedBytes` escaped bytes), cutting only between code points.
 * A part that is still empty takes its first code point whatever its size, so
 * bounds below 4 (raw) or 6 (escaped) bytes can be exceeded by one code point.
 * Concatenating the parts' texts gives back `text` exactly.
 */
export function splitUtf8(text: string, maxBytes: number, options: Utf8SplitOptions = {}): Utf8Part[] {
  const maxEscaped = options.maxEscapedBytes ?? Infinity;
  const parts: Utf8Part[] = [];
  let start = 0;
  let bytes = 0;
  let escaped = 0;
  for (let index = 0; index < text.length;) {
    const unit = text.charCodeAt(index);
    const pair = unit >= 0xd800 && unit <= 0xdbff && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00;
    const code = pair ? 0x10000 + ((unit - 0xd800) << 10) + (text.charCodeAt(index + 1) - 0xdc00) : unit;
    const size = codePointBytes(code);
    const escapedSize = escapedBytes(code);
    if (index > start && (bytes + size > maxBytes || escaped + escapedSize > maxEscaped)) {
      parts.push({ text: text.slice(start, index), bytes, escapedBytes: escaped });
      start = index;
      bytes = 0;
      escaped = 0;
    }
    bytes += size;
    escaped += escapedSize;
    index += pair ? 2 : 1;
  }
  if (start < text.length || (options.emptyPart === true && text.length === 0)) {
    parts.push({ text: text.slice(start), bytes, escapedBytes: escaped });
  }
  return parts;
}

// In `u` mode a well-formed pair is one code point, so this matches only the
// unpaired halves, which have no UTF-8 encoding and which JSON.stringify would
// emit as `\udXXX` escapes a strict client rejects.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const LONE_SURROGATES = /[\uD800-\uDFFF]/gu;

/** Whether `text` holds an unpaired surrogate: text that UTF-8 cannot carry as is. */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** Replaces every unpaired surrogate with U+FFFD; everything else, controls included, stays. */
export function sanitizeText(text: string): string {
  return text.replace(LONE_SURROGATES, "\uFFFD");
}
