/**
 * The sandbox's frames (`src/sandbox/frames.ts`) and messages
 * (`src/sandbox/messages.ts`): any message survives any chunking; a length
 * over the bound is refused from its prefix alone, before a payload byte
 * arrives; bytes that are not a JSON object are refused; after a fault the
 * stream stays failed; messages of the wrong shape are not messages.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { encodeFrame, FrameReader } from "../src/sandbox/frames.ts";
import { FRAME_BYTES } from "../src/sandbox/limits.ts";
import { hostMessage, resultMessage, startMessage } from "../src/sandbox/messages.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

/** `bytes` cut at `cuts` (sorted offsets). */
function cut(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [0, ...cuts.map((point) => point % (bytes.length + 1)).sort((a, b) => a - b), bytes.length];
  return points.slice(1).map((end, index) => bytes.subarray(points[index]!, end));
}

const prefix = (length: number) => {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, length);
  return bytes;
};

describe("sandbox frames", () => {
  it("FrameReader reassembles any sequence of messages from any chunking", () => {
    const message = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
    fc.assert(
      fc.property(fc.array(message, { maxLength: 5 }), fc.array(fc.nat(), { maxLength: 12 }), (messages, cuts) => {
        const frames = messages.map((m) => encodeFrame(m, FRAME_BYTES)!);
        const stream = new Uint8Array(frames.reduce((sum, frame) => sum + frame.length, 0));
        let offset = 0;
        for (const frame of frames) {
          stream.set(frame, offset);
          offset += frame.length;
        }
        const reader = new FrameReader(FRAME_BYTES);
        const read: unknown[] = [];
        for (const chunk of cut(stream, cuts)) {
          const pushed = reader.push(chunk);
          assert.ok(pushed.ok);
          read.push(...pushed.frames);
        }
        assert.deepEqual(read, JSON.parse(JSON.stringify(messages)));
        assert.equal(reader.pending, false);
      }),
      { numRuns: fuzzRuns(200) },
    );
  });

  it("FrameReader refuses a 1,048,577-byte length from its prefix alone, and stays failed", () => {
    const reader = new FrameReader(FRAME_BYTES);
    assert.deepEqual(reader.push(prefix(FRAME_BYTES + 1)), { ok: false, fault: "oversized" });
    assert.deepEqual(reader.push(encodeFrame({ type: "wait", results: 0 }, FRAME_BYTES)!), { ok: false, fault: "malformed" });
    const exact = new FrameReader(FRAME_BYTES);
    assert.deepEqual(exact.push(prefix(FRAME_BYTES)), { ok: true, frames: [] }, "the bound itself is allowed: the payload is awaited");
    assert.equal(exact.pending, true);
  });

  it("FrameReader refuses payloads that are not UTF-8 JSON objects", () => {
    for (const payload of ["[1]", "1", "null", "\"x\"", "{", "{\"a\":1}{}", ""].map((text) => new TextEncoder().encode(text)).concat([new Uint8Array([0xff, 0xfe])])) {
      const reader = new FrameReader(FRAME_BYTES);
      assert.deepEqual(reader.push(new Uint8Array([...prefix(payload.length), ...payload])), { ok: false, fault: "malformed" }, new TextDecoder().decode(payload));
    }
  });

  it("encodeFrame() refuses a message over the bound", () => {
    assert.equal(encodeFrame({ text: "x".repeat(100) }, 50), null);
  });

  it("hostMessage(), startMessage() and resultMessage() accept exactly their shapes", () => {
    assert.deepEqual(hostMessage({ type: "call", id: 1, name: "read_file", args: "{}" }), { type: "call", id: 1, name: "read_file", args: "{}" });
    assert.deepEqual(hostMessage({ type: "wait", results: 0 }), { type: "wait", results: 0 });
    assert.ok(hostMessage({ type: "done", status: "threw", text: "", logs: "" }));
    for (const bad of [
      { type: "call", id: -1, name: "x", args: "{}" },
      { type: "call", id: 1.5, name: "x", args: "{}" },
      { type: "call", id: 1, name: "x", args: {} },
      { type: "call", id: 1, name: "x", args: "{}", extra: true },
      { type: "wait" },
      { type: "done", status: "exploded", text: "", logs: "" },
      { type: "result", id: 1, ok: true, output: "" },
      { type: "start" },
    ]) assert.equal(hostMessage(bad), null, JSON.stringify(bad));
    const limits = { memoryBytes: 1, stackBytes: 1, cpuMs: 1, maxCalls: 1, logBytes: 1, resultBytes: 1 };
    assert.ok(startMessage({ type: "start", source: "return 1", tools: ["read_file"], limits }));
    assert.equal(startMessage({ type: "start", source: "return 1", tools: [1], limits }), null);
    assert.equal(startMessage({ type: "start", source: "return 1", tools: [], limits: { ...limits, cpuMs: "1" } }), null);
    assert.equal(startMessage({ type: "start", source: "return 1", tools: [], limits: { ...limits, extra: 1 } }), null);
    assert.ok(resultMessage({ type: "result", id: 3, ok: false, output: "denied" }));
    assert.equal(resultMessage({ type: "result", id: 3, ok: "no", output: "denied" }), null);
  });
});
