/**
 * Turn admission against the spec's "Turns, approvals and events": a
 * `turn.start` while a session operation is in flight is `busy` (whatever is
 * attached, and before `session_missing`), and an approval of an earlier run
 * stays `stale_approval` while a later run is active, without disturbing the
 * later run's own pending approval.
 *
 * @module
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildSession, encodeAll } from "./support/records.ts";
import { guarded } from "./support/hang-guard.ts";
import { type Frame, line } from "./support/harness.ts";
import { reply } from "./support/provider-scripts.ts";
import { CWD, HOME, nextEvent, request, runEvents, startTurn, startTurnServer, stopTurnServer, type TurnServer } from "./support/turns.ts";

const API = "openai-chat";
const BIG = "big";

/** A long stored session in this child's cwd, so that opening it takes a while (it yields as it reads). */
function seedBig(server: TurnServer): void {
  const turns = Array.from({ length: 400 }, (_, index) => ({ prompt: `question ${index}`, reply: `answer ${index} ${"x".repeat(200)}`, summary: "read a file" }));
  const records = buildSession(BIG, turns).map((record) => (record.type === "session" ? { ...record, cwd: CWD } : record));
  server.runtime.fs.writeFile(`${HOME}/sessions/${BIG}.jsonl`, encodeAll(records), 0o600);
}

/** Sends `lines` in one read and waits for the response to each id. */
async function batch(server: TurnServer, lines: readonly [string, string, Record<string, unknown>][]): Promise<Map<string, Frame>> {
  server.runtime.input.push(lines.map(([id, method, params]) => line(id, method, params)).join(""));
  const ids = new Set(lines.map(([id]) => id));
  const frames = await guarded((async () => {
    for (let seen = 1;;) {
      const current = await server.waitFrames(seen);
      seen = current.length + 1;
      if ([...ids].every((id) => current.some((frame) => frame.id === id))) return current;
    }
  })(), `responses to ${[...ids].join(", ")}`);
  return new Map(frames.filter((frame) => frame.id !== undefined && ids.has(frame.id as string)).map((frame) => [frame.id as string, frame]));
}

describe("turn.start while a session operation is in flight", () => {
  it("is busy for the attached session, and admitted once the operation ended", async () => {
    const server = await startTurnServer(API);
    seedBig(server);
    const created = await request(server, "c", "session.create");
    const lazy = (created.result as { session_id: string }).session_id;
    const answers = await batch(server, [["o1", "session.open", { session_id: BIG }], ["t1", "turn.start", { session_id: lazy, prompt: "hello" }]]);
    assert.deepEqual(answers.get("t1")!.error, { code: "busy" });
    assert.ok(answers.get("o1")!.result, `the open completed: ${JSON.stringify(answers.get("o1")!.error)}`);
    assert.equal(server.provider.log.length, 0, "the refused turn sent nothing");
    server.provider.enqueue(reply(API, { text: ["Now it runs."] }));
    const { runId } = await startTurn(server, "hello again", BIG);
    const events = await runEvents(server, runId);
    assert.equal((events.at(-1)!.data as { outcome: string }).outcome, "completed");
    assert.equal(await stopTurnServer(server), 0);
  });

  it("is busy even with nothing attached yet: the operation decides first, not session_missing", async () => {
    const server = await startTurnServer(API);
    seedBig(server);
    const answers = await batch(server, [["o1", "session.open", { session_id: BIG }], ["t1", "turn.start", { session_id: BIG, prompt: "hello" }]]);
    assert.deepEqual(answers.get("t1")!.error, { code: "busy" });
    assert.ok(answers.get("o1")!.result);
    const status = await request(server, "s", "status");
    assert.deepEqual([(status.result as { state: string }).state, (status.result as { run_id: unknown }).run_id], ["idle", null], "no run was admitted");
    assert.equal(await stopTurnServer(server), 0);
  });
});

describe("approvals across runs", () => {
  it("an earlier run's approval is stale_approval during a later run, and the later run's own approval still wins", async () => {
    const server = await startTurnServer(API);
    const write = (content: string) => reply(API, { text: ["Writing."], calls: [{ id: "call_w", name: "write_file", args: { path: "out.txt", content } }] });
    // Run 1 asks, is cancelled while asking: its approval is settled (denied) for good.
    server.provider.enqueue(write("first\n"));
    const first = await startTurn(server, "Write out.txt");
    const old = (await nextEvent(server, first.runId, "approval.requested")).data as { approval_id: string };
    assert.ok((await request(server, "x1", "turn.cancel", { session_id: first.sessionId, run_id: first.runId })).result);
    assert.equal(((await runEvents(server, first.runId)).at(-1)!.data as { outcome: string }).outcome, "cancelled");
    // Run 2 asks too.
    server.provider.enqueue(write("second\n"));
    server.provider.enqueue(reply(API, { text: ["Written."] }));
    const second = await startTurn(server, "Write it again", first.sessionId);
    const fresh = (await nextEvent(server, second.runId, "approval.requested")).data as { approval_id: string };
    assert.notEqual(fresh.approval_id, old.approval_id);
    for (const [id, runId] of [["a1", first.runId], ["a2", second.runId]] as const) {
      const answer = await request(server, id, "approval.answer", { session_id: first.sessionId, run_id: runId, approval_id: old.approval_id, allow: true });
      assert.deepEqual(answer.error, { code: "stale_approval" }, `the old approval named with ${id === "a1" ? "its own" : "the new"} run`);
    }
    assert.equal(server.runtime.fs.exists(`${CWD}/out.txt`), false, "nothing ran on the old approval");
    const status = await request(server, "s", "status");
    assert.equal((status.result as { run_id: string }).run_id, second.runId, "the later run is still waiting");
    const won = await request(server, "a3", "approval.answer", { session_id: first.sessionId, run_id: second.runId, approval_id: fresh.approval_id, allow: true });
    assert.deepEqual(won.result, { recorded: true });
    const events = await runEvents(server, second.runId);
    assert.equal((events.at(-1)!.data as { outcome: string }).outcome, "completed");
    assert.equal(new TextDecoder().decode(server.runtime.fs.contents(`${CWD}/out.txt`)), "second\n");
    assert.equal(await stopTurnServer(server), 0);
  });
});
