/**
 * The negotiated `run.usage` event (docs/features/local-agent-extensions.md):
 * advertised and sent only to a client that required it, once per run that
 * reached a provider, right before `run.finished`, with the turn's tokens in
 * one meaning on every API (cached prompt tokens included), the session's
 * totals from its stored `usage` records, and the context fill of the last
 * request. Through the real server on the memory runtime, against loopback
 * providers speaking each API's wire format.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ProviderApi } from "../src/config/settings.ts";
import { CAPABILITIES } from "../src/protocol/negotiation.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { overflowCases, overflowScript, startWindowServer } from "./support/compaction.ts";
import { startFakeProvider } from "./support/fake-provider.ts";
import { guarded } from "./support/hang-guard.ts";
import { errorScript } from "./support/provider-fixtures.ts";
import { reply, type ScriptedUsage } from "./support/provider-scripts.ts";
import type { Frame } from "./support/harness.ts";
import { CWD, HOME, request, runEvents, startTurn, startTurnServer, stopTurnServer, TURN_CAPABILITIES, type TurnServer } from "./support/turns.ts";

const APIS: ProviderApi[] = ["openai-chat", "openai-responses", "anthropic-messages"];
const WITH_USAGE = [...TURN_CAPABILITIES, "run.usage"];

/** The `run.usage` events of a run's events. */
function usageEvents(events: readonly Frame[]): Record<string, unknown>[] {
  return events.filter((frame) => frame.event === "run.usage").map((frame) => frame.data as Record<string, unknown>);
}

/** The run's one `run.usage`, checked to come right before `run.finished`. */
function usageOf(events: readonly Frame[]): Record<string, unknown> {
  const usages = usageEvents(events);
  assert.equal(usages.length, 1, `one run.usage: ${events.map((frame) => frame.event).join(", ")}`);
  assert.equal(events.at(-2)!.event, "run.usage", "run.usage comes right before run.finished");
  assert.equal(events.at(-1)!.event, "run.finished");
  return usages[0]!;
}

/** The token fields of a `run.usage`'s data (the scope left out). */
function tokens(data: Record<string, unknown>): Record<string, unknown> {
  const { session_id: _, run_id: __, ...rest } = data;
  return rest;
}

/** The `usage` records stored in the session file. */
function storedUsage(server: TurnServer, sessionId: string): Record<string, unknown>[] {
  const text = new TextDecoder().decode(server.runtime.fs.contents(`${HOME}/sessions/${sessionId}.jsonl`));
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line)).filter((record) => record.type === "usage");
}

/**
 * The context window of each API's test model, as the child knows it
 * without a catalog cache or a setting: the built-in figures of the
 * default models (docs/settings.md, "Context windows"); the chat tests'
 * `qwen` is in no table, so unknown.
 */
const WINDOW: Readonly<Record<ProviderApi, number | null>> = { "openai-chat": null, "openai-responses": 400_000, "anthropic-messages": 200_000 };

/** Reasoning as the API reports it: the OpenAI APIs do, Anthropic's stream has no such count. */
function reasoningOf(api: ProviderApi, value: number): number | null {
  return api === "anthropic-messages" ? null : value;
}

describe("run.usage negotiation", () => {
  it("initialize lists run.usage only for a client that required it; the others get exactly the sixteen methods", async () => {
    const base = await startTurnServer("openai-chat");
    const baseInit = base.frames().find((frame) => frame.id === "init")!;
    assert.deepEqual((baseInit.result as { capabilities: string[] }).capabilities, [...CAPABILITIES]);
    assert.equal(CAPABILITIES.length, 16);
    assert.equal(await stopTurnServer(base), 0);

    const negotiated = await startTurnServer("openai-chat", { capabilities: ["run.usage"] });
    const init = negotiated.frames().find((frame) => frame.id === "init")!;
    assert.deepEqual((init.result as { capabilities: string[] }).capabilities, [...CAPABILITIES, "run.usage"].sort());
    assert.equal(await stopTurnServer(negotiated), 0);
  });

  it("run.usage is a capability, not a method: calling it is unsupported_method", async () => {
    const server = await startTurnServer("openai-chat", { capabilities: WITH_USAGE });
    const called = await request(server, "call", "run.usage", {});
    assert.deepEqual(called.error, { code: "unsupported_method" });
    assert.equal(await stopTurnServer(server), 0);
  });
});

