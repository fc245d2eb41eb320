/**
 * Redaction over whole turns: a configured provider key (the
 * OPENAI_API_KEY/ANTHROPIC_API_KEY values the test environment sets), a
 * credentials-file value, a `Bearer <token>` or an unknown `sk-…` key,
 * planted where a turn could carry it out:
 *
 * - (a) model output: assistant text split into SSE deltas at random
 *   offsets, and a provider reasoning summary;
 * - (b) tool output: a file the model reads (`read_file`) and searches
 *   (`grep`), and tool arguments (a file name, a search pattern);
 * - (c) provider errors: an HTTP 401/500 body and a mid-stream SSE error
 *   event carrying the secret in their message.
 *
 * The secret never appears in any stdout frame (all frames serialized), in
 * the history projection (`history.page` at the terminal revision), nor in
 * the stored session file; nor in what the next model request is sent as
 * the tool's result. The stored file holds the redacted assistant text
 * (docs/storage.md: "assistant text, summaries and reasoning summaries are
 * stored redacted").
 *
 * The user's own prompt is different, and this pins what the code does: it
 * is stored **as typed** (docs/storage.md: "The user's prompt is stored as
 * typed"), so the session file keeps a secret the user pasted, while the
 * history projection redacts it (src/store/projection.ts redacts every
 * entry, user entries included) and no frame echoes it.
 *
 * @module
 */

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { ProviderApi } from "../src/config/settings.ts";
import { REDACTION_MARKER } from "../src/util/redaction.ts";
import { type FakeProvider, type Script, startFakeProvider } from "./support/fake-provider.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { errorScript, frameEvent } from "./support/provider-fixtures.ts";
import { reply } from "./support/provider-scripts.ts";
import { CWD, HOME, reconciled, request, runEvents, startTurn, startTurnServer, type TurnServer } from "./support/turns.ts";

const APIS: readonly ProviderApi[] = ["openai-chat", "openai-responses", "anthropic-messages"];
/** The values `startTurnServer` puts in the environment. */
const OPENAI_KEY = "sk-test-openai-0123456789abcdef";
const ANTHROPIC_KEY = "sk-ant-test-0123456789abcdef";
/** A credentials-file value no pattern recognises: only its being configured gets it redacted. */
const CREDENTIAL = "horse.battery.staple.credential";

/** What is planted (`text`) and what must never come out (`hidden`). */
interface Secret {
  readonly kind: string;
  readonly text: string;
  readonly hidden: string;
}

const secretArb: fc.Arbitrary<Secret> = fc.oneof(
  fc.constant({ kind: "openai key", text: OPENAI_KEY, hidden: OPENAI_KEY }),
  fc.constant({ kind: "anthropic key", text: ANTHROPIC_KEY, hidden: ANTHROPIC_KEY }),
  fc.constant({ kind: "credentials file", text: CREDENTIAL, hidden: CREDENTIAL }),
  fc.stringMatching(/^[A-Za-z0-9._~+/=-]{16,32}$/).map((token) => ({ kind: "bearer", text: `Bearer ${token}`, hidden: token })),
  fc.stringMatching(/^[A-Za-z0-9_-]{20,40}$/).map((body) => ({ kind: "sk key", text: `sk-${body}`, hidden: `sk-${body}` })),
);

const words = fc.array(fc.stringMatching(/^[a-z]{1,9}$/), { maxLength: 12 }).map((list) => list.join(" "));

type Placement = "text" | "summary" | "file" | "argument" | "http error" | "stream error";
const PLACEMENTS: readonly Placement[] = ["text", "summary", "file", "argument", "http error", "stream error"];

interface Case {
  readonly secret: Secret;
  readonly placement: Placement;
  readonly before: string;
  readonly after: string;
  /** Offsets that cut the assistant text into deltas. */
  readonly cuts: readonly number[];
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  secret: secretArb,
  placement: fc.constantFrom(...PLACEMENTS),
  before: words,
  after: words,
  cuts: fc.array(fc.nat(), { maxLength: 10 }),
});

