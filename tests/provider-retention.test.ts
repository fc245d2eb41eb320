/**
 * What a provider decoder keeps across events: for each tool call it
 * started, the call's key, id and name, charged to the run's budget through
 * the events that carry them; nothing for items, blocks and deltas no later
 * event needs. So an endpoint sending many items with huge ids either spends
 * the budget (the run fails `content_limit`) or makes the child keep nothing.
 * Retained bytes are read through the budget, a deterministic proxy for the
 * memory the run holds, and what the decoder itself keeps through its
 * `held()`, after every event: never more than its `tool_start` events
 * carried (so the budget covers it), nothing for anything else. Through whole
 * turns (memory runtime, loopback provider) and through the decoder and the
 * step's retained-event list.
 */

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { ProviderApi } from "../src/config/settings.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import type { ProviderEvent, StreamDecoder } from "../src/runner/providers/events.ts";
import { decodeBody, decoderFor } from "../src/runner/providers/stream.ts";
import { RetainedEvents } from "../src/runner/retained-events.ts";
import { ContentBudget } from "../src/runner/segment.ts";
import { utf8ByteCount } from "../src/util/utf8.ts";
import { type FakeProvider, startFakeProvider } from "./support/fake-provider.ts";
import { apiPath, frameEvent } from "./support/provider-fixtures.ts";
import { runtimeFetch } from "./support/runtime-fetch.ts";
import { reconciled, runEvents, startTurn, startTurnServer, stopTurnServer, terminalData } from "./support/turns.ts";

const BIG = 512 * 1024;
/** Enough {@link BIG} strings to pass the run's byte budget. */
const OVER = Math.floor(LIMITS.run_content_bytes / BIG) + 1;

/** A distinct ASCII id of {@link BIG} bytes. */
const bigId = (n: number) => `${"i".repeat(BIG - 8)}${String(n).padStart(8, "0")}`;

const responses = (event: Record<string, unknown>) => frameEvent("openai-responses", event);
const anthropic = (event: Record<string, unknown>) => frameEvent("anthropic-messages", event);
const chat = (delta: Record<string, unknown>, finish: string | null = null) =>
  frameEvent("openai-chat", { id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] });

const RESPONSES_COMPLETED = responses({ type: "response.completed", response: { status: "completed", usage: { input_tokens: 1, output_tokens: 1 } } });
const ANTHROPIC_START = anthropic({ type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], usage: { input_tokens: 1, output_tokens: 1 } } });
/** {@link OVER} server tool blocks (indices 0 to OVER - 1), each with a 512 KiB id and a 512 KiB input. */
const SERVER_TOOL_BLOCKS = Array.from({ length: OVER }, (_, i) => [
  anthropic({ type: "content_block_start", index: i, content_block: { type: "server_tool_use", id: bigId(i), name: "web_search", input: {} } }),
  anthropic({ type: "content_block_delta", index: i, delta: { type: "input_json_delta", partial_json: bigId(i) } }),
  anthropic({ type: "content_block_stop", index: i }),
]).flat();
const ANTHROPIC_END = [
  anthropic({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 1 } }),
  anthropic({ type: "message_stop" }),
];

/** Runs one turn against `chunks`; returns its events and how many requests the provider saw. */
async function turn(api: ProviderApi, chunks: string[]) {
  const server = await startTurnServer(api);
  server.provider.enqueue({ chunks });
  const { runId } = await startTurn(server, "go");
  const events = await runEvents(server, runId);
  const requests = server.provider.log.length;
  assert.equal(await stopTurnServer(server), 0);
  return { events, requests };
}