for (const api of APIS) {
  describe(`run.usage over ${api}`, () => {
    it("one run.usage per turn: the turn's tokens summed over its requests, cached ones counted in, the session's totals and the last request's fill", async () => {
      const fs = new MemoryFileSystem();
      const server = await startTurnServer(api, { capabilities: WITH_USAGE, fs });
      fs.writeFile(`${CWD}/a.txt`, "alpha\n");
      const step1: ScriptedUsage = { prompt: 1_000, cached: 200, output: 40, reasoning: 16 };
      const step2: ScriptedUsage = { prompt: 1_300, cached: 1_000, output: 60, reasoning: 8 };
      server.provider.enqueue(reply(api, { text: ["Reading."], calls: [{ id: "call_1", name: "read_file", args: { path: "a.txt" } }], usage: step1 }));
      server.provider.enqueue(reply(api, { text: ["It says alpha."], usage: step2 }));
      const first = await startTurn(server, "What is in a.txt?");
      const turn1 = usageOf(await runEvents(server, first.runId));
      assert.deepEqual(turn1.session_id, first.sessionId);
      assert.deepEqual(turn1.run_id, first.runId);
      assert.deepEqual(tokens(turn1), {
        input_tokens: 2_300,
        output_tokens: 100,
        cached_input_tokens: 1_200,
        reasoning_tokens: reasoningOf(api, 24),
        session_input_tokens: 2_300,
        session_output_tokens: 100,
        context_window: WINDOW[api],
        context_used: 1_300,
      });

      const step3: ScriptedUsage = { prompt: 1_500, cached: 0, output: 5 };
      server.provider.enqueue(reply(api, { text: ["Nothing else."], usage: step3 }));
      const second = await startTurn(server, "Anything else?", first.sessionId);
      const turn2 = usageOf(await runEvents(server, second.runId));
      assert.deepEqual(tokens(turn2), {
        input_tokens: 1_500,
        output_tokens: 5,
        // Anthropic reports no cache field when nothing was cached; the OpenAI APIs leave out the details object.
        cached_input_tokens: null,
        reasoning_tokens: null,
        session_input_tokens: 3_800,
        session_output_tokens: 105,
        context_window: WINDOW[api],
        context_used: 1_500,
      });
      assert.deepEqual(storedUsage(server, first.sessionId).map(({ input_tokens, output_tokens, cached_input_tokens, reasoning_tokens }) => ({ input_tokens, output_tokens, cached_input_tokens, reasoning_tokens })), [
        { input_tokens: 2_300, output_tokens: 100, cached_input_tokens: 1_200, reasoning_tokens: reasoningOf(api, 24) ?? undefined },
        { input_tokens: 1_500, output_tokens: 5, cached_input_tokens: undefined, reasoning_tokens: undefined },
      ]);

      // A later child sums the stored records when it opens the session: the totals survive a restart.
      server.runtime.input.end();
      assert.equal(await guarded(server.exit, "the first child's exit"), 0);
      const reopened = await startTurnServer(api, { capabilities: WITH_USAGE, fs, provider: server.provider });
      const opened = await request(reopened, "open", "session.open", { session_id: first.sessionId });
      assert.ok(opened.result, JSON.stringify(opened.error));
      reopened.provider.enqueue(reply(api, { text: ["Still here."], usage: { prompt: 1_600, cached: 1_500, output: 3 } }));
      const third = await startTurn(reopened, "Still there?", first.sessionId);
      const turn3 = usageOf(await runEvents(reopened, third.runId));
      assert.deepEqual(
        [turn3.input_tokens, turn3.cached_input_tokens, turn3.session_input_tokens, turn3.session_output_tokens, turn3.context_used],
        [1_600, 1_500, 5_400, 108, 1_600],
      );
      assert.equal(await stopTurnServer(reopened), 0);
    });

    it("a turn whose provider answered with an error status reached it: run.usage with nothing reported", async () => {
      const server = await startTurnServer(api, { capabilities: WITH_USAGE });
      server.provider.enqueue(errorScript(api, 500, "overloaded"));
      const { runId } = await startTurn(server, "Fail please");
      const events = await runEvents(server, runId);
      assert.equal((events.at(-1)!.data as { error_code: string }).error_code, "execution_failed");
      assert.deepEqual(tokens(usageOf(events)), {
        input_tokens: null,
        output_tokens: null,
        cached_input_tokens: null,
        reasoning_tokens: null,
        session_input_tokens: 0,
        session_output_tokens: 0,
        context_window: WINDOW[api],
        context_used: null,
      });
      assert.equal(await stopTurnServer(server), 0);
    });

    it("a client that did not require run.usage gets no run.usage, and the usage record is stored all the same", async () => {
      const server = await startTurnServer(api);
      server.provider.enqueue(reply(api, { text: ["Hi."], usage: { prompt: 900, cached: 100, output: 4 } }));
      const { sessionId, runId } = await startTurn(server, "Hello");
      const events = await runEvents(server, runId);
      assert.deepEqual(usageEvents(events), []);
      assert.deepEqual(events.map((frame) => frame.event).filter((name) => name !== "message.delta"), ["input.persisted", "message.reconcile", "run.finished"]);
      assert.deepEqual(storedUsage(server, sessionId).map(({ input_tokens, cached_input_tokens }) => [input_tokens, cached_input_tokens]), [[900, 100]]);
      assert.equal(await stopTurnServer(server), 0);
    });
  });
}

