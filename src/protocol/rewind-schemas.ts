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
import { CardDiffSchema } from "./tool-cards.ts";

/** The bounds of a preview's diffs, in escaped bytes (a string's JSON form without its quotes, UTF-8). */
export const REWIND_LIMITS: { readonly diff_bytes: number; readonly preview_diff_bytes: number } = Object.freeze({
  /** One file's diff text, its truncation marker included. */
  diff_bytes: 4_096,
  /** Every diff text of one preview together; the response also stays within `output_frame_bytes`. */
  preview_diff_bytes: 32_768,
});

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

/** One file in a preview: {@link RewindFileSchema}'s fields, the diff restoring it would make, and whether that diff was left out. */
export const RewindPreviewFileSchema: Obj<{ path: Str; created: Bool; state: typeof RewindFileStateSchema; diff: Nullable<typeof CardDiffSchema>; diff_omitted: Bool }> = v.object({
  path: v.string(),
  created: v.boolean(),
  state: RewindFileStateSchema,
  diff: v.nullable(CardDiffSchema),
  diff_omitted: v.boolean(),
});

type Dropped<R, F extends v.GenericSchema> = {
  session_id: Pattern;
  message_id: Pattern;
  revision: R;
  dropped_turns: Count;
  dropped_messages: Count;
  unrestorable: List<typeof UnrestorableSchema>;
  files: List<F>;
};

const dropped = {
  session_id: SessionIdSchema,
  message_id: OpaqueIdSchema,
  dropped_turns: CountSchema,
  dropped_messages: CountSchema,
  unrestorable: list(UnrestorableSchema),
};

/** `session.rewind.preview`'s result: what a rewind at `revision` would drop and what it could restore; nothing changed. */
export const SessionRewindPreviewResultSchema: Obj<Dropped<Pattern, typeof RewindPreviewFileSchema>> = v.object({ ...dropped, files: list(RewindPreviewFileSchema), revision: OpaqueIdSchema });

/** `session.rewind`'s result: what was dropped and restored, and the history's new revision (null: reopen to page it). */
export const SessionRewindResultSchema: Obj<Dropped<Nullable<Pattern>, typeof RewindFileSchema>> = v.object({ ...dropped, files: list(RewindFileSchema), revision: v.nullable(OpaqueIdSchema) });
