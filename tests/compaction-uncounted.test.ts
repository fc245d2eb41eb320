/**
 * Compaction with a provider that reports no usage (an OpenAI-compatible
 * server that ignores `stream_options.include_usage`): with no count, the
 * fill is the whole request estimated from its bytes, and a compaction
 * still re-arms once the request after it was answered, so a long turn
 * compacts again before it outgrows the window, not only once per run
 * (docs/features/runner.md, "When it compacts").
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SUMMARY_PROMPT } from "../src/runner/summary-request.ts";
import type { Script } from "./support/fake-provider.ts";
import { frameEvent } from "./support/provider-fixtures.ts";
import { compactionStates, sentText, startWindowServer, turn } from "./support/compaction.ts";
import { CWD, stopTurnServer, terminalData } from "./support/turns.ts";

/** A Chat Completions stream of `delta`s that ends without any usage chunk. */
function uncounted(deltas: readonly Record<string, unknown>[], finish: string): Script {
  const chunk = (delta: Record<string, unknown>, reason: string | null = null) =>
    frameEvent("openai-chat", { id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: reason }] });
  return { chunks: [...deltas.map((delta) => chunk(delta)), chunk({}, finish), "data: [DONE]\n\n"] };
}

const text = (value: string) => uncounted([{ content: value }], "stop");
const readCall = (id: string, path: string) =>
  uncounted([{ tool_calls: [{ index: 0, id, type: "function", function: { name: "read_file", arguments: JSON.stringify({ path }) } }] }], "tool_calls");
const isSummaryRequest = (body: string) => body.includes(JSON.stringify(SUMMARY_PROMPT).slice(1, 40));

describe("compaction with a provider that reports no usage (window 8,000 tokens)", () => {
  it("a turn that outgrows the threshold again after a compaction compacts again before its next request", async () => {
    const server = await startWindowServer("openai-chat");
    try {
      // Each file is about 7,800 tokens at 4 bytes a token: one alone crosses the threshold (6,400).
      server.runtime.fs.writeFile(`${CWD}/a.txt`, `FILE-A ${"the quick brown fox jumps ".repeat(1_200)}\n`);
      server.runtime.fs.writeFile(`${CWD}/b.txt`, `FILE-B ${"the lazy dog sleeps on it ".repeat(1_200)}\n`);
      server.provider.enqueue(text("FIRST-ANSWER"));
      const { sessionId } = await turn(server, "FIRST-PROMPT");
      server.provider.enqueue(readCall("call_1", "a.txt"));
      server.provider.enqueue(text("SUMMARY-ONE"));
      server.provider.enqueue(readCall("call_2", "b.txt"));
      server.provider.enqueue(text("SUMMARY-TWO"));
      server.provider.enqueue(text("SECOND-ANSWER"));
      const second = await turn(server, "SECOND-PROMPT", sessionId);
      assert.deepEqual([terminalData(second.events).outcome, terminalData(second.events).error_code], ["completed", null]);
      const requests = server.provider.log.slice(1).map((_, index) => sentText(server, index + 1));
      assert.deepEqual(requests.map(isSummaryRequest), [false, true, false, true, false]);
      assert.deepEqual(compactionStates(second.events).map(([state]) => state), ["started", "completed", "started", "completed"]);
      const last = requests.at(-1)!;
      assert.ok(last.includes("SUMMARY-TWO") && last.includes("FILE-B") && !last.includes("FILE-A"), last.slice(0, 500));
    } finally {
      await stopTurnServer(server);
    }
  });
});