function cut(text: string, offsets: readonly number[]): string[] {
  const points = [...new Set(offsets.map((offset) => offset % (text.length + 1)))].sort((a, b) => a - b);
  const deltas: string[] = [];
  let previous = 0;
  for (const point of points) {
    if (point > previous) deltas.push(text.slice(previous, point));
    previous = point;
  }
  if (previous < text.length) deltas.push(text.slice(previous));
  return deltas;
}

/** A mid-stream provider error event in `api`'s own shape, its message carrying `message`. */
function streamErrorEvent(api: ProviderApi, message: string): Record<string, unknown> {
  if (api === "anthropic-messages") return { type: "error", error: { type: "overloaded_error", message } };
  if (api === "openai-responses") return { type: "error", code: "server_error", message };
  return { id: "chatcmpl-1", object: "chat.completion.chunk", choices: [], error: { code: 500, message } };
}

/** The scripts of one case's provider requests, in order. */
function scripts(api: ProviderApi, c: Case): Script[] {
  const sentence = `${c.before} ${c.secret.text} ${c.after}`;
  switch (c.placement) {
    case "text":
      return [reply(api, { text: cut(sentence, c.cuts) })];
    case "summary":
      // Chat has no provider summaries; the text carries it there too.
      return [reply(api, { summary: sentence, text: api === "openai-chat" ? cut(sentence, c.cuts) : ["Summarised."] })];
    case "file":
      return [
        reply(api, {
          text: ["Let me look."],
          calls: [
            { id: "call_r", name: "read_file", args: { path: "config.txt" } },
            { id: "call_g", name: "grep", args: { pattern: "api_key", path: "." } },
          ],
        }),
        reply(api, { text: ["Done."] }),
      ];
    case "argument":
      return [
        reply(api, {
          text: ["Let me look."],
          calls: [
            { id: "call_r", name: "read_file", args: { path: `notes ${c.secret.text}.txt` } },
            { id: "call_g", name: "grep", args: { pattern: c.secret.text, literal: true } },
          ],
        }),
        reply(api, { text: ["Done."] }),
      ];
    case "http error":
      return [errorScript(api, c.cuts.length % 2 === 0 ? 401 : 500, `Incorrect API key provided: ${sentence}`)];
    case "stream error": {
      const partial = reply(api, { text: cut(`${c.before} partial answer `, c.cuts), truncate: true });
      return [{ chunks: [...(partial as { chunks: string[] }).chunks, frameEvent(api, streamErrorEvent(api, sentence))] }];
    }
  }
}

/** Every page of the history at `revision`, serialized. */
async function historyText(server: TurnServer, sessionId: string, revision: string, label: string): Promise<{ text: string; entries: { kind: string; text: string }[] }> {
  const entries: { kind: string; text: string }[] = [];
  let cursor: string | null = null;
  let texts = "";
  for (let page = 0;; page++) {
    const response = await request(server, `${label}-page-${page}`, "history.page", { session_id: sessionId, revision, cursor });
    assert.ok(response.result, `history.page: ${JSON.stringify(response.error)}`);
    const result = response.result as { entries: { kind: string; text: string }[]; next_cursor: string | null };
    texts += JSON.stringify(result);
    entries.push(...result.entries);
    cursor = result.next_cursor;
    if (cursor === null) return { text: texts, entries };
  }
}

/** A server whose configuration knows all three secret sources. */
async function serverFor(api: ProviderApi, provider: FakeProvider): Promise<TurnServer> {
  const fs = new MemoryFileSystem();
  fs.writeFile(`${HOME}/credentials.json`, JSON.stringify({ v: 1, keys: { spare: CREDENTIAL } }), 0o600);
  return await startTurnServer(api, { provider, fs });
}

let serial = 0;

