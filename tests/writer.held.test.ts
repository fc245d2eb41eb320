/**
 * The ordered writer's bound is on what the child holds (docs/protocol.md,
 * "Output"): frames a sink reports passed to the OS are not pending although
 * their write has not settled, pending frames share slots of `slotBytes`,
 * and output deadlines apply to exactly the frames still held.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ManualClock } from "../runtime/memory.ts";
import type { ByteWriter } from "../src/host/runtime.ts";
import { OrderedWriter, type WriterFailure, type WriterOptions } from "../src/transport/writer.ts";
import { concatBytes } from "../src/util/bytes.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const encoder = new TextEncoder();
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const DEADLINE_MS = 2_000;

/**
 * A sink that says, like Node's `writableLength`, how many bytes of its
 * unsettled writes the OS has not taken: `take` decides per write call
 * whether the OS takes it at once. Writes settle only when the test says.
 */
class ReportingOutput implements ByteWriter {
  readonly calls: { bytes: Uint8Array; taken: boolean; settled: boolean; settle(): void }[] = [];
  take = true;
  write(bytes: Uint8Array): Promise<void> {
    return new Promise((resolve) => {
      const call = {
        bytes: bytes.slice(),
        taken: this.take,
        settled: false,
        settle: () => {
          call.taken = call.settled = true;
          resolve();
        },
      };
      this.calls.push(call);
    });
  }
  heldBytes(): number {
    let held = 0;
    for (const call of this.calls) if (!call.taken) held += call.bytes.length;
    return held;
  }
  get written(): string[] {
    return this.calls.map((call) => text(call.bytes));
  }
  /** Settles every write, in order, including those the writer makes in response, until none is left. */
  async settleAll(): Promise<void> {
    for (let round = 0; round < 100 && this.calls.some((call) => !call.settled); round++) {
      for (const call of this.calls) if (!call.settled) call.settle();
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }
}

function newWriter(out: ByteWriter, options: Partial<WriterOptions> = {}, clock = new ManualClock()) {
  const failures: WriterFailure[] = [];
  const writer = new OrderedWriter(
    out,
    { setTimer: (ms, callback) => clock.setTimer(ms, callback), monotonicNow: () => clock.now() },
    { maxPending: 32, slotBytes: 1, writeBytes: 65_536, deadlineMs: DEADLINE_MS, ...options },
    (failure) => failures.push(failure),
  );
  return { writer, failures, clock };
}

const frame = (label: string) => encoder.encode(`${label}\n`);
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("OrderedWriter over a sink that reports what it holds", () => {
  it("writer counts nothing the sink passed to the OS as pending, although no write has settled: 100 frames, no overflow", async () => {
    const out = new ReportingOutput();
    const { writer, failures } = newWriter(out);
    for (let i = 0; i < 100; i++) {
      assert.equal(writer.enqueue(frame(`f${i}`)), true);
      assert.ok(writer.pending <= 32, `pending ${writer.pending}`);
    }
    assert.deepEqual(failures, []);
    await out.settleAll();
    await writer.whenIdle();
    assert.equal(out.written.join(""), Array.from({ length: 100 }, (_, i) => `f${i}\n`).join(""));
    assert.equal(writer.pending, 0);
  });

  it("writer counts what the sink still holds, newest frames first, and overflows past the bound", () => {
    const out = new ReportingOutput();
    const { writer, failures } = newWriter(out);
    writer.enqueue(frame("a")); // taken by the OS at once
    out.take = false;
    // Queued behind the unsettled write, then offered at the bound as one write the OS refuses.
    for (let i = 0; i < 32; i++) writer.enqueue(frame(`b${i}`));
    assert.equal(writer.pending, 32);
    assert.equal(writer.enqueue(frame("c")), false);
    assert.deepEqual(failures, ["overflow"]);
    assert.deepEqual(out.written, ["a\n", Array.from({ length: 32 }, (_, i) => `b${i}\n`).join("")]);
  });

  it("writer lets a frame the OS took pass its deadline unharmed, and fails on one the sink still holds at its own deadline", async () => {
    const out = new ReportingOutput();
    const { writer, failures, clock } = newWriter(out);
    writer.enqueue(frame("a")); // t = 0, taken at once; its write never settles
    clock.advance(1_000);
    out.take = false;
    writer.enqueue(frame("b")); // t = 1,000: deadline 3,000, queued behind a's unsettled write
    clock.advance(1_999); // t = 2,999: a's deadline passed long ago
    await settle();
    assert.deepEqual(failures, []);
    clock.advance(1);
    assert.deepEqual(failures, ["deadline"]);
  });

  it("writer offers corked frames to the OS at the bound instead of overflowing", async () => {
    const out = new ReportingOutput();
    const { writer, failures } = newWriter(out);
    writer.cork();
    for (let i = 0; i < 100; i++) assert.equal(writer.enqueue(frame(`f${i}`)), true);
    writer.uncork();
    assert.deepEqual(failures, []);
    assert.equal(out.calls.length, 3, "written at the bound while corked, 32 frames at a time");
    await out.settleAll();
    await writer.whenIdle();
    assert.equal(out.written.join(""), Array.from({ length: 100 }, (_, i) => `f${i}\n`).join(""));
  });

  it("writer never hands one write call more than writeBytes, nor splits a frame", async () => {
    const out = new ReportingOutput();
    const { writer } = newWriter(out, { writeBytes: 10 });
    writer.enqueue(frame("first"));
    const labels = Array.from({ length: 20 }, (_, i) => (i % 3 === 0 ? "toolongframe" : `f${i}`));
    for (const label of labels) writer.enqueue(frame(label));
    await out.settleAll();
    await writer.whenIdle();
    assert.equal(out.written.join(""), ["first", ...labels].map((label) => `${label}\n`).join(""));
    for (const call of out.calls) {
      assert.ok(call.bytes.length <= 10 || text(call.bytes).split("\n").length === 2, `at most 10 bytes, or one frame: ${text(call.bytes)}`);
    }
  });

  it("writer never overflows while the OS takes every write, whatever the bursts, corks and settling order", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 120 }), fc.boolean()), { minLength: 1, maxLength: 10 }),
        async (s, bursts) => {
          const calls: Uint8Array[] = [];
          const out: ByteWriter = {
            write(bytes) {
              calls.push(bytes.slice());
              return s.schedule(Promise.resolve(), `write of ${bytes.length} bytes`);
            },
            heldBytes: () => 0,
          };
          const { writer, failures } = newWriter(out);
          const accepted: Uint8Array[] = [];
          s.scheduleSequence(
            bursts.map(([size, corked], b) => ({
              label: `burst of ${size}${corked ? ", corked" : ""}`,
              builder: () => {
                if (corked) writer.cork();
                for (let i = 0; i < size; i++) {
                  const bytes = frame(`b${b}-${i}`);
                  accepted.push(bytes);
                  assert.equal(writer.enqueue(bytes), true);
                }
                if (corked) writer.uncork();
                return Promise.resolve();
              },
            })),
          );
          await s.waitIdle();
          await writer.whenIdle();
          assert.deepEqual(failures, []);
          assert.deepEqual(concatBytes(calls), concatBytes(accepted));
        },
      ),
      { numRuns: fuzzRuns(200) },
    );
  });
});

