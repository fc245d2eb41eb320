/**
 * The `rewind` record (`docs/storage.md`, "Rewind"): every record from the
 * start of turn `from_turn` up to it is gone from the projection and the
 * provider replay (`rewind-fold.ts`). Record format 4 defines it, never
 * ignorable: skipping it would show and replay turns the user removed, so a
 * release of format 3 or older refuses the history.
 *
 * @module
 */

import * as v from "valibot";
import { IdSchema, SessionIdSchema, TimestampSchema } from "./record-field-schemas.ts";

/** The `rewind` record's fields, an option of the record variant (`records.ts`). */
export const REWIND = {
  v: v.literal(4),
  type: v.literal("rewind"),
  session_id: SessionIdSchema,
  at: TimestampSchema,
  /** The first turn dropped. */
  from_turn: IdSchema,
};

/** The `rewind` record. */
export type RewindRecord = v.InferOutput<v.StrictObjectSchema<typeof REWIND, undefined>>;
