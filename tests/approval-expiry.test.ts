/**
 * The approval expiry counts from when `approval.requested` is handed to the
 * writer, not from when the run asked: `expires_in_ms` (60,000) is then the
 * true time left. The writer is kept full on a manual clock so the event
 * waits in the run's channel first; only that clock moves time. An approval
 * nobody answered is denied, and the model is told it expired, not that the
 * user refused.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ManualClock } from "../runtime/memory.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { RunEventChannel } from "../src/runner/event-channel.ts";
import { activity, HeldSink, microtasks, SCOPE } from "./support/event-sink.ts";
import { line } from "./support/harness.ts";
import { reply } from "./support/provider-scripts.ts";
import { HOME, startTurnServer, stopTurnServer, type TurnServer } from "./support/turns.ts";

const API = "openai-chat";
/** How long a wait may take before the test fails instead of hanging: a hang guard, not a speed claim. */
const HANG_GUARD_MS = 20_000;

/** Polls (real time, one macrotask at a time) until `done()` holds. */
async function until(done: () => boolean, what: string): Promise<void> {
  const giveUp = Date.now() + HANG_GUARD_MS;
  while (!done()) {
    if (Date.now() > giveUp) assert.fail(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

function response(server: TurnServer, id: string) {
  return server.frames().find((frame) => frame.type === "response" && frame.id === id);
}

async function call(server: TurnServer, id: string, method: string, params: Record<string, unknown>) {
  server.runtime.input.push(line(id, method, params));
  await until(() => response(server, id) !== undefined, `the answer to ${id}`);
  return response(server, id)!;
}

describe("approval expiry", () => {
  it("starts when approval.requested reaches the writer: 59 s after a 1.5 s wait in the channel the approval is still pending", async () => {
    const clock = new ManualClock();
    const server = await startTurnServer(API, { clock });
    const created = await call(server, "c", "session.create", {});
    const sessionId = (created.result as { session_id: string }).session_id;
    // More text parts than the writer's event slots, so what follows waits in the run's channel.
    const text = Array.from({ length: 30 }, (_, i) => `${"w".repeat(2_100)} ${i} `);
    server.provider.enqueue(reply(API, { text, calls: [{ id: "call_1", name: "write_file", args: { path: "out.txt", content: "x\n" } }] }));
    server.provider.enqueue(reply(API, { text: ["Done."] }));
    server.runtime.output.stall();
    server.runtime.input.push(line("t", "turn.start", { session_id: sessionId, prompt: "write it" }));
    const path = `${HOME}/sessions/${sessionId}.jsonl`;
    // The assistant message is stored just before the tool call asks for approval.
    await until(() => new TextDecoder().decode(server.runtime.fs.contents(path) ?? new Uint8Array()).includes("assistant_message"), "the step's records");
    for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setTimeout(resolve, 1));
    // The client is slow, well within the output deadline; then it reads again.
    clock.advance(1_500);
    server.runtime.output.resume();
    await until(() => server.frames().some((frame) => frame.event === "approval.requested"), "approval.requested");
    const requested = server.frames().find((frame) => frame.event === "approval.requested")!.data as { run_id: string; approval_id: string; expires_in_ms: number };
    assert.equal(requested.expires_in_ms, LIMITS.approval_expiry_ms);
    clock.advance(LIMITS.approval_expiry_ms - 1_000);
    const answer = await call(server, "a", "approval.answer", { session_id: sessionId, run_id: requested.run_id, approval_id: requested.approval_id, allow: true });
    assert.deepEqual(answer.result, { recorded: true }, "the approval had 1,000 ms of its 60,000 left");
    await until(() => server.frames().some((frame) => frame.event === "run.finished"), "run.finished");
    const finished = server.frames().find((frame) => frame.event === "run.finished")!.data as { outcome: string };
    assert.equal(finished.outcome, "completed");
    assert.equal(new TextDecoder().decode(server.runtime.fs.contents("/work/project/out.txt")), "x\n");
    assert.equal(await stopTurnServer(server), 0);
  });

  it("an approval left unanswered for 60,000 ms is denied, and the model is told nobody answered, not that the user denied it", async () => {
    const clock = new ManualClock();
    const server = await startTurnServer(API, { clock });
    const created = await call(server, "c", "session.create", {});
    const sessionId = (created.result as { session_id: string }).session_id;
    server.provider.enqueue(reply(API, { calls: [{ id: "call_1", name: "write_file", args: { path: "late.txt", content: "x\n" } }] }));
    server.provider.enqueue(reply(API, { text: ["Nobody answered, so I left it."] }));
    let code: number | null = null;
    try {
      server.runtime.input.push(line("t", "turn.start", { session_id: sessionId, prompt: "write it" }));
      await until(() => server.frames().some((frame) => frame.event === "approval.requested"), "approval.requested");
      clock.advance(LIMITS.approval_expiry_ms);
      await until(() => server.frames().some((frame) => frame.event === "run.finished"), "run.finished");
      const failed = server.frames().find((frame) => frame.event === "activity" && (frame.data as { state: string }).state === "failed")!;
      assert.match((failed.data as { summary: string }).summary, /\(approval expired\)$/);
      const sent = (server.provider.log[1]!.body as { messages: { role: string; content: string }[] }).messages;
      const toolResult = sent.find((message) => message.role === "tool")!.content;
      assert.match(toolResult, /^No one answered the approval request in time/);
      assert.doesNotMatch(toolResult, /user denied/);
      assert.equal(server.runtime.fs.exists("/work/project/late.txt"), false);
    } finally {
      code = await stopTurnServer(server);
    }
    assert.equal(code, 0);
  });

  it("a critical event's sent callback runs when the sink takes it, not when it is queued, and never for a dropped event", async () => {
    const clock = new ManualClock();
    const sink = new HeldSink(0);
    const events = new RunEventChannel({ sink, setTimer: (ms, callback) => clock.setTimer(ms, callback), scope: SCOPE });
    const sent: string[] = [];
    assert.deepEqual(await events.critical(activity("queued"), () => sent.push("queued")), { ok: true });
    assert.equal(sent.length, 0, "queued in the channel is not yet handed to the writer");
    sink.resize(1);
    await microtasks();
    for (let i = 0; i < 32; i++) await events.critical(activity(`a${i}`));
    const dropped = events.critical(activity("dropped"), () => sent.push("dropped"));
    clock.advance(2_000);
    assert.deepEqual(await dropped, { ok: false, code: "output_unavailable" });
    sink.resize(64);
    await microtasks();
    assert.deepEqual(sent, ["queued"]);
    assert.deepEqual(sink.sent[0], activity("queued"));
  });
});
