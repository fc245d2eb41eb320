/**
 * How a connection closes while a turn is active (spec, "Bounds and failure
 * policy" and `shutdown`): shutdown during a streaming turn answers first,
 * cancels the run, drains its `cancelled` terminal and exits 0; a run that
 * cannot finish makes the 2,000 ms closing deadline expire, exit 1. The
 * deadline is proven on a ManualClock, never by waiting.
 *
 * @module
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ManualClock } from "../runtime/memory.ts";
import type { HttpRequestInit, HttpResponse, Runtime } from "../src/host/runtime.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { Gate } from "./support/fake-provider.ts";
import { eventually, guarded } from "./support/hang-guard.ts";
import { type Frame, line } from "./support/harness.ts";
import { reply } from "./support/provider-scripts.ts";
import { runtimeFetch } from "./support/runtime-fetch.ts";
import { HOME, nextEvent, startTurn, startTurnServer, type TurnServer } from "./support/turns.ts";

const API = "openai-chat";

const eventsOf = (frames: readonly Frame[], runId: string) =>
  frames.filter((frame) => frame.type === "event" && (frame.data as { run_id?: string }).run_id === runId);

/** Lets pending I/O and promise chains run without moving the manual clock. */
async function settle(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

describe("closing during an active turn", () => {
  for (const how of ["shutdown", "shutdown then more input", "EOF"] as const) {
    it(`${how} while the provider streams: the run ends cancelled, its terminal drains, exit 0`, async () => {
      const server = await startTurnServer(API);
      const gate = new Gate();
      server.provider.enqueue(reply(API, { text: ["Partial answer before the gate. ", "never sent"], gates: new Map([[0, gate]]) }));
      const { runId } = await startTurn(server, "Stream something");
      await guarded(gate.whenReached(), "the provider stream reaching its gate");
      await nextEvent(server, runId, "input.persisted");
      if (how === "EOF") server.runtime.input.end();
      else server.runtime.input.push(line("bye", "shutdown") + (how === "shutdown" ? "" : line("late", "status")));
      const code = await guarded(server.exit, "the exit");
      // Before the gate opens, so that only the client's abort can have closed the stream.
      await eventually(() => server.provider.log[0]!.clientClosed, "the provider stream to be closed");
      gate.release();
      const frames = server.frames();
      const events = eventsOf(frames, runId);
      const terminal = events.filter((frame) => frame.event === "run.finished");
      assert.equal(terminal.length, 1, "exactly one run.finished");
      assert.equal(events.at(-1), terminal[0], "nothing of the run after its terminal");
      const data = terminal[0]!.data as { outcome: string; persistence: string; error_code: string | null; revision: string | null };
      assert.deepEqual([data.outcome, data.persistence, data.error_code], ["cancelled", "durable", null]);
      assert.equal(typeof data.revision, "string");
      if (how !== "EOF") {
        const answer = frames.find((frame) => frame.id === "bye")!;
        assert.deepEqual(answer.result, { state: "stopping" });
        assert.ok(answer.seq < terminal[0]!.seq, "the shutdown answer precedes the cancelled terminal");
        assert.equal(frames.find((frame) => frame.id === "late"), undefined, "input after shutdown is never answered");
      }
      assert.equal(frames.at(-1), terminal[0], "the terminal is the last frame");
      assert.deepEqual(frames.map((frame) => frame.seq), frames.map((_, index) => index + 1));
      assert.equal(code, 0);
      const reconciledText = events.filter((frame) => frame.event === "message.reconcile").map((frame) => frame.data as { text: string; partial: boolean });
      assert.deepEqual(reconciledText.map((part) => part.partial), reconciledText.map(() => true), "the cut reply is reconciled as partial");
      await server.provider.close();
    });
  }
});

/**
 * A host whose HTTP client never answers and ignores its abort signal (a
 * connect stuck in the kernel, say): the run cannot stop, so closing cannot
 * drain it. The request still goes to the loopback provider, so the test sees
 * it was sent; the answer is what never comes back.
 */
function stuckFetch(sent: string[]): Runtime["fetch"] {
  return (url: string, init: HttpRequestInit): Promise<HttpResponse> => {
    sent.push(url);
    void runtimeFetch(url, { ...init, signal: new AbortController().signal }).then((response) => response.body?.cancel(), () => {});
    return new Promise<HttpResponse>(() => {});
  };
}

async function startStuck(clock: ManualClock, sent: string[]): Promise<{ server: TurnServer; runId: string }> {
  const server = await startTurnServer(API, { clock, fetch: stuckFetch(sent) });
  server.provider.handler = () => reply(API, { text: ["never read"] });
  const { runId } = await startTurn(server, "This never finishes");
  await eventually(() => sent.length === 1, "the provider request");
  return { server, runId };
}

describe("the closing deadline", () => {
  for (const how of ["EOF", "shutdown"] as const) {
    it(`${how} with a run that cannot stop: exit 1 once the ${LIMITS.closing_deadline_ms} ms closing deadline (and the cleanup wait) expire, not before`, async () => {
      const clock = new ManualClock();
      const sent: string[] = [];
      const { server, runId } = await startStuck(clock, sent);
      let code: number | null = null;
      void server.exit.then((value) => (code = value));
      if (how === "EOF") server.runtime.input.end();
      else server.runtime.input.push(line("bye", "shutdown"));
      await settle();
      clock.advance(LIMITS.closing_deadline_ms - 1);
      await settle();
      assert.equal(code, null, "still draining just before the closing deadline");
      clock.advance(1);
      await settle();
      assert.equal(code, null, "then the separate cleanup wait begins");
      clock.advance(LIMITS.cleanup_wait_ms);
      await guarded(server.exit, "the exit after both waits");
      assert.equal(code, 1, "the closing deadline expired before the run finished");
      assert.equal(eventsOf(server.frames(), runId).some((frame) => frame.event === "run.finished"), false, "the stuck run never finished");
      if (how === "shutdown") assert.deepEqual(server.frames().find((frame) => frame.id === "bye")?.result, { state: "stopping" });
      await server.provider.close();
    });
  }

  it("the same close with a run that stops at once exits 0 without waiting for the deadline", async () => {
    const clock = new ManualClock();
    const server = await startTurnServer(API, { clock });
    const gate = new Gate();
    server.provider.enqueue(reply(API, { text: ["held"], gates: new Map([[0, gate]]) }));
    const { runId } = await startTurn(server, "Stream something");
    await guarded(gate.whenReached(), "the provider stream reaching its gate");
    server.runtime.input.end();
    assert.equal(await guarded(server.exit, "the exit"), 0, "no clock advance was needed");
    gate.release();
    assert.equal((eventsOf(server.frames(), runId).at(-1)!.data as { outcome: string }).outcome, "cancelled");
    await server.provider.close();
  });
});

describe("a client that stops reading during a turn", () => {
  // The run's critical events wait at most 2,000 ms for room in its channel, but that wait starts only
  // once the writer is full, so the writer's own 2,000 ms deadline for its oldest frame always expires
  // first: the transport fails (exit 1) and the run is cancelled through the close, which the stored
  // history records truthfully.
  it("exits 1 at the output deadline, not before, and the stored turn ends cancelled with a partial reply", async () => {
    const clock = new ManualClock();
    const server = await startTurnServer(API, { clock });
    server.provider.enqueue(reply(API, { text: Array.from({ length: 200 }, (_, index) => `word${index} `.repeat(700)) }));
    const { sessionId } = await startTurn(server, "A long answer, please");
    server.runtime.output.stall();
    await settle(200);
    let code: number | null = null;
    void server.exit.then((value) => (code = value));
    clock.advance(LIMITS.output_deadline_ms - 1);
    await settle(50);
    assert.equal(code, null, "still within the output deadline");
    clock.advance(1);
    assert.equal(await guarded(server.exit, "the exit"), 1);
    const stored = new TextDecoder().decode(server.runtime.fs.contents(`${HOME}/sessions/${sessionId}.jsonl`))
      .split("\n").filter((text) => text !== "").map((text) => JSON.parse(text) as { type: string; outcome?: string; error_code?: string | null; partial?: boolean });
    const finished = stored.filter((record) => record.type === "turn_finished");
    assert.deepEqual(finished.map((record) => [record.outcome, record.error_code]), [["cancelled", null]]);
    const replies = stored.filter((record) => record.type === "assistant_message");
    assert.ok(replies.length > 0 && replies.every((record) => record.partial === true), "the cut reply is stored, as partial");
    await server.provider.close();
  });
});