describe("what a decoder keeps is charged to the run's budget, through a turn", () => {
  it(`openai-responses: ${OVER} function_call items with 512 KiB item ids fail content_limit and no call runs`, async () => {
    const chunks = [
      ...Array.from({ length: OVER }, (_, i) =>
        responses({
          type: "response.output_item.added",
          output_index: i,
          item: { type: "function_call", id: bigId(i), call_id: `call_${i}`, name: "read_file", arguments: "", status: "in_progress" },
        })),
      RESPONSES_COMPLETED,
    ];
    const { events, requests } = await turn("openai-responses", chunks);
    const finished = terminalData(events);
    assert.deepEqual([finished.outcome, finished.error_code], ["failed", "content_limit"]);
    assert.equal(events.filter((frame) => frame.event === "activity").length, 0);
    assert.equal(requests, 1, "no second request");
  });

  it(`openai-chat: tool call ids and names that arrive after a call's first chunk are charged when they arrive`, async () => {
    // The body ends without a finish reason: nothing would charge the late ids and names later.
    const chunks = Array.from({ length: OVER }, (_, i) => [
      chat({ tool_calls: [{ index: i, type: "function", ...(i % 2 === 0 ? { function: { name: "read_file", arguments: "" } } : { id: `call_${i}` }) }] }),
      chat({ tool_calls: [{ index: i, ...(i % 2 === 0 ? { id: bigId(i) } : { function: { name: bigId(i) } }) }] }),
    ]).flat();
    const { events } = await turn("openai-chat", chunks);
    const finished = terminalData(events);
    assert.deepEqual([finished.outcome, finished.error_code], ["failed", "content_limit"]);
  });

  it(`anthropic-messages: ${OVER} server_tool_use blocks with 512 KiB ids and inputs are not kept, so the run completes`, async () => {
    const chunks = [
      ANTHROPIC_START,
      ...SERVER_TOOL_BLOCKS,
      anthropic({ type: "content_block_start", index: OVER, content_block: { type: "text", text: "" } }),
      anthropic({ type: "content_block_delta", index: OVER, delta: { type: "text_delta", text: "Searched." } }),
      anthropic({ type: "content_block_stop", index: OVER }),
      ...ANTHROPIC_END,
    ];
    const { events } = await turn("anthropic-messages", chunks);
    const finished = terminalData(events);
    assert.deepEqual([finished.outcome, finished.error_code], ["completed", null]);
    assert.deepEqual([...reconciled(events).values()], [{ text: "Searched.", partial: false }]);
  });
});

let provider: FakeProvider;

/**
 * A real decoder asked what it {@link StreamDecoder.held | holds} after every
 * SSE event, beside what its `tool_start` events carried so far: exactly
 * what the run charges a call's start for.
 */
class HeldWatch implements StreamDecoder {
  readonly #decoder: StreamDecoder;
  #started = 0;
  /** The most the decoder held after any event. */
  peak = 0;
  /** The most it held beyond its `tool_start` bytes at that moment; the memory rule keeps this 0. */
  uncharged = 0;

  constructor(decoder: StreamDecoder) {
    this.#decoder = decoder;
  }

  onEvent(event: { readonly event: string; readonly data: string }): ProviderEvent[] {
    return this.#watch(this.#decoder.onEvent(event));
  }

  end(): ProviderEvent[] {
    return this.#watch(this.#decoder.end());
  }

  held(): number {
    return this.#decoder.held();
  }

  #watch(events: ProviderEvent[]): ProviderEvent[] {
    for (const event of events) {
      if (event.type === "tool_start") this.#started += utf8ByteCount(event.key) + utf8ByteCount(event.id ?? "") + utf8ByteCount(event.name ?? "");
    }
    const held = this.#decoder.held();
    this.peak = Math.max(this.peak, held);
    this.uncharged = Math.max(this.uncharged, held - this.#started);
    return events;
  }
}

/**
 * Streams `chunks` from the loopback provider through the decoder into the
 * step's retained-event list, stopping where the step would: the events kept,
 * the run budget they were charged to and what the decoder held.
 */
