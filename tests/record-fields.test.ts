import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isIsoTimestamp, utf8BytesWithin } from "../src/store/record-fields.ts";
import { utf8ByteCount } from "../src/util/utf8.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const encoder = new TextEncoder();

/** The check records.ts made before: the pattern, then a round trip through `Date`. */
function roundTrips(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(text)) return false;
  const time = Date.parse(text);
  return Number.isFinite(time) && new Date(time).toISOString() === text;
}

const pad = (value: number, width: number) => String(value).padStart(width, "0");

/** Timestamps with every field pushed to and past its edges, around leap days and centuries. */
const nearTimestampArb = fc
  .record({
    year: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 1, 4, 100, 200, 400, 1900, 2000, 2024, 2100, 9996, 9999)),
    month: fc.integer({ min: 0, max: 19 }),
    day: fc.integer({ min: 0, max: 39 }),
    hour: fc.integer({ min: 0, max: 29 }),
    minute: fc.integer({ min: 0, max: 69 }),
    second: fc.integer({ min: 0, max: 69 }),
    millis: fc.integer({ min: 0, max: 999 }),
  })
  .map(({ year, month, day, hour, minute, second, millis }) =>
    `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}.${pad(millis, 3)}Z`
  );

/** A near-timestamp with one character replaced, inserted or removed, or the end cut off. */
const mutatedTimestampArb = fc
  .tuple(
    nearTimestampArb,
    fc.nat(30),
    fc.constantFrom("replace", "insert", "remove", "cut"),
    fc.constantFrom("0", "9", "-", "+", ":", ".", "T", "t", "Z", "z", " ", "\u0660", "\uff10", "/", "\n", "x"),
  )
  .map(([text, at, edit, char]) => {
    const i = at % (text.length + 1);
    if (edit === "replace") return text.slice(0, i) + char + text.slice(i + 1);
    if (edit === "insert") return text.slice(0, i) + char + text.slice(i);
    if (edit === "remove") return text.slice(0, i) + text.slice(i + 1);
    return text.slice(0, i);
  });

/** Strings of UTF-16 units weighted towards every UTF-8 length boundary and both surrogate halves. */
const unitsArb = fc
  .array(
    fc.oneof(
      fc.constantFrom(0x00, 0x41, 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000, 0xfffd, 0xffff),
      fc.integer({ min: 0xd800, max: 0xdfff }),
      fc.integer({ min: 0, max: 0xffff }),
    ),
    { maxLength: 40 },
  )
  .map((units) => String.fromCharCode(...units));

const anyTextArb = fc.oneof(unitsArb, fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" }), fc.string());

describe("record checks", () => {
  it("isIsoTimestamp() answers exactly what the Date round trip answers, near the format and far from it", () => {
    fc.assert(
      fc.property(fc.oneof(nearTimestampArb, mutatedTimestampArb, fc.string({ maxLength: 30 })), (text) => {
        assert.equal(isIsoTimestamp(text), roundTrips(text), text);
      }),
      { numRuns: fuzzRuns(5_000) },
    );
  });

  it("isIsoTimestamp() answers the same after a valid timestamp of the same day (the day it proved is remembered)", () => {
    const instantArb = fc.integer({ min: Date.parse("0000-01-01T00:00:00.000Z"), max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) });
    fc.assert(
      fc.property(instantArb, fc.oneof(nearTimestampArb, mutatedTimestampArb, fc.string({ maxLength: 30 })), (time, other) => {
        const proven = new Date(time).toISOString();
        assert.equal(isIsoTimestamp(proven), true);
        const sameDay = proven.slice(0, 11) + other.slice(11);
        assert.equal(isIsoTimestamp(sameDay), roundTrips(sameDay), sameDay);
        assert.equal(isIsoTimestamp(other), roundTrips(other), other);
      }),
      { numRuns: fuzzRuns(5_000) },
    );
  });

  it("isIsoTimestamp() accepts what toISOString writes for any instant in years 0–9999", () => {
    fc.assert(
      // Date.UTC maps years 0–99 to 1900–1999, so the first instant is parsed instead.
      fc.property(fc.integer({ min: Date.parse("0000-01-01T00:00:00.000Z"), max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) }), (time) => {
        assert.equal(isIsoTimestamp(new Date(time).toISOString()), true);
      }),
      { numRuns: fuzzRuns(1_000) },
    );
    for (const text of ["0000-02-29T00:00:00.000Z", "2000-02-29T23:59:59.999Z", "2024-02-29T00:00:00.000Z"]) assert.equal(isIsoTimestamp(text), true, text);
    for (const text of ["1900-02-29T00:00:00.000Z", "2100-02-29T00:00:00.000Z", "2025-04-31T00:00:00.000Z", "2025-00-10T00:00:00.000Z"]) {
      assert.equal(isIsoTimestamp(text), false, text);
    }
  });

  it("utf8ByteCount() equals TextEncoder's length for arbitrary strings, lone surrogates included", () => {
    fc.assert(
      fc.property(anyTextArb, (text) => {
        assert.equal(utf8ByteCount(text), encoder.encode(text).length);
      }),
      { numRuns: fuzzRuns(5_000) },
    );
    assert.equal(utf8ByteCount("\ud800"), 3, "a lone high half is U+FFFD");
    assert.equal(utf8ByteCount("\udc00\ud800"), 6, "a reversed pair is two lone halves");
    assert.equal(utf8ByteCount("\ud83d\ude00"), 4, "a pair is one 4-byte code point");
  });

  it("utf8BytesWithin() decides a byte range as counting the encoded bytes would, near every bound", () => {
    fc.assert(
      fc.property(anyTextArb, fc.nat(130), fc.nat(130), (text, a, b) => {
        const bytes = encoder.encode(text).length;
        const [min, max] = a <= b ? [a, b] : [b, a];
        assert.equal(utf8BytesWithin(text, min, max), bytes >= min && bytes <= max, `${bytes} bytes in [${min}, ${max}]`);
        assert.equal(utf8BytesWithin(text, bytes, bytes), true);
        assert.equal(utf8BytesWithin(text, 0, bytes - 1), false);
        assert.equal(utf8BytesWithin(text, bytes + 1, bytes + 3 * text.length + 1), false);
      }),
      { numRuns: fuzzRuns(5_000) },
    );
  });
});
