import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ManualClock } from "../runtime/memory.ts";
import { type CriticalResult, RunEventChannel } from "../src/runner/event-channel.ts";
import { splitUtf8 } from "../src/util/utf8.ts";
import { activity, deltas, HeldSink, microtasks, SCOPE, terminal } from "./support/event-sink.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text).length;
const ids = (sink: HeldSink) => sink.sent.map((e) => e.event === "activity" ? e.data.activity_id : e.event === "message.delta" ? `${e.data.message_id}#${e.data.part}` : e.event);

function channel(capacity: number, clock = new ManualClock()) {
  const sink = new HeldSink(capacity);
  const events = new RunEventChannel({ sink, setTimer: (ms, callback) => clock.setTimer(ms, callback), scope: SCOPE });
  return { sink, events, clock };
}

/** Text that stresses code point boundaries: 1- to 4-byte code points and lone surrogates. */
const mixedText = fc.array(fc.constantFrom("a", "é", "€", "😀", "\ud800", "\udc00", "\n"), { maxLength: 3_000 }).map((units) => units.join(""));

/** A critical event's result, recorded in the order results arrive. */
type Outcome = { readonly id: string; readonly result: CriticalResult };

describe("splitUtf8", () => {
  it("parts concatenate to the text, each within the bound, never inside a code point, each as full as it can be", () => {
    fc.assert(
      fc.property(fc.oneof(mixedText, fc.string({ unit: "binary", maxLength: 3_000 })), fc.constantFrom(4, 5, 7, 16, 4_000), (text, max) => {
        const parts = splitUtf8(text, max);
        assert.equal(parts.map((p) => p.text).join(""), text);
        for (const [index, part] of parts.entries()) {
          assert.ok(part.text.length > 0);
          assert.equal(part.bytes, bytes(part.text), "byte count matches TextEncoder");
          assert.ok(part.bytes <= max, `${part.bytes} ≤ ${max}`);
          const next = parts[index + 1];
          if (next === undefined) continue;
          const split = /[\ud800-\udbff]$/.test(part.text) && /^[\udc00-\udfff]/.test(next.text);
          assert.ok(!split, "a surrogate pair stays whole");
          assert.ok(part.bytes + bytes(String.fromCodePoint(next.text.codePointAt(0)!)) > max, "a part ends only when the next code point would not fit");
        }
      }),
      { numRuns: fuzzRuns(200) },
    );
  });
});

