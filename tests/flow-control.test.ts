/**
 * Flow control as the spec's "Bounds and failure policy" says: reading stays
 * enabled while output stalls, and the 33rd pending output frame is a queue
 * overflow (exit 1) at once, not a wait for the output deadline. A manual
 * clock that never advances proves the deadline played no part.
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

/** `count` status requests in one read batch. */
function statuses(count: number, prefix = "s"): string {
  const text = Array.from({ length: count }, (_, i) => line(`${prefix}${i}`, "status")).join("");
  assert.ok(text.length <= LIMITS.read_batch_bytes, "one read batch");
  return text;
}

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

  it("32 pending frames are within the bound: nothing is lost once the client reads again", async () => {
    const { run } = stalled();
    run.runtime.input.push(statuses(LIMITS.pending_output_frames));
    await until(() => run.runtime.input.reads > 1, "the next read after the batch");
    run.runtime.output.resume();
    run.runtime.input.end();
    assert.equal(await run.exit, 0);
    assert.equal(run.frames().length, LIMITS.pending_output_frames);
  });

  it("the 33rd pending frame is a queue overflow: exit 1 before any deadline, nothing on stderr", async () => {
    const { run } = stalled();
    run.runtime.input.push(statuses(LIMITS.pending_output_frames + 1));
    // The clock never moves: an exit here cannot be the output deadline's.
    assert.equal(await exitOf(run, "the overflow exit"), 1);
    assert.equal(run.runtime.errors.text(), "");
    assert.equal(run.runtime.input.closed, true);
  });

  it("overflow across read batches counts every pending frame, however many batches brought them", async () => {
    const { run } = stalled();
    for (let batch = 0; batch < 4; batch++) run.runtime.input.push(statuses(9, `b${batch}-`));
    assert.equal(await exitOf(run, "the overflow exit"), 1);
  });
});
