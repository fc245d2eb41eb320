import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ManualClock } from "../runtime/memory.ts";
import { type ByteWriter, RuntimeError } from "../src/host/runtime.ts";
import { OrderedWriter, type WriterClock, type WriterFailure } from "../src/transport/writer.ts";
import { concatBytes } from "../src/util/bytes.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const encoder = new TextEncoder();
const MAX_PENDING = 32;
const DEADLINE_MS = 2_000;
/** A slot per frame (the bound counts frames, as these tests state it), and writes as large as production's. */
const OPTIONS = { maxPending: MAX_PENDING, slotBytes: 1, writeBytes: 65_536, deadlineMs: DEADLINE_MS };

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** The writer's view of a {@link ManualClock}. */
function writerClock(clock: ManualClock): WriterClock {
  return { setTimer: (ms, callback) => clock.setTimer(ms, callback), monotonicNow: () => clock.now() };
}

/** Lets every pending microtask (and promise continuation) run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

/** Runs a bounded number of microtask turns: enough for the writer's continuations, far cheaper than a timer turn. */
async function drainMicrotasks(): Promise<void> {
  for (let i = 0; i < 16; i++) await Promise.resolve();
}

/** A byte sink whose writes stay in flight until the test completes or fails them. */
class HeldOutput implements ByteWriter {
  readonly calls: { bytes: Uint8Array; resolve(): void; reject(error: unknown): void }[] = [];
  write(bytes: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => this.calls.push({ bytes: bytes.slice(), resolve, reject }));
  }
  get written(): string[] {
    return this.calls.map((call) => text(call.bytes));
  }
}

function frame(label: string): Uint8Array {
  return encoder.encode(`${label}\n`);
}

function newWriter(out: ByteWriter, clock = new ManualClock()) {
  const failures: WriterFailure[] = [];
  const writer = new OrderedWriter(out, writerClock(clock), OPTIONS, (failure) => failures.push(failure));
  return { writer, failures, clock };
}

