import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ErrorCode } from "../src/protocol/errors.ts";
import type { OutputValue } from "../src/protocol/frames.ts";
import { IDENTIFIER_PATTERN } from "../src/protocol/identity.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { type HistoryPage, pageHistory, revisionId } from "../src/store/pages.ts";
import type { HistoryEntry, HistorySnapshot } from "../src/store/history-snapshot.ts";
import { projectHistory, type ProjectionRecord } from "../src/store/projection.ts";
import { PART_ESCAPED_BUDGET } from "../src/store/history-text-parts.ts";
import { utf8ByteCount } from "../src/util/utf8.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const DIGEST = "0123456789abcdef".repeat(4);
const REVISION = revisionId({ digest: DIGEST, generation: 1 });
const SESSION = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const STALE = { ok: false, code: ErrorCode.staleRevision } as const;

const user = (text: string): ProjectionRecord => ({ type: "user_input", turn_id: "t", message_id: "u", text });

/** Projects `records` as one finished turn "t", so completeness depends on `torn` alone. */
function project(records: readonly ProjectionRecord[], torn = false): HistorySnapshot {
  const ended: ProjectionRecord = { type: "turn_finished", turn_id: "t", outcome: "completed" };
  const result = projectHistory([...records, ended], { torn, secrets: [] });
  assert.ok(result.ok, "projection failed");
  return result.snapshot;
}

/** Pages through `snapshot` from the null cursor, checking every page's bounds on the way. */
function pageAll(snapshot: HistorySnapshot, sessionId = SESSION, revision = REVISION): HistoryPage[] {
  const pages: HistoryPage[] = [];
  let cursor: string | null = null;
  do {
    const got = pageHistory(snapshot, sessionId, revision, cursor);
    assert.ok(got.ok, `page ${pages.length} failed`);
    const page = got.result;
    assert.ok(utf8ByteCount(JSON.stringify(page)) <= LIMITS.history_page_bytes, "page bytes");
    assert.ok(page.entries.length <= LIMITS.history_page_entries, "page entries");
    assert.equal(page.session_id, sessionId);
    assert.equal(page.revision, revision);
    if (page.next_cursor !== null) {
      assert.match(page.next_cursor, IDENTIFIER_PATTERN);
      assert.ok(page.entries.length > 0, "a page that is not the last is never empty");
      assert.equal(page.complete, false);
    } else {
      assert.equal(page.complete, snapshot.complete);
    }
    pages.push(page);
    cursor = page.next_cursor;
  } while (cursor !== null && pages.length <= snapshot.entries.length);
  return pages;
}

describe("revisionId", () => {
  it("is opaque, in the id grammar and at most 64 bytes, even at the largest generation", () => {
    for (const generation of [0, 1, 35, 36, 2 ** 32, Number.MAX_SAFE_INTEGER]) {
      const id = revisionId({ digest: DIGEST.toUpperCase(), generation });
      assert.match(id, IDENTIFIER_PATTERN);
      assert.ok(!id.includes(DIGEST), "carries only a prefix of the digest");
    }
    assert.notEqual(revisionId({ digest: DIGEST, generation: 1 }), revisionId({ digest: DIGEST, generation: 2 }));
    assert.notEqual(revisionId({ digest: DIGEST, generation: 1 }), revisionId({ digest: `f${DIGEST.slice(1)}`, generation: 1 }));
  });

  it("throws on inputs only a backend bug produces", () => {
    for (const parts of [{ digest: DIGEST, generation: -1 }, { digest: DIGEST, generation: 1.5 }, { digest: "abc", generation: 1 }, {
      digest: `${DIGEST.slice(0, 39)}g`,
      generation: 1,
    }]) {
      assert.throws(() => revisionId(parts), RangeError);
    }
  });
});

