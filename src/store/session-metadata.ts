/**
 * What an attachment keeps of its history besides the projection and the
 * replayed conversation: the session's token totals, summed from its stored
 * `usage` records (the `run.usage` event's session totals), and whether it
 * holds a title (a titling request is made only for a session without one).
 * Both are folded as records are read or appended, one constant step per
 * record, so keeping them costs no read of their own.
 *
 * @module
 */

import type { SessionRecord } from "./records.ts";

/** Token totals and title presence of one history. */
export interface SessionMetadata {
  /** Sum of every stored `usage` record's `input_tokens`. */
  readonly inputTokens: number;
  /** Sum of every stored `usage` record's `output_tokens`. */
  readonly outputTokens: number;
  /** Whether a `session_title` record, or a `compaction` record with a `title`, is stored. */
  readonly titled: boolean;
}

/** The metadata of a history with no records. */
export const NO_METADATA: SessionMetadata = Object.freeze({ inputTokens: 0, outputTokens: 0, titled: false });

/** `from` with `records` (the records stored after those it summarizes) folded in. */
export function foldMetadata(records: readonly SessionRecord[], from: SessionMetadata = NO_METADATA): SessionMetadata {
  let { inputTokens, outputTokens, titled } = from;
  for (const record of records) {
    if (record.type === "usage") {
      inputTokens += record.input_tokens;
      outputTokens += record.output_tokens;
    } else if (record.type === "session_title" || (record.type === "compaction" && record.title !== undefined)) {
      titled = true;
    }
  }
  return { inputTokens, outputTokens, titled };
}