describe("run.usage's context window", () => {
  it("is the endpoint's context_window setting when no catalog says otherwise", async () => {
    const provider = await startFakeProvider();
    const endpoints = { ollama: { base_url: `${provider.url}/v1`, context_window: 32_768 } };
    const server = await startTurnServer("openai-chat", { capabilities: WITH_USAGE, provider, settings: { providers: { endpoints } } });
    server.provider.enqueue(reply("openai-chat", { text: ["Sized."], usage: { prompt: 20_000, cached: 0, output: 2 } }));
    const { runId } = await startTurn(server, "How full?");
    const usage = usageOf(await runEvents(server, runId));
    assert.deepEqual([usage.context_window, usage.context_used], [32_768, 20_000]);
    assert.equal(await stopTurnServer(server), 0);
  });
});

describe("run.usage with compaction", () => {
  for (const answer of overflowCases().filter((candidate, index, all) => all.findIndex((other) => other.api === candidate.api) === index)) {
    it(`${answer.api}: a refusal for length, the summary request and the retry all count; the fill is the retry's`, async () => {
      const api = answer.api;
      const server = await startWindowServer(api, null, {}, { capabilities: WITH_USAGE });
      try {
        server.provider.enqueue(reply(api, { text: ["FIRST-ANSWER"], usage: { prompt: 500, cached: 0, output: 10 } }));
        const first = await startTurn(server, "FIRST-PROMPT");
        assert.equal(usageOf(await runEvents(server, first.runId)).session_input_tokens, 500);
        server.provider.enqueue(overflowScript(answer));
        server.provider.enqueue(reply(api, { text: ["SUMMARY-ONE"], usage: { prompt: 700, cached: 0, output: 50 } }));
        server.provider.enqueue(reply(api, { text: ["SECOND-ANSWER"], usage: { prompt: 300, cached: 0, output: 20 } }));
        const second = await startTurn(server, "SECOND-PROMPT", first.sessionId);
        const usage = usageOf(await runEvents(server, second.runId));
        assert.deepEqual(
          [usage.input_tokens, usage.output_tokens, usage.session_input_tokens, usage.session_output_tokens, usage.context_used],
          [1_000, 70, 1_500, 80, 300],
        );
      } finally {
        await stopTurnServer(server);
      }
    });

    it(`${answer.api}: when the retry is refused too, the summary request counts but measures no fill`, async () => {
      const api = answer.api;
      const server = await startWindowServer(api, null, {}, { capabilities: WITH_USAGE });
      try {
        server.provider.enqueue(reply(api, { text: ["FIRST-ANSWER"], usage: { prompt: 500, cached: 0, output: 10 } }));
        const first = await startTurn(server, "FIRST-PROMPT");
        await runEvents(server, first.runId);
        server.provider.enqueue(overflowScript(answer));
        server.provider.enqueue(reply(api, { text: ["SUMMARY-ONE"], usage: { prompt: 700, cached: 0, output: 50 } }));
        server.provider.enqueue(overflowScript(answer));
        const second = await startTurn(server, "SECOND-PROMPT", first.sessionId);
        const events = await runEvents(server, second.runId);
        assert.equal((events.at(-1)!.data as { error_code: string }).error_code, "execution_failed");
        const usage = usageOf(events);
        assert.deepEqual([usage.input_tokens, usage.output_tokens, usage.context_used], [700, 50, null]);
      } finally {
        await stopTurnServer(server);
      }
    });
  }
});