async function retain(
  api: ProviderApi,
  chunks: string[],
): Promise<{ kept: readonly ProviderEvent[]; budget: ContentBudget; refused: boolean; watch: HeldWatch }> {
  provider.enqueue({ chunks });
  const response = await runtimeFetch(`${provider.url}${apiPath(api)}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
    signal: new AbortController().signal,
    redirect: "error",
  });
  assert.ok(response.body);
  const budget = new ContentBudget();
  const retained = new RetainedEvents(budget);
  const watch = new HeldWatch(decoderFor(api, "m"));
  for await (const event of decodeBody(watch, response.body)) {
    // Text lives in the segment, never in the retained list.
    if (event.type === "text" || event.type === "refusal") continue;
    if (!retained.keep(event)) return { kept: retained.events, budget, refused: true, watch };
  }
  return { kept: retained.events, budget, refused: false, watch };
}

/** Asserts the decoder never held more than its `tool_start` events carried, and at most `peak` bytes. */
function assertHeld(watch: HeldWatch, peak: number): void {
  assert.equal(watch.uncharged, 0, "held beyond what tool_start events carried");
  assert.equal(watch.peak, peak, "the most the decoder held");
}

/** Asserts that exactly `bytes` of the run's budget are spent: the rest can be taken, one more byte cannot. */
function assertSpent(budget: ContentBudget, bytes: number): void {
  assert.ok(budget.takeBytes(LIMITS.run_content_bytes - bytes), `at most ${bytes} bytes spent`);
  assert.equal(budget.takeBytes(1), false, `at least ${bytes} bytes spent`);
}

/** The types of `events` (never their payloads, which may be megabytes). */
const types = (events: readonly ProviderEvent[]) => events.map((event) => event.type);

describe("what a decoder keeps, read through the run's budget", () => {
  before(async () => {
    provider = await startFakeProvider();
  });
  after(async () => {
    await provider.close();
  });

  it("openai-responses: a function call charges its item id with its call id, name and arguments", async () => {
    const itemId = bigId(0);
    const args = '{"path":"a.txt"}';
    const { kept, budget, refused, watch } = await retain("openai-responses", [
      responses({ type: "response.output_item.added", output_index: 0, item: { type: "function_call", id: itemId, call_id: "call_1", name: "read_file", arguments: "" } }),
      responses({ type: "response.function_call_arguments.delta", item_id: itemId, output_index: 0, delta: args }),
      responses({ type: "response.output_item.done", output_index: 0, item: { type: "function_call", id: itemId, call_id: "call_1", name: "read_file", arguments: args } }),
      RESPONSES_COMPLETED,
    ]);
    assert.equal(refused, false);
    assert.deepEqual(types(kept), ["tool_start", "tool_delta", "tool_end", "usage", "finish"]);
    // tool_start: item id (the call's key), call id, name; the arguments; tool_end: call id, name.
    assertSpent(budget, itemId.length + 2 * ("call_1".length + "read_file".length) + args.length);
    // The call stays known until the stream ends: a late delta or done may still name it.
    assertHeld(watch, itemId.length + "call_1".length + "read_file".length);
    assert.equal(watch.held(), watch.peak);
  });

  it("openai-responses: message, reasoning and web search items and deltas of calls never started keep and charge nothing", async () => {
    const chunks = [
      ...Array.from({ length: OVER }, (_, i) => {
        const item = { type: ["message", "reasoning", "web_search_call"][i % 3], id: bigId(i), status: "in_progress" };
        return [
          responses({ type: "response.output_item.added", output_index: i, item }),
          // Two alternating unknown items: no two deltas could ever be joined.
          responses({ type: "response.function_call_arguments.delta", item_id: bigId(i), output_index: i, delta: "x" }),
          responses({ type: "response.output_item.done", output_index: i, item: { ...item, status: "completed" } }),
        ];
      }).flat(),
      responses({ type: "response.output_text.delta", item_id: "msg", output_index: OVER, delta: "Done." }),
      RESPONSES_COMPLETED,
    ];
    const { kept, budget, refused, watch } = await retain("openai-responses", chunks);
    assert.equal(refused, false);
    assert.deepEqual(types(kept), ["usage", "finish"]);
    assertSpent(budget, 0);
    assertHeld(watch, 0);
  });

  it("anthropic-messages: a tool_use block charges its id and name; server_tool_use blocks and their input keep and charge nothing", async () => {
    const toolId = bigId(1);
    const { kept, budget, refused, watch } = await retain("anthropic-messages", [
      ANTHROPIC_START,
      ...SERVER_TOOL_BLOCKS,
      anthropic({ type: "content_block_start", index: OVER, content_block: { type: "tool_use", id: toolId, name: "read_file", input: {} } }),
      anthropic({ type: "content_block_delta", index: OVER, delta: { type: "input_json_delta", partial_json: "{}" } }),
      anthropic({ type: "content_block_stop", index: OVER }),
      ...ANTHROPIC_END,
    ]);
    assert.equal(refused, false);
    assert.deepEqual(types(kept), ["tool_start", "tool_delta", "tool_end", "usage", "finish"]);
    const key = String(OVER);
    assertSpent(budget, key.length + 2 * (toolId.length + "read_file".length) + "{}".length);
    // The index key is a number, not a kept string; the block is forgotten at its stop.
    assertHeld(watch, toolId.length + "read_file".length);
    assert.equal(watch.held(), 0);
  });

  it("openai-chat: an id sent after the call's first chunk is charged as it arrives", async () => {
    const late = bigId(2);
    const { budget, refused, kept, watch } = await retain("openai-chat", [
      chat({ tool_calls: [{ index: 0, type: "function", function: { name: "read_file", arguments: "" } }] }),
      chat({ tool_calls: [{ index: 0, id: late, function: { arguments: "{}" } }] }),
    ]);
    // The body ended without a finish reason: the stream is truncated, and no tool_end came.
    assert.equal(refused, false);
    assert.deepEqual(types(kept), ["tool_start", "tool_start", "tool_delta", "error"]);
    assertSpent(budget, "0".length + "read_file".length + "0".length + late.length + "{}".length);
    assertHeld(watch, "read_file".length + late.length);
  });
});
