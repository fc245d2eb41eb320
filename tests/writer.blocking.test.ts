/**
 * The ordered writer over a sink that cannot tell what the OS took: Deno's
 * `Deno.stdout.write` is a blocking write on a pool thread, settling only
 * once the pipe took all of it, so every unsettled write counts as pending
 * whole (docs/protocol.md, "Output"). The bound is on what the child holds,
 * so what a pipe already took may be counted only within one write call:
 * a write carrying everything queued would keep megabytes the client has
 * read on the books, and the child would exit with an overflow or a missed
 * deadline while its client reads along (the Deno child of
 * e2e-pipelining's "4,000 status requests in one write, read promptly",
 * under load). Here the pipe, the reader and the clock are the test's, so
 * every interleaving is exact and repeatable.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ManualClock } from "../runtime/memory.ts";
import type { ByteWriter } from "../src/host/runtime.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { OrderedWriter, type WriterFailure } from "../src/transport/writer.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

/** A Linux pipe's buffer. */
const PIPE_BYTES = 65_536;
/** What a `status` answer of a ready child weighs, LF included. */
const STATUS_BYTES = 567;
/** Answers to one 4,096-byte read batch of `status` requests. */
const PER_BATCH = 45;

/**
 * A pipe of `capacity` bytes behind a blocking write, as Deno's stdout is: a
 * write moves into the pipe as room allows and settles once all of it is in,
 * but only when the test {@link deliver}s (the event loop learning of the
 * pool thread's work late under load); {@link read} is the client taking bytes.
 */
class BlockingPipe implements ByteWriter {
  /** Bytes the pipe has taken so far (the client has read or may read them). */
  accepted = 0;
  /** Bytes the client has read. */
  read = 0;
  readonly #capacity: number;
  readonly #writes: { bytes: number; moved: number; resolve(): void }[] = [];
  #done: (() => void)[] = [];

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  write(bytes: Uint8Array): Promise<void> {
    return new Promise((resolve) => {
      this.#writes.push({ bytes: bytes.length, moved: 0, resolve });
      this.#move();
    });
  }

  /** The client reads up to `count` bytes. */
  take(count: number): void {
    this.read += Math.min(count, this.accepted - this.read);
    this.#move();
  }

  /** Settles the writes that completed so far. */
  deliver(): void {
    for (const resolve of this.#done.splice(0)) resolve();
  }

  #move(): void {
    while (this.#writes.length > 0 && this.accepted - this.read < this.#capacity) {
      const write = this.#writes[0]!;
      const moved = Math.min(this.#capacity - (this.accepted - this.read), write.bytes - write.moved);
      write.moved += moved;
      this.accepted += moved;
      if (write.moved < write.bytes) break;
      this.#writes.shift();
      this.#done.push(write.resolve);
    }
  }
}

/** Lets the writer's continuations run. */
async function drainMicrotasks(): Promise<void> {
  for (let i = 0; i < 16; i++) await Promise.resolve();
}

/** A writer with production's bounds over `out`, on a manual clock. */
function productionWriter(out: ByteWriter, clock: ManualClock) {
  const failures: WriterFailure[] = [];
  const writer = new OrderedWriter(
    out,
    { setTimer: (ms, callback) => clock.setTimer(ms, callback), monotonicNow: () => clock.now() },
    { maxPending: LIMITS.pending_output_frames, slotBytes: LIMITS.output_frame_bytes, writeBytes: LIMITS.output_frame_bytes, deadlineMs: LIMITS.output_deadline_ms },
    (failure) => failures.push(failure),
  );
  return { writer, failures };
}

/** A frame of `size` bytes ending in LF. */
function frame(size: number): Uint8Array {
  const bytes = new Uint8Array(size).fill(0x78);
  bytes[size - 1] = 0x0a;
  return bytes;
}

describe("OrderedWriter over a blocking sink that cannot tell what the OS took (Deno)", () => {
  it("writer counts frames the pipe has taken as pending only within one write call's bytes, whatever the bursts, reads and settling lag", async () => {
    const step = fc.record({
      frames: fc.nat({ max: 90 }),
      size: fc.integer({ min: 1, max: 4_096 }),
      read: fc.nat({ max: PIPE_BYTES }),
      deliver: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 60, size: "max" }), async (steps) => {
        const pipe = new BlockingPipe(PIPE_BYTES);
        const { writer, failures } = productionWriter(pipe, new ManualClock());
        /** End offset of every enqueued frame in the output. */
        const ends: number[] = [];
        for (const { frames, size, read, deliver } of steps) {
          for (let i = 0; i < frames && writer.enqueue(frame(size)); i++) ends.push((ends.at(-1) ?? 0) + size);
          if (failures.length > 0) break;
          pipe.take(read);
          if (deliver) pipe.deliver();
          await drainMicrotasks();
          // Frames leave in order, so the pending ones are the newest; what of them the pipe took is counted, not held.
          const oldest = ends.length - writer.pending;
          const start = oldest === 0 ? 0 : ends[oldest - 1]!;
          const taken = Math.max(0, Math.min(pipe.accepted, ends.at(-1) ?? 0) - start);
          assert.ok(taken <= LIMITS.output_frame_bytes, `${taken} bytes the pipe took still count as pending (${writer.pending} frames)`);
        }
      }),
      { numRuns: fuzzRuns(100, 2_000) },
    );
  });

  it("writer passes 4,000 status answers to a client reading half as fast when the first write settles 30 read batches late", async () => {
    const pipe = new BlockingPipe(PIPE_BYTES);
    const clock = new ManualClock();
    const { writer, failures } = productionWriter(pipe, clock);
    const total = 4_000 * STATUS_BYTES;
    // Each turn of the child's loop answers one read batch and learns which writes settled, except for the first
    // 30 turns (the pool thread starved: under load); the client reads half a batch's answers and 5 ms pass.
    // The child truly holds at most ~1.5 MB of the 2.27 MB, and no frame waits a second.
    for (let turn = 1, sent = 0; pipe.read < total && failures.length === 0; turn++) {
      for (let i = 0; i < PER_BATCH && sent < 4_000; i++, sent++) writer.enqueue(frame(STATUS_BYTES));
      pipe.take(Math.floor((PER_BATCH * STATUS_BYTES) / 2));
      if (turn > 30) pipe.deliver();
      await drainMicrotasks();
      clock.advance(5);
    }
    assert.deepEqual(failures, []);
    assert.equal(pipe.read, total);
  });
});
