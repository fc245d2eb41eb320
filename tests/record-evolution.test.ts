import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { parseRecordLine } from "../src/store/record-lines.ts";
import { NESTED_RECORD_BYTES, RECORD_NESTING_DEPTH } from "../src/store/record-evolution.ts";
import { RECORD_TYPES } from "../src/store/records.ts";
import { utf8ByteCount } from "../src/util/utf8.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { recordArb } from "./support/records.ts";

const SID = "0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const AT = "2031-02-03T04:05:06.007Z";
const USER_INPUT = { v: 1, type: "user_input", session_id: SID, at: AT, turn_id: "t1", message_id: "input", text: "hi" };
const CARD = { v: 2, type: "tool_card", session_id: SID, at: AT, ignorable: true, turn_id: "t1" };
const SKIPPED = { ok: true, record: { type: null, at: AT } };
const REFUSED = { ok: false };

/** A JSON value whose containers nest `depth` deep (0: a scalar). */
const nested = (depth: number): unknown => depth === 0 ? 1 : depth % 2 === 0 ? { k: nested(depth - 1) } : [nested(depth - 1)];
/** A field name by the record grammar that no record type defines. */
const extraNameArb = fc.stringMatching(/^[a-z0-9_]{0,60}$/).map((name) => `x_${name}`);
/** A type name by the record grammar that this version does not define. */
const unknownTypeArb = fc.stringMatching(/^[a-z][a-z0-9_]{0,63}$/).filter((type) => !(RECORD_TYPES as readonly string[]).includes(type));
// A JSON value as a later writer might store it: within the depth bound, small enough for the nested-line bound.
const extraValueArb = fc.jsonValue({ maxDepth: 4, depthSize: "small" });

