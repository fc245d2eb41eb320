/**
 * The `subagent_link` record (`docs/storage.md`, "Subagent histories"): in
 * the delegating history, next to a `task` call's `subagent` activity, it
 * names the child's own history, the profile it ran as, the ceiling it ran
 * under and the call it answered (the provider's call id and the call's
 * index among the step's calls). Record format 3 defines it; it is written
 * `ignorable`, since it changes nothing a history shows or replays, so an
 * older release skips it and still reads the session.
 *
 * @module
 */

import * as v from "valibot";
import { bytesWithin, CountSchema, IdSchema, SessionIdSchema, stringWhere, TimestampSchema } from "./record-field-schemas.ts";

const POLICY = v.picklist(["allow", "ask", "deny"]);
// Tool names as profiles spell them (`profile-files.ts`), profile names as settings do (`agent-settings.ts`).
const TOOL_NAME = stringWhere((name) => /^[A-Za-z0-9_-]{1,64}$/.test(name), "Invalid tool name");
const PROFILE = stringWhere((name) => /^(?=.{1,64}$)[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name), "Invalid profile");

/** The `subagent_link` record's fields, an option of the record variant (`records.ts`). */
export const SUBAGENT_LINK = {
  v: v.literal(3),
  type: v.literal("subagent_link"),
  session_id: SessionIdSchema,
  at: TimestampSchema,
  ignorable: v.literal(true),
  turn_id: IdSchema,
  /** The task call's `subagent` activity. */
  activity_id: IdSchema,
  /** The provider's id of the `task` call the child's report answered. */
  call_id: stringWhere(bytesWithin(1, 256), "Invalid call id"),
  /** The call's index among its step's tool calls, from 0. */
  call_index: CountSchema,
  child: v.strictObject({ session_id: SessionIdSchema, profile: PROFILE }),
  /** Per tool, the policy the child ran under and the profile that set it (`delegatedPolicies`). */
  ceiling: v.strictObject({ tools: v.record(TOOL_NAME, POLICY), sources: v.record(TOOL_NAME, PROFILE) }),
  /**
   * The policy of every tool `ceiling.tools` does not name (a profile's `*` entry) and the profile that set it;
   * absent when there is none. A field of its own, not a `*` key in `ceiling`, which a reader of an earlier
   * release of format 3 would refuse; it drops an unknown field (docs/storage.md, "Understood, skipped or refused").
   */
  ceiling_unnamed: v.exactOptional(v.strictObject({ policy: POLICY, source: PROFILE })),
};
