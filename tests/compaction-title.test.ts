/**
 * A compaction's summary request returns a title too (docs/features/runner.md,
 * "The compaction itself"): the summary's leading `Title:` line becomes the
 * `compaction` record's `title`, judged by the spec's title rule, which
 * `session.list` then shows as the session's latest title; the line never
 * stays in the summary the model is sent. With `agent.titles` off, no title
 * is stored.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { splitTitle, SUMMARY_PROMPT } from "../src/runner/summary-request.ts";
import { reply } from "./support/provider-scripts.ts";
import { sentText, startWindowServer, storedRecords, turn } from "./support/compaction.ts";
import { request, stopTurnServer, terminalData, type TurnServer } from "./support/turns.ts";

const API = "openai-chat";
const SUMMARY = "**Title:** Parser rewrite for the range bug\n\nGoal: fix the range bug.\nOpen work: run the tests.";

/** `session.list`'s title of `sessionId`. */
async function listedTitle(server: TurnServer, sessionId: string): Promise<unknown> {
  const listed = await request(server, `list-${server.frames().length}`, "session.list", {});
  return (listed.result as { sessions: { session_id: string; title: unknown }[] }).sessions.find((entry) => entry.session_id === sessionId)?.title;
}

/** Runs a first turn, then a second whose first step crosses the threshold, so a compaction answering {@link SUMMARY} follows. */
async function compactingSession(server: TurnServer, titles: boolean): Promise<string> {
  server.provider.enqueue(reply(API, { text: ["FIRST-ANSWER"], inputTokens: 100 }));
  const { sessionId } = await turn(server, "FIRST-PROMPT");
  if (titles) {
    server.provider.enqueue(reply(API, { text: ["First title"] }));
    await server.provider.until(() => storedRecords(server, sessionId).some((record) => record.type === "session_title"));
  }
  server.provider.enqueue(reply(API, { calls: [{ id: "call_1", name: "list_directory", args: { path: "." } }], inputTokens: 7_000 }));
  server.provider.enqueue(reply(API, { text: [SUMMARY], inputTokens: 900 }));
  server.provider.enqueue(reply(API, { text: ["SECOND-ANSWER"], inputTokens: 1_200 }));
  const second = await turn(server, "SECOND-PROMPT", sessionId);
  assert.deepEqual([terminalData(second.events).outcome, terminalData(second.events).error_code], ["completed", null]);
  return sessionId;
}

describe("a compaction's title", () => {
  it("splitTitle() takes the leading title line off, plain or emphasised, and leaves a summary without one as it is", () => {
    assert.deepEqual(splitTitle("Title: Fix it\nGoal: x"), { title: "Fix it", summary: "Goal: x" });
    assert.deepEqual(splitTitle("\n **Title:** Fix it\n\nGoal: x"), { title: "Fix it", summary: "Goal: x" });
    assert.deepEqual(splitTitle("Goal: x\nTitle: later"), { title: null, summary: "Goal: x\nTitle: later" });
    assert.ok(SUMMARY_PROMPT.includes('"Title: "'), "the prompt asks for the title line");
  });

  it("the summary's title line is stored as the compaction's title, shown by session.list over the first turn's title, and never sent as summary", async () => {
    const server = await startWindowServer(API, undefined, { titles: { enabled: true } });
    try {
      const sessionId = await compactingSession(server, true);
      const compaction = storedRecords(server, sessionId).find((record) => record.type === "compaction")!;
      assert.deepEqual([compaction.title, compaction.summary], ["Parser rewrite for the range bug", "Goal: fix the range bug.\nOpen work: run the tests."]);
      const next = sentText(server, server.provider.log.length - 1);
      assert.ok(next.includes("Goal: fix the range bug.") && !next.includes("Parser rewrite"), next);
      assert.equal(await listedTitle(server, sessionId), "Parser rewrite for the range bug");
    } finally {
      await stopTurnServer(server);
    }
  });

  it("with agent.titles off, the compaction stores no title and the summary still leaves the line out", async () => {
    const server = await startWindowServer(API);
    try {
      const sessionId = await compactingSession(server, false);
      const compaction = storedRecords(server, sessionId).find((record) => record.type === "compaction")!;
      assert.deepEqual([compaction.title, compaction.summary], [undefined, "Goal: fix the range bug.\nOpen work: run the tests."]);
      assert.equal(await listedTitle(server, sessionId), null);
    } finally {
      await stopTurnServer(server);
    }
  });
});
