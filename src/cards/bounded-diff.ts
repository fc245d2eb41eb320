/**
 * A unified diff made safe to show and cut to an escaped bound with a
 * marker naming the whole diff's size: what a tool card's `diff` shows
 * (`docs/features/local-agent-tool-cards.md`) and what a
 * `session.rewind.preview` shows per file
 * (`docs/features/local-agent-extensions.md`, "session.rewind").
 *
 * @module
 */

import type { CardDiff } from "../protocol/tool-cards.ts";
import { cutWithMarker, displayText } from "./bounds.ts";
import { unifiedDiff } from "./diff.ts";

/** How a cut diff's marker starts: a cut diff is cut again from before it. */
export const DIFF_MARKER_START = "\n[… diff truncated: ";

/** The marker after a cut diff's shown head: raw UTF-8 bytes shown and of the whole diff. */
export const diffMarker = (shown: number, total: number): string => `${DIFF_MARKER_START}${shown} of ${total} bytes shown …]`;

/**
 * A diff made safe to show line by line: each hunk line's text is redacted
 * apart from its sign, because a sign (`-`, `+`) in front of a credential
 * would hide it from the token-boundary rules of redaction.
 */
function displayDiff(diff: string, secrets: readonly string[]): string {
  return diff.split("\n").map((line, index) => {
    const body = index >= 2 && (line.startsWith(" ") || line.startsWith("-") || line.startsWith("+"));
    return body ? line[0] + displayText(line.slice(1), secrets) : displayText(line, secrets);
  }).join("\n");
}

/**
 * The diff of `before` (null: created) to `after` (null: removed), shown
 * and cut to `maxBytes` escaped bytes; null when it is empty.
 */
export function boundedDiff(path: string, before: string | null, after: string | null, secrets: readonly string[], maxBytes: number): CardDiff | null {
  const whole = displayDiff(unifiedDiff(path, before, after), secrets);
  if (whole === "") return null;
  const { text, cut } = cutWithMarker(whole, maxBytes, diffMarker);
  return { text, truncated: cut, total_bytes: new TextEncoder().encode(whole).length };
}
