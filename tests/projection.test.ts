import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ErrorCode } from "../src/protocol/errors.ts";
import { IDENTIFIER_PATTERN } from "../src/protocol/identity.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import type { HistoryEntry, HistorySnapshot } from "../src/store/history-snapshot.ts";
import { INTERRUPTED_TURN_TEXT, projectHistory, type ProjectionRecord } from "../src/store/projection.ts";
import { PART_ESCAPED_BUDGET } from "../src/store/history-text-parts.ts";
import { sanitizeText, utf8ByteCount } from "../src/util/utf8.ts";
import { REDACTION_MARKER, redactSecrets } from "../src/util/redaction.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const SECRET = "hunter2-correct-horse";
const NO_SECRETS = { torn: false, secrets: [] } as const;

const started = (turn_id: string): ProjectionRecord => ({ type: "turn_started", turn_id });
const finished = (turn_id: string, outcome: "completed" | "cancelled" | "failed" = "completed"): ProjectionRecord => ({
  type: "turn_finished",
  turn_id,
  outcome,
});
const user = (turn_id: string, text: string, message_id = `u-${turn_id}`): ProjectionRecord => ({
  type: "user_input",
  turn_id,
  message_id,
  text,
});
const chunk = (turn_id: string, message_id: string, index: number, text: string): ProjectionRecord => ({
  type: "assistant_chunk",
  turn_id,
  message_id,
  index,
  text,
});
const reply = (turn_id: string, message_id: string, text: string, partial = false): ProjectionRecord => ({
  type: "assistant_message",
  turn_id,
  message_id,
  text,
  partial,
});

/** A whole turn: input, one reply, finished. */
const turn = (turn_id: string, prompt: string, answer: string): ProjectionRecord[] => [
  started(turn_id),
  user(turn_id, prompt),
  reply(turn_id, `a-${turn_id}`, answer),
  finished(turn_id),
];

function snapshotOf(records: readonly ProjectionRecord[], options: { torn: boolean; secrets: readonly string[] } = NO_SECRETS): HistorySnapshot {
  const result = projectHistory(records, options);
  assert.ok(result.ok, "projection failed");
  return result.snapshot;
}

/** Entries as [kind, text, partial], for messages that fit one part. */
const shown = (snapshot: HistorySnapshot) => snapshot.entries.map((e) => [e.kind, e.text, e.partial]);

/** Texts of each message, parts concatenated, in order. */
function messages(entries: readonly HistoryEntry[]): string[] {
  const out: string[] = [];
  for (const entry of entries) {
    if (entry.part === 0) out.push(entry.text);
    else out[out.length - 1] += entry.text;
  }
  return out;
}

const escapedBytes = (text: string): number => utf8ByteCount(JSON.stringify(text)) - 2;

