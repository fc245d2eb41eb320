import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ErrorCode } from "../src/protocol/errors.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { PROJECTION_YIELD_UNITS, projectHistory, projectHistoryAsync, type ProjectionRecord } from "../src/store/projection.ts";
import { SLICE_MS } from "../src/store/cooperative-slices.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const SECRET = "hunter2-correct-horse";

/** One turn shaped like the seeded 64 MiB history: few projected messages, many records the projection skips or merges. */
function turn(index: number, chunks: number): ProjectionRecord[] {
  const id = `t${index}`;
  const records: ProjectionRecord[] = [{ type: "turn_started", turn_id: id }, { type: "user_input", turn_id: id, message_id: "u", text: `question ${index} ${SECRET}` }];
  for (let i = 0; i < chunks; i++) records.push({ type: "assistant_chunk", turn_id: id, message_id: "a", index: i, text: `part ${i} ` });
  records.push(
    { type: "assistant_message", turn_id: id, message_id: "a", text: `answer ${index} é😀`, partial: false },
    { type: "internal_prompt" },
    { type: "activity", turn_id: id, activity_id: "x", state: "completed", summary: "ran a tool" },
    { type: "usage" },
    { type: "turn_finished", turn_id: id, outcome: "completed" },
  );
  return records;
}

/** About `count` records in turns of 40 (three entries each, so 100,000 records stay inside the part bound). */
const history = (count: number): ProjectionRecord[] => Array.from({ length: Math.ceil(count / 40) }, (_, i) => turn(i, 33)).flat();

const options = { torn: false, secrets: [SECRET] };

const recordArb: fc.Arbitrary<ProjectionRecord> = fc.oneof(
  fc.record({ type: fc.constant("turn_started" as const), turn_id: fc.constantFrom("a", "b") }),
  fc.record({ type: fc.constant("turn_finished" as const), turn_id: fc.constantFrom("a", "b"), outcome: fc.constantFrom("completed" as const, "failed" as const) }),
  fc.record({ type: fc.constant("user_input" as const), turn_id: fc.constantFrom("a", "b"), message_id: fc.constantFrom("u", "v"), text: fc.string() }),
  fc.record({
    type: fc.constant("assistant_chunk" as const),
    turn_id: fc.constantFrom("a", "b"),
    message_id: fc.constantFrom("m", "n"),
    index: fc.nat(3),
    text: fc.string(),
  }),
  fc.record({ type: fc.constant("assistant_message" as const), turn_id: fc.constantFrom("a", "b"), message_id: fc.constantFrom("m", "n"), text: fc.string(), partial: fc.boolean() }),
  fc.record({ type: fc.constant("activity" as const), turn_id: fc.constant("a"), activity_id: fc.constantFrom("x", "y"), state: fc.constantFrom("started" as const, "completed" as const), summary: fc.string() }),
  fc.record({ type: fc.constantFrom("compaction" as const, "diagnostic" as const), summary: fc.string() }),
  fc.record({ type: fc.constantFrom("usage" as const, "internal_prompt" as const) }),
);

describe("projectHistoryAsync()", () => {
  it("projects exactly what projectHistory() projects, however often it pauses", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(recordArb, { maxLength: 300 }), fc.boolean(), fc.nat(10), async (records, torn, step) => {
        let clock = 0;
        const sliced = await projectHistoryAsync(records, { torn, secrets: [] }, { now: () => (clock += step), yieldEvery: () => Promise.resolve() });
        assert.deepEqual(sliced, projectHistory(records, { torn, secrets: [] }));
      }),
      { numRuns: fuzzRuns(200) },
    );
    const tooMany = Array.from({ length: LIMITS.history_snapshot_parts + 1 }, (_, i): ProjectionRecord => ({ type: "user_input", turn_id: "t", message_id: `u${i}`, text: "x" }));
    assert.deepEqual(await projectHistoryAsync(tooMany, options, {}), { ok: false, code: ErrorCode.historyLimit });
  });

  it("pauses at least every PROJECTION_YIELD_UNITS units when its clock never moves, and after every step once SLICE_MS went by", async () => {
    const records = history(100_000);
    let pauses = 0;
    const frozen = await projectHistoryAsync(records, options, { now: () => 0, yieldEvery: () => Promise.resolve(void pauses++) });
    assert.ok(frozen.ok);
    assert.deepEqual(frozen, projectHistory(records, options));
    assert.ok(pauses >= Math.floor(records.length / PROJECTION_YIELD_UNITS), `${pauses} pauses`);
    pauses = 0;
    let clock = 0;
    await projectHistoryAsync(records, options, { now: () => (clock += SLICE_MS), yieldEvery: () => Promise.resolve(void pauses++) });
    // A step holds at most 64 records, so a clock that is always due pauses at least that often.
    assert.ok(pauses >= records.length / 64, `${pauses} pauses for ${records.length} records`);
  });

  it("stops with operation_cancelled at the first pause after its signal is aborted", async () => {
    const abort = new AbortController();
    let pauses = 0;
    const result = await projectHistoryAsync(history(20_000), options, {
      signal: abort.signal,
      now: () => 0,
      yieldEvery: () => Promise.resolve(void (++pauses === 2 && abort.abort())),
    });
    assert.deepEqual(result, { ok: false, code: ErrorCode.operationCancelled });
    assert.equal(pauses, 2);
  });
});
