import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { HistorySnapshot } from "../src/store/history-snapshot.ts";
import { projectHistory } from "../src/store/projection.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { buildSession, realisticTextArb } from "./support/records.ts";

const turnArb = fc.record({ prompt: realisticTextArb, reply: realisticTextArb, summary: realisticTextArb });
const SECRETS = ["sk-continue-0123456789abcdefghij"];

function project(records: Parameters<typeof projectHistory>[0], after?: HistorySnapshot): HistorySnapshot {
  const result = projectHistory(records, { torn: false, secrets: SECRETS, ...(after === undefined ? {} : { after }) });
  assert.ok(result.ok, "projection failed");
  return result.snapshot;
}

describe("projectHistory() with `after`", () => {
  it("projecting appended whole turns onto a snapshot equals projecting the whole history", () => {
    fc.assert(
      fc.property(fc.array(turnArb, { minLength: 1, maxLength: 8 }), fc.nat(), (turns, cut) => {
        const records = buildSession("s1", turns);
        // Cut at a turn boundary: after the two opening records and `k` whole turns of seven records.
        const k = cut % (turns.length + 1);
        const boundary = 2 + k * 7;
        const whole = project(records);
        const prefix = project(records.slice(0, boundary));
        const added = project(records.slice(boundary), prefix);
        assert.deepEqual([...prefix.entries, ...added.entries], whole.entries);
        assert.deepEqual({ complete: added.complete, messages: added.messages, bytes: added.bytes }, {
          complete: whole.complete,
          messages: whole.messages,
          bytes: whole.bytes,
        });
        assert.equal(whole.bytes, new TextEncoder().encode(JSON.stringify(whole.entries)).length);
      }),
      { numRuns: fuzzRuns(150) },
    );
  });

  it("the snapshot bounds count the earlier entries", () => {
    const records = buildSession("s1", [{ prompt: "p", reply: "r", summary: "s" }]);
    const nearlyFull: HistorySnapshot = { entries: [], complete: true, messages: 9_999, bytes: 8_388_600, tailNotice: false, cards: new Map(), cardBytes: 0, userTurns: new Map() };
    const result = projectHistory(records, { torn: false, secrets: [], after: nearlyFull });
    assert.deepEqual(result, { ok: false, code: "history_limit" });
  });
});
