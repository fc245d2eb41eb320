/**
 * The diffs of a `session.rewind.preview`: for each restorable file, what
 * restoring it would change, from what is on disk now to what it puts back,
 * shown and cut like a tool card's diff (`cards/bounded-diff.ts`) to
 * `REWIND_LIMITS.diff_bytes` each; together they stay within
 * `REWIND_LIMITS.preview_diff_bytes` and the response's frame, and a diff
 * past that is left out and marked so
 * (docs/features/local-agent-extensions.md, "session.rewind").
 *
 * @module
 */

import { DetailBudget, escapedBytes } from "../cards/bounds.ts";
import { boundedDiff } from "../cards/bounded-diff.ts";
import { LIMITS } from "../protocol/limits.ts";
import { REWIND_LIMITS } from "../protocol/rewind-schemas.ts";
import type { CardDiff } from "../protocol/tool-cards.ts";
import { utf8ByteCount } from "../util/utf8.ts";
import type { PreviewedFile } from "./file-restore.ts";

/** Bytes of a response frame around its result: the envelope, the widest escaped request id and the LF. */
const ENVELOPE_BYTES = 512;
/** What a diff object adds beyond its text's escaped bytes, over the `null` it replaces (the widest count included). */
const DIFF_OBJECT_BYTES = 64;

/** One file of a preview's result. */
export type PreviewFile = PreviewedFile["change"] & { readonly diff: CardDiff | null; readonly diff_omitted: boolean };

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** `bytes` as text, or null when they are not UTF-8 (such a file has no text diff). */
function text(bytes: Uint8Array): string | null {
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

/** The diff restoring `file` would make, or null when there is none to show. */
function diffOf(file: PreviewedFile, secrets: readonly string[]): CardDiff | null {
  if (file.now === null) return null;
  const now = text(file.now);
  const restored = file.before === null ? null : text(file.before);
  if (now === null || (file.before !== null && restored === null)) return null;
  return boundedDiff(file.change.path, now, restored, secrets, REWIND_LIMITS.diff_bytes);
}

/**
 * `files` with their diffs, redacted against `secrets`, in order, each while
 * the preview's budget lasts: the smaller of `preview_diff_bytes` and what
 * the frame leaves beside `bare`, the result with every diff left out.
 */
export function withDiffs(files: readonly PreviewedFile[], secrets: readonly string[], bare: unknown): PreviewFile[] {
  const room = LIMITS.output_frame_bytes - ENVELOPE_BYTES - utf8ByteCount(JSON.stringify(bare));
  const budget = new DetailBudget(Math.min(REWIND_LIMITS.preview_diff_bytes, room));
  return files.map((file) => {
    const diff = diffOf(file, secrets);
    if (diff === null) return { ...file.change, diff: null, diff_omitted: false };
    const shown = budget.take(escapedBytes(diff.text) + DIFF_OBJECT_BYTES);
    return { ...file.change, diff: shown ? diff : null, diff_omitted: !shown };
  });
}

/** The files of a result without diffs, each as large as it can be before its diff (`false` is longer than `true`). */
export function withoutDiffs(files: readonly PreviewedFile[]): PreviewFile[] {
  return files.map((file) => ({ ...file.change, diff: null, diff_omitted: false }));
}