describe("pageHistory", () => {
  it("serves an empty snapshot as one last page", () => {
    assert.deepEqual(pageHistory(project([]), SESSION, REVISION, null), {
      ok: true,
      result: { session_id: SESSION, revision: REVISION, entries: [], next_cursor: null, complete: true },
    });
    const torn = pageHistory(project([], true), SESSION, REVISION, null);
    assert.ok(torn.ok && torn.result.complete === false && torn.result.entries.length === 1);
  });

  it("holds at most 100 entries per page and says complete only on the last page", () => {
    const snapshot = project(Array.from({ length: 250 }, (_, i) => user(`message ${i}`)));
    const pages = pageAll(snapshot);
    assert.deepEqual(pages.map((p) => p.entries.length), [100, 100, 50]);
    assert.deepEqual(pages.map((p) => p.complete), [false, false, true]);
  });

  it("an incomplete snapshot is incomplete on its last page too", () => {
    const pages = pageAll(project(Array.from({ length: 150 }, (_, i) => user(`m${i}`)), true));
    assert.deepEqual(pages.map((p) => p.complete), [false, false]);
  });

  it("fills pages greedily by serialized bytes", () => {
    const snapshot = project(Array.from({ length: 10 }, () => user("x".repeat(10_000))));
    const pages = pageAll(snapshot);
    assert.deepEqual(pages.map((p) => p.entries.length), [3, 3, 3, 1]);
  });

  it("fits one worst-case part per page: 64-byte ids everywhere and a text at the escaped budget", () => {
    const text = "\u0001".repeat(Math.floor(PART_ESCAPED_BUDGET / 6)) + "a".repeat(PART_ESCAPED_BUDGET % 6);
    assert.equal(utf8ByteCount(JSON.stringify(text)) - 2, PART_ESCAPED_BUDGET);
    const entry: HistoryEntry = {
      message_id: "m".repeat(64),
      kind: "reasoning_summary",
      text,
      partial: false,
      part: 9_999,
      last_part: false,
    };
    const snapshot: HistorySnapshot = { entries: [entry, entry, entry], complete: true, messages: 1, bytes: JSON.stringify([entry, entry, entry]).length, tailNotice: false, cards: new Map(), cardBytes: 0, userTurns: new Map() };
    const pages = pageAll(snapshot, "s".repeat(64), "r".repeat(64));
    assert.deepEqual(pages.map((p) => p.entries.length), [1, 1, 1]);
  });

  it("reports content_limit rather than an empty or oversized page for an entry no page can hold", () => {
    const entry: HistoryEntry = { message_id: "m0", kind: "user", text: "x".repeat(LIMITS.history_page_bytes), partial: false, part: 0, last_part: true };
    assert.deepEqual(pageHistory({ entries: [entry], complete: true, messages: 1, bytes: JSON.stringify([entry]).length, tailNotice: false, cards: new Map(), cardBytes: 0, userTurns: new Map() }, SESSION, REVISION, null), { ok: false, code: ErrorCode.contentLimit });
  });

  it("results are frozen and typed as output values", () => {
    const got = pageHistory(project([user("a"), user("b")]), SESSION, REVISION, null);
    assert.ok(got.ok);
    const wire: OutputValue = got.result; // compile-time: the page is sendable as is
    assert.ok(Object.isFrozen(wire) && Object.isFrozen(got.result.entries));
  });
});

