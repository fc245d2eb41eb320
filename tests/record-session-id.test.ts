import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as v from "valibot";
import { parseRecordLine } from "../src/store/record-lines.ts";
import { RecordSchema } from "../src/store/records.ts";

// Alone in its file on purpose: the session id check remembers the last id it
// matched, so only a process that has matched none yet shows what it starts from.
describe("record session ids", () => {
  it("RecordSchema refuses an empty session_id before any id was matched", () => {
    const record = { v: 1, type: "session_title", session_id: "", at: "2025-01-01T00:00:00.000Z", title: "t" };
    assert.equal(v.safeParse(RecordSchema, record).success, false);
    assert.equal(parseRecordLine(JSON.stringify(record), "").ok, false);
  });
});