describe("OrderedWriter slots", () => {
  it("writer packs pending frames into slots in enqueue order and overflows on the frame that needs a 33rd", () => {
    const { writer, failures } = newWriter(new ReportingOutput(), { slotBytes: 10 });
    const out = new ReportingOutput();
    out.take = false;
    const held = newWriter(out, { slotBytes: 10 });
    // Three 3-byte frames fill a 10-byte slot; the fourth opens the next.
    for (let i = 0; i < 96; i++) assert.equal(held.writer.enqueue(frame(`${i % 10}${i % 10}`)), true, `frame ${i}`);
    assert.equal(held.writer.pending, 96);
    assert.equal(held.writer.enqueue(frame("xx")), false);
    assert.deepEqual(held.failures, ["overflow"]);
    // A sink that takes everything leaves the same 97 frames nothing pending.
    for (let i = 0; i < 97; i++) assert.equal(writer.enqueue(frame(`${i % 10}${i % 10}`)), true);
    assert.deepEqual(failures, []);
  });

  it("writer gives a frame that does not fit the open slot a slot of its own, never splitting it", () => {
    const out = new ReportingOutput();
    out.take = false;
    const { writer, failures } = newWriter(out, { slotBytes: 10 });
    // 6-byte frames: two do not fit 10 bytes, so 32 of them fill the 32 slots.
    for (let i = 0; i < 32; i++) assert.equal(writer.enqueue(frame(`f${String(i).padStart(4, "0")}`.slice(0, 5))), true);
    assert.equal(writer.enqueue(frame("extra")), false);
    assert.deepEqual(failures, ["overflow"]);
  });
});
