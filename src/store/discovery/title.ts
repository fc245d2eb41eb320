/**
 * The title a listed session shows. It comes only from durable title
 * metadata (the latest `session_title` record, or the latest `title` a
 * `compaction` record carries, whichever is later in the file); a title is
 * never derived from a prompt or generated here. Stored titles are free
 * text from an earlier writer, so they are judged before they are shown:
 * over `discovery_title_bytes` input bytes, holding a lone surrogate, a known
 * secret or a credential-shaped token, or empty once whitespace and control
 * characters are folded, a title is unsafe and the entry shows `null` (the
 * client then displays the session id). A title a model wrote for a
 * session is cut and judged by the same rule before it is stored
 * ({@link generatedTitle}), so what is listed is exactly what was stored.
 *
 * @module
 */

import { LIMITS } from "../../protocol/limits.ts";
import { redactSecrets, replaceControls } from "../../util/redaction.ts";
import { ELLIPSIS, hasLoneSurrogate, utf8ByteCount } from "../../util/utf8.ts";
import type { SessionRecord } from "../records.ts";

/** The existing title bound, in Unicode code points, the ellipsis of a cut title included. */
export const TITLE_CHARACTERS = 50;

/** The stored title of `records`: the latest one recorded, or null when none is. */
export function storedTitle(records: readonly SessionRecord[]): string | null {
  for (let index = records.length - 1; index >= 0; index--) {
    const record = records[index]!;
    if (record.type === "session_title") return record.title;
    if (record.type === "compaction" && record.title !== undefined) return record.title;
  }
  return null;
}

/** The title to show for `stored`, or null when there is none or it is unsafe (see the module comment). */
export function displayTitle(stored: string | null, secrets: readonly string[]): string | null {
  // A UTF-16 unit is at least one UTF-8 byte: the length alone rules out most oversized titles.
  if (stored === null || stored.length > LIMITS.discovery_title_bytes) return null;
  if (utf8ByteCount(stored) > LIMITS.discovery_title_bytes || hasLoneSurrogate(stored)) return null;
  const folded = replaceControls(stored, " ").replace(/\s+/gu, " ").trim();
  if (folded === "" || redactSecrets(folded, secrets) !== folded) return null;
  const points = [...folded];
  return points.length <= TITLE_CHARACTERS ? folded : points.slice(0, TITLE_CHARACTERS - 1).join("") + ELLIPSIS;
}

/**
 * The title to store from a model's titling reply, or null when none is
 * usable: its first nonblank line without a `Title:` label, wrapping quotes,
 * backticks or emphasis and a trailing period, cut to
 * {@link TITLE_CHARACTERS} code points (an ellipsis marking the cut), then
 * judged as {@link displayTitle} judges a stored title.
 */
export function generatedTitle(reply: string, secrets: readonly string[]): string | null {
  const line = reply.split("\n").map((part) => part.trim()).find((part) => part !== "") ?? "";
  const bare = line.replace(/^title\s*:\s*/iu, "").replace(/^["'`*_#\s]+|["'`*_\s]+$/gu, "").replace(/\.$/u, "");
  const points = [...bare];
  const cut = points.length <= TITLE_CHARACTERS ? bare : points.slice(0, TITLE_CHARACTERS - 1).join("") + ELLIPSIS;
  return displayTitle(cut, secrets);
}