describe("RunEventChannel", () => {
  it("a delta splits into ≤ 4,000-byte parts numbered from 0 per message", () => {
    const { sink, events } = channel(100);
    events.delta("m1", "😀".repeat(1_500));
    events.delta("m2", "hi");
    events.delta("m1", "é".repeat(2_001));
    events.delta("m1", "");
    assert.deepEqual(deltas(sink.sent).map(([m, part, text]) => [m, part, bytes(text)]), [
      ["m1", 0, 4_000],
      ["m1", 1, 2_000],
      ["m2", 0, 2],
      ["m1", 2, 4_000],
      ["m1", 3, 2],
    ]);
    assert.equal(deltas(sink.sent).filter(([m]) => m === "m1").map(([, , t]) => t).join(""), "😀".repeat(1_500) + "é".repeat(2_001));
  });

  it("a blocked sink coalesces text into the queued tail delta of the same message", () => {
    const { sink, events } = channel(0);
    for (let i = 0; i < 40; i++) events.delta("m1", "a");
    assert.equal(events.queued, 1);
    events.delta("m1", "b".repeat(3_960)); // exactly fills the tail's 4,000 bytes
    events.delta("m1", "c"); // the tail is full: a new slot
    assert.equal(events.queued, 2);
    sink.resize(64);
    events.delta("m1", "d");
    assert.deepEqual(deltas(sink.sent).map(([m, part, text]) => [m, part, bytes(text)]), [["m1", 0, 4_000], ["m1", 1, 1], ["m1", 2, 1]]);
  });

  it("a full queue drops what cannot join its tail and leaves a part gap", () => {
    const { sink, events } = channel(0);
    // Alternating messages cannot coalesce, so each takes a slot until the queue is full.
    for (let i = 0; i < 32; i++) events.delta(i % 2 === 0 ? "m1" : "m2", "a");
    assert.equal(events.queued, 32);
    events.delta("m2", "b"); // joins m2's part 15, the tail
    events.delta("m1", "x"); // the tail is m2's: dropped, m1 part 16 unused
    events.delta("m2", "y".repeat(3_999)); // would exceed 4,000 bytes: dropped, part 16 unused
    events.delta("m2", "c"); // the tail is sealed after a drop, or "c" would sit behind a hole: part 17 unused
    assert.equal(events.queued, 32);
    sink.resize(64);
    events.delta("m1", "d");
    events.delta("m2", "z");
    const sent = deltas(sink.sent);
    assert.deepEqual(sent[31], ["m2", 15, "ab"]);
    assert.deepEqual(sent.slice(32), [["m1", 17, "d"], ["m2", 18, "z"]]);
  });

  it("a critical event waits in order for room, never dropped, while later deltas drop rather than overtake it", async () => {
    const { sink, events } = channel(0);
    for (let i = 0; i < 32; i++) events.delta(i % 2 === 0 ? "m1" : "m2", `${i},`);
    const waiting = events.critical(activity("a1"));
    events.delta("m1", "late"); // produced after a1: may not take a slot ahead of it
    events.delta("m2", "later"); // nor join m2's tail ahead of it
    sink.resize(64);
    assert.deepEqual(await waiting, { ok: true });
    events.delta("m1", "after");
    assert.deepEqual(ids(sink).slice(30), ["m1#15", "m2#15", "a1", "m1#17"]);
    assert.equal(deltas(sink.sent)[31]![2], "31,");
  });

  it("whenDeltaRoom() resolves at once with room, when a slot frees, or after its bound", async () => {
    const clock = new ManualClock();
    const { sink, events } = channel(0, clock);
    assert.equal(events.whenDeltaRoom(50), null);
    for (let i = 0; i < 32; i++) events.delta(i % 2 === 0 ? "m1" : "m2", "a");
    let freed = false;
    void events.whenDeltaRoom(50)!.then(() => (freed = true));
    sink.resize(1);
    await microtasks();
    assert.equal(freed, true, "a slot freed");
    sink.resize(0);
    for (let i = 0; i < 2; i++) events.delta(i % 2 === 0 ? "m1" : "m2", "b");
    let timedOut = false;
    void events.whenDeltaRoom(50)!.then(() => (timedOut = true));
    clock.advance(49);
    await microtasks();
    assert.equal(timedOut, false);
    clock.advance(1);
    await microtasks();
    assert.equal(timedOut, true, "the bound passed");
  });

  it("after finish nothing is accepted: deltas are ignored, criticals and a second finish report closed", async () => {
    const { sink, events } = channel(1);
    events.delta("m1", "one");
    const finished = events.finish(terminal());
    events.delta("m1", "ghost");
    assert.deepEqual(await events.critical(activity("a1")), { ok: false, code: "closed" });
    assert.deepEqual(await events.finish(terminal("failed")), { ok: false, code: "closed" });
    assert.equal(events.closed, true);
    sink.release();
    assert.deepEqual(await finished, { ok: true });
    await microtasks();
    assert.deepEqual(ids(sink), ["m1#0", "run.finished"]);
    const last = sink.sent.at(-1);
    assert.equal(last?.event === "run.finished" ? last.data.outcome : null, "completed");
  });

  it("a critical event that finds room at 1,999 ms is accepted", async () => {
    const { sink, events, clock } = channel(0);
    for (let i = 0; i < 32; i++) assert.deepEqual(await events.critical(activity(`a${i}`)), { ok: true });
    let settled: CriticalResult | null = null;
    void events.critical(activity("a32")).then((result) => void (settled = result));
    clock.advance(1_999);
    await microtasks();
    assert.equal(settled, null);
    sink.resize(1);
    await microtasks();
    assert.deepEqual(settled, { ok: true });
    clock.advance(10_000); // the disposed timer must not fire a late failure
    sink.resize(64);
    await microtasks();
    assert.deepEqual(ids(sink), Array.from({ length: 33 }, (_, i) => `a${i}`));
    assert.deepEqual(sink.violations, []);
  });

  it("at 2,000 ms without room a critical event fails with output_unavailable; only the terminal may follow", async () => {
    const { sink, events, clock } = channel(0);
    for (let i = 0; i < 32; i++) await events.critical(activity(`a${i}`));
    const outcomes: Outcome[] = [];
    for (const id of ["a32", "a33"]) void events.critical(activity(id)).then((result) => void outcomes.push({ id, result }));
    clock.advance(1_000);
    let finished: CriticalResult | null = null;
    void events.finish(terminal("failed")).then((result) => void (finished = result));
    clock.advance(1_000);
    await microtasks();
    const unavailable = { ok: false, code: "output_unavailable" };
    assert.deepEqual(outcomes, [{ id: "a32", result: unavailable }, { id: "a33", result: unavailable }]);
    assert.equal(finished, null, "the terminal keeps its own 2,000 ms bound");
    events.delta("m1", "ignored after a failure");
    clock.advance(999);
    sink.resize(64);
    await microtasks();
    assert.deepEqual(finished, { ok: true });
    assert.deepEqual(ids(sink), [...Array.from({ length: 32 }, (_, i) => `a${i}`), "run.finished"]);
  });

  it("a terminal event with no room for 2,000 ms fails too, and the channel stays closed", async () => {
    const { events, clock } = channel(0);
    for (let i = 0; i < 32; i++) await events.critical(activity(`a${i}`));
    const finished = events.finish(terminal());
    clock.advance(2_000);
    assert.deepEqual(await finished, { ok: false, code: "output_unavailable" });
    assert.deepEqual(await events.critical(activity("x")), { ok: false, code: "closed" });
  });
});

