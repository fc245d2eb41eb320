/**
 * The stored records a next turn replays to the provider, picked out of a
 * history when it is read, so an attachment keeps only these between turns
 * rather than the whole file's records.
 *
 * A replacing compaction (`compaction` at `v: 2`) folds what came before it:
 * the replay keeps that record (its summary) and the records it does not
 * replace, and nothing older, so the records an attachment holds stop
 * growing with the session once it is compacted (docs/storage.md,
 * "Compaction").
 *
 * @module
 */

import type { ActivityRecord, AssistantMessageRecord, InternalPromptRecord, ReplacingCompactionRecord, SessionRecord, UserInputRecord } from "./records.ts";

/** A record the provider conversation is rebuilt from (see `src/runner/replay.ts`). */
export type ConversationRecord = UserInputRecord | AssistantMessageRecord | ActivityRecord | InternalPromptRecord | ReplacingCompactionRecord;

/** Whether `record` is part of the replayed conversation; a `v: 1` compaction never was. */
export function isConversationRecord(record: SessionRecord): record is ConversationRecord {
  return record.type === "user_input" || record.type === "assistant_message" || record.type === "activity" ||
    record.type === "internal_prompt" || (record.type === "compaction" && record.v === 2);
}

/**
 * The replay `conversation` (itself a fold, or empty) continued with
 * `added`, in stored order. A replacing compaction drops every record it
 * replaces: those up to the last record of its `through_turn` that the
 * replay holds, and the compaction it succeeds (the runner summarised that
 * one's summary too). When the replay holds no record of that turn, no
 * record is dropped but the earlier summary. The result starts with the
 * latest replacing compaction, if any, followed by the records replayed
 * after its summary, so folding in two steps gives what one fold gives.
 */
export function foldConversation(conversation: readonly ConversationRecord[], added: readonly SessionRecord[]): ConversationRecord[] {
  let out = [...conversation];
  for (const record of added) {
    if (!isConversationRecord(record)) continue;
    if (record.type !== "compaction") {
      out.push(record);
      continue;
    }
    const start = out[0]?.type === "compaction" ? 1 : 0;
    let cut = start;
    for (let index = out.length - 1; index >= start; index--) {
      if (out[index]!.turn_id === record.through_turn) {
        cut = index + 1;
        break;
      }
    }
    out = [record, ...out.slice(cut)];
  }
  return out;
}
