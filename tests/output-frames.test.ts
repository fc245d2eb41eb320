/**
 * The output frame bound (spec: "Output frame: 65,536 bytes including LF").
 * The encoder takes a frame of exactly 65,536 bytes with its LF and refuses
 * one byte more without spending a `seq`; the connection's output treats an
 * over-long frame as fatal (exit 1) and writes none of it; and real turns
 * whose text is the worst case for JSON escaping (every character six bytes
 * on the wire, or four-byte characters, quotes and backslashes) never produce
 * a frame over the bound, live or paged from history.
 *
 * @module
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { FrameEncoder, OutputFrameTooLarge } from "../src/protocol/frames.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { ProtocolOutput } from "../src/transport/output.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { eventually } from "./support/hang-guard.ts";
import { reply } from "./support/provider-scripts.ts";
import { request, runEvents, startTurn, startTurnServer, stopTurnServer } from "./support/turns.ts";

const BOUND = LIMITS.output_frame_bytes;
const encoder = new TextEncoder();
const INSTANCE = "00000000-0000-4000-8000-00000000abcd";

/** The `pad` of `unit`s (then `x`s) that makes an event frame exactly `target` bytes with its LF (seq of one digit). */
function padFor(unit: string, target: number): string {
  const base = new FrameEncoder(INSTANCE, Infinity).event("pad.test", { pad: "" }).length;
  const unitBytes = encoder.encode(JSON.stringify(unit)).length - 2;
  const room = target - base;
  return unit.repeat(Math.floor(room / unitBytes)) + "x".repeat(room % unitBytes);
}

describe("the output frame bound", () => {
  it(`FrameEncoder takes a frame of exactly ${BOUND} bytes including LF and refuses ${BOUND + 1} without spending a seq`, () => {
    fc.assert(fc.property(fc.constantFrom("x", "é", "€", "😀", "\u0001", '"', "\\"), (unit) => {
      const frames = new FrameEncoder(INSTANCE, BOUND);
      const fits = frames.event("pad.test", { pad: padFor(unit, BOUND) });
      assert.equal(fits.length, BOUND);
      assert.equal(fits[fits.length - 1], 0x0a, "the LF is the frame's last byte, counted in the bound");
      const over = { pad: padFor(unit, BOUND) + "x" };
      assert.throws(() => frames.event("pad.test", over), OutputFrameTooLarge);
      const next = JSON.parse(new TextDecoder().decode(frames.result("r1", {})));
      assert.equal(next.seq, 2, "the refused frame took no seq");
    }));
  });

  it("an over-long frame is fatal for the connection and none of it is written", async () => {
    const runtime = createMemoryRuntime();
    let fatal = 0;
    const output = new ProtocolOutput(runtime, () => fatal++);
    output.event("pad.test", { pad: padFor("x", BOUND) });
    output.event("pad.test", { pad: padFor("x", BOUND) + "x" });
    assert.equal(fatal, 1);
    await eventually(() => runtime.output.frames().length === 1, "the frame that fits to be written");
    const text = runtime.output.text();
    assert.equal(encoder.encode(text).length, BOUND, "only the frame that fits reached stdout");
  });
});

/** Characters whose JSON form is longest per UTF-8 byte, and the multi-byte ones. */
const WORST = fc.constantFrom("\u0001", "\u001f", '"', "\\", "\u2028", "😀", "€", "\n", "\t", "<", " ");

describe("frames of real turns stay within the bound", () => {
  it("worst-case escaping text, live and paged, never makes a frame over 65,536 bytes with its LF", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(WORST, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1_000, max: 30_000 }), async (units, length) => {
        const text = Array.from({ length }, (_, index) => units[index % units.length]).join("");
        const server = await startTurnServer("openai-chat");
        server.provider.enqueue(reply("openai-chat", { text: [text.slice(0, length >> 1), text.slice(length >> 1)] }));
        const { sessionId, runId } = await startTurn(server, "Say something hard to escape");
        const events = await runEvents(server, runId);
        const finished = events.at(-1)!.data as { outcome: string; revision: string };
        assert.equal(finished.outcome, "completed");
        let cursor: string | null = null;
        for (let page = 0; page < 100; page++) {
          const answer = await request(server, `p${page}`, "history.page", { session_id: sessionId, revision: finished.revision, cursor });
          assert.ok(answer.result, JSON.stringify(answer.error));
          cursor = (answer.result as { next_cursor: string | null }).next_cursor;
          if (cursor === null) break;
        }
        assert.equal(await stopTurnServer(server), 0);
        const lines = server.runtime.output.text().split("\n");
        assert.equal(lines.pop(), "", "stdout ends with a complete frame");
        for (const frame of lines) {
          assert.ok(encoder.encode(frame).length + 1 <= BOUND, `a ${encoder.encode(frame).length + 1}-byte frame`);
        }
      }),
      // Always the two extremes: every character six bytes on the wire, and every one a four-byte character.
      { numRuns: fuzzRuns(8, 10), examples: [[["\u0001"], 30_000], [["😀"], 30_000]] },
    );
  });
});