describe("projectHistory rules", () => {
  it("projects user input and assistant replies; session, preferences, internal prompts, usage and turn markers show nothing", () => {
    const snapshot = snapshotOf([
      { type: "session" },
      { type: "session_preferences" },
      started("t1"),
      user("t1", "hello"),
      { type: "internal_prompt" },
      reply("t1", "a1", "hi there"),
      { type: "usage" },
      finished("t1"),
    ]);
    assert.deepEqual(shown(snapshot), [["user", "hello", false], ["assistant", "hi there", false]]);
    assert.equal(snapshot.complete, true);
  });

  it("internal prompts never appear, whatever their text", () => {
    const records = [started("t1"), { type: "internal_prompt", turn_id: "t1", text: "SYSTEM: assess privately" } as ProjectionRecord, finished("t1")];
    assert.deepEqual(snapshotOf(records).entries, []);
  });

  it("projects one reconciled copy: the final message wins over its chunks", () => {
    const snapshot = snapshotOf([
      started("t1"),
      chunk("t1", "a1", 0, "draft "),
      chunk("t1", "a1", 1, "text"),
      reply("t1", "a1", "final text"),
      finished("t1"),
    ]);
    assert.deepEqual(shown(snapshot), [["assistant", "final text", false]]);
  });

  it("legacy output with chunks only uses them concatenated by index", () => {
    const snapshot = snapshotOf([
      started("t1"),
      chunk("t1", "a1", 1, "world"),
      chunk("t1", "a1", 0, "hello "),
      chunk("t1", "a1", 2, "!"),
      finished("t1"),
    ]);
    assert.deepEqual(shown(snapshot), [["assistant", "hello world!", false]]);
  });

  it("legacy chunks with a missing index are partial", () => {
    const snapshot = snapshotOf([started("t1"), chunk("t1", "a1", 0, "a"), chunk("t1", "a1", 2, "c"), finished("t1")]);
    assert.deepEqual(shown(snapshot), [["assistant", "ac", true]]);
  });

  it("keeps messages with the same stored id in different turns apart", () => {
    const snapshot = snapshotOf([...turn("t1", "q1", "r1"), ...turn("t2", "q2", "r2")].map((r) =>
      r.type === "assistant_message" ? { ...r, message_id: "seg-0" } : r
    ));
    assert.deepEqual(messages(snapshot.entries), ["q1", "r1", "q2", "r2"]);
  });

  it("omits reasoning summaries whose provider_summary is false or missing", () => {
    const snapshot = snapshotOf([
      started("t1"),
      { type: "reasoning_summary", turn_id: "t1", item_id: "i1", text: "unverified", provider_summary: false },
      { type: "reasoning_summary", turn_id: "t1", item_id: "i2", text: "legacy" },
      { type: "reasoning_summary", turn_id: "t1", item_id: "i3", text: "verified", provider_summary: true },
      finished("t1"),
    ]);
    assert.deepEqual(shown(snapshot), [["reasoning_summary", "verified", false]]);
  });

  it("a repeated turn_id + item_id summary replaces the earlier entry in place", () => {
    const summary = (turn_id: string, item_id: string, text: string): ProjectionRecord => ({
      type: "reasoning_summary",
      turn_id,
      item_id,
      text,
      provider_summary: true,
    });
    const snapshot = snapshotOf([
      started("t1"),
      summary("t1", "i1", "first take"),
      reply("t1", "a1", "answer"),
      summary("t1", "i1", "revised take"),
      finished("t1"),
      started("t2"),
      summary("t2", "i1", "same item id, other turn"),
      finished("t2"),
    ]);
    assert.deepEqual(shown(snapshot), [
      ["reasoning_summary", "revised take", false],
      ["assistant", "answer", false],
      ["reasoning_summary", "same item id, other turn", false],
    ]);
  });

  it("an activity is one entry at its first position: last summary wins, partial while its last state is started", () => {
    const activity = (activity_id: string, state: "started" | "completed" | "failed", summary: string): ProjectionRecord => ({
      type: "activity",
      turn_id: "t1",
      activity_id,
      state,
      summary,
    });
    const snapshot = snapshotOf([
      started("t1"),
      activity("x1", "started", "Reading a.ts"),
      activity("x2", "started", "Running tests"),
      reply("t1", "a1", "done"),
      activity("x1", "completed", "Read a.ts"),
      activity("x2", "failed", "Tests failed"),
      activity("x3", "started", "Still going"),
      finished("t1"),
    ]);
    assert.deepEqual(shown(snapshot), [
      ["activity", "Read a.ts", false],
      ["activity", "Tests failed", false],
      ["assistant", "done", false],
      ["activity", "Still going", true],
    ]);
  });

  it("compaction and diagnostic records show their summaries", () => {
    const snapshot = snapshotOf([
      { type: "compaction", summary: "Earlier work summarised" },
      { type: "diagnostic", summary: "Disk was slow" },
    ]);
    assert.deepEqual(shown(snapshot), [["compaction", "Earlier work summarised", false], ["diagnostic", "Disk was slow", false]]);
  });

  it("a turn left open at the end gets a partial diagnostic and the snapshot is incomplete", () => {
    const snapshot = snapshotOf([...turn("t1", "q1", "r1"), started("t2"), user("t2", "q2"), chunk("t2", "a2", 0, "half")]);
    assert.deepEqual(shown(snapshot), [
      ["user", "q1", false],
      ["assistant", "r1", false],
      ["user", "q2", false],
      ["assistant", "half", true],
      ["diagnostic", INTERRUPTED_TURN_TEXT, true],
    ]);
    assert.equal(snapshot.complete, false);
  });

  it("a torn tail gets the same diagnostic and incompleteness, even after a finished turn", () => {
    const snapshot = snapshotOf(turn("t1", "q1", "r1"), { torn: true, secrets: [] });
    assert.deepEqual(shown(snapshot).at(-1), ["diagnostic", INTERRUPTED_TURN_TEXT, true]);
    assert.equal(snapshot.entries.length, 3);
    assert.equal(snapshot.complete, false);
  });

  it("a turn superseded by a later turn without finishing is interrupted where the next turn starts", () => {
    const snapshot = snapshotOf([started("t1"), user("t1", "q1"), ...turn("t2", "q2", "r2")]);
    assert.deepEqual(shown(snapshot), [
      ["user", "q1", false],
      ["diagnostic", INTERRUPTED_TURN_TEXT, true],
      ["user", "q2", false],
      ["assistant", "r2", false],
    ]);
    assert.equal(snapshot.complete, false);
  });

  it("failed and cancelled turns keep their partial replies and the snapshot stays complete", () => {
    const snapshot = snapshotOf([
      started("t1"),
      user("t1", "q1"),
      reply("t1", "a1", "partial one", true),
      finished("t1", "failed"),
      started("t2"),
      user("t2", "q2"),
      reply("t2", "a2", "cut short"),
      finished("t2", "cancelled"),
      started("t3"),
      user("t3", "q3"),
      chunk("t3", "a3", 0, "legacy"),
      finished("t3", "failed"),
    ]);
    assert.deepEqual(shown(snapshot), [
      ["user", "q1", false],
      ["assistant", "partial one", true],
      ["user", "q2", false],
      ["assistant", "cut short", true],
      ["user", "q3", false],
      ["assistant", "legacy", true],
    ]);
    assert.equal(snapshot.complete, true);
  });

  it("an assistant message stored as partial stays partial in a completed turn", () => {
    const snapshot = snapshotOf([started("t1"), reply("t1", "a1", "x", true), finished("t1")]);
    assert.deepEqual(shown(snapshot), [["assistant", "x", true]]);
  });

  it("redacts a secret split across two stored chunks: reconcile before redact", () => {
    const snapshot = snapshotOf(
      [started("t1"), chunk("t1", "a1", 0, `key is ${SECRET.slice(0, 9)}`), chunk("t1", "a1", 1, `${SECRET.slice(9)} ok`), finished("t1")],
      { torn: false, secrets: [SECRET] },
    );
    assert.deepEqual(messages(snapshot.entries), [`key is ${REDACTION_MARKER} ok`]);
    assert.ok(!snapshot.entries.some((e) => e.text.includes(SECRET.slice(9))));
  });

  it("redacts known secrets and credential-shaped tokens in every kind", () => {
    const token = `sk-${"aB3dE5gH7jK9mN1p".repeat(2)}`;
    const snapshot = snapshotOf([
      started("t1"),
      user("t1", `use ${SECRET}`),
      reply("t1", "a1", `token ${token}`),
      { type: "reasoning_summary", turn_id: "t1", item_id: "i", text: SECRET, provider_summary: true },
      { type: "activity", turn_id: "t1", activity_id: "x", state: "completed", summary: `ran with ${SECRET}` },
      { type: "compaction", summary: SECRET },
      { type: "diagnostic", summary: token },
      finished("t1"),
    ], { torn: false, secrets: [SECRET] });
    for (const entry of snapshot.entries) {
      assert.ok(!entry.text.includes(SECRET) && !entry.text.includes(token), entry.kind);
      assert.ok(entry.text.includes(REDACTION_MARKER), entry.kind);
    }
  });

  it("sanitizes lone surrogates to U+FFFD and keeps control characters", () => {
    const snapshot = snapshotOf([user("t", "a\uD800b\uDC00c\u0000\u001F\u007F😀")]);
    assert.equal(snapshot.entries[0]!.text, "a\uFFFDb\uFFFDc\u0000\u001F\u007F😀");
  });

  it("message ids are opaque, in the id grammar, shared by a message's parts and distinct across messages", () => {
    const snapshot = snapshotOf([user("t", "x".repeat(40_000), "not/a safe id!"), finished("t"), ...turn("t1", "q", "r")]);
    const ids = snapshot.entries.map((e) => e.message_id);
    for (const id of ids) assert.match(id, IDENTIFIER_PATTERN);
    assert.equal(new Set(ids.slice(0, 3)).size, 1);
    assert.equal(new Set(ids).size, 3);
    assert.deepEqual(snapshot.entries.map((e) => [e.part, e.last_part]), [[0, false], [1, false], [2, true], [0, true], [0, true]]);
  });

  it("an empty text is one empty part", () => {
    const snapshot = snapshotOf([user("t", ""), finished("t")]);
    assert.deepEqual(snapshot.entries.map((e) => [e.text, e.part, e.last_part]), [["", 0, true]]);
  });

  it("freezes the snapshot, its entry list and every entry", () => {
    const snapshot = snapshotOf(turn("t1", "q", "r"));
    assert.ok(Object.isFrozen(snapshot) && Object.isFrozen(snapshot.entries));
    assert.ok(snapshot.entries.every((e) => Object.isFrozen(e)));
  });
});