describe("reading what a later writer added (docs/storage.md, how the record format evolves)", () => {
  it("parseRecordLine() reads a record with fields a later writer added, nested or not, as the record without them", () => {
    fc.assert(
      fc.property(recordArb(fc.constant(SID)), fc.dictionary(extraNameArb, extraValueArb, { maxKeys: 4 }), fc.boolean(), (record, extra, marked) => {
        const text = JSON.stringify({ ...record, ...extra, ...(marked ? { ignorable: true } : {}) });
        fc.pre(utf8ByteCount(text) <= NESTED_RECORD_BYTES);
        assert.deepEqual(parseRecordLine(text, SID), { ok: true, record });
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it("parseRecordLine() skips a record it does not understand when, and only when, it is marked ignorable", () => {
    fc.assert(
      fc.property(
        recordArb(fc.constant(SID)),
        fc.oneof(fc.record({ v: fc.integer({ min: 2, max: 2 ** 40 }) }), fc.record({ v: fc.integer({ min: 1, max: 9 }), type: unknownTypeArb })),
        fc.dictionary(extraNameArb, extraValueArb, { maxKeys: 3 }),
        (record, newer, extra) => {
          fc.pre(record.type !== "session" || "type" in newer);
          const future = { ...record, ...extra, ...newer };
          // Format 2 defines the compaction at v: 2, which is understood, not skipped.
          fc.pre(!(future.type === "compaction" && future.v === 2));
          const text = JSON.stringify({ ...future, ignorable: true });
          fc.pre(utf8ByteCount(text) <= NESTED_RECORD_BYTES);
          assert.deepEqual(parseRecordLine(text, SID), { ok: true, record: { type: null, at: record.at } });
          for (const mark of [undefined, false, "true", 1, null]) {
            assert.deepEqual(parseRecordLine(JSON.stringify({ ...future, ignorable: mark }), SID), REFUSED, String(mark));
          }
        },
      ),
      { numRuns: fuzzRuns(300) },
    );
  });

  it("parseRecordLine() refuses an ignorable record whose envelope is broken, and any record of type session it does not understand", () => {
    const { v: _v, ...noVersion } = CARD;
    const { type: _t, ...noType } = CARD;
    const { at: _a, ...noTime } = CARD;
    const { session_id: _s, ...noSession } = CARD;
    assert.deepEqual(parseRecordLine(JSON.stringify(CARD), SID), SKIPPED);
    const broken: [string, unknown][] = [
      ["no v", noVersion],
      ["no type", noType],
      ["no time", noTime],
      ["no session id", noSession],
      ...[0, -1, 1.5, "2", null, 2 ** 53].map((v): [string, unknown] => [`v ${String(v)}`, { ...CARD, v }]),
      ...["", "Tool", "tool-card", "1tool", "t".repeat(65), "__proto__", "session"].map((type): [string, unknown] => [`type ${type}`, { ...CARD, type }]),
      ["another session", { ...CARD, session_id: "another-session" }],
      ["a bad time", { ...CARD, at: "2031-02-03T04:05:06Z" }],
      ["a field outside the grammar", { ...CARD, Card: 1 }],
      ["an empty field name", { ...CARD, "": 1 }],
    ];
    for (const [label, record] of broken) assert.deepEqual(parseRecordLine(JSON.stringify(record), SID), REFUSED, label);
    assert.deepEqual(parseRecordLine(`{"__proto__":{"x":1},${JSON.stringify(CARD).slice(1)}`, SID), REFUSED, "__proto__");
    assert.deepEqual(parseRecordLine(JSON.stringify({ ...CARD, session_id: "" }), ""), REFUSED, "no session id grammar");
  });

  it("parseRecordLine() refuses a record it understands whose known fields fail their schema, even when marked ignorable", () => {
    for (const fields of [{ text: { nested: true } }, { text: ["a"] }, { turn_id: "" }, { ignorable: true, text: 42 }]) {
      assert.deepEqual(parseRecordLine(JSON.stringify({ ...USER_INPUT, ...fields }), SID), REFUSED, JSON.stringify(fields));
    }
    assert.deepEqual(parseRecordLine(JSON.stringify({ ...USER_INPUT, ignorable: true }), SID), { ok: true, record: USER_INPUT });
  });

  for (const [scanned, label] of [[false, "a line parsed at once"], [true, "a line scanned first (over 1,024 brackets in its text)"]] as const) {
    // Brackets inside a string are not containers, but they make the reader scan the line before parsing it.
    const text = scanned ? "[{".repeat(600) : "hi";
    const known = { ...USER_INPUT, text };
    const skippable = { ...CARD, text };

    it(`parseRecordLine() admits nesting ${RECORD_NESTING_DEPTH} deep and refuses ${RECORD_NESTING_DEPTH + 1}, in ${label}`, () => {
      for (const depth of [1, RECORD_NESTING_DEPTH - 1]) {
        assert.deepEqual(parseRecordLine(JSON.stringify({ ...known, x_data: nested(depth) }), SID), { ok: true, record: known }, `field ${depth}`);
        assert.deepEqual(parseRecordLine(JSON.stringify({ ...skippable, card: nested(depth) }), SID), SKIPPED, `skipped ${depth}`);
      }
      assert.deepEqual(parseRecordLine(JSON.stringify({ ...known, x_data: nested(RECORD_NESTING_DEPTH) }), SID), REFUSED);
      assert.deepEqual(parseRecordLine(JSON.stringify({ ...skippable, card: nested(RECORD_NESTING_DEPTH) }), SID), REFUSED);
    });

    it(`parseRecordLine() admits a line holding nested data up to 65,536 bytes and refuses 65,537, in ${label}`, () => {
      for (const [base, field, answer] of [[known, "x_data", { ok: true, record: known }], [skippable, "card", SKIPPED]] as const) {
        const sized = (bytes: number) => {
          const line = JSON.stringify({ ...base, [field]: ["a".repeat(bytes - utf8ByteCount(JSON.stringify({ ...base, [field]: [""] })))] });
          assert.equal(utf8ByteCount(line), bytes);
          return line;
        };
        assert.deepEqual(parseRecordLine(sized(NESTED_RECORD_BYTES), SID), answer);
        assert.deepEqual(parseRecordLine(sized(NESTED_RECORD_BYTES + 1), SID), REFUSED);
        // Scalars alone are bounded only by the history: a long flat line is read whole.
        const flat = { ...base, x_text: "é".repeat(NESTED_RECORD_BYTES) };
        assert.deepEqual(parseRecordLine(JSON.stringify(flat), SID), answer);
      }
    });
  }
});