type Op =
  | { readonly kind: "delta"; readonly message: number; readonly text: string }
  | { readonly kind: "critical"; readonly awaited: boolean }
  | { readonly kind: "resize"; readonly capacity: number };

const deltaText = fc.oneof(
  { weight: 9, arbitrary: fc.string({ unit: "binary", maxLength: 12 }).map((text) => text.replace(/[<>]/g, "")) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom("a", "é", "€", "😀"), fc.integer({ min: 900, max: 2_100 })).map(([c, n]) => c.repeat(n)) },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ kind: fc.constant("delta" as const), message: fc.nat({ max: 2 }), text: deltaText }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("critical" as const), awaited: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("resize" as const), capacity: fc.integer({ min: 1, max: 8 }) }) },
);
/** A burst of ops the producer runs without yielding: long ones overfill the 32-event queue (most runs drop and coalesce). */
const burst = fc.oneof(fc.array(op, { minLength: 1, maxLength: 8 }), fc.array(op, { minLength: 30, maxLength: 90 }));

describe("RunEventChannel under fc.scheduler()", () => {
  it("bounds the queue, delivers every critical event once and in order, keeps delta order and ends with the terminal", async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(burst, { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 4 }), async (s, bursts, capacity) => {
        const { sink, events } = channel(capacity);
        const problems: string[] = [];
        // Each send is a write in flight; the scheduler decides when each one completes.
        sink.onSend = () => {
          if (events.queued > 32) problems.push(`queued ${events.queued}`);
          void s.schedule(Promise.resolve(), "write done").then(() => sink.release(1));
        };
        const produced = new Map<string, string>();
        const outcomes: Outcome[] = [];
        const called: string[] = [];
        const producer = (async () => {
          const unawaited: Promise<void>[] = [];
          let index = 0;
          for (const [b, ops] of bursts.entries()) {
            await s.schedule(Promise.resolve(), `burst ${b}`);
            for (const step of ops) {
              const tag = `<${index++}>`;
              if (step.kind === "delta") {
                const id = `m${step.message}`;
                produced.set(id, (produced.get(id) ?? "") + tag + step.text);
                events.delta(id, tag + step.text);
              } else if (step.kind === "resize") {
                sink.resize(step.capacity);
              } else {
                called.push(tag);
                const pending = events.critical(activity(tag)).then((result) => void outcomes.push({ id: tag, result }));
                if (step.awaited) await pending;
                else unawaited.push(pending);
              }
              if (events.queued > 32) problems.push(`queued ${events.queued} after ${step.kind}`);
            }
          }
          await Promise.all(unawaited);
          const finished = await events.finish(terminal());
          events.delta("m0", "<late>");
          return { finished, late: await events.critical(activity("late")) };
        })();
        const { finished, late } = await s.waitFor(producer);
        await s.waitIdle();

        assert.deepEqual(problems, []);
        assert.deepEqual(sink.violations, []);
        assert.deepEqual(finished, { ok: true });
        assert.deepEqual(late, { ok: false, code: "closed" });
        assert.equal(events.queued, 0);
        // Every critical event accepted (the clock never moves, so all are), delivered once, in call order, terminal last.
        assert.equal(outcomes.length, called.length);
        assert.ok(outcomes.every((o) => o.result.ok));
        const criticals = sink.sent.filter((e) => e.event !== "message.delta");
        assert.deepEqual(criticals.map((e) => e.event === "activity" ? e.data.activity_id : e.event), [...called, "run.finished"]);
        assert.equal(sink.sent.at(-1)?.event, "run.finished");
        // Delivered events follow production order: the op tags they carry only increase.
        const tags = sink.sent.flatMap((e) => (e.event === "message.delta" ? e.data.text : e.event === "activity" ? e.data.activity_id : "").match(/<\d+>/g) ?? []);
        const order = tags.map((t) => Number(t.slice(1, -1)));
        assert.ok(order.every((n, i) => i === 0 || n > order[i - 1]!), "in order");
        // Per message: parts only increase, and the parts before any gap are a prefix of its text.
        const byMessage = new Map<string, [number, string][]>();
        for (const [id, part, text] of deltas(sink.sent)) {
          assert.ok(bytes(text) <= 4_000);
          byMessage.set(id, [...(byMessage.get(id) ?? []), [part, text]]);
        }
        for (const [id, parts] of byMessage) {
          assert.ok(parts.every(([part], i) => i === 0 || part > parts[i - 1]![0]), `${id}: parts only increase`);
          const contiguous = parts.findIndex(([part], i) => part !== i);
          const prefix = parts.slice(0, contiguous < 0 ? parts.length : contiguous).map(([, t]) => t).join("");
          assert.ok(produced.get(id)!.startsWith(prefix), `${id}: gap-free parts are a prefix of its text`);
        }
      }),
      { numRuns: fuzzRuns(150, 4) },
    );
  });
});
