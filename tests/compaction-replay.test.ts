/**
 * The replacing compaction record (format 2) as the store reads it: what the
 * provider replay keeps after it, folded on read and on extension alike, and
 * the projection rule that lets a compacted history outgrow the snapshot
 * budget and still page (docs/storage.md, "Compaction").
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ErrorCode } from "../src/protocol/errors.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { replayConversation, summaryMessage } from "../src/runner/replay.ts";
import { foldConversation } from "../src/store/conversation-records.ts";
import { compactionBoundaries, projectWithinBudget } from "../src/store/projection-window.ts";
import { parseRecordLine } from "../src/store/record-lines.ts";
import { encodeRecord, type SessionRecord } from "../src/store/records.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const SID = "s1";
const AT = "2026-03-01T10:00:00.000Z";
const common = { session_id: SID, at: AT } as const;
const started = (turn: string): SessionRecord => ({ v: 1, type: "turn_started", ...common, turn_id: turn, run_id: `run-${turn}` });
const finished = (turn: string): SessionRecord => ({ v: 1, type: "turn_finished", ...common, turn_id: turn, outcome: "completed", error_code: null });
const input = (turn: string, text: string): SessionRecord => ({ v: 1, type: "user_input", ...common, turn_id: turn, message_id: "input", text });
const answer = (turn: string, id: string, text: string): SessionRecord => ({ v: 1, type: "assistant_message", ...common, turn_id: turn, message_id: id, text, partial: false });
const compaction = (turn: string, through: string, summary: string): SessionRecord => ({ v: 2, type: "compaction", ...common, turn_id: turn, summary, through_turn: through });
const decoder = new TextDecoder();

/** The texts the replay of `records` sends, oldest first. */
const replayed = (records: readonly SessionRecord[]) => replayConversation(foldConversation([], records)).map((message) => ("text" in message ? message.text : ""));

