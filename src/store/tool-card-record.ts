/**
 * The `tool_card` record (`docs/storage.md#records`): a tool call's card as
 * its terminal snapshot left it, stored once per call with the run for a
 * client that negotiated `tool.cards`
 * (`docs/features/local-agent-tool-cards.md`), which `history.page` attaches
 * to the call's activity entry for such a client. Always `ignorable`: it
 * only adds detail to an activity an older reader shows anyway, so a
 * release without cards skips it and pages as before.
 *
 * @module
 */

import * as v from "valibot";
import { CardSchema } from "../protocol/tool-cards.ts";
import { IdSchema, SessionIdSchema, TimestampSchema } from "./record-field-schemas.ts";

/** The fields of a `tool_card` record (a table, as `records.ts` builds its variant from tables). */
export const TOOL_CARD = {
  v: v.literal(1),
  type: v.literal("tool_card"),
  ignorable: v.literal(true),
  session_id: SessionIdSchema,
  at: TimestampSchema,
  turn_id: IdSchema,
  activity_id: IdSchema,
  card_id: IdSchema,
  card: CardSchema,
};
