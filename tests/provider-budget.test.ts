/**
 * Everything a provider streams counts against one per-run budget: 8 MiB
 * shared by text, reasoning summaries, raw reasoning and tool-call
 * arguments, and a bound on retained events. A stream past it fails the run
 * `content_limit` with a truthful partial reply, and nothing it sent grows a
 * stored record past what the budget allows. Through whole turns (memory
 * runtime, loopback provider), and the retained-event list on its own.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { ProviderApi } from "../src/config/settings.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { accumulate } from "../src/runner/providers/accumulate.ts";
import type { ProviderEvent } from "../src/runner/providers/events.ts";
import { RetainedEvents } from "../src/runner/retained-events.ts";
import { ContentBudget, RUN_PROVIDER_EVENTS } from "../src/runner/segment.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { frameEvent } from "./support/provider-fixtures.ts";
import { HOME, reconciled, runEvents, startTurn, startTurnServer, stopTurnServer, terminalData } from "./support/turns.ts";

const PIECE = "r".repeat(64 * 1024);
/** Pieces whose total is just past the run's byte budget. */
const OVER = Math.floor(LIMITS.run_content_bytes / PIECE.length) + 1;

const chat = (delta: Record<string, unknown>, finish: string | null = null) =>
  frameEvent("openai-chat", { id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] });

/** Runs one turn against `chunks`; returns its events and the stored records. */
async function turn(api: ProviderApi, chunks: string[]) {
  const server = await startTurnServer(api);
  server.provider.enqueue({ chunks });
  const { sessionId, runId } = await startTurn(server, "go");
  const events = await runEvents(server, runId);
  const text = new TextDecoder().decode(server.runtime.fs.contents(`${HOME}/sessions/${sessionId}.jsonl`));
  const records = text.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.equal(await stopTurnServer(server), 0);
  return { events, records, log: server.provider.log };
}

function assertContentLimit(events: Awaited<ReturnType<typeof turn>>["events"]): void {
  const finished = terminalData(events);
  assert.deepEqual([finished.outcome, finished.error_code, finished.persistence], ["failed", "content_limit", "durable"]);
}

describe("the run's provider budget, through a turn", () => {
  it("a reasoning summary past 8 MiB fails content_limit; the stored summary stays within the budget and the text before it is kept", async () => {
    const chunks = [
      frameEvent("anthropic-messages", { type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], usage: { input_tokens: 1, output_tokens: 1 } } }),
      frameEvent("anthropic-messages", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
      frameEvent("anthropic-messages", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Before thinking. " } }),
      frameEvent("anthropic-messages", { type: "content_block_stop", index: 0 }),
      frameEvent("anthropic-messages", { type: "content_block_start", index: 1, content_block: { type: "thinking", thinking: "", signature: "" } }),
      ...Array.from({ length: OVER }, () => frameEvent("anthropic-messages", { type: "content_block_delta", index: 1, delta: { type: "thinking_delta", thinking: PIECE } })),
      frameEvent("anthropic-messages", { type: "content_block_stop", index: 1 }),
      frameEvent("anthropic-messages", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 1 } }),
      frameEvent("anthropic-messages", { type: "message_stop" }),
    ];
    const { events, records } = await turn("anthropic-messages", chunks);
    assertContentLimit(events);
    assert.deepEqual([...reconciled(events).values()], [{ text: "Before thinking. ", partial: true }]);
    const summary = records.find((record) => record.type === "reasoning_summary");
    assert.ok(summary, "the accepted part of the summary is stored");
    assert.ok((summary.text as string).length + "Before thinking. ".length <= LIMITS.run_content_bytes);
  });

  it("tool-call arguments past 8 MiB fail content_limit and the call never runs", async () => {
    const chunks = [
      chat({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "write_file", arguments: "" } }] }),
      ...Array.from({ length: OVER }, () => chat({ tool_calls: [{ index: 0, function: { arguments: PIECE } }] })),
      chat({}, "tool_calls"),
      "data: [DONE]\n\n",
    ];
    const { events, log } = await turn("openai-chat", chunks);
    assertContentLimit(events);
    assert.equal(events.filter((frame) => frame.event === "activity").length, 0);
    assert.equal(log.length, 1, "no second request");
  });

  it("raw reasoning past 8 MiB fails content_limit, though it is never shown or stored", async () => {
    const chunks = [...Array.from({ length: OVER }, () => chat({ reasoning_content: PIECE })), chat({ content: "late" }, "stop"), "data: [DONE]\n\n"];
    const { events, records } = await turn("openai-chat", chunks);
    assertContentLimit(events);
    assert.ok(!JSON.stringify(records).includes(PIECE.slice(0, 100)), "raw reasoning is never stored");
  });

  it(`more than ${RUN_PROVIDER_EVENTS} interleaved tiny events fail content_limit, however few bytes they carry`, async () => {
    const start = chat({ tool_calls: [0, 1].map((index) => ({ index, id: `call_${index}`, type: "function", function: { name: "read_file", arguments: "" } })) });
    // Alternating calls cannot be joined: each delta is one more retained event.
    const perChunk = 512;
    const interleaved = chat({ tool_calls: Array.from({ length: perChunk }, (_, i) => ({ index: i % 2, function: { arguments: " " } })) });
    const chunks = [start, ...Array.from({ length: Math.ceil(RUN_PROVIDER_EVENTS / perChunk) + 1 }, () => interleaved), chat({}, "tool_calls"), "data: [DONE]\n\n"];
    const { events } = await turn("openai-chat", chunks);
    assertContentLimit(events);
  });
});

