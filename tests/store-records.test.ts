import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import * as v from "valibot";
import {
  ActivityRecordSchema,
  encodeRecord,
  RECORD_TYPES,
  RecordSchema,
  type SessionRecord,
} from "../src/store/records.ts";
import { parseRecordLine } from "../src/store/record-lines.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { recordArb, sessionIdArb } from "./support/records.ts";

const SID = "0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const AT = "2025-01-01T00:00:00.000Z";
const decoder = new TextDecoder("utf-8", { fatal: true });

function line(fields: Record<string, unknown>): string {
  return JSON.stringify({ v: 1, session_id: SID, at: AT, ...fields });
}

const USER_INPUT = { type: "user_input", turn_id: "t1", message_id: "m1", text: "hi" };
const ACTIVITY = { type: "activity", turn_id: "t1", activity_id: "a1", kind: "tool", name: "grep", state: "started", summary: "" };

describe("store records", () => {
  it("encodeRecord() and parseRecordLine() round-trip arbitrary records of every type", () => {
    fc.assert(
      fc.property(recordArb(), (record) => {
        const bytes = encodeRecord(record);
        assert.ok(bytes !== null);
        assert.equal(bytes.at(-1), 0x0a);
        assert.equal(bytes.indexOf(0x0a), bytes.length - 1, "exactly one LF, at the end");
        const text = decoder.decode(bytes.subarray(0, -1));
        assert.deepEqual(parseRecordLine(text, record.session_id), { ok: true, record });
      }),
      { numRuns: fuzzRuns(500) },
    );
  });

  it("parseRecordLine() refuses an arbitrary record under another session id or another v it is not told it may skip", () => {
    fc.assert(
      fc.property(recordArb(), sessionIdArb, fc.oneof(fc.constant(0), fc.constant(2), fc.constant("1"), fc.constant(1.5)), (record, other, version) => {
        fc.pre(other !== record.session_id && version !== record.v);
        assert.deepEqual(parseRecordLine(JSON.stringify(record), other), { ok: false });
        assert.deepEqual(parseRecordLine(JSON.stringify({ ...record, v: version }), record.session_id), { ok: false });
        assert.deepEqual(parseRecordLine(JSON.stringify({ ...record, ignorable: true }), other), { ok: false });
        const { v: _, ...unversioned } = record;
        assert.deepEqual(parseRecordLine(JSON.stringify(unversioned), record.session_id), { ok: false });
      }),
      { numRuns: fuzzRuns(200) },
    );
  });

  it("parseRecordLine() refuses non-objects, broken JSON and unknown types", () => {
    for (const text of ["", " ", "null", "1", '"x"', "true", "[]", `[${line(USER_INPUT)}]`, "{", line(USER_INPUT).slice(0, -1), "\ufeff" + line(USER_INPUT)]) {
      assert.deepEqual(parseRecordLine(text, SID), { ok: false }, text);
    }
    assert.equal(parseRecordLine(line(USER_INPUT), SID).ok, true);
    for (const type of ["user_message", "USER_INPUT", "", "tool_result", "__proto__"]) {
      assert.deepEqual(parseRecordLine(line({ ...USER_INPUT, type }), SID), { ok: false }, type);
    }
    assert.deepEqual(parseRecordLine(`{"__proto__":{"x":1},${line(USER_INPUT).slice(1)}`, SID), { ok: false });
    assert.equal(RECORD_TYPES.length, 17);
  });

  it("parseRecordLine() accepts lone surrogates in text fields but refuses them in ids", () => {
    const parsed = parseRecordLine(line({ ...USER_INPUT, text: "a\ud800b\udfff" }), SID);
    assert.ok(parsed.ok);
    assert.equal(parsed.record.type === "user_input" && parsed.record.text, "a\ud800b\udfff");
    assert.equal(parseRecordLine(String.raw`{"v":1,"type":"user_input","session_id":"${SID}","at":"${AT}","turn_id":"t","message_id":"m","text":"\ud800"}`, SID).ok, true);
    assert.deepEqual(parseRecordLine(line({ ...USER_INPUT, message_id: "m\ud800" }), SID), { ok: false });
  });

  it("parseRecordLine() requires RFC 3339 UTC timestamps with milliseconds", () => {
    for (const at of ["2025-01-01T00:00:00.000Z", "0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2024-02-29T12:00:00.000Z"]) {
      assert.equal(parseRecordLine(line({ ...USER_INPUT, at }), SID).ok, true, at);
    }
    const bad = [
      "2025-01-01T00:00:00Z",
      "2025-01-01T00:00:00.00Z",
      "2025-01-01T00:00:00.000+00:00",
      "2025-01-01T00:00:00.000",
      "2025-01-01 00:00:00.000Z",
      "2025-01-01t00:00:00.000z",
      "2025-02-30T00:00:00.000Z",
      "2023-02-29T00:00:00.000Z",
      "2025-01-01T24:00:00.000Z",
      "2025-12-31T23:59:60.000Z",
      "+002025-01-01T00:00:00.000Z",
      "1735689600000",
    ];
    for (const at of bad) assert.deepEqual(parseRecordLine(line({ ...USER_INPUT, at }), SID), { ok: false }, at);
    assert.deepEqual(parseRecordLine(line({ ...USER_INPUT, at: 1735689600000 }), SID), { ok: false });
    assert.deepEqual(parseRecordLine(line({ type: "session", created_at: "yesterday" }), SID), { ok: false });
  });

  it("parseRecordLine() bounds ids to 1–1,024 bytes without control characters", () => {
    for (const id of ["x", "x".repeat(1024), "é".repeat(512), "😀".repeat(256), "a b/c:d"]) {
      assert.equal(parseRecordLine(line({ ...USER_INPUT, turn_id: id }), SID).ok, true, `${id.length} units`);
    }
    for (const id of ["", "x".repeat(1025), "é".repeat(512) + "x", "a\u0000", "a\nb", "a\u007f", "a\u0085", 7, null]) {
      for (const field of ["turn_id", "message_id"]) {
        assert.deepEqual(parseRecordLine(line({ ...USER_INPUT, [field]: id }), SID), { ok: false }, `${field}: ${String(id)}`);
      }
    }
    assert.deepEqual(parseRecordLine(line({ ...ACTIVITY, activity_id: "x".repeat(1025) }), SID), { ok: false });
  });

  it("parseRecordLine() bounds an activity summary to 1,024 UTF-8 bytes and checks enums", () => {
    assert.equal(parseRecordLine(line({ ...ACTIVITY, summary: "é".repeat(512) }), SID).ok, true);
    assert.deepEqual(parseRecordLine(line({ ...ACTIVITY, summary: "é".repeat(512) + "x" }), SID), { ok: false });
    assert.deepEqual(parseRecordLine(line({ ...ACTIVITY, state: "paused" }), SID), { ok: false });
    assert.deepEqual(parseRecordLine(line({ ...ACTIVITY, kind: "shell" }), SID), { ok: false });
    const finished = { type: "turn_finished", turn_id: "t1", outcome: "completed", error_code: null };
    assert.equal(parseRecordLine(line(finished), SID).ok, true);
    assert.equal(parseRecordLine(line({ ...finished, outcome: "failed", error_code: "execution_failed" }), SID).ok, true);
    assert.deepEqual(parseRecordLine(line({ ...finished, outcome: "done" }), SID), { ok: false });
    assert.deepEqual(parseRecordLine(line({ ...finished, error_code: undefined }), SID), { ok: false });
    const prefs = { type: "session_preferences", provider: "ollama", model: "qwen3:8b", effort: "max" };
    assert.equal(parseRecordLine(line(prefs), SID).ok, true);
    assert.deepEqual(parseRecordLine(line({ ...prefs, effort: "extreme" }), SID), { ok: false });
    assert.deepEqual(parseRecordLine(line({ ...prefs, model: "" }), SID), { ok: false });
    const usage = { type: "usage", turn_id: "t1", input_tokens: 1, output_tokens: 2 };
    assert.equal(parseRecordLine(line(usage), SID).ok, true);
    assert.equal(parseRecordLine(line({ ...usage, reasoning_tokens: 3 }), SID).ok, true);
    for (const count of [-1, 1.5, 2 ** 53, "1", null]) {
      assert.deepEqual(parseRecordLine(line({ ...usage, input_tokens: count }), SID), { ok: false }, String(count));
    }
    assert.equal(parseRecordLine(line({ type: "diagnostic", code: "turn_interrupted", summary: "" }), SID).ok, true);
    assert.equal(parseRecordLine(line({ type: "session", created_at: AT }), SID).ok, true);
    // The spec checks only every nonempty recorded cwd, so an empty one is a valid record that records none.
    assert.equal(parseRecordLine(line({ type: "session", created_at: AT, cwd: "" }), SID).ok, true);
  });

  it("RecordSchema and the per-type schemas refuse arrays", () => {
    const array = Object.assign([], { v: 1, type: "activity", session_id: SID, at: AT });
    assert.equal(v.safeParse(RecordSchema, array).success, false);
    assert.equal(v.safeParse(ActivityRecordSchema, Object.assign([], JSON.parse(line(ACTIVITY)))).success, false);
    assert.equal(v.safeParse(ActivityRecordSchema, JSON.parse(line(ACTIVITY))).success, true);
  });

  it("encodeRecord() writes compact JSON and refuses a record that fails its schema", () => {
    const record = JSON.parse(line({ ...USER_INPUT, text: "a\nb\u2028\ud800" })) as SessionRecord;
    const bytes = encodeRecord(record)!;
    const text = decoder.decode(bytes);
    assert.equal(text.length, JSON.stringify(record).length + 1, "no whitespace added");
    assert.deepEqual(JSON.parse(text), record);
    assert.ok(!decoder.decode(bytes).slice(0, -1).includes("\n"));
    assert.equal(encodeRecord({ ...record, session_id: "not a session id" }), null);
    assert.equal(encodeRecord({ ...record, at: "now" }), null);
    assert.equal(encodeRecord({ ...record, extra: 1 } as unknown as SessionRecord), null);
    assert.equal(encodeRecord({ ...record, type: "unknown" } as unknown as SessionRecord), null);
  });
});