describe("OrderedWriter under fc.scheduler()", () => {
  it("writer writes every accepted frame once, in enqueue order, batching what queued during a write, under any interleaving", async () => {
    const seen = { clean: 0, overflow: 0, broken: 0 };
    const burst = fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: 1, max: 6 }) },
      { weight: 1, arbitrary: fc.integer({ min: 20, max: 40 }) },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.tuple(burst, fc.nat({ max: 40 }), fc.boolean()), { minLength: 1, maxLength: 12 }),
        fc.option(fc.nat({ max: 12 }), { nil: null }),
        async (s, bursts, rejectAt) => {
          const calls: Uint8Array[] = [];
          const accepted: Uint8Array[] = [];
          let cursor = 0; // accepted frames already handed to a write call
          let frameCount = 0;
          const failures: WriterFailure[] = [];
          const waiters: { count: number; resolved: boolean }[] = [];
          // Assertions inside write() are collected, not thrown: the writer would take a throw for a broken pipe.
          const violations: unknown[] = [];
          const out: ByteWriter = {
            write(bytes) {
              const index = calls.length;
              calls.push(bytes.slice());
              try {
                assert.equal(writer.failure, null, "nothing is written after a failure");
                // Everything not yet written leaves together, in order, exactly once.
                assert.equal(writer.pending, accepted.length - cursor);
                assert.deepEqual(bytes, concatBytes(accepted.slice(cursor)));
              } catch (error) {
                violations.push(error);
              }
              cursor = accepted.length;
              return s.schedule(Promise.resolve(), `write #${index} (${bytes.length} bytes)`).then(() => {
                if (index === rejectAt) throw new RuntimeError("broken_pipe", "write");
              });
            },
          };
          const clock = new ManualClock();
          const writer = new OrderedWriter(out, writerClock(clock), OPTIONS, (failure) => failures.push(failure));

          const enqueueBurst = (size: number, padding: number, wait: boolean) => {
            for (let i = 0; i < size; i++) {
              const bytes = encoder.encode(`frame ${frameCount++} ${"·".repeat((padding + i) % 41)}\n`);
              const before = writer.pending;
              const failedBefore = writer.failure;
              // enqueue() may start a write synchronously, so the frame counts as accepted during the call.
              accepted.push(bytes);
              const ok = writer.enqueue(bytes);
              if (!ok) accepted.pop();
              if (failedBefore !== null) {
                assert.equal(ok, false, "enqueue after failure is refused");
              } else if (before >= MAX_PENDING) {
                assert.equal(ok, false, "the 33rd pending frame is refused");
                assert.equal(writer.failure, "overflow");
              } else {
                assert.equal(ok, true);
              }
              assert.ok(writer.pending <= MAX_PENDING, `pending ${writer.pending} ≤ ${MAX_PENDING}`);
              assert.ok(failures.length <= 1, "onFailure runs at most once");
            }
            if (wait) {
              const waiter = { count: 1 + (padding % 16), resolved: false };
              waiters.push(waiter);
              void writer.whenPendingBelow(waiter.count).then(() => (waiter.resolved = true));
            }
          };

          s.scheduleSequence(
            bursts.map(([size, padding, wait]) => ({
              label: `enqueue ${size}`,
              builder: () => Promise.resolve(enqueueBurst(size, padding, wait)),
            })),
          );
          await s.waitIdle();
          await writer.whenIdle();
          await settle();

          assert.deepEqual(violations, []);
          assert.deepEqual(failures, writer.failure === null ? [] : [writer.failure]);
          assert.ok(waiters.every((waiter) => waiter.resolved), "every whenPendingBelow() waiter is released");
          const written = concatBytes(calls);
          switch (writer.failure) {
            case null:
              seen.clean++;
              assert.equal(writer.pending, 0);
              assert.equal(cursor, accepted.length);
              assert.deepEqual(written, concatBytes(accepted));
              break;
            case "overflow":
              seen.overflow++;
              // The bytes written are a whole-frame prefix of what was accepted.
              assert.deepEqual(written, concatBytes(accepted.slice(0, cursor)));
              break;
            case "broken":
              seen.broken++;
              assert.ok(rejectAt !== null);
              assert.equal(calls.length, rejectAt + 1, "the rejected write is the last one");
              assert.deepEqual(written, concatBytes(accepted.slice(0, cursor)));
              break;
            default:
              assert.fail(`unexpected failure ${writer.failure}: the clock never moved`);
          }
        },
      ),
      { numRuns: fuzzRuns(300) },
    );
    assert.ok(seen.clean > 0 && seen.overflow > 0 && seen.broken > 0, JSON.stringify(seen));
  });

  it("writer fails with overflow exactly once on the 33rd pending frame", async () => {
    const out = new HeldOutput();
    const { writer, failures } = newWriter(out);
    for (let i = 0; i < MAX_PENDING; i++) assert.equal(writer.enqueue(frame(`f${i}`)), true);
    assert.equal(writer.pending, MAX_PENDING);
    assert.equal(writer.enqueue(frame("f32")), false);
    assert.deepEqual(failures, ["overflow"]);
    assert.equal(writer.failure, "overflow");
    assert.equal(writer.enqueue(frame("f33")), false);
    assert.deepEqual(failures, ["overflow"]);
    // The write in flight may finish; nothing else is written.
    out.calls[0]!.resolve();
    await settle();
    await writer.whenIdle();
    assert.deepEqual(out.written, ["f0\n"]);
  });

  it("writer fails with broken when a write rejects and writes nothing more", async () => {
    const out = new HeldOutput();
    const { writer, failures } = newWriter(out);
    writer.enqueue(frame("a"));
    writer.enqueue(frame("b"));
    writer.enqueue(frame("c"));
    out.calls[0]!.reject(new RuntimeError("broken_pipe", "write"));
    await settle();
    assert.deepEqual(failures, ["broken"]);
    assert.equal(writer.enqueue(frame("d")), false);
    await settle();
    assert.deepEqual(failures, ["broken"]);
    assert.deepEqual(out.written, ["a\n"]);
  });

  it("writer sends the frames enqueued during a write together, in order, in the next write call", async () => {
    const out = new HeldOutput();
    const { writer } = newWriter(out);
    writer.enqueue(frame("a"));
    writer.enqueue(frame("b"));
    writer.enqueue(frame("c"));
    writer.enqueue(frame("d"));
    await settle();
    assert.deepEqual(out.written, ["a\n"]);
    out.calls[0]!.resolve();
    await settle();
    assert.deepEqual(out.written, ["a\n", "b\nc\nd\n"]);
    writer.enqueue(frame("e"));
    assert.equal(writer.pending, 4);
    out.calls[1]!.resolve();
    await settle();
    assert.deepEqual(out.written, ["a\n", "b\nc\nd\n", "e\n"]);
    out.calls[2]!.resolve();
    await writer.whenIdle();
    assert.equal(writer.pending, 0);
  });
});