describe("projectHistory chunking", () => {
  const parts = (text: string) => snapshotOf([user("t", text), finished("t")]).entries.map((e) => e.text);

  it("cuts at 16,384 bytes without splitting a multibyte character across the cut", () => {
    const cases: Array<[string, string, number[]]> = [
      ["16,383 bytes, 2-byte char at the end", `${"a".repeat(16_381)}é`, [16_383]],
      ["16,384 bytes, 2-byte char at the end", `${"a".repeat(16_382)}é`, [16_384]],
      ["16,385 bytes, 2-byte char straddling", `${"a".repeat(16_383)}é`, [16_383, 2]],
      ["16,384 bytes, 3-byte char at the end", `${"a".repeat(16_381)}€`, [16_384]],
      ["16,385 bytes, 3-byte char straddling", `${"a".repeat(16_382)}€`, [16_382, 3]],
      ["16,384 bytes, astral char at the end", `${"a".repeat(16_380)}😀`, [16_384]],
      ["16,385 bytes, astral char straddling", `${"a".repeat(16_381)}😀`, [16_381, 4]],
      ["16,386 bytes, astral char straddling", `${"a".repeat(16_382)}😀`, [16_382, 4]],
    ];
    for (const [label, text, sizes] of cases) {
      const got = parts(text);
      assert.deepEqual(got.map(utf8ByteCount), sizes, label);
      assert.equal(got.join(""), text, label);
    }
  });

  it("budgets the escaped size: a text of control characters grows sixfold and takes smaller parts", () => {
    const text = "\u0001".repeat(LIMITS.history_chunk_bytes);
    const got = parts(text);
    const perPart = Math.floor(PART_ESCAPED_BUDGET / 6);
    assert.equal(got.length, Math.ceil(text.length / perPart));
    assert.ok(got.slice(0, -1).every((p) => p.length === perPart));
    assert.ok(got.every((p) => escapedBytes(p) <= PART_ESCAPED_BUDGET));
    assert.equal(got.join(""), text);
  });

  it("quotes and backslashes double when escaped and are budgeted too", () => {
    const got = parts(`"\\`.repeat(LIMITS.history_chunk_bytes / 2));
    assert.ok(got.length >= 2);
    assert.ok(got.every((p) => escapedBytes(p) <= PART_ESCAPED_BUDGET && utf8ByteCount(p) <= LIMITS.history_chunk_bytes));
  });

  it("splits one very large message into many numbered parts", () => {
    const text = "lorem ipsum ✓ 😀 ".repeat(100_000);
    const snapshot = snapshotOf([started("t"), reply("t", "a", text), finished("t")]);
    const entries = snapshot.entries;
    assert.ok(entries.length > 100);
    assert.deepEqual(entries.map((e) => e.part), entries.map((_, i) => i));
    assert.deepEqual(entries.map((e) => e.last_part), entries.map((_, i) => i === entries.length - 1));
    assert.equal(new Set(entries.map((e) => e.message_id)).size, 1);
    assert.ok(entries.every((e) => utf8ByteCount(e.text) <= LIMITS.history_chunk_bytes));
    assert.equal(messages(entries)[0], text);
  });
});

