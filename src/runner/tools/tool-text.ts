/**
 * Text helpers shared by the tools: UTF-8 byte bounds that never split a
 * code point, quoting of model-supplied values for summaries, and the one
 * place a {@link ToolResult} is redacted and bounded.
 *
 * @module
 */

import { isRuntimeError } from "../../host/runtime.ts";
import { redactSecrets } from "../../util/redaction.ts";
import { MAX_OUTPUT_BYTES, MAX_SUMMARY_BYTES, type ToolResult } from "./tool.ts";

/** Appended where {@link clampUtf8} cut the text. */
export const ELLIPSIS = "…";

/** Appended to output that the final bound had to cut (tools normally bound and annotate earlier). */
export const OUTPUT_CUT_NOTE = "\n[output truncated at 64 KiB]";

/** UTF-8 bytes of one code point; a lone surrogate is encoded as U+FFFD, 3 bytes. */
function codePointBytes(code: number): number {
  return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
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

/** `text` cut to at most `maxBytes` UTF-8 bytes, `marker` included when it had to cut. */
export function clampUtf8(text: string, maxBytes: number, marker = ELLIPSIS): string {
  if (prefixWithinBytes(text, maxBytes) === text.length) return text;
  const room = Math.max(0, maxBytes - utf8Length(marker));
  return text.slice(0, prefixWithinBytes(text, room)) + marker;
}

/** The last at most `maxBytes` UTF-8 bytes of `text`. */
export function tailUtf8(text: string, maxBytes: number): string {
  return text.slice(suffixWithinBytes(text, maxBytes));
}

function utf8Length(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length;) {
    const code = text.codePointAt(index)!;
    bytes += codePointBytes(code);
    index += code > 0xffff ? 2 : 1;
  }
  return bytes;
}

/**
 * A model-supplied value (path, pattern, command) made safe to embed in a
 * one-line summary: cut to `maxBytes`, then JSON-quoted so newlines and
 * control characters cannot forge extra lines.
 */
export function quote(text: string, maxBytes = 200): string {
  return JSON.stringify(clampUtf8(text, maxBytes));
}

// deno-lint-ignore no-control-regex -- names with controls are quoted, not printed raw
const UNPRINTABLE = /[\u0000-\u001F\u007F-\u009F]|^\s|\s$/;

/** A name as one output line: JSON-quoted when it could break the one-name-per-line layout. */
export function displayName(name: string): string {
  return UNPRINTABLE.test(name) ? JSON.stringify(name) : name;
}

/**
 * `n` with comma thousands separators ("1,000"), as `toLocaleString("en-US")`
 * writes it but without it: the first locale-aware call loads ICU's number
 * formatting data, about 6 MiB of resident memory in a child that idles.
 */
export function groupDigits(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** `1 file`, `3 files`: `plural` defaults to `word + "s"`. */
export function count(n: number, word: string, plural = `${word}s`): string {
  return `${groupDigits(n)} ${n === 1 ? word : plural}`;
}

/** A byte count for people: `345 bytes`, `3.4 KiB`, `1.2 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return count(bytes, "byte");
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * A fixed phrase for a runtime failure. Error messages are never passed on:
 * platform messages can carry paths outside the workspace.
 */
export function describeError(error: unknown): string {
  if (!isRuntimeError(error)) return "unexpected error";
  switch (error.code) {
    case "not_found":
      return "not found";
    case "exists":
      return "already exists";
    case "permission":
      return "permission denied";
    case "not_directory":
      return "not a directory";
    case "is_directory":
      return "is a directory";
    case "not_file":
      return "not a regular file";
    case "symlink":
      return "is a symbolic link";
    case "too_large":
      return "too large";
    default:
      return "I/O error";
  }
}

// deno-lint-ignore no-control-regex -- replacing controls is the point
const CONTROLS = /[\u0000-\u001F\u007F-\u009F]/g;

/**
 * The single exit of every tool: redacts known secrets and credential-shaped
 * tokens, then bounds. Redaction runs on the whole text before the cut: a
 * secret straddling the cut is then replaced whole rather than left as a
 * readable prefix. Tools bound their text near 64 KiB before calling this,
 * so the whole-text pass stays cheap.
 */
export function finishResult(ok: boolean, output: string, summary: string, secrets: readonly string[]): ToolResult {
  return {
    ok,
    output: clampUtf8(redactSecrets(output, secrets), MAX_OUTPUT_BYTES, OUTPUT_CUT_NOTE),
    summary: boundSummary(summary, secrets),
  };
}

/** A summary or description: redacted, one line, at most 1,024 UTF-8 bytes. */
export function boundSummary(text: string, secrets: readonly string[]): string {
  return clampUtf8(redactSecrets(text, secrets).replace(CONTROLS, " "), MAX_SUMMARY_BYTES);
}