/** Runs one case and checks every place the secret could reach. */
async function check(provider: FakeProvider, api: ProviderApi, c: Case): Promise<void> {
  const queue = scripts(api, c);
  const seen = provider.log.length;
  provider.handler = () => queue.shift() ?? errorScript(api, 500, "no script");
  const server = await serverFor(api, provider);
  try {
    await plantAndCheck(server, provider, api, c, seen);
  } finally {
    server.runtime.input.end();
  }
  assert.equal(await server.exit, 0);
}

async function plantAndCheck(server: TurnServer, provider: FakeProvider, api: ProviderApi, c: Case, seen: number): Promise<void> {
  server.runtime.fs.writeFile(`${CWD}/config.txt`, `name: demo\napi_key: ${c.secret.text}\nregion: eu\n`);
  const { sessionId, runId } = await startTurn(server, "Please check the configuration");
  const events = await runEvents(server, runId);
  const finished = events.at(-1)!.data as { outcome: string; revision: string | null };
  const failing = c.placement === "http error" || c.placement === "stream error";
  assert.equal(finished.outcome, failing ? "failed" : "completed", JSON.stringify(finished));

  const leak = (where: string, text: string) =>
    assert.ok(!text.includes(c.secret.hidden), `${c.secret.kind} in ${c.placement} leaked into ${where}`);

  // Everything on stdout, and what a client assembles from it: a secret split across two delta frames is in neither.
  leak("stdout", server.runtime.output.text());
  const deltas = new Map<string, string>();
  for (const frame of events.filter((event) => event.event === "message.delta")) {
    const data = frame.data as { message_id: string; text: string };
    deltas.set(data.message_id, (deltas.get(data.message_id) ?? "") + data.text);
  }
  for (const text of deltas.values()) leak("the concatenated deltas", text);
  // The history projection.
  assert.ok(finished.revision !== null);
  const history = await historyText(server, sessionId, finished.revision, `h${++serial}`);
  leak("history", history.text);
  // The stored session file.
  const stored = new TextDecoder().decode(server.runtime.fs.contents(`${HOME}/sessions/${sessionId}.jsonl`));
  leak("the session file", stored);
  // What the model gets back as the tool result (the file placement keeps the secret out of the call itself).
  if (c.placement === "file") for (const logged of provider.log.slice(seen + 1)) leak("the tool result sent to the model", JSON.stringify(logged.body));

  // The redaction really happened where the secret was planted (the case exercised what it claims).
  const records = stored.trim().split("\n").map((line) => JSON.parse(line) as { type: string; text?: string; summary?: string });
  if (c.placement === "text" || (c.placement === "summary" && api === "openai-chat")) {
    const shown = [...reconciled(events).values()].map((entry) => entry.text).join("");
    assert.ok(shown.includes(REDACTION_MARKER), `reconciled: ${shown}`);
    assert.ok(records.some((record) => record.type === "assistant_message" && record.text!.includes(REDACTION_MARKER)), "stored redacted");
    assert.ok(history.entries.some((entry) => entry.kind === "assistant" && entry.text.includes(REDACTION_MARKER)));
  }
  if (c.placement === "summary" && api !== "openai-chat") {
    assert.ok(records.some((record) => record.type === "reasoning_summary" && record.text!.includes(REDACTION_MARKER)), "summary stored redacted");
  }
  if (c.placement === "file") {
    assert.equal(provider.log.length, seen + 2, "the tool results went back to the model");
    assert.ok(JSON.stringify(provider.log[seen + 1]!.body).includes(REDACTION_MARKER), "the model saw the redacted file");
  }
  if (c.placement === "argument") {
    const summaries = events.filter((frame) => frame.event === "activity").map((frame) => (frame.data as { summary: string }).summary);
    assert.ok(summaries.some((summary) => summary.includes(REDACTION_MARKER)), JSON.stringify(summaries));
  }
  if (failing) assert.ok(events.some((frame) => frame.event === "diagnostic"));
}

