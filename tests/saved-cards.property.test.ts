import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import * as v from "valibot";
import { emptyCard, fitCard } from "../src/cards/card.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { HistoryPageResultSchema } from "../src/protocol/results.ts";
import { type Card, CARD_LIMITS } from "../src/protocol/tool-cards.ts";
import { pageHistory } from "../src/store/pages.ts";
import { projectHistory, type ProjectionRecord } from "../src/store/projection.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const SESSION = "s1";
const REVISION = "r1-0123456789abcdef0123456789abcdef01234567";

/** Text heavy in characters JSON escapes six-fold, so escaped sizes matter. */
const text = (max: number) => fc.string({ unit: fc.constantFrom("a", "\u0001", '"', "é", "😀", "\n"), maxLength: max });

/** A card of any size up to far past `card_bytes`, fitted as the builder fits every card. */
const card: fc.Arbitrary<Card> = fc.tuple(text(20_000), text(4_000), text(1_000)).map(([diff, output, summary]) => fitCard({
  ...emptyCard("shell", "shell"),
  summary,
  phase: "finished",
  outcome: "completed",
  effect: "unknown",
  diff: { text: diff, truncated: false, total_bytes: diff.length },
  shell: { command: "x", cwd: ".", timeout_s: 1, exit_code: 0, signal: null, ending: "exit", duration_ms: 1, output: { head: output, tail: output, total_bytes: 1, omitted_bytes: 0 } },
}));

/** One call of a turn: its activity summary, and its saved card or none (an older writer's, or a base client's). */
const call = fc.record({ summary: text(1_024), card: fc.option(card, { nil: undefined }), prompt: text(3_000) });

describe("saved cards in history.page", () => {
  it("every page of a snapshot with cards is valid and within its bounds, and every card is on its own activity entry (fast-check)", () => {
    fc.assert(fc.property(fc.array(call, { minLength: 1, maxLength: 24 }), (calls) => {
      const records: ProjectionRecord[] = [];
      calls.forEach((item, index) => {
        const turn = `turn${index}`;
        records.push({ type: "turn_started", turn_id: turn }, { type: "user_input", turn_id: turn, message_id: "input", text: item.prompt });
        records.push({ type: "activity", turn_id: turn, activity_id: "t1", state: "started", summary: "…" });
        records.push({ type: "activity", turn_id: turn, activity_id: "t1", state: "completed", summary: item.summary });
        if (item.card !== undefined) records.push({ type: "tool_card", turn_id: turn, activity_id: "t1", card: item.card });
        records.push({ type: "turn_finished", turn_id: turn, outcome: "completed" });
      });
      const projected = projectHistory(records, { torn: false, secrets: [] });
      assert.ok(projected.ok);
      const seen: Record<string, unknown>[] = [];
      let cursor: string | null = null;
      do {
        const page = pageHistory(projected.snapshot, SESSION, REVISION, cursor, true);
        assert.ok(page.ok, "never content_limit: an entry with its card fits a page");
        assert.ok(new TextEncoder().encode(JSON.stringify(page.result)).length <= LIMITS.history_page_bytes);
        assert.ok(page.result.entries.length >= 1 && page.result.entries.length <= LIMITS.history_page_entries);
        assert.ok(v.is(HistoryPageResultSchema, page.result));
        seen.push(...page.result.entries);
        cursor = page.result.next_cursor;
      } while (cursor !== null);
      // Each call's activity entry carries that call's card, or null when it saved none.
      const activities = seen.filter((entry) => entry.kind === "activity");
      assert.deepEqual(activities.map((entry) => entry.card), calls.map((item) => item.card ?? null));
      assert.ok(seen.filter((entry) => entry.kind !== "activity").every((entry) => !("card" in entry)));
      assert.ok(calls.every((item) => item.card === undefined || new TextEncoder().encode(JSON.stringify(item.card)).length <= CARD_LIMITS.card_bytes));
      // A base client's pages of the same snapshot carry no card at all.
      const base = pageHistory(projected.snapshot, SESSION, REVISION, null, false);
      assert.ok(base.ok && base.result.entries.every((entry) => !("card" in entry)));
    }), { numRuns: fuzzRuns(40) });
  });

  it("cards past history_card_bytes page as null, the earliest kept; the entries' own bounds are untouched", () => {
    const big = fitCard({ ...emptyCard("shell", "shell"), diff: { text: "\u0001".repeat(20_000), truncated: false, total_bytes: 20_000 } });
    const size = new TextEncoder().encode(JSON.stringify(big)).length;
    const fits = Math.floor(CARD_LIMITS.history_card_bytes / size);
    const records: ProjectionRecord[] = [{ type: "turn_started", turn_id: "t" }];
    for (let index = 0; index <= fits; index++) {
      records.push({ type: "activity", turn_id: "t", activity_id: `a${index}`, state: "completed", summary: "done" });
      records.push({ type: "tool_card", turn_id: "t", activity_id: `a${index}`, card: big });
    }
    records.push({ type: "turn_finished", turn_id: "t", outcome: "completed" });
    const projected = projectHistory(records, { torn: false, secrets: [] });
    assert.ok(projected.ok);
    assert.equal(projected.snapshot.cards.size, fits);
    assert.equal(projected.snapshot.cards.get(projected.snapshot.entries.at(-1)!), undefined);
    assert.deepEqual(projected.snapshot.cards.get(projected.snapshot.entries[0]!), big);
  });
});