describe("projectHistory turns without a recorded end", () => {
  it("content of a turn with no turn_finished, started or not, makes the snapshot incomplete", () => {
    for (const records of [
      [user("t", "q"), reply("t", "a", "r")],
      [...turn("t", "q", "r"), user("t2", "late")],
    ]) {
      const snapshot = snapshotOf(records);
      assert.equal(snapshot.complete, false);
      assert.equal(snapshot.entries.at(-1)!.kind, "diagnostic");
      assert.equal(snapshot.entries.at(-1)!.partial, true);
    }
  });
});

describe("projectHistory snapshot bounds", () => {
  it("accepts 10,000 parts and rejects 10,001 with history_limit", () => {
    const records = (count: number) => [...Array.from({ length: count }, (_, i) => user("t", `m${i}`)), finished("t")];
    const ok = projectHistory(records(LIMITS.history_snapshot_parts), NO_SECRETS);
    assert.ok(ok.ok);
    assert.equal(ok.snapshot.entries.length, LIMITS.history_snapshot_parts);
    assert.deepEqual(projectHistory(records(LIMITS.history_snapshot_parts + 1), NO_SECRETS), { ok: false, code: ErrorCode.historyLimit });
    // The interruption diagnostic is a part like any other.
    const torn = projectHistory(records(LIMITS.history_snapshot_parts), { torn: true, secrets: [] });
    assert.deepEqual(torn, { ok: false, code: ErrorCode.historyLimit });
  });

  it("accepts exactly 8 MiB of serialized entries and rejects one byte more", () => {
    const count = 520;
    const base = 16_000;
    const build = (extra: number) => {
      const sizes = Array.from({ length: count }, () => base);
      for (let i = 0; extra > 0; i++) {
        const add = Math.min(extra, LIMITS.history_chunk_bytes - base);
        sizes[i] = base + add;
        extra -= add;
      }
      return [...sizes.map((size) => user("t", "a".repeat(size))), finished("t")];
    };
    const probe = projectHistory(build(0), NO_SECRETS);
    assert.ok(probe.ok);
    assert.equal(probe.snapshot.entries.length, count);
    const missing = LIMITS.history_snapshot_bytes - utf8ByteCount(JSON.stringify(probe.snapshot.entries));
    assert.ok(missing > 0 && missing < count * (LIMITS.history_chunk_bytes - base));

    const exact = projectHistory(build(missing), NO_SECRETS);
    assert.ok(exact.ok);
    assert.equal(exact.snapshot.entries.length, count);
    assert.equal(utf8ByteCount(JSON.stringify(exact.snapshot.entries)), LIMITS.history_snapshot_bytes);
    assert.deepEqual(projectHistory(build(missing + 1), NO_SECRETS), { ok: false, code: ErrorCode.historyLimit });
  });

  it("rejects one huge text over the snapshot bound without a partial snapshot", () => {
    const result = projectHistory([user("t", "x ".repeat(LIMITS.history_snapshot_bytes / 2))], NO_SECRETS);
    assert.deepEqual(result, { ok: false, code: ErrorCode.historyLimit });
  });
});