/** Small provider events of every retained kind. */
const eventArb: fc.Arbitrary<ProviderEvent> = fc.oneof(
  fc.record({ type: fc.constant("tool_delta" as const), key: fc.constantFrom("0", "1"), delta: fc.string({ maxLength: 4 }) }),
  fc.record({ type: fc.constant("reasoning_summary" as const), delta: fc.string({ maxLength: 4 }), provenance: fc.constantFrom("anthropic.thinking" as const, "openai.reasoning_summary" as const) }),
  fc.record({ type: fc.constant("reasoning_raw" as const), delta: fc.string({ maxLength: 4 }), source: fc.constant("anthropic.thinking" as const) }),
  fc.record({ type: fc.constant("tool_start" as const), key: fc.constantFrom("0", "1"), id: fc.constantFrom("a", "b"), name: fc.constant("read_file") }),
  fc.record({ type: fc.constant("reasoning_opaque" as const), source: fc.constant("anthropic.signature" as const), itemId: fc.constant(null), data: fc.string({ maxLength: 4 }) }),
  fc.constant({ type: "finish" as const, reason: "stop" as const, raw: null }),
);

describe("RetainedEvents", () => {
  it("joining consecutive deltas changes nothing the run folds", () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
        const retained = new RetainedEvents(new ContentBudget());
        for (const event of events) assert.ok(retained.keep(event));
        assert.ok(retained.events.length <= events.length);
        assert.deepEqual(accumulate(retained.events), accumulate(events));
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it("takes bytes up to exactly the run's budget and refuses the next one", () => {
    const retained = new RetainedEvents(new ContentBudget());
    const big = "x".repeat(LIMITS.run_content_bytes - 1);
    assert.ok(retained.keep({ type: "tool_delta", key: "0", delta: big }));
    assert.ok(retained.keep({ type: "tool_delta", key: "0", delta: "y" }), "the last byte of the budget");
    assert.equal(retained.keep({ type: "reasoning_raw", delta: "z", source: "chat.reasoning" }), false);
  });

  it(`retains exactly ${RUN_PROVIDER_EVENTS} events, a delta joining the last one in no new slot, and refuses the next, even an empty one`, () => {
    const retained = new RetainedEvents(new ContentBudget());
    for (let i = 0; i < RUN_PROVIDER_EVENTS - 1; i++) assert.ok(retained.keep({ type: "finish", reason: "stop", raw: null }));
    assert.ok(retained.keep({ type: "tool_delta", key: "0", delta: "a" }), "the last slot");
    assert.ok(retained.keep({ type: "tool_delta", key: "0", delta: "b" }), "joins the last event");
    assert.equal(retained.events.length, RUN_PROVIDER_EVENTS);
    assert.deepEqual(retained.events.at(-1), { type: "tool_delta", key: "0", delta: "ab" });
    assert.equal(retained.keep({ type: "tool_delta", key: "1", delta: "c" }), false, "another call's delta needs a slot");
    assert.equal(retained.keep({ type: "finish", reason: "stop", raw: null }), false);
    assert.equal(retained.events.length, RUN_PROVIDER_EVENTS);
  });
});
