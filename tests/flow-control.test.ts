/**
 * Flow control as the spec's "Bounds and failure policy" says: reading stays
 * enabled while output stalls; pending output (answers the OS has not taken)
 * may fill 32 output frames' worth, and more is a queue overflow (exit 1) at
 * once, not a wait for the output deadline. A manual clock that never
 * advances proves the deadline played no part. Answers the pipe takes are
 * not pending, however many a client pipelines while it reads along.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ManualClock } from "../runtime/memory.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { line, type Run, startServer } from "./support/harness.ts";

/** How long a wait may take before the test fails instead of hanging: a hang guard, not a speed claim. */
const HANG_GUARD_MS = 20_000;

/** Polls until `done()` holds; fails naming `what` after {@link HANG_GUARD_MS}. */
async function until(done: () => boolean, what: string): Promise<void> {
  const giveUp = Date.now() + HANG_GUARD_MS;
  while (!done()) {
    if (Date.now() > giveUp) assert.fail(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Resolves with the exit code, or fails naming `what` after {@link HANG_GUARD_MS}. */
async function exitOf(run: Run, what: string): Promise<number> {
  let code: number | null = null;
  void run.exit.then((value) => (code = value));
  await until(() => code !== null, what);
  return code!;
}

/** `count` status requests, as one chunk (the memory input reads it in 4,096-byte batches). */
function requests(count: number, prefix = "s"): string {
  return Array.from({ length: count }, (_, i) => line(`${prefix}${i}`, "status")).join("");
}

/** `count` status requests in one read batch. */
function statuses(count: number, prefix = "s"): string {
  const text = requests(count, prefix);
  assert.ok(text.length <= LIMITS.read_batch_bytes, "one read batch");
  return text;
}

/** Bytes 32 slots of one output frame each hold: what may be pending. */
const BOUND_BYTES = LIMITS.pending_output_frames * LIMITS.output_frame_bytes;

function stalled(): { run: Run; clock: ManualClock } {
  const clock = new ManualClock();
  const run = startServer({ clock });
  run.runtime.output.stall();
  return { run, clock };
}

describe("flow control", () => {
  it("keeps reading while output stalls: a shutdown behind 31 unwritten responses is read and answered", async () => {
    const { run } = stalled();
    run.runtime.input.push(statuses(LIMITS.pending_output_frames - 1));
    run.runtime.input.push(line("bye", "shutdown"));
    // Closing stops input: the only way to see it is to have read the shutdown.
    await until(() => run.runtime.input.closed, "the shutdown to be read while stdout stalls");
    run.runtime.output.resume();
    assert.equal(await run.exit, 0);
    const frames = run.frames();
    assert.equal(frames.length, LIMITS.pending_output_frames);
    assert.deepEqual(frames.at(-1)!.result, { state: "stopping" });
  });

  it("1,000 unwritten answers are within the bound (small frames share its slots): nothing is lost once the client reads again", async () => {
    const { run } = stalled();
    const text = requests(1_000);
    run.runtime.input.push(text);
    const reads = Math.ceil(text.length / LIMITS.read_batch_bytes);
    await until(() => run.runtime.input.reads > reads, "the read after the last batch");
    run.runtime.output.resume();
    run.runtime.input.end();
    assert.equal(await run.exit, 0);
    assert.deepEqual(run.frames().map((frame) => frame.id), Array.from({ length: 1_000 }, (_, i) => `s${i}`));
  });

  it("unwritten answers past 32 output frames' worth are a queue overflow: exit 1 before any deadline, nothing on stderr", async () => {
    const { run } = stalled();
    // One id over and over (`duplicate_id` answers, so the 4,096-id limit does not close first). Each answer is
    // longer than its request (it adds type, instance_id and seq), and the requests alone exceed the bound.
    const text = line("again", "status").repeat(BOUND_BYTES / 64);
    assert.ok(text.length > BOUND_BYTES, "the requests alone exceed the bound");
    run.runtime.input.push(text);
    // The clock never moves: an exit here cannot be the output deadline's.
    assert.equal(await exitOf(run, "the overflow exit"), 1);
    assert.equal(run.runtime.errors.text(), "");
    assert.equal(run.runtime.input.closed, true);
    assert.equal(run.frames().length, 0, "nothing was written while stalled");
  });

  it("answers the pipe takes are not pending: 4,000 requests pipelined to a client reading along are all answered", async () => {
    // The clock never moves and output never stalls: the bound is on what the child holds, not on what it answered.
    const run = startServer({ clock: new ManualClock() });
    run.runtime.input.push(requests(4_000));
    run.runtime.input.end();
    assert.equal(await exitOf(run, "the exit after EOF"), 0);
    const frames = run.frames();
    assert.deepEqual(frames.map((frame) => frame.id), Array.from({ length: 4_000 }, (_, i) => `s${i}`));
    assert.deepEqual(frames.map((frame) => frame.seq), Array.from({ length: 4_000 }, (_, i) => i + 1));
  });
});
