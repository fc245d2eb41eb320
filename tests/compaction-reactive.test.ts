/**
 * The reactive path of compaction: each API's real "context too long"
 * answer (`../shared/fixtures/provider-errors/context-too-long.json`, as
 * reported in public issue threads) makes the run compact once and retry
 * the step once; a second refusal fails the run with `execution_failed` and
 * `context_full`, never a loop.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isOverflowAnswer } from "../src/runner/providers/context-overflow.ts";
import { SUMMARY_PROMPT } from "../src/runner/summary-request.ts";
import { reply } from "./support/provider-scripts.ts";
import { APIS, compactionStates, diagnosticCodes, overflowCases, overflowScript, sentText, startWindowServer, storedRecords, turn } from "./support/compaction.ts";
import { stopTurnServer, terminalData } from "./support/turns.ts";

const bytes = (value: unknown) => new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));

describe("what counts as a 'context too long' answer", () => {
  it("isOverflowAnswer() recognises every reported HTTP answer of the fixture", () => {
    const cases = overflowCases().filter((answer) => !answer.stream_event);
    assert.equal(cases.length, 5);
    for (const answer of cases) assert.equal(isOverflowAnswer(answer.status, bytes(answer.body)), true, answer.name);
  });

  it("isOverflowAnswer() is true for any 413 and false for other refusals, other statuses and bodies it cannot read", () => {
    assert.equal(isOverflowAnswer(413, null), true);
    const other = { error: { message: "The model `gpt-9` does not exist", type: "invalid_request_error", code: "model_not_found" } };
    for (const [status, body] of [[400, bytes(other)], [400, bytes("prompt is too long")], [400, null], [401, bytes(overflowCases()[0]!.body)], [429, bytes(overflowCases()[3]!.body)], [400, bytes({ error: "prompt is too long" })]] as const) {
      assert.equal(isOverflowAnswer(status, body), false, JSON.stringify([status, body === null ? null : new TextDecoder().decode(body)]));
    }
    assert.equal(isOverflowAnswer(400, bytes({ error: { type: "exceed_context_size_error", message: "the request exceeds the available context size" } })), true);
  });
});

describe("the reactive path (scripted providers, each API's real answer)", () => {
  for (const answer of overflowCases()) {
    it(`${answer.name}: one compaction of the earlier turns and one retry, which carries the summary and this turn's input only`, async () => {
      const api = answer.api;
      const server = await startWindowServer(api, null);
      try {
        server.provider.enqueue(reply(api, { text: ["FIRST-ANSWER"] }));
        const first = await turn(server, "FIRST-PROMPT");
        server.provider.enqueue(overflowScript(answer));
        server.provider.enqueue(reply(api, { text: ["SUMMARY-ONE"], inputTokens: 300 }));
        server.provider.enqueue(reply(api, { text: ["SECOND-ANSWER"] }));
        const second = await turn(server, "SECOND-PROMPT", first.sessionId);
        assert.deepEqual([terminalData(second.events).outcome, terminalData(second.events).error_code], ["completed", null]);
        assert.deepEqual(compactionStates(second.events).map(([state]) => state), ["started", "completed"]);
        assert.match(compactionStates(second.events)[0]![1], /too long/);
        assert.deepEqual(diagnosticCodes(second.events), []);
        assert.equal(server.provider.log.length, 4);
        const summary = server.provider.log[2]!.body as Record<string, unknown>;
        assert.equal(summary.tools, undefined, "the summary request offers no tools");
        assert.ok(sentText(server, 2).includes(JSON.stringify(SUMMARY_PROMPT).slice(1, 40)));
        assert.ok(sentText(server, 2).includes("FIRST-ANSWER"));
        const retry = sentText(server, 3);
        assert.ok(retry.includes("SUMMARY-ONE") && retry.includes("SECOND-PROMPT"), retry);
        assert.ok(!retry.includes("FIRST-PROMPT") && !retry.includes("FIRST-ANSWER"), retry);
        const records = storedRecords(server, first.sessionId);
        const compaction = records.find((record) => record.type === "compaction")!;
        assert.deepEqual([compaction.v, compaction.summary, compaction.through_turn], [2, "SUMMARY-ONE", records.find((record) => record.type === "turn_started")!.turn_id]);
      } finally {
        await stopTurnServer(server);
      }
    });
  }

  for (const api of APIS) {
    const answer = overflowCases().find((candidate) => candidate.api === api)!;
    it(`${api}: a second refusal after the compaction fails the run with execution_failed and context_full, after exactly one retry`, async () => {
      const server = await startWindowServer(api, null);
      try {
        server.provider.enqueue(reply(api, { text: ["FIRST-ANSWER"] }));
        const first = await turn(server, "FIRST-PROMPT");
        server.provider.enqueue(overflowScript(answer));
        server.provider.enqueue(reply(api, { text: ["SUMMARY-ONE"] }));
        server.provider.enqueue(overflowScript(answer));
        server.provider.enqueue(reply(api, { text: ["never asked for"] }));
        const second = await turn(server, "SECOND-PROMPT", first.sessionId);
        assert.deepEqual([terminalData(second.events).outcome, terminalData(second.events).error_code], ["failed", "execution_failed"]);
        assert.deepEqual(diagnosticCodes(second.events), ["context_full"]);
        assert.equal(server.provider.log.length, 4, "the refused step, the summary, the one retry; nothing more");
      } finally {
        await stopTurnServer(server);
      }
    });
  }

  it("a refusal with nothing earlier to compact fails at once with context_full, no summary requested", async () => {
    const server = await startWindowServer("openai-chat", null);
    try {
      server.provider.enqueue(overflowScript(overflowCases()[0]!));
      const only = await turn(server, "A PROMPT TOO LONG");
      assert.deepEqual([terminalData(only.events).outcome, terminalData(only.events).error_code], ["failed", "execution_failed"]);
      assert.deepEqual(diagnosticCodes(only.events), ["context_full"]);
      assert.deepEqual(compactionStates(only.events), []);
      assert.equal(server.provider.log.length, 1);
    } finally {
      await stopTurnServer(server);
    }
  });

  it("with agent.compaction.enabled false a refusal fails at once with context_full", async () => {
    const server = await startWindowServer("anthropic-messages", null, { compaction: { enabled: false } });
    try {
      server.provider.enqueue(reply("anthropic-messages", { text: ["FIRST-ANSWER"] }));
      const first = await turn(server, "FIRST-PROMPT");
      server.provider.enqueue(overflowScript(overflowCases()[3]!));
      const second = await turn(server, "SECOND-PROMPT", first.sessionId);
      assert.deepEqual(diagnosticCodes(second.events), ["context_full"]);
      assert.equal(server.provider.log.length, 2);
    } finally {
      await stopTurnServer(server);
    }
  });

  it("a refusal of another kind (400 model not found) is the usual provider_bad_request, not a compaction", async () => {
    const server = await startWindowServer("openai-chat", null);
    try {
      server.provider.enqueue(reply("openai-chat", { text: ["FIRST-ANSWER"] }));
      const first = await turn(server, "FIRST-PROMPT");
      server.provider.enqueue({ status: 400, body: { error: { message: "The model `qwen` does not exist", code: "model_not_found" } } });
      const second = await turn(server, "SECOND-PROMPT", first.sessionId);
      assert.deepEqual(diagnosticCodes(second.events), ["provider_bad_request"]);
      assert.deepEqual(compactionStates(second.events), []);
    } finally {
      await stopTurnServer(server);
    }
  });
});