describe("the replacing compaction record", () => {
  it("encodeRecord() writes it at v: 2 and parseRecordLine() reads it back; a v: 1 compaction with through_turn is the plain v: 1 one", () => {
    const record = compaction("t2", "t1", "Earlier work.");
    const line = decoder.decode(encodeRecord(record)!).trimEnd();
    assert.match(line, /^\{"v":2,"type":"compaction",/);
    assert.deepEqual(parseRecordLine(line, SID), { ok: true, record });
    // A format-1 field a writer added without raising v is ignored: such a compaction replaces nothing.
    const { v: _, ...rest } = record;
    const parsed = parseRecordLine(JSON.stringify({ v: 1, ...rest }), SID);
    assert.ok(parsed.ok && parsed.record.type === "compaction");
    assert.equal("through_turn" in parsed.record, false);
    assert.deepEqual(replayed([input("t1", "a"), parsed.record as SessionRecord]), ["a"]);
  });

  it("parseRecordLine() refuses a v: 2 compaction without through_turn, marked ignorable or not, and any other type at v: 2 unless ignorable", () => {
    const { through_turn: _, ...bare } = compaction("t2", "t1", "s") as { through_turn: string };
    assert.deepEqual(parseRecordLine(JSON.stringify(bare), SID), { ok: false });
    assert.deepEqual(parseRecordLine(JSON.stringify({ ...bare, ignorable: true }), SID), { ok: false });
    assert.deepEqual(parseRecordLine(JSON.stringify({ ...input("t1", "a"), v: 2 }), SID), { ok: false });
    assert.deepEqual(parseRecordLine(JSON.stringify({ ...input("t1", "a"), v: 2, ignorable: true }), SID), { ok: true, record: { type: null, at: AT } });
  });

  it("replayConversation() sends the summary, then the turn's input a compaction before the turn's first request kept, then what followed", () => {
    const records = [
      started("t1"), input("t1", "first"), answer("t1", "a1", "one"), finished("t1"),
      started("t2"), input("t2", "second"), compaction("t2", "t1", "S1"), answer("t2", "a1", "two"), finished("t2"),
    ];
    assert.deepEqual(replayed(records), [(summaryMessage("S1") as { text: string }).text, "second", "two"]);
  });

  it("replayConversation() after a compaction between two requests of a turn sends only the summary and what followed it", () => {
    const records = [
      started("t1"), input("t1", "first"), compaction("t1", "t0", "S0"), answer("t1", "a1", "one"), finished("t1"),
      started("t2"), input("t2", "second"), answer("t2", "a1", "two"), compaction("t2", "t2", "S2"), answer("t2", "a2", "three"), finished("t2"),
    ];
    const [summary, ...rest] = replayed(records);
    assert.match(summary!, /S2$/);
    assert.doesNotMatch(summary!, /S0/);
    assert.deepEqual(rest, ["three"]);
  });

  it("foldConversation() in two steps (an attachment extended by a turn) folds what one read of the whole file folds", () => {
    const turn = fc.constantFrom("t1", "t2", "t3", "t4");
    const record = fc.oneof(
      fc.tuple(turn, fc.string()).map(([t, text]) => input(t, text)),
      fc.tuple(turn, fc.string()).map(([t, text]) => answer(t, "a", text)),
      fc.tuple(turn, turn, fc.string()).map(([t, through, summary]) => compaction(t, through, summary)),
      turn.map(started),
      turn.map(finished),
    );
    fc.assert(
      fc.property(fc.array(record, { maxLength: 40 }), fc.nat(40), (records, at) => {
        const split = Math.min(at, records.length);
        const once = foldConversation([], records);
        assert.deepEqual(foldConversation(foldConversation([], records.slice(0, split)), records.slice(split)), once);
        // At most one compaction, first; the records replayed after its summary in stored order, each once.
        const after = once[0]?.type === "compaction" ? once.slice(1) : once;
        assert.ok(after.every((kept) => kept.type !== "compaction"));
        const kept = after.map((record) => records.indexOf(record));
        assert.deepEqual([...new Set(kept)].sort((a, b) => a - b), kept);
      }),
      { numRuns: fuzzRuns(300) },
    );
  });
});

describe("the projection of a compacted history over the snapshot budget", () => {
  /** One finished turn of `count` one-part inputs. */
  const turn = (id: string, count: number): SessionRecord[] => [
    started(id),
    ...Array.from({ length: count }, (_, index) => ({ ...input(id, "q"), message_id: `u${index}` }) as SessionRecord),
    finished(id),
  ];
  const never = {};

  it("a history within the budget projects whole, its compactions in place", async () => {
    const records = [...turn("t1", 3), started("t2"), input("t2", "go"), compaction("t2", "t1", "S"), finished("t2")];
    const projected = await projectWithinBudget(records, { torn: false, secrets: [] }, never);
    assert.ok(projected.ok);
    assert.deepEqual(projected.snapshot.entries.map((entry) => entry.kind), ["user", "user", "user", "user", "compaction"]);
  });

  it("a history over the part budget starts at the earliest compaction boundary from which it fits, the turn that kept its input whole", async () => {
    const half = LIMITS.history_snapshot_parts / 2;
    const records = [
      ...turn("t1", half),
      started("t2"), input("t2", "kept"), compaction("t2", "t1", "S2"), finished("t2"),
      ...turn("t3", half),
      started("t4"), input("t4", "kept too"), compaction("t4", "t3", "S4"), finished("t4"),
      ...turn("t5", 10),
    ];
    assert.deepEqual(compactionBoundaries(records), [half + 2, 2 * half + 8]);
    const projected = await projectWithinBudget(records, { torn: false, secrets: [] }, never);
    assert.ok(projected.ok);
    const entries = projected.snapshot.entries;
    // The earlier boundary fits too: t2's input, its summary, then everything after.
    assert.deepEqual(entries.slice(0, 2).map((entry) => [entry.kind, entry.text]), [["user", "kept"], ["compaction", "S2"]]);
    assert.equal(entries.length, 2 + half + 2 + 10);
    assert.equal(entries[0]!.message_id, "m0");
    assert.equal(projected.snapshot.complete, true);
  });

  it("a history over the budget without a compaction, or whose latest compaction leaves too much, is history_limit", async () => {
    const over = turn("t1", LIMITS.history_snapshot_parts + 1);
    assert.deepEqual(await projectWithinBudget(over, { torn: false, secrets: [] }, never), { ok: false, code: ErrorCode.historyLimit });
    const tooMuchAfter = [...turn("t0", 5), started("t1"), input("t1", "x"), compaction("t1", "t0", "S"), finished("t1"), ...over];
    assert.deepEqual(await projectWithinBudget(tooMuchAfter, { torn: false, secrets: [] }, never), { ok: false, code: ErrorCode.historyLimit });
  });
});
