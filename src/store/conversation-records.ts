/**
 * The stored records a next turn replays to the provider, picked out of a
 * history when it is read, so an attachment keeps only these between turns
 * rather than the whole file's records.
 *
 * @module
 */

import type { ActivityRecord, AssistantMessageRecord, InternalPromptRecord, SessionRecord, UserInputRecord } from "./records.ts";

/** A record the provider conversation is rebuilt from (see `src/runner/replay.ts`). */
export type ConversationRecord = UserInputRecord | AssistantMessageRecord | ActivityRecord | InternalPromptRecord;

/** Whether `record` is part of the replayed conversation. */
export function isConversationRecord(record: SessionRecord): record is ConversationRecord {
  return record.type === "user_input" || record.type === "assistant_message" || record.type === "activity" ||
    record.type === "internal_prompt";
}
