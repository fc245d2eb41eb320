/**
 * A request's output room within a known context window: servers that check
 * input plus `max_tokens` against the window (vLLM, OpenRouter, Anthropic)
 * refuse a request asking 16,384 tokens of output from an 8,000-token model
 * whatever its input, so every request of such a session would fail as
 * "too long". The room asked is what the window leaves beside the input's
 * estimate, between 1,024 and 16,384 tokens (docs/features/runner.md,
 * "Output room").
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { MAX_OUTPUT_TOKENS, MIN_OUTPUT_TOKENS, outputRoom } from "../src/runner/context-meter.ts";
import type { LoggedRequest, Script } from "./support/fake-provider.ts";
import { reply } from "./support/provider-scripts.ts";
import { APIS, diagnosticCodes, overflowCases, overflowScript, startWindowServer, turn, WINDOW } from "./support/compaction.ts";
import { stopTurnServer, terminalData } from "./support/turns.ts";

/** The output room a logged request asked for, in its API's field. */
function askedRoom(request: LoggedRequest): number {
  const body = request.body as { max_tokens?: number; max_output_tokens?: number };
  return body.max_tokens ?? body.max_output_tokens!;
}

/**
 * A server that counts a request's input at 4 bytes of its JSON body a
 * token (the body's JSON wrapping makes that more than the runner's
 * estimate of the same request) and refuses, as vLLM does, any request
 * whose input and output room together exceed `window`.
 */
function checkingServer(window: number, answer: Script): (request: LoggedRequest) => Script {
  const refusal = overflowScript(overflowCases().find((candidate) => candidate.name === "openai-chat-400-with-completion")!);
  return (request) => {
    const input = Math.ceil(new TextEncoder().encode(JSON.stringify(request.body)).length / 4);
    return input + askedRoom(request) > window ? refusal : answer;
  };
}

describe("output room", () => {
  it("outputRoom() asks what the window leaves beside the input and a quarter of its unmeasured part, never under 1,024 nor over the most, and the most when the window is unknown", () => {
    const input = fc.nat({ max: 2_000_000 }).chain((estimate) => fc.tuple(fc.constant(estimate), fc.nat({ max: estimate })));
    fc.assert(fc.property(fc.integer({ min: 1_024, max: 2_000_000 }), input, fc.integer({ min: 1, max: 65_536 }), (window, [estimate, unmeasured], most) => {
      const room = outputRoom(window, estimate, unmeasured, most);
      assert.ok(room <= most);
      assert.ok(room >= Math.min(most, MIN_OUTPUT_TOKENS));
      // Room beyond the least leaves the part estimated from bytes a quarter more for its error.
      const margin = Math.ceil(unmeasured / 4);
      if (room > MIN_OUTPUT_TOKENS) assert.ok(estimate + margin + room <= window);
      if (window - estimate - margin >= most) assert.equal(room, most);
    }));
    assert.equal(outputRoom(null, 10_000_000, 10_000_000), MAX_OUTPUT_TOKENS);
    // A provider's count needs no margin: 160,000 counted tokens of a 200,000 window leave the most room.
    assert.equal(outputRoom(200_000, 160_000, 0), MAX_OUTPUT_TOKENS);
  });

  for (const api of APIS) {
    it(`${api}: with a configured window of ${WINDOW} tokens a turn's request fits input and output room in the window, so a server that checks both answers it`, async () => {
      const server = await startWindowServer(api);
      try {
        server.provider.handler = checkingServer(WINDOW, reply(api, { text: ["ANSWER"], inputTokens: 3_000 }));
        const first = await turn(server, "PROMPT");
        assert.deepEqual([terminalData(first.events).outcome, terminalData(first.events).error_code, diagnosticCodes(first.events)], ["completed", null, []]);
        assert.equal(server.provider.log.length, 1);
        assert.ok(askedRoom(server.provider.log[0]!) < WINDOW);
      } finally {
        await stopTurnServer(server);
      }
    });
  }

  it("with no window known, a request asks the most output room, as before", async () => {
    const server = await startWindowServer("openai-chat", null);
    try {
      server.provider.enqueue(reply("openai-chat", { text: ["ANSWER"] }));
      const first = await turn(server, "PROMPT");
      assert.equal(terminalData(first.events).outcome, "completed");
      assert.equal(askedRoom(server.provider.log[0]!), MAX_OUTPUT_TOKENS);
    } finally {
      await stopTurnServer(server);
    }
  });
});
