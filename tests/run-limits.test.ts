/**
 * The per-run limits of the spec's bounds table: "Assistant content per run
 * 8 MiB, at most 512 segments" and "Activity identities per run 4096". The
 * activity bound is reached through real turns (tool calls across steps);
 * the segment bound through the budget every segment takes from, since a
 * run opens one segment per model request and `agent.max_steps` (at most
 * 200) keeps a turn below 512 — which a turn at that maximum shows.
 *
 * @module
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LIMITS } from "../src/protocol/limits.ts";
import { ContentBudget } from "../src/runner/segment.ts";
import type { ScriptedCall } from "./support/provider-scripts.ts";
import { reply } from "./support/provider-scripts.ts";
import type { Frame } from "./support/harness.ts";
import { runEvents, startTurn, startTurnServer, stopTurnServer } from "./support/turns.ts";

const API = "openai-chat";

/** `count` calls of a tool that does not exist: each is one failed activity, at no cost. */
function calls(count: number, prefix: string): ScriptedCall[] {
  return Array.from({ length: count }, (_, index) => ({ id: `${prefix}_${index}`, name: "nope", args: {} }));
}

const activities = (events: readonly Frame[]) =>
  events.filter((frame) => frame.event === "activity").map((frame) => frame.data as { activity_id: string; state: string });

describe("the activity identity bound", () => {
  it(`${LIMITS.run_activities} activities in one run complete; the first one past it fails the run with activity_limit`, async () => {
    const server = await startTurnServer(API);
    // Run 1: exactly the bound, spread over two steps, then an answer.
    server.provider.enqueue(reply(API, { calls: calls(4_000, "a") }));
    server.provider.enqueue(reply(API, { calls: calls(LIMITS.run_activities - 4_000, "b") }));
    server.provider.enqueue(reply(API, { text: ["All tried."] }));
    const first = await startTurn(server, "Call many tools");
    const events1 = await runEvents(server, first.runId);
    const done1 = events1.at(-1)!.data as { outcome: string; error_code: string | null };
    assert.deepEqual([done1.outcome, done1.error_code], ["completed", null]);
    const ids1 = activities(events1).map((activity) => activity.activity_id);
    assert.equal(ids1.length, LIMITS.run_activities);
    assert.equal(new Set(ids1).size, LIMITS.run_activities, "every activity has its own id");
    for (const id of ids1) assert.ok(new TextEncoder().encode(id).length <= LIMITS.activity_id_bytes);

    // Run 2, same session: the bound is per run, so it starts over; one call past it stops the run.
    server.provider.enqueue(reply(API, { calls: calls(LIMITS.run_activities, "c") }));
    server.provider.enqueue(reply(API, { text: ["One more."], calls: calls(1, "d") }));
    const second = await startTurn(server, "Call one too many", first.sessionId);
    const events2 = await runEvents(server, second.runId);
    const done2 = events2.at(-1)!.data as { outcome: string; persistence: string; error_code: string | null };
    assert.deepEqual([done2.outcome, done2.persistence, done2.error_code], ["failed", "durable", "execution_failed"]);
    const diagnostics = events2.filter((frame) => frame.event === "diagnostic").map((frame) => (frame.data as { code: string }).code);
    assert.deepEqual(diagnostics, ["activity_limit"]);
    const ids2 = activities(events2).map((activity) => activity.activity_id);
    assert.equal(ids2.length, LIMITS.run_activities, "the call past the bound never became an activity");
    assert.deepEqual(ids2, ids1, "a new run numbers its activities afresh");
    assert.equal(server.provider.log.length, 5, "no request after the run stopped");
    assert.equal(await stopTurnServer(server), 0);
  });
});

describe("the segment bound", () => {
  it(`ContentBudget gives ${LIMITS.run_content_segments} segments and ${LIMITS.run_content_bytes} bytes, then refuses without taking anything`, () => {
    const budget = new ContentBudget();
    for (let segment = 0; segment < LIMITS.run_content_segments; segment++) assert.equal(budget.takeSegment(), true, `segment ${segment + 1}`);
    assert.equal(budget.takeSegment(), false, "segment 513");
    assert.equal(budget.takeSegment(), false, "and every later one");
    const bytes = new ContentBudget();
    assert.equal(bytes.takeBytes(LIMITS.run_content_bytes - 1), true);
    assert.equal(bytes.takeBytes(2), false, "a piece that would cross the bound is refused whole");
    assert.equal(bytes.takeBytes(1), true, "and took nothing, so the last byte still fits");
    assert.equal(bytes.takeBytes(1), false);
  });

  it("a turn at agent.max_steps 200 opens one segment per model request: 200, below the 512 bound", async () => {
    const server = await startTurnServer(API, { settings: { agent: { max_steps: 200 } } });
    server.provider.handler = (request) => reply(API, { text: [`step ${(request.body as { messages: unknown[] }).messages.length}`], calls: calls(1, `s${server.provider.log.length}`) });
    const { runId } = await startTurn(server, "Keep going");
    const events = await runEvents(server, runId);
    const done = events.at(-1)!.data as { outcome: string; error_code: string | null };
    assert.deepEqual([done.outcome, done.error_code], ["failed", "execution_failed"]);
    assert.deepEqual(events.filter((frame) => frame.event === "diagnostic").map((frame) => (frame.data as { code: string }).code), ["step_limit"]);
    const segments = new Set(events.filter((frame) => frame.event === "message.reconcile").map((frame) => (frame.data as { message_id: string }).message_id));
    assert.equal(segments.size, 200);
    assert.ok(segments.size < LIMITS.run_content_segments);
    assert.equal(server.provider.log.length, 200);
    assert.equal(await stopTurnServer(server), 0);
  });
});
