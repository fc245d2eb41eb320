/**
 * The spec's identity errors for `turn.cancel` and `approval.answer`: a
 * wrong run is `stale_run`, a wrong approval identity `stale_approval`, and
 * naming another session than the attached one is a wrong identity too (the
 * spec lists `stale_session` only for `turn.start`). A refused answer must not
 * touch the real run or approval.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { reply } from "./support/provider-scripts.ts";
import { nextEvent, request, runEvents, startTurn, startTurnServer, stopTurnServer, terminalData } from "./support/turns.ts";

const API = "openai-chat";

describe("turn identity errors", () => {
  it("turn.cancel and approval.answer naming another session answer stale_run and stale_approval, and change nothing", async () => {
    const server = await startTurnServer(API);
    server.provider.enqueue(reply(API, { calls: [{ id: "call_1", name: "write_file", args: { path: "out.txt", content: "x\n" } }] }));
    server.provider.enqueue(reply(API, { text: ["Done."] }));
    const { sessionId, runId } = await startTurn(server, "write it");
    const approval = (await nextEvent(server, runId, "approval.requested")).data as { approval_id: string };
    const other = "another-session";
    const cancel = await request(server, "cancel-other", "turn.cancel", { session_id: other, run_id: runId });
    assert.deepEqual(cancel.error, { code: "stale_run" });
    const answer = await request(server, "answer-other", "approval.answer", { session_id: other, run_id: runId, approval_id: approval.approval_id, allow: false });
    assert.deepEqual(answer.error, { code: "stale_approval" });
    // The run and its approval are untouched: the right identity still wins.
    const allowed = await request(server, "answer", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: approval.approval_id, allow: true });
    assert.deepEqual(allowed.result, { recorded: true });
    const events = await runEvents(server, runId);
    assert.equal(terminalData(events).outcome, "completed");
    assert.equal(await stopTurnServer(server), 0);
  });

  it("with no session attached, both answer session_missing", async () => {
    const server = await startTurnServer(API);
    const cancel = await request(server, "cancel", "turn.cancel", { session_id: "s", run_id: "r" });
    assert.deepEqual(cancel.error, { code: "session_missing" });
    const answer = await request(server, "answer", "approval.answer", { session_id: "s", run_id: "r", approval_id: "a", allow: true });
    assert.deepEqual(answer.error, { code: "session_missing" });
    assert.equal(await stopTurnServer(server), 0);
  });
});
