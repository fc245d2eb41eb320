/**
 * Text helpers shared by the tools: quoting of model-supplied values for
 * summaries, counts and sizes for people, and the one place a
 * {@link ToolResult} is redacted and bounded (UTF-8 cuts are `util/utf8.ts`).
 *
 * @module
 */

import { isRuntimeError } from "../../host/runtime.ts";
import { hasControl, redactSecrets, replaceControls } from "../../util/redaction.ts";
import { escapeInvisible } from "../../util/invisible.ts";
import { clampUtf8 } from "../../util/utf8.ts";
import { MAX_OUTPUT_BYTES, MAX_SUMMARY_BYTES, type ToolResult } from "./tool.ts";

/** Appended to output that the final bound had to cut (tools normally bound and annotate earlier). */
export const OUTPUT_CUT_NOTE = "\n[output truncated at 64 KiB]";


/**
 * `text` JSON-quoted with every invisible character (`util/invisible.ts`) written as a
 * visible `\u{…}` escape: `src/\u{202E}gnp.js`, `.git\u{200B}/hooks`. JSON
 * quoting doubles every backslash already in `text`, so an escape can only
 * come from here and the shown form maps back to exactly one value. Never
 * cut: approval prompts show values whole or not at all.
 */
export function showExactly(text: string): string {
  return showJsonExactly(text);
}

/**
 * `value` as compact JSON (what goes on the wire) with every
 * invisible character (`util/invisible.ts`) written as a visible `\u{…}` escape. JSON
 * quotes every string and doubles every backslash inside one, so, as with
 * {@link showExactly}, an escape can only come from here. Never cut.
 */
export function showJsonExactly(value: unknown): string {
  return escapeInvisible(JSON.stringify(value));
}

/**
 * A model-supplied value (path, pattern, command) made safe to embed in a
 * one-line result summary: cut to `maxBytes`, then shown with
 * {@link showExactly}, so newlines cannot forge extra lines and bidi
 * characters cannot reorder it. Approval prompts use {@link showExactly}
 * on the whole value instead.
 */
export function quote(text: string, maxBytes = 200): string {
  return showExactly(clampUtf8(text, maxBytes));
}

const EDGE_BLANK = /^\s|\s$/;

/** A name as one output line: JSON-quoted when it could break the one-name-per-line layout. */
export function displayName(name: string): string {
  return hasControl(name) || EDGE_BLANK.test(name) ? JSON.stringify(name) : name;
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
  return clampUtf8(replaceControls(redactSecrets(text, secrets), " "), MAX_SUMMARY_BYTES);
}
