/**
 * The `rewind` record (format 3) as the store reads it: what it removes from
 * the provider replay and the projection, across a replacing compaction and
 * a subagent call, and what a rewind plan counts as left in place.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { replayConversation, summaryMessage } from "../src/runner/replay.ts";
import type { ModelMessage } from "../src/runner/providers/conversation.ts";
import { foldConversation } from "../src/store/conversation-records.ts";
import { projectHistory } from "../src/store/projection.ts";
import { parseRecordLine } from "../src/store/record-lines.ts";
import { encodeRecord, type SessionRecord } from "../src/store/records.ts";
import { applyRewinds } from "../src/store/rewind-fold.ts";
import { messagesFrom, planRewind } from "../src/rewind/rewind-plan.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const SID = "s1";
const common = { session_id: SID, at: "2026-03-01T10:00:00.000Z" } as const;
const started = (turn: string): SessionRecord => ({ v: 1, type: "turn_started", ...common, turn_id: turn, run_id: `run-${turn}` });
const finished = (turn: string): SessionRecord => ({ v: 1, type: "turn_finished", ...common, turn_id: turn, outcome: "completed", error_code: null });
const input = (turn: string, text: string): SessionRecord => ({ v: 1, type: "user_input", ...common, turn_id: turn, message_id: "input", text });
const answer = (turn: string, text: string): SessionRecord => ({ v: 1, type: "assistant_message", ...common, turn_id: turn, message_id: "a0", text, partial: false });
const activity = (turn: string, id: string, kind: "tool" | "subagent" | "compaction", name: string): SessionRecord => ({ v: 1, type: "activity", ...common, turn_id: turn, activity_id: id, kind, name, state: "completed", summary: name });
const rewind = (turn: string): SessionRecord => ({ v: 4, type: "rewind", ...common, from_turn: turn });
const compaction = (turn: string, through: string, summary: string): SessionRecord => ({ v: 2, type: "compaction", ...common, turn_id: turn, summary, through_turn: through });
const turn = (id: string, prompt: string, ...body: SessionRecord[]): SessionRecord[] => [started(id), input(id, prompt), ...body, answer(id, `re ${prompt}`), finished(id)];
const text = (message: ModelMessage): string => ("text" in message ? message.text : "");
const replayed = (records: readonly SessionRecord[]) => replayConversation(foldConversation([], applyRewinds(records))).map(text);
const shown = (records: readonly SessionRecord[]) => {
  const projected = projectHistory(applyRewinds(records), { torn: false, secrets: [] });
  assert.ok(projected.ok);
  return projected.snapshot.entries.map((entry) => `${entry.kind}: ${entry.text}`);
};

describe("the rewind record", () => {
  it("encodeRecord() writes it at v: 4 and parseRecordLine() reads it back; at v: 3, or ignorable without from_turn, it is refused", () => {
    const record = rewind("t2");
    const line = new TextDecoder().decode(encodeRecord(record)!).trimEnd();
    assert.equal(line, `{"v":4,"type":"rewind","session_id":"s1","at":"2026-03-01T10:00:00.000Z","from_turn":"t2"}`);
    assert.deepEqual(parseRecordLine(line, SID), { ok: true, record });
    assert.deepEqual(parseRecordLine(line.replace('"v":4', '"v":3'), SID), { ok: false });
    assert.deepEqual(parseRecordLine(JSON.stringify({ v: 4, type: "rewind", ...common, ignorable: true }), SID), { ok: false });
  });

  it("applyRewinds() drops the target turn and every later one, keeps preferences and titles, and leaves later turns standing", () => {
    const title: SessionRecord = { v: 1, type: "session_title", ...common, title: "Lexer" };
    const records = [...turn("t1", "one"), ...turn("t2", "two"), title, ...turn("t3", "three"), rewind("t2"), ...turn("t4", "four")];
    assert.deepEqual(applyRewinds(records), [...turn("t1", "one"), title, ...turn("t4", "four")]);
    assert.deepEqual(replayed(records), ["one", "re one", "four", "re four"]);
    assert.deepEqual(shown(records), ["user: one", "assistant: re one", "user: four", "assistant: re four"]);
  });

  it("a rewind across a replacing compaction replays the turns before the target whole, as the model saw them then", () => {
    const records = [...turn("t1", "one"), ...turn("t2", "two", compaction("t2", "t1", "S")), ...turn("t3", "three"), rewind("t2")];
    assert.deepEqual(replayed(records.slice(0, -1)).slice(0, 1), [text(summaryMessage("S"))]);
    assert.deepEqual(replayed(records), ["one", "re one"]);
    // A rewind to a turn after the compaction keeps the summary: that is what the model saw then.
    const later = [...turn("t1", "one"), ...turn("t2", "two", compaction("t2", "t1", "S")), ...turn("t3", "three"), rewind("t3")];
    assert.deepEqual(replayed(later), [text(summaryMessage("S")), "two", "re two"]);
  });

  it("a rewind across a subagent call drops the call from the replay and counts it as left in place", () => {
    const records = [...turn("t1", "one"), ...turn("t2", "two", activity("t2", "c1", "subagent", "task"), activity("t2", "c2", "tool", "shell"), activity("t2", "c2", "tool", "shell"), activity("t2", "c3", "compaction", "compact"))];
    assert.deepEqual(planRewind(records, "t2"), { turns: new Set(["t2"]), unrestorable: [{ tool: "shell", calls: 1 }, { tool: "task", calls: 1 }] });
    assert.deepEqual(replayed([...records, rewind("t2")]), ["one", "re one"]);
    assert.equal(planRewind(records, "t9"), null);
  });

  it("messagesFrom() counts the message named and every later one", () => {
    const entries = ["m0", "m1", "m1", "m2", "m3"].map((message_id) => ({ message_id }));
    assert.equal(messagesFrom(entries, "m1"), 3);
    assert.equal(messagesFrom(entries, "m9"), 0);
  });

  it("applyRewinds() equals the history as if the dropped turns never ran, for any sequence of turns and rewinds", () => {
    // Each step adds a turn or rewinds to an earlier standing turn; the model keeps the turns that stand.
    const steps = fc.array(fc.oneof(fc.constant<null>(null), fc.nat(20)), { maxLength: 30 });
    fc.assert(
      fc.property(steps, (script) => {
        const records: SessionRecord[] = [];
        let standing: SessionRecord[] = [];
        script.forEach((step, index) => {
          const starts = standing.filter((record) => record.type === "turn_started").map((record) => (record as { turn_id: string }).turn_id);
          if (step === null || starts.length === 0) {
            const added = turn(`t${index}`, `p${index}`);
            records.push(...added);
            standing.push(...added);
          } else {
            const target = starts[step % starts.length]!;
            records.push(rewind(target));
            standing = standing.slice(0, standing.findIndex((record) => record.type === "turn_started" && record.turn_id === target));
          }
        });
        assert.deepEqual(applyRewinds(records), standing);
      }),
      { numRuns: fuzzRuns(200) },
    );
  });
});