describe("OrderedWriter cork", () => {
  it("writer sends the frames enqueued while corked in one write call after uncork", async () => {
    const out = new HeldOutput();
    const { writer } = newWriter(out);
    writer.cork();
    writer.enqueue(frame("a"));
    writer.enqueue(frame("b"));
    await settle();
    assert.deepEqual(out.written, []);
    writer.uncork();
    assert.deepEqual(out.written, ["a\nb\n"]);
    out.calls[0]!.resolve();
    await writer.whenIdle();
    writer.enqueue(frame("c"));
    assert.deepEqual(out.written, ["a\nb\n", "c\n"], "uncorked writes start at once again");
  });
});

describe("OrderedWriter deadline on a ManualClock", () => {
  it("writer fails with deadline when a frame is not written 2,000 ms after its enqueue", async () => {
    const out = new HeldOutput();
    const { writer, failures, clock } = newWriter(out);
    writer.enqueue(frame("a"));
    clock.advance(DEADLINE_MS - 1);
    await settle();
    assert.deepEqual(failures, []);
    clock.advance(1);
    assert.deepEqual(failures, ["deadline"]);
    clock.advance(10_000);
    out.calls[0]!.resolve();
    await settle();
    assert.deepEqual(failures, ["deadline"]);
    assert.equal(out.calls.length, 1);
  });

  it("writer does not fail for a frame fully written at 1,999 ms", async () => {
    const out = new HeldOutput();
    const { writer, failures, clock } = newWriter(out);
    writer.enqueue(frame("a"));
    clock.advance(DEADLINE_MS - 1);
    out.calls[0]!.resolve();
    await settle();
    clock.advance(10_000);
    assert.deepEqual(failures, []);
    assert.equal(writer.pending, 0);
    assert.equal(writer.failure, null);
  });

  it("writer measures each frame's deadline from its own enqueue, not from the write that carries it", async () => {
    const out = new HeldOutput();
    const { writer, failures, clock } = newWriter(out);
    writer.enqueue(frame("a")); // t = 0, written at once
    clock.advance(1_500);
    writer.enqueue(frame("b")); // t = 1,500: deadline 3,500, queued behind a
    clock.advance(499);
    out.calls[0]!.resolve(); // t = 1,999: a made it; b's write starts now
    await settle();
    assert.deepEqual(out.written, ["a\n", "b\n"]);
    clock.advance(1_500); // t = 3,499
    await settle();
    assert.deepEqual(failures, []);
    clock.advance(1); // t = 3,500, not 1,999 + 2,000
    assert.deepEqual(failures, ["deadline"]);
  });

  it("writer does not let slow progress on earlier frames extend a later frame's deadline", async () => {
    const out = new HeldOutput();
    const { writer, failures, clock } = newWriter(out);
    writer.enqueue(frame("a")); // t = 0
    writer.enqueue(frame("b")); // t = 0: deadline 2,000, although its write cannot start before a's ends
    clock.advance(300);
    writer.enqueue(frame("c")); // t = 300: deadline 2,300
    // a trickles out (the sink hands bytes to the OS piecemeal); its write completes only at 1,900.
    for (let t = 300; t < 1_900; t += 100) {
      clock.advance(100);
      await settle();
      assert.deepEqual(failures, [], `no failure at ${clock.now()} ms`);
    }
    out.calls[0]!.resolve(); // t = 1,900: [b, c] go out together now
    await settle();
    assert.deepEqual(out.written, ["a\n", "b\nc\n"]);
    clock.advance(99); // t = 1,999
    await settle();
    assert.deepEqual(failures, []);
    clock.advance(1); // t = 2,000: b's deadline, only 100 ms after its write started
    assert.deepEqual(failures, ["deadline"]);
    out.calls[1]!.resolve();
    await settle();
    assert.equal(out.calls.length, 2, "nothing is written after the failure");
  });

  it("writer keeps the head frame's deadline across a batch of partially slow writes", async () => {
    const out = new HeldOutput();
    const { writer, failures, clock } = newWriter(out);
    writer.enqueue(frame("a")); // t = 0
    clock.advance(100);
    writer.enqueue(frame("b")); // t = 100: deadline 2,100
    clock.advance(100);
    writer.enqueue(frame("c")); // t = 200: deadline 2,200
    clock.advance(800);
    out.calls[0]!.resolve(); // t = 1,000: a done; [b, c] go out in one write
    await settle();
    assert.deepEqual(out.written, ["a\n", "b\nc\n"]);
    clock.advance(1_099); // t = 2,099
    await settle();
    assert.deepEqual(failures, []);
    clock.advance(1); // t = 2,100: b's own deadline
    assert.deepEqual(failures, ["deadline"]);
  });

  it("writer fails with deadline exactly when some frame is not fully written 2,000 ms after its own enqueue", async () => {
    const seen = { deadline: 0, clean: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 700 }), { minLength: 1, maxLength: 16 }),
        fc.array(fc.integer({ min: 1, max: 1_500 }), { minLength: 16, maxLength: 16 }),
        async (gaps, durations) => {
          const enqueuedAt: number[] = [];
          gaps.forEach((gap, i) => enqueuedAt.push((i === 0 ? 0 : enqueuedAt[i - 1]!) + gap));

          // The model: one write at a time carrying everything queued; at equal times the clock
          // (deadline) goes first, then write completions, then enqueues.
          const completedAt: number[] = [];
          {
            let queue: number[] = [];
            let inFlight: { frames: number[]; until: number } | null = null;
            let calls = 0;
            let next = 0;
            const start = (now: number) => {
              if (inFlight !== null || queue.length === 0) return;
              inFlight = { frames: queue, until: now + durations[calls++ % durations.length]! };
              queue = [];
            };
            while (next < enqueuedAt.length || inFlight !== null) {
              const flight = inFlight as { frames: number[]; until: number } | null;
              const now = Math.min(enqueuedAt[next] ?? Infinity, flight?.until ?? Infinity);
              if (flight !== null && flight.until === now) {
                for (const index of flight.frames) completedAt[index] = now;
                inFlight = null;
                start(now);
              }
              while (next < enqueuedAt.length && enqueuedAt[next] === now) {
                queue.push(next++);
                start(now);
              }
            }
          }
          const late = enqueuedAt
            .map((at, i) => ({ deadline: at + DEADLINE_MS, completed: completedAt[i]! }))
            .filter(({ deadline, completed }) => completed >= deadline)
            .map(({ deadline }) => deadline);
          const expectedFailureAt = late.length === 0 ? null : Math.min(...late);

          // The real writer, driven through the same timeline on a ManualClock.
          const clock = new ManualClock();
          const out = new HeldOutput();
          const failures: [WriterFailure, number][] = [];
          const writer = new OrderedWriter(out, writerClock(clock), OPTIONS, (failure) => failures.push([failure, clock.now()]));
          const completions: { at: number; index: number }[] = [];
          let observedCalls = 0;
          const noteCalls = () => {
            for (; observedCalls < out.calls.length; observedCalls++) {
              completions.push({ at: clock.now() + durations[observedCalls % durations.length]!, index: observedCalls });
            }
          };
          let next = 0;
          while (failures.length === 0 && (next < enqueuedAt.length || completions.length > 0)) {
            const now = Math.min(enqueuedAt[next] ?? Infinity, ...completions.map((c) => c.at));
            clock.advance(now - clock.now());
            if (failures.length > 0) break;
            for (const due of completions.filter((c) => c.at === now)) {
              completions.splice(completions.indexOf(due), 1);
              out.calls[due.index]!.resolve();
            }
            await drainMicrotasks();
            noteCalls();
            while (next < enqueuedAt.length && enqueuedAt[next] === now) writer.enqueue(frame(`f${next++}`));
            await drainMicrotasks();
            noteCalls();
          }
          if (failures.length === 0) clock.advance(10 * DEADLINE_MS);

          if (expectedFailureAt === null) {
            seen.clean++;
            assert.deepEqual(failures, []);
            assert.equal(writer.pending, 0);
            assert.equal(out.written.join(""), enqueuedAt.map((_, i) => `f${i}\n`).join(""));
          } else {
            seen.deadline++;
            assert.deepEqual(failures, [["deadline", expectedFailureAt]]);
            const callsAtFailure = out.calls.length;
            for (const call of out.calls) call.resolve();
            await drainMicrotasks();
            assert.equal(out.calls.length, callsAtFailure, "nothing is written after the failure");
          }
        },
      ),
      { numRuns: fuzzRuns(300) },
    );
    assert.ok(seen.deadline > 0 && seen.clean > 0, JSON.stringify(seen));
  });

  it("writer re-arms nothing once idle: a frame written in time leaves no timer behind", async () => {
    const out = new HeldOutput();
    const { writer, failures, clock } = newWriter(out);
    for (let round = 0; round < 5; round++) {
      writer.enqueue(frame(`r${round}`));
      clock.advance(DEADLINE_MS - 1);
      out.calls[round]!.resolve();
      await settle();
    }
    clock.advance(60_000);
    assert.deepEqual(failures, []);
    assert.equal(writer.pending, 0);
  });
});
