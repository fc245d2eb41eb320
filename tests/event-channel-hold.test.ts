// RunEventChannel with `deltaHoldMs` (set when each stdout write is costly,
// as on Deno): streamed text after a delta waits for the hold and leaves as
// one delta; the first delta after a pause, critical events and the terminal
// event never wait, order is kept and nothing is dropped for holding.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ManualClock } from "../runtime/memory.ts";
import { RunEventChannel } from "../src/runner/event-channel.ts";
import { activity, deltas, HeldSink, microtasks, SCOPE, terminal } from "./support/event-sink.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const HOLD_MS = 1;

function holding(capacity = 28) {
  const clock = new ManualClock();
  const sink = new HeldSink(capacity);
  const events = new RunEventChannel({ sink, setTimer: (ms, callback) => clock.setTimer(ms, callback), scope: SCOPE, deltaHoldMs: HOLD_MS });
  return { sink, events, clock };
}

describe("RunEventChannel delta hold", () => {
  it("sends the first delta at once and the text that follows within the hold as one delta", () => {
    const { sink, events, clock } = holding();
    events.delta("m", "a ");
    assert.deepEqual(deltas(sink.sent), [["m", 0, "a "]]);
    for (const word of ["b ", "c ", "d "]) events.delta("m", word);
    assert.deepEqual(deltas(sink.sent), [["m", 0, "a "]], "held while the hold runs");
    clock.advance(HOLD_MS);
    assert.deepEqual(deltas(sink.sent), [["m", 0, "a "], ["m", 1, "b c d "]]);
    // That delivery holds again; with nothing more offered the hold lapses and the next delta goes at once.
    clock.advance(HOLD_MS);
    events.delta("m", "e ");
    assert.deepEqual(deltas(sink.sent), [["m", 0, "a "], ["m", 1, "b c d "], ["m", 2, "e "]]);
  });

  it("lets a critical event through at once, behind the held text", async () => {
    const { sink, events } = holding();
    events.delta("m", "a ");
    events.delta("m", "b ");
    const result = events.critical(activity("t1"));
    assert.deepEqual(await result, { ok: true });
    assert.deepEqual(sink.sent.map((event) => event.event), ["message.delta", "message.delta", "activity"]);
    assert.deepEqual(deltas(sink.sent), [["m", 0, "a "], ["m", 1, "b "]]);
  });

  it("sends held text before the terminal event and leaves no timer behind", async () => {
    const { sink, events, clock } = holding();
    events.delta("m", "a ");
    events.delta("m", "b ");
    assert.deepEqual(await events.finish(terminal()), { ok: true });
    assert.deepEqual(sink.sent.map((event) => event.event), ["message.delta", "message.delta", "run.finished"]);
    const sent = sink.sent.length;
    clock.advance(10 * HOLD_MS);
    events.delta("m", "late ");
    assert.equal(sink.sent.length, sent, "nothing after the terminal event");
  });

  it("never holds more than one delta: a full one goes, so holding alone drops nothing", () => {
    const { sink, events, clock } = holding();
    const word = "x".repeat(999) + " ";
    for (let index = 0; index < 40; index++) events.delta("m", word);
    clock.advance(HOLD_MS);
    assert.deepEqual(deltas(sink.sent).map(([, part]) => part), [...sink.sent.keys()], "no part number skipped: nothing dropped");
    assert.equal(deltas(sink.sent).map(([, , text]) => text).join(""), word.repeat(40));
    assert.ok(sink.sent.length < 40, "text was joined");
  });

  it("keeps every part in order and the text whole under any interleaving of offers, time and writer progress", async () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant("delta" as const), text: fc.string({ minLength: 1, maxLength: 30 }) }),
      fc.record({ kind: fc.constant("tick" as const), ms: fc.integer({ min: 0, max: 2 }) }),
      fc.record({ kind: fc.constant("release" as const), count: fc.integer({ min: 1, max: 4 }) }),
      fc.constant({ kind: "critical" as const }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
        const { sink, events, clock } = holding(4);
        let offered = "";
        let criticals = 0;
        for (const action of steps) {
          if (action.kind === "delta") {
            events.delta("m", action.text);
            offered += action.text;
          } else if (action.kind === "tick") clock.advance(action.ms);
          else if (action.kind === "release") sink.release(action.count);
          else void events.critical(activity(`t${criticals++}`));
          await microtasks();
        }
        const done = events.finish(terminal());
        for (let index = 0; index < 200 && sink.sent.at(-1)?.event !== "run.finished"; index++) {
          sink.release();
          clock.advance(HOLD_MS);
          await microtasks();
        }
        assert.equal((await done).ok, true);
        assert.deepEqual(sink.violations, []);
        const parts = deltas(sink.sent).map(([, part]) => part);
        assert.ok(parts.every((part, index) => index === 0 || part > parts[index - 1]!), "parts ascend");
        // A skipped part number marks a drop (for lack of room, never for holding); without one the
        // delivered text is the offered text up to where the last delivered part ends.
        const delivered = deltas(sink.sent).map(([, , text]) => text).join("");
        if (parts.every((part, index) => part === index)) assert.ok(offered.startsWith(delivered), "delivered text is the offered text, in order");
        assert.equal(sink.sent.filter((event) => event.event === "activity").length, criticals);
      }),
      { numRuns: fuzzRuns(200) },
    );
  });
});