describe("pageHistory cursors", () => {
  const snapshot = project(Array.from({ length: 250 }, (_, i) => user(`message ${i}`)));
  const first = pageHistory(snapshot, SESSION, REVISION, null);
  assert.ok(first.ok);
  const cursor = first.result.next_cursor!;

  it("a cursor continues its own revision", () => {
    const next = pageHistory(snapshot, SESSION, REVISION, cursor);
    assert.ok(next.ok);
    assert.equal(next.result.entries[0], snapshot.entries[100]);
  });

  it("a cursor from another revision is stale_revision", () => {
    const other = revisionId({ digest: DIGEST, generation: 2 });
    assert.deepEqual(pageHistory(snapshot, SESSION, other, cursor), STALE);
    const otherFirst = pageHistory(snapshot, SESSION, other, null);
    assert.ok(otherFirst.ok);
    assert.notEqual(otherFirst.result.next_cursor, cursor);
    assert.deepEqual(pageHistory(snapshot, SESSION, REVISION, otherFirst.result.next_cursor), STALE);
  });

  it("garbage and tampered cursors are stale_revision", () => {
    assert.ok(cursor.startsWith("p2s."), "offset 100 is 2s in base36");
    const tail = cursor.slice(-1) === "0" ? "1" : "0";
    const bad = [
      "",
      "garbage",
      "p",
      "p2s",
      `p02s.${cursor.slice(4)}`, // same offset, non-canonical digits
      `p2t.${cursor.slice(4)}`, // another offset under this offset's tag
      `${cursor.slice(0, -1)}${tail}`, // another tag
      cursor.slice(0, -1),
      `${cursor}0`,
      cursor.toUpperCase(),
      ` ${cursor}`,
      "x".repeat(65),
    ];
    for (const value of bad) {
      assert.deepEqual(pageHistory(snapshot, SESSION, REVISION, value), STALE, JSON.stringify(value));
    }
  });

  it("out-of-range offsets are stale_revision, even with a valid tag", () => {
    // Cursors this revision issues for a larger snapshot are valid-looking but out of this one's range.
    const larger = project(Array.from({ length: 350 }, (_, i) => user(`message ${i}`)));
    const issued = pageAll(larger).map((p) => p.next_cursor).filter((c): c is string => c !== null);
    assert.equal(issued.length, 3);
    assert.deepEqual(pageHistory(snapshot, SESSION, REVISION, issued[2]!), STALE); // offset 300 of 250
    const small = project([user("only")]);
    assert.deepEqual(pageHistory(small, SESSION, REVISION, issued[0]!), STALE); // offset 100 of 1
    assert.deepEqual(pageHistory(project([]), SESSION, REVISION, cursor), STALE);
  });
});

/** A mix of small and part-splitting texts, with escapes and astral characters. */
const text = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.tuple(fc.constantFrom("a", "é", "😀", "\u0001", "\"", "\n", "\uD800"), fc.integer({ min: 1, max: 20_000 }))
    .map(([run, times]) => run.repeat(times)),
);
const record: fc.Arbitrary<ProjectionRecord> = fc.oneof(
  text.map((t) => ({ type: "user_input" as const, turn_id: "t", message_id: "u", text: t })),
  text.map((t) => ({ type: "compaction" as const, summary: t })),
  fc.tuple(fc.nat({ max: 5 }), text).map(([id, t]) => ({
    type: "activity" as const,
    turn_id: "t",
    activity_id: `x${id}`,
    state: "completed" as const,
    summary: t,
  })),
);

describe("pageHistory properties", () => {
  it("paging from the null cursor visits every entry exactly once, in stored order, within the page bounds", () => {
    fc.assert(
      fc.property(
        fc.array(record, { maxLength: 40, size: "medium" }),
        fc.boolean(),
        fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/),
        fc.nat({ max: Number.MAX_SAFE_INTEGER }),
        (records, torn, sessionId, generation) => {
          const snapshot = project(records, torn);
          const revision = revisionId({ digest: DIGEST, generation });
          const pages = pageAll(snapshot, sessionId, revision);
          assert.deepEqual(pages.flatMap((p) => p.entries), snapshot.entries);
          assert.equal(pages.at(-1)!.complete, snapshot.complete);
        },
      ),
      { numRuns: fuzzRuns(100, 50) },
    );
  });

  it("many small entries: pages are full up to 100 entries and cover the snapshot", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary", maxLength: 500 }), { minLength: 1, maxLength: 600, size: "max" }), (texts) => {
        const snapshot = project(texts.map(user));
        const pages = pageAll(snapshot);
        assert.deepEqual(pages.flatMap((p) => p.entries), snapshot.entries);
      }),
      { numRuns: fuzzRuns(50, 20) },
    );
  });
});
