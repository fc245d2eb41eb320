/**
 * A fast-check model of compaction over turn sizes, windows, thresholds and
 * tokenizers. The scripted provider plays the model: it counts a request's
 * true tokens as its JSON bytes over a tokenizer ratio of 2 to 4 bytes a
 * token (the runner estimates 4), refuses a request over the window with
 * OpenAI's real `context_length_exceeded` answer, and summarises by listing
 * the markers (`P<turn>` prompts, `A<turn>.<step>` answers) its transcript
 * holds. Checked:
 *
 * - every turn completes: what the estimate misses, the reactive path catches;
 * - a request the run let through without compacting holds at most the
 *   threshold plus the estimate's error on what the last step added (the
 *   runner's documented guarantee): its previous count plus that step's
 *   additions at 4 bytes a token stayed under the threshold;
 * - the replay a next turn sends holds every prompt and answer exactly once:
 *   verbatim, or in the summary that replaced it, never both, never neither.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { SUMMARY_HEADING } from "../src/runner/replay.ts";
import type { Script } from "./support/fake-provider.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { reply } from "./support/provider-scripts.ts";
import { startWindowServer, turn } from "./support/compaction.ts";
import { CWD, stopTurnServer, terminalData } from "./support/turns.ts";

const API = "openai-chat";
const OVERFLOW = { status: 400, body: { error: { message: "This model's maximum context length is exceeded.", type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } } };
const MARKER = /\b[PA]\d+(?:\.\d+)?\b/g;
/** What the comparison of counts may be off by: the per-message overhead the estimate assumes against the body's own JSON. */
const SLACK_TOKENS = 64;

type Message = { role: string; content?: unknown };
type Body = { messages: Message[]; tools?: unknown[] };

/** One sent request as the model saw it. */
interface Seen {
  readonly kind: "step" | "summary" | "refused";
  /** The run it belongs to (one per turn). */
  readonly turn: number;
  readonly tokens: number;
}

const scenario = fc.record({
  window: fc.integer({ min: 6_000, max: 16_000 }),
  threshold: fc.integer({ min: 50, max: 95 }).map((percent) => percent / 100),
  ratio: fc.constantFrom(2, 3, 4),
  // Per turn and step: the size of the file the step reads and of its answer, as fractions of the window's
  // bytes (a step reads at most a quarter of the window, answers at most a tenth); the last step reads nothing.
  turns: fc.array(
    fc.array(fc.record({ read: fc.integer({ min: 0, max: 25 }).map((percent) => percent / 100), answer: fc.integer({ min: 0, max: 10 }).map((percent) => percent / 100) }), { minLength: 1, maxLength: 6 }),
    { minLength: 2, maxLength: 6 },
  ),
});

describe("compaction model", () => {
  it("over turn sizes, windows, thresholds and tokenizers: turns complete, requests stay within the threshold plus the estimate's error, and the replay holds every record once", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ window, threshold, ratio, turns }) => {
        const fs = new MemoryFileSystem();
        const server = await startWindowServer(API, window, { compaction: { threshold } }, { fs });
        const seen: Seen[] = [];
        const produced: string[] = [];
        let current = 0;
        let step = 0;
        const tokensOf = (body: Body) => Math.ceil(new TextEncoder().encode(JSON.stringify({ messages: body.messages, tools: body.tools ?? [] })).length / ratio);
        server.provider.handler = (request): Script => {
          const body = request.body as Body;
          const tokens = tokensOf(body);
          const last = String(body.messages.findLast((message) => message.role === "user")?.content ?? "");
          if (tokens > window) {
            seen.push({ kind: "refused", turn: current, tokens });
            return OVERFLOW;
          }
          if (last.startsWith("Summarise this conversation")) {
            seen.push({ kind: "summary", turn: current, tokens });
            return reply(API, { text: [`SUMMARY ${[...new Set(last.match(MARKER) ?? [])].sort().join(" ")}`], inputTokens: tokens });
          }
          seen.push({ kind: "step", turn: current, tokens });
          const plan = turns[current] ?? [];
          const marker = `A${current}.${step}`;
          produced.push(marker);
          const call = step < plan.length - 1 ? [{ id: `call_${current}_${step}`, name: "read_file", args: { path: `f${current}_${step}.txt` } }] : [];
          const filler = "dolor sit amet ".repeat(Math.floor(((plan[step]?.answer ?? 0) * window * ratio) / 15));
          step++;
          return reply(API, { text: [`${marker} `, filler], calls: call, inputTokens: tokens });
        };
        try {
          let sessionId: string | undefined;
          for (const [index, sizes] of turns.entries()) {
            sizes.forEach((size, at) => fs.writeFile(`${CWD}/f${index}_${at}.txt`, "lorem ipsum ".repeat(Math.floor((size.read * window * ratio) / 12))));
            [current, step] = [index, 0];
            produced.push(`P${index}`);
            const done = await turn(server, `P${index} go on`, sessionId);
            sessionId = done.sessionId;
            assert.deepEqual([terminalData(done.events).outcome, terminalData(done.events).error_code], ["completed", null], JSON.stringify(seen));
          }

          // Within a run, two step requests with no compaction between them: the run let the second through
          // because the first's count plus the step's additions (at 4 bytes a token) stayed under the threshold.
          for (let index = 1; index < seen.length; index++) {
            const [before, after] = [seen[index - 1]!, seen[index]!];
            if (before.kind !== "step" || after.kind !== "step" || before.turn !== after.turn) continue;
            const estimated = before.tokens + ((after.tokens - before.tokens) * ratio) / 4;
            assert.ok(estimated < threshold * window + SLACK_TOKENS, `request ${index}: ${JSON.stringify({ before, after, estimated, limit: threshold * window })}`);
          }

          // A probe turn: its request is the replay of the stored records.
          [current, step] = [turns.length, 0];
          const probeAt = server.provider.log.length;
          await turn(server, `P${turns.length} probe`, sessionId);
          const probe = (server.provider.log.slice(probeAt).find((request) => JSON.stringify(request.body).includes("probe"))!.body as Body).messages;
          const summaryText = probe.find((message) => message.role === "user" && String(message.content).startsWith(SUMMARY_HEADING));
          const summarised = new Set(String(summaryText?.content ?? "").match(MARKER) ?? []);
          // The probe's own prompt and answers are not replayed records.
          const earlier = (marker: string) => marker !== `P${turns.length}` && !marker.startsWith(`A${turns.length}.`);
          const verbatim = probe.filter((message) => message !== summaryText && message.role !== "system")
            .flatMap((message) => String(message.content ?? "").match(MARKER) ?? []).filter(earlier);
          const all = produced.filter(earlier);
          assert.equal(new Set(verbatim).size, verbatim.length, `replayed twice: ${verbatim}`);
          for (const marker of all) {
            assert.ok(summarised.has(marker) !== verbatim.includes(marker), `${marker}: summarised ${summarised.has(marker)}, verbatim ${verbatim.includes(marker)}`);
          }
        } finally {
          await stopTurnServer(server);
        }
      }),
      { numRuns: fuzzRuns(20, 10) },
    );
  });
});