/** Code units chosen to hit every escaping and encoding class, lone surrogate halves included. */
const unit = fc.oneof(
  { arbitrary: fc.constantFrom("a", "Z", "7", " ", "-", "\"", "\\", "/"), weight: 4 },
  { arbitrary: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), weight: 2 },
  { arbitrary: fc.integer({ min: 0x80, max: 0xd7ff }).map((c) => String.fromCharCode(c)), weight: 2 },
  { arbitrary: fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)), weight: 2 },
  { arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)), weight: 1 },
  { arbitrary: fc.constantFrom("\u007F", "\u0085", "\u2028", "\u2029", "\uFEFF", "\uFFFF", "\uE000"), weight: 1 },
);
/** Short texts, and long ones made of repeated runs so they cross several part bounds. */
const arbitraryText = fc.oneof(
  fc.string({ unit, maxLength: 64 }),
  fc.array(fc.tuple(fc.string({ unit, minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 9_000 })), { minLength: 1, maxLength: 6 })
    .map((runs) => runs.map(([run, times]) => run.repeat(times)).join("")),
  fc.tuple(fc.string({ unit, maxLength: 16 }), fc.string({ unit, maxLength: 16 })).map(([a, b]) => `${a}${SECRET}${b}`),
);

describe("projectHistory properties", () => {
  it("a message's parts concatenate to sanitize(redact(text)), each within both bounds, cut greedily between code points", () => {
    fc.assert(
      fc.property(arbitraryText, (text) => {
        const snapshot = snapshotOf([started("t"), reply("t", "a", text), finished("t")], { torn: false, secrets: [SECRET] });
        const partsOf = snapshot.entries.map((e) => e.text);
        assert.equal(partsOf.join(""), sanitizeText(redactSecrets(text, [SECRET])));
        for (const [i, part] of partsOf.entries()) {
          assert.ok(utf8ByteCount(part) <= LIMITS.history_chunk_bytes);
          assert.ok(escapedBytes(part) <= PART_ESCAPED_BUDGET);
          assert.doesNotMatch(part, /[\uD800-\uDFFF]/u); // no half of a pair, no lone half
          const next = partsOf[i + 1];
          if (next !== undefined) {
            // Greedy: the next code point would have broken a bound.
            const first = String.fromCodePoint(next.codePointAt(0)!);
            assert.ok(
              utf8ByteCount(part + first) > LIMITS.history_chunk_bytes || escapedBytes(part + first) > PART_ESCAPED_BUDGET,
            );
          }
        }
        assert.deepEqual(snapshot.entries.map((e) => e.part), partsOf.map((_, i) => i));
      }),
      { numRuns: fuzzRuns(100, 50) },
    );
  });
});