describe("run.usage when the summary request is the turn's only request", () => {
  it("a compaction before the turn's first request whose summary request the provider refused reached it: one run.usage, nothing reported", async () => {
    const server = await startWindowServer("openai-chat", 8_000, {}, { capabilities: WITH_USAGE });
    try {
      // About 9,000 tokens of answer: the next turn's first request is over the window, so a compaction comes first.
      server.provider.enqueue(reply("openai-chat", { text: Array.from({ length: 36 }, () => `${"long answer ".repeat(83)}\n`), usage: { prompt: 500, cached: 0, output: 9_000 } }));
      const first = await startTurn(server, "FIRST-PROMPT");
      await runEvents(server, first.runId);
      server.provider.enqueue(errorScript("openai-chat", 500, "overloaded"));
      const second = await startTurn(server, "SECOND-PROMPT", first.sessionId);
      const events = await runEvents(server, second.runId);
      assert.equal(server.provider.log.length, 2, "the summary request was the turn's only request");
      assert.equal((events.at(-1)!.data as { error_code: string }).error_code, "execution_failed");
      const usage = usageOf(events);
      assert.deepEqual([usage.input_tokens, usage.output_tokens, usage.session_input_tokens, usage.context_used], [null, null, 500, null]);
    } finally {
      await stopTurnServer(server);
    }
  });
});

describe("run.usage for turns that reached no provider", () => {
  it("a turn whose provider cannot be reached sends no run.usage", async () => {
    const server = await startTurnServer("openai-chat", { capabilities: WITH_USAGE });
    server.provider.enqueue(reply("openai-chat", { text: ["First."], usage: { prompt: 500, cached: 0, output: 9 } }));
    const first = await startTurn(server, "First");
    assert.equal(usageOf(await runEvents(server, first.runId)).session_input_tokens, 500);
    // The loopback server goes away: the next request finds nobody listening.
    await server.provider.close();
    const second = await startTurn(server, "Second", first.sessionId);
    const events = await runEvents(server, second.runId);
    const finished = events.at(-1)!.data as { outcome: string; error_code: string };
    assert.deepEqual([finished.outcome, finished.error_code], ["failed", "execution_failed"]);
    assert.ok(events.some((frame) => frame.event === "diagnostic" && (frame.data as { code: string }).code === "provider_unreachable"));
    assert.deepEqual(usageEvents(events), []);
    server.runtime.input.end();
    assert.equal(await guarded(server.exit, "the exit after EOF"), 0);
  });

  it("a turn refused before its input was stored sends no run.usage", async () => {
    const fs = new MemoryFileSystem();
    const server = await startTurnServer("openai-chat", { capabilities: WITH_USAGE, fs });
    const created = await request(server, "create", "session.create");
    const sessionId = (created.result as { session_id: string }).session_id;
    // A full disk: the input cannot be stored, so no provider is asked.
    fs.freeBytes = 0;
    const started = await request(server, "turn", "turn.start", { session_id: sessionId, prompt: "Hello" });
    const runId = (started.result as { run_id: string }).run_id;
    const events = await runEvents(server, runId);
    assert.deepEqual(events.map((frame) => frame.event), ["run.finished"]);
    assert.equal(server.provider.log.length, 0);
    assert.equal(await stopTurnServer(server), 0);
  });
});
