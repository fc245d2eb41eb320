/**
 * How card texts are cut to their escaped budgets (a card's bytes are its
 * JSON's, so every bound here counts a string as `JSON.stringify` writes it,
 * quotes excluded), how they are made safe to show, and the run's detail
 * budget (`docs/features/local-agent-tool-cards.md`, "Bounds").
 *
 * @module
 */

import { escapeInvisible } from "../util/invisible.ts";
import { redactSecrets } from "../util/redaction.ts";
import { jsonStringBytes, splitUtf8, suffixWithinBytes, utf8ByteCount } from "../util/utf8.ts";

/** The escaped size of `text`: its JSON string's UTF-8 bytes without the quotes. */
export function escapedBytes(text: string): number {
  return jsonStringBytes(text) - 2;
}

/** The longest prefix of `text` whose escaped size is at most `max`; never splits a code point. */
export function headWithin(text: string, max: number): string {
  if (escapedBytes(text) <= max) return text;
  // A first part takes one code point whatever its size: one wider than the bound leaves nothing.
  const first = max <= 0 ? undefined : splitUtf8(text, max, { maxEscapedBytes: max })[0];
  return first === undefined || first.escapedBytes > max ? "" : first.text;
}

/** The longest suffix of `text` (found in a few shrinking steps) whose escaped size is at most `max`. */
export function tailWithin(text: string, max: number): string {
  let tail = text.slice(suffixWithinBytes(text, Math.max(0, max)));
  for (let size = escapedBytes(tail); size > max; size = escapedBytes(tail)) {
    tail = tail.slice(suffixWithinBytes(tail, Math.floor((utf8ByteCount(tail) * max) / size) - 1));
  }
  return tail;
}

/**
 * `text` cut to `max` escaped bytes with `marker(shown, total)` after the
 * kept head (raw UTF-8 byte counts), or whole when it fits; and whether it
 * was cut. `total` is the size of the whole `text` is the start of (itself
 * unless given): a part of a larger whole is always marked.
 */
export function cutWithMarker(text: string, max: number, marker: (shown: number, total: number) => string, total = utf8ByteCount(text)): { text: string; cut: boolean } {
  if (escapedBytes(text) <= max && total === utf8ByteCount(text)) return { text, cut: false };
  // The marker's digits depend on the head's size: reserve room for the widest.
  const room = max - escapedBytes(marker(total, total));
  const head = headWithin(text, room);
  return { text: head + marker(utf8ByteCount(head), total), cut: true };
}

/**
 * Text made safe to show: known secrets redacted, then every invisible
 * character escaped as the approval prompt escapes it, except the line
 * breaks and tabs that lay out code and output.
 */
export function displayText(text: string, secrets: readonly string[]): string {
  return redactSecrets(text, secrets).split("\n").map((line) => line.split("\t").map(escapeInvisible).join("\t")).join("\n");
}

/** The detail budget of one run: diff texts and outputs are attached only while it lasts. */
export class DetailBudget {
  #left: number;

  /** Creates a budget of `bytes` escaped bytes. */
  constructor(bytes: number) {
    this.#left = bytes;
  }

  /** Takes `bytes` when they fit what is left; false, taking nothing, otherwise. */
  take(bytes: number): boolean {
    if (bytes > this.#left) return false;
    this.#left -= bytes;
    return true;
  }
}
