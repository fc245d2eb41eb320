/**
 * UTF-8 sizes and cuts computed from UTF-16 code units, without encoding.
 * A lone surrogate counts 3 bytes, as `TextEncoder` writes it (U+FFFD), so
 * every answer agrees with the bytes that actually reach the wire or disk.
 *
 * @module
 */

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

/** Splits `text` into parts of at most `maxBytes` UTF-8 bytes (≥ 4), never inside a code point; empty text has no parts. */
export function splitUtf8(text: string, maxBytes: number): { text: string; bytes: number }[] {
  const parts: { text: string; bytes: number }[] = [];
  let start = 0;
  let bytes = 0;
  for (let index = 0; index < text.length;) {
    const unit = text.charCodeAt(index);
    const pair = unit >= 0xd800 && unit <= 0xdbff && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00;
    // A lone surrogate encodes as U+FFFD: 3 bytes, as TextEncoder writes it.
    const size = pair ? 4 : unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3;
    if (bytes + size > maxBytes && index > start) {
      parts.push({ text: text.slice(start, index), bytes });
      start = index;
      bytes = 0;
    }
    bytes += size;
    index += pair ? 2 : 1;
  }
  if (start < text.length) parts.push({ text: text.slice(start), bytes });
  return parts;
}

// In `u` mode a well-formed pair is one code point, so this matches only the
// unpaired halves, which have no UTF-8 encoding and which JSON.stringify would
// emit as `\udXXX` escapes a strict client rejects.
const LONE_SURROGATE = /[\uD800-\uDFFF]/gu;

/** Replaces every unpaired surrogate with U+FFFD; everything else, controls included, stays. */
export function sanitizeText(text: string): string {
  return text.replace(LONE_SURROGATE, "\uFFFD");
}