describe("turn redaction", () => {
  let provider: FakeProvider;
  before(async () => {
    provider = await startFakeProvider();
  });
  after(async () => {
    await provider.close();
  });

  for (const api of APIS) {
    it(`over ${api}: a planted secret never reaches stdout, history or the session file`, async () => {
      // Every placement with every secret source once, then generated cases.
      const examples: [Case][] = [];
      const fixed: Secret[] = [
        { kind: "openai key", text: OPENAI_KEY, hidden: OPENAI_KEY },
        { kind: "anthropic key", text: ANTHROPIC_KEY, hidden: ANTHROPIC_KEY },
        { kind: "credentials file", text: CREDENTIAL, hidden: CREDENTIAL },
        { kind: "bearer", text: "Bearer opaque.session.token-42", hidden: "opaque.session.token-42" },
      ];
      for (const placement of PLACEMENTS) {
        for (const secret of fixed) examples.push([{ secret, placement, before: "here is the value", after: "keep it safe", cuts: [3, 17, 20, 31, 40] }]);
      }
      await fc.assert(
        fc.asyncProperty(caseArb, (c) => check(provider, api, c)),
        { numRuns: examples.length + fuzzRuns(12, 20), examples },
      );
    });
  }

  it("a secret in the user's prompt: stored as typed, redacted in history, never on stdout", async () => {
    provider.handler = null;
    const server = await serverFor("openai-responses", provider);
    provider.enqueue(reply("openai-responses", { text: ["Noted."] }));
    const prompt = `My key is ${OPENAI_KEY} and my token is Bearer opaque.session.token-42, the spare is ${CREDENTIAL}`;
    const { sessionId, runId } = await startTurn(server, prompt);
    const events = await runEvents(server, runId);
    const finished = events.at(-1)!.data as { outcome: string; revision: string };
    assert.equal(finished.outcome, "completed");
    const hidden = [OPENAI_KEY, "opaque.session.token-42", CREDENTIAL];

    for (const value of hidden) assert.ok(!server.runtime.output.text().includes(value), `stdout holds ${value}`);
    const history = await historyText(server, sessionId, finished.revision, "prompt");
    for (const value of hidden) assert.ok(!history.text.includes(value), `history holds ${value}`);
    const user = history.entries.find((entry) => entry.kind === "user")!;
    assert.equal(user.text, `My key is ${REDACTION_MARKER} and my token is Bearer ${REDACTION_MARKER}, the spare is ${REDACTION_MARKER}`);

    // Documented: the prompt is stored as typed (the provider needs it on replay).
    const stored = new TextDecoder().decode(server.runtime.fs.contents(`${HOME}/sessions/${sessionId}.jsonl`));
    const input = stored.trim().split("\n").map((line) => JSON.parse(line) as { type: string; text?: string }).find((record) => record.type === "user_input")!;
    assert.equal(input.text, prompt);
    server.runtime.input.end();
    assert.equal(await server.exit, 0);
  });

  // Regression: tools quote arguments cut to 200 bytes (900 for shell commands)
  // before anything redacts, so a key straddling the cut once reached activity
  // summaries, stored records and history as an unrecognisable prefix.
  it("a key at the end of a long tool argument is not shown in part", async () => {
    provider.handler = null;
    const server = await serverFor("openai-chat", provider);
    provider.enqueue(reply("openai-chat", { text: ["Reading."], calls: [{ id: "call_r", name: "read_file", args: { path: `${"x".repeat(175)}${OPENAI_KEY}` } }] }));
    provider.enqueue(reply("openai-chat", { text: ["Done."] }));
    try {
      const { sessionId, runId } = await startTurn(server, "Read the file");
      const events = await runEvents(server, runId);
      const finished = events.at(-1)!.data as { revision: string };
      const history = await historyText(server, sessionId, finished.revision, "long-path");
      const prefix = OPENAI_KEY.slice(0, 20);
      assert.ok(!server.runtime.output.text().includes(prefix), "stdout shows most of the key");
      assert.ok(!history.text.includes(prefix), "history shows most of the key");
    } finally {
      server.runtime.input.end();
      await server.exit;
    }
  });
});
