/**
 * Descriptions of the negotiated `session.rewind` params and results
 * (`docs/schema/`), from docs/features/local-agent-extensions.md,
 * "session.rewind". See `describe.ts` for why they are a table.
 *
 * @module
 */

import { describe, type Descriptions } from "./describe.ts";
import { ErrorCode } from "./errors.ts";
import { METHODS } from "./methods.ts";
import { REWIND_LIMITS, RewindFileSchema, RewindPreviewFileSchema, SessionRewindPreviewResultSchema, SessionRewindResultSchema, UnrestorableSchema } from "./rewind-schemas.ts";

const TARGET = {
  session_id: "The attached session's id.",
  revision: `The history revision the client shows (from \`session.open\`, \`run.finished\` or a rewind); any other is \`${ErrorCode.staleRevision}\`.`,
  message_id: `A \`user\` entry's \`message_id\` at that revision: it and everything after it are dropped. Any other id is \`${ErrorCode.invalidParams}\`.`,
};

const FILE = {
  path: "The workspace-relative path.",
  created: "Whether the dropped turns created it: restoring removes it.",
};

const DROPPED = {
  session_id: "The session's id.",
  message_id: "The user message rewound to.",
  dropped_turns: "Turns dropped: the message's own and every later one.",
  dropped_messages: "History messages dropped: the message and every later one.",
  unrestorable: "The dropped turns' tool and subagent calls by tool name: what dropping the conversation does not undo (shell, MCP and Code Mode effects never are; write_file and edit_file changes only through `files`).",
  files: "Each file the dropped turns changed through write_file or edit_file with a checkpoint, by path.",
};

/** Descriptions of the rewind params and results. */
export const REWIND_DESCRIPTIONS: Descriptions = new Map([
  describe(METHODS["session.rewind.preview"], `\`session.rewind.preview\` params (required-only): what rewinding to a user message would drop and restore; changes nothing. \`${ErrorCode.checkpointsEvicted}\` when a dropped turn's file checkpoints were evicted.`, TARGET),
  describe(METHODS["session.rewind"], "`session.rewind` params (required-only): drop a user message and everything after it from the conversation.", {
    ...TARGET,
    restore_files: `Whether to put back each \`restorable\` file the dropped turns changed; false keeps every file as it is. True when a dropped turn's file checkpoints were evicted is \`${ErrorCode.checkpointsEvicted}\` and changes nothing; false still rewinds the conversation.`,
  }),
  describe(UnrestorableSchema, "Calls of one tool among the dropped turns.", {
    tool: "The tool's name as activities show it.",
    calls: "How many calls.",
  }),
  describe(RewindFileSchema, "One file the dropped turns changed, and how the rewind left it.", {
    ...FILE,
    state: "`restored`, `changed` (changed since the dropped turns' last write: never touched), `kept` (restore_files false) or `failed` (could not be written; left as it was).",
  }),
  describe(RewindPreviewFileSchema, "One file the dropped turns changed, how it stands, and what restoring it would change.", {
    ...FILE,
    state: "`restorable` (holds exactly what the dropped turns wrote) or `changed` (changed since: never touched).",
    diff: `For a \`restorable\` file whose content now and restored are both UTF-8 text: the unified diff from what is on disk now to what restoring puts back (\`+++ /dev/null\` when it removes the file), redacted and escaped, cut to ${REWIND_LIMITS.diff_bytes} escaped bytes with a marker naming the whole diff's size; null otherwise, or when \`diff_omitted\`.`,
    diff_omitted: `Whether the diff was left out because the preview's diffs reached ${REWIND_LIMITS.preview_diff_bytes} escaped bytes together (or the response's frame would not hold it).`,
  }),
  describe(SessionRewindPreviewResultSchema, "`session.rewind.preview` result: what a rewind at this revision would do.", {
    ...DROPPED,
    revision: "The revision previewed; pass it to `session.rewind`.",
  }),
  describe(SessionRewindResultSchema, "`session.rewind` result: what was dropped and restored.", {
    ...DROPPED,
    revision: "The history's new revision, or null when it cannot be paged (reopen the session).",
  }),
]);
