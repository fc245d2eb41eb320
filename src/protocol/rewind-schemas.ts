/**
 * Params and results of the negotiated `session.rewind` capability
 * (`docs/features/local-agent-extensions.md`, "session.rewind"):
 * `session.rewind.preview` says what rewinding to one user message would
 * drop, `session.rewind` does it.
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../util/exact-object.ts";
import { CountSchema as count } from "./schema-parts.ts";
import { OpaqueIdSchema, SessionIdSchema } from "./schemas.ts";

/** `session.rewind.preview` params: the attached session, its current history revision, and a user message of that revision. */
export const SessionRewindPreviewParamsSchema = exactObject({
  session_id: SessionIdSchema,
  revision: OpaqueIdSchema,
  message_id: OpaqueIdSchema,
});

/** `session.rewind` params: those of the preview, and whether to restore the files the dropped turns changed. */
export const SessionRewindParamsSchema = exactObject({
  session_id: SessionIdSchema,
  revision: OpaqueIdSchema,
  message_id: OpaqueIdSchema,
  restore_files: v.boolean(),
});

/** The output of {@link SessionRewindParamsSchema}. */
export type SessionRewindParams = v.InferOutput<typeof SessionRewindParamsSchema>;

/** What the dropped turns did that no rewind undoes: tool calls by tool name, with how many ran. */
export const UnrestorableSchema = exactObject({ tool: v.string(), calls: count });

/** One file the dropped turns changed through `write_file` or `edit_file`, and how it stands. */
export const RewindFileSchema = exactObject({
  path: v.string(),
  created: v.boolean(),
  state: v.picklist(["restorable", "changed", "restored", "kept", "failed"]),
});

/** What a rewind drops: counts of the history, and the side effects it leaves in place. */
const DROPPED = {
  session_id: SessionIdSchema,
  /** The message rewound to: it and every later message are dropped. */
  message_id: OpaqueIdSchema,
  dropped_turns: count,
  dropped_messages: count,
  unrestorable: v.array(UnrestorableSchema),
  files: v.array(RewindFileSchema),
};

/** `session.rewind.preview`'s result. */
export const SessionRewindPreviewResultSchema = exactObject({ ...DROPPED, revision: OpaqueIdSchema });

/** `session.rewind`'s result: what was dropped, and the history's new revision (null: reopen to page it). */
export const SessionRewindResultSchema = exactObject({ ...DROPPED, revision: v.nullable(OpaqueIdSchema) });
