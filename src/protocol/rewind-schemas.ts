/**
 * Results of the negotiated `session.rewind` capability
 * (`docs/features/local-agent-extensions.md`, "session.rewind"):
 * `session.rewind.preview` says what rewinding to one user message would
 * drop, `session.rewind` does it. Their params are in `schemas.ts`, which
 * every child loads; these only where results are checked.
 *
 * @module
 */

import * as v from "valibot";
import type { Bool, Count, List, Nullable, Obj, OneOf, Pattern, Str } from "../util/schema-types.ts";
import { CountSchema, list } from "./schema-parts.ts";
import { OpaqueIdSchema, SessionIdSchema } from "./schemas.ts";

/** Calls of one tool among the dropped turns: what the conversation rewind itself leaves in place. */
export const UnrestorableSchema: Obj<{ tool: Str; calls: Count }> = v.object({ tool: v.string(), calls: CountSchema });

/** How a file stands: before a rewind `restorable` or `changed`; after it `restored`, `changed`, `kept` or `failed`. */
export const RewindFileStateSchema: OneOf<["restorable", "changed", "restored", "kept", "failed"]> = v.picklist(["restorable", "changed", "restored", "kept", "failed"]);

/** One file the dropped turns changed through `write_file` or `edit_file` (with a checkpoint), and how it stands. */
export const RewindFileSchema: Obj<{ path: Str; created: Bool; state: typeof RewindFileStateSchema }> = v.object({
  path: v.string(),
  created: v.boolean(),
  state: RewindFileStateSchema,
});

type Dropped<R> = {
  session_id: Pattern;
  message_id: Pattern;
  revision: R;
  dropped_turns: Count;
  dropped_messages: Count;
  unrestorable: List<typeof UnrestorableSchema>;
  files: List<typeof RewindFileSchema>;
};

const dropped = {
  session_id: SessionIdSchema,
  message_id: OpaqueIdSchema,
  dropped_turns: CountSchema,
  dropped_messages: CountSchema,
  unrestorable: list(UnrestorableSchema),
  files: list(RewindFileSchema),
};

/** `session.rewind.preview`'s result: what a rewind at `revision` would drop and what it could restore; nothing changed. */
export const SessionRewindPreviewResultSchema: Obj<Dropped<Pattern>> = v.object({ ...dropped, revision: OpaqueIdSchema });

/** `session.rewind`'s result: what was dropped and restored, and the history's new revision (null: reopen to page it). */
export const SessionRewindResultSchema: Obj<Dropped<Nullable<Pattern>>> = v.object({ ...dropped, revision: v.nullable(OpaqueIdSchema) });
