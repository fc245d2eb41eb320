/**
 * Rebuilds the provider conversation of earlier turns from stored records.
 *
 * The same function serves a session continued in this child and one
 * reopened after a restart, so both send the provider the same context.
 * Raw tool results and opaque reasoning are never stored, so earlier turns
 * come back as text: each user input, then everything the assistant did up
 * to the next input as one assistant message, where a tool activity appears
 * as a bracketed line with its final state and safe summary. That keeps the
 * model aware of what it already did without replaying file contents.
 * After a replacing compaction, its summary stands first, as a user message
 * ({@link summaryMessage}), for everything it replaced.
 *
 * @module
 */

import type { ConversationRecord } from "../store/conversation-records.ts";
import type { ModelMessage } from "./providers/conversation.ts";

/**
 * How a compaction summary reaches the model: the same message whether the
 * run that compacted goes on or a later turn replays it, so both send the
 * same context.
 */
export function summaryMessage(summary: string): ModelMessage {
  return { role: "user", text: `${SUMMARY_HEADING}\n\n${summary}` };
}

/** The line a summary message starts with. */
export const SUMMARY_HEADING = "[The earlier part of this conversation was compacted to fit the model's context. This is its summary:]";

/** Whether `message` is a compaction summary as {@link summaryMessage} makes it. */
export function isSummaryMessage(message: ModelMessage | undefined): boolean {
  return message?.role === "user" && message.text.startsWith(`${SUMMARY_HEADING}\n\n`);
}

type Piece = { text: string };

/**
 * The conversation `records` describe, oldest first: records as the store
 * folds them (`foldConversation`), so a compaction can only come first.
 */
export function replayConversation(records: readonly ConversationRecord[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  let pieces: Piece[] = [];
  let byKey = new Map<string, Piece>();
  const flush = () => {
    const text = pieces.map((piece) => piece.text).filter((part) => part !== "").join("\n\n");
    if (text !== "") out.push({ role: "assistant", text, toolCalls: [], replay: [] });
    pieces = [];
    byKey = new Map();
  };
  // A later record of the same message or activity replaces the earlier one in place, as in the projection.
  const put = (key: string, text: string) => {
    const existing = byKey.get(key);
    if (existing !== undefined) existing.text = text;
    else {
      const piece = { text };
      byKey.set(key, piece);
      pieces.push(piece);
    }
  };
  for (const record of records) {
    switch (record.type) {
      case "compaction":
        out.push(summaryMessage(record.summary));
        break;
      case "user_input":
      case "internal_prompt":
        flush();
        out.push({ role: "user", text: record.text });
        break;
      case "assistant_message":
        put(JSON.stringify(["m", record.turn_id, record.message_id]), record.text);
        break;
      case "activity":
        put(JSON.stringify(["a", record.turn_id, record.activity_id]), activityLine(record));
        break;
    }
  }
  flush();
  return out;
}

function activityLine(record: Extract<ConversationRecord, { type: "activity" }>): string {
  const state = record.state === "started" ? "interrupted" : record.state;
  return `[${record.kind} ${record.name} ${state}: ${record.summary}]`;
}
