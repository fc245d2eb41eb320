/**
 * `turn_started.context` (docs/storage.md, "What a turn was set up with"):
 * bounded so its line always keeps within the nested line bound, whatever
 * the lists and paths, read back as written, with keys a later writer adds
 * inside it dropped, and refused where it is malformed or its line breaks
 * the bounds every reader applies.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { parseRecordLine } from "../src/store/record-lines.ts";
import { NESTED_RECORD_BYTES, RECORD_NESTING_DEPTH } from "../src/store/record-evolution.ts";
import { encodeRecord, type TurnStartedRecord } from "../src/store/records.ts";
import { boundTurnContext, type FileDigest, TURN_CONTEXT_BYTES, type TurnContext } from "../src/store/turn-context.ts";
import { utf8ByteCount } from "../src/util/utf8.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const SID = "0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const AT = "2031-02-03T04:05:06.007Z";
const SHA = "a".repeat(64);
const decoder = new TextDecoder();
const line = (value: unknown) => JSON.stringify(value);

/** A `turn_started` record with `context`; ids at their byte bound, each byte escaped twice over. */
function started(context: TurnContext, ids = "t"): TurnStartedRecord {
  return { v: 1, type: "turn_started", session_id: SID, at: AT, turn_id: ids, run_id: ids, context };
}

const file = (path: string): FileDigest => ({ path, sha256: SHA, bytes: 12 });

describe("turn_started.context", () => {
  it("boundTurnContext() keeps a context that fits as it is", () => {
    const context = { instructions: [file("/a/AGENTS.md")], skills: [{ name: "pdf", path: "/s/pdf/SKILL.md" }] };
    assert.equal(boundTurnContext(context), context);
  });

  it("boundTurnContext() drops entries from the longest list until the record fits the line bound, counting them", () => {
    // Paths of control characters escape to six bytes each: the worst a path can do.
    const pathArb = fc.oneof(fc.string({ maxLength: 80 }), fc.constantFrom("\u0001".repeat(4096), "é".repeat(2048), "/x".repeat(2048)));
    const listArb = fc.array(pathArb.map(file), { maxLength: 200 });
    const skillsArb = fc.array(fc.tuple(fc.string({ maxLength: 64 }), pathArb).map(([name, path]) => ({ name, path })), { maxLength: 200 });
    // A profile's files: at most three in practice (global, project layer, the global primary), any paths.
    const profileArb = fc.record({ name: fc.string({ minLength: 1, maxLength: 64 }), files: fc.option(fc.array(pathArb.map(file), { maxLength: 6 }), { nil: undefined }) });
    fc.assert(
      fc.property(listArb, fc.option(skillsArb, { nil: undefined }), fc.option(profileArb, { nil: undefined }), (instructions, skills, profile) => {
        const given = {
          instructions,
          ...(skills === undefined ? {} : { skills }),
          ...(profile === undefined ? {} : { profile: { name: profile.name, ...(profile.files === undefined ? {} : { files: profile.files }) } }),
        };
        // As the writer records it: bounded once per child, the prompt's digest added per turn.
        const bounded: TurnContext = { system_sha256: SHA, ...boundTurnContext(given) };
        assert.ok(utf8ByteCount(JSON.stringify(bounded)) <= TURN_CONTEXT_BYTES);
        // What is kept is a prefix of each list, and the rest is counted.
        assert.deepEqual(bounded.instructions, instructions.slice(0, bounded.instructions.length));
        assert.deepEqual(bounded.skills, skills?.slice(0, bounded.skills!.length));
        assert.equal(bounded.profile?.name, profile?.name);
        assert.deepEqual(bounded.profile?.files, profile?.files?.slice(0, bounded.profile!.files!.length));
        const kept = bounded.instructions.length + (bounded.skills?.length ?? 0) + (bounded.profile?.files?.length ?? 0);
        assert.equal(kept + (bounded.omitted ?? 0), instructions.length + (skills?.length ?? 0) + (profile?.files?.length ?? 0));
        // With ids at their bound, escaped to twice their bytes, the line still fits, and reads back as written.
        const record = started(bounded, "\"".repeat(1024));
        const bytes = encodeRecord(record);
        assert.ok(bytes !== null);
        assert.ok(bytes.length - 1 <= NESTED_RECORD_BYTES);
        assert.deepEqual(parseRecordLine(decoder.decode(bytes.subarray(0, -1)), SID), { ok: true, record });
      }),
      { numRuns: fuzzRuns(60) },
    );
  });

  it("encodeRecord() refuses a context whose line would break the nested line bound", () => {
    const huge = { instructions: Array.from({ length: 40 }, () => file("/p".repeat(1000))) };
    assert.equal(encodeRecord(started({ system_sha256: SHA, ...huge })), null);
    assert.ok(encodeRecord(started({ system_sha256: SHA, ...boundTurnContext(huge) })) !== null);
  });

  it("parseRecordLine() drops keys a later writer adds inside the context and its entries", () => {
    const skill = { name: "pdf", path: "/s/pdf/SKILL.md" };
    const context = { system_sha256: SHA, instructions: [{ ...file("/a.md"), mtime: 5 }], mcp: [{ server: "x" }], skills: [{ ...skill, sha256: SHA }] };
    const parsed = parseRecordLine(line(started(context as TurnContext)), SID);
    assert.deepEqual(parsed, { ok: true, record: started({ system_sha256: SHA, instructions: [file("/a.md")], skills: [skill] }) });
  });

  it("parseRecordLine() refuses a malformed context, and one past the depth or line bound", () => {
    const good = { system_sha256: SHA, instructions: [file("/a.md")] };
    assert.equal(parseRecordLine(line(started(good)), SID).ok, true);
    for (const context of [
      { ...good, system_sha256: "A".repeat(64) },
      { ...good, system_sha256: SHA.slice(1) },
      { system_sha256: SHA },
      { ...good, instructions: {} },
      { ...good, instructions: [{ path: "/a.md", sha256: SHA }] },
      { ...good, instructions: [{ ...file("/a.md"), bytes: -1 }] },
      { ...good, profile: { path: "/p.md" } },
      { ...good, skills: [{ path: "/s/SKILL.md" }] },
      [],
      "context",
    ]) {
      assert.deepEqual(parseRecordLine(line(started(context as TurnContext)), SID), { ok: false }, JSON.stringify(context));
    }
    const deep = (depth: number): unknown => depth === 0 ? 1 : { k: deep(depth - 1) };
    // The record, the context and `later` make three levels; the bound is the record's depth.
    assert.equal(parseRecordLine(line(started({ ...good, later: deep(RECORD_NESTING_DEPTH - 2) } as TurnContext)), SID).ok, true);
    assert.deepEqual(parseRecordLine(line(started({ ...good, later: deep(RECORD_NESTING_DEPTH - 1) } as TurnContext)), SID), { ok: false });
    const fits = line(started(good));
    const long = (extra: number) => line(started({ ...good, instructions: [file(`/${"p".repeat(NESTED_RECORD_BYTES - utf8ByteCount(fits) + extra)}a.md`)] }));
    assert.equal(utf8ByteCount(long(0)), NESTED_RECORD_BYTES);
    assert.equal(parseRecordLine(long(0), SID).ok, true);
    assert.deepEqual(parseRecordLine(long(1), SID), { ok: false });
  });
});
