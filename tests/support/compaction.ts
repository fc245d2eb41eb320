/**
 * Compaction test helpers: a turn server whose selected endpoint has a small
 * configured context window, the request texts a scripted provider saw,
 * the stored records, and the real "context too long" answers of
 * `../shared/fixtures/provider-errors/context-too-long.json`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ProviderApi } from "../../src/config/settings.ts";
import { type FakeProvider, type Script, startFakeProvider } from "./fake-provider.ts";
import { repoRoot } from "./processes.ts";
import { frameEvent } from "./provider-fixtures.ts";
import type { Frame } from "./harness.ts";
import { HOME, request, runEvents, startTurn, startTurnServer, type TurnServer, type TurnServerOptions } from "./turns.ts";

/** The three APIs, each under the provider name the turn server gives it. */
export const APIS: readonly ProviderApi[] = ["openai-chat", "anthropic-messages", "openai-responses"];
/** The configured window of these tests, in tokens: the threshold (0.8) is 6,400. */
export const WINDOW = 8_000;

const PROVIDER: Readonly<Record<ProviderApi, string>> = { "openai-chat": "ollama", "anthropic-messages": "anthropic", "openai-responses": "openai" };

/** Starts a turn server for `api` whose endpoint holds `window` tokens (null: unset), with `agent` settings. */
export async function startWindowServer(api: ProviderApi, window: number | null = WINDOW, agent: Record<string, unknown> = {}, options: TurnServerOptions = {}): Promise<TurnServer> {
  const provider: FakeProvider = options.provider ?? await startFakeProvider();
  const endpoint = { base_url: `${provider.url}/v1`, ...(window === null ? {} : { context_window: window }) };
  return await startTurnServer(api, { ...options, provider, settings: { providers: { endpoints: { [PROVIDER[api]]: endpoint } }, agent, ...options.settings } });
}

/** Everything request `index` sent, as one string: its whole JSON body. */
export function sentText(server: TurnServer, index: number): string {
  return JSON.stringify(server.provider.log[index]!.body);
}

/** The records of `sessionId`'s file. */
export function storedRecords(server: TurnServer, sessionId: string): Record<string, unknown>[] {
  const bytes = server.runtime.fs.contents(`${HOME}/sessions/${sessionId}.jsonl`);
  assert.ok(bytes, "the session file exists");
  return new TextDecoder().decode(bytes).trim().split("\n").map((line) => JSON.parse(line));
}

/** Runs one turn of `prompt` (in `sessionId`, else a new session) and returns its ids and events. */
export async function turn(server: TurnServer, prompt: string, sessionId?: string): Promise<{ sessionId: string; runId: string; events: Frame[] }> {
  const started = await startTurn(server, prompt, sessionId);
  return { ...started, events: await runEvents(server, started.runId) };
}

/** `[state, summary]` of every compaction activity event of `events`. */
export function compactionStates(events: readonly Frame[]): [string, string][] {
  return events.filter((frame) => frame.event === "activity" && (frame.data as { kind: string }).kind === "compaction")
    .map((frame) => [(frame.data as { state: string }).state, (frame.data as { summary: string }).summary]);
}

/** The diagnostic codes of `events`, in order. */
export function diagnosticCodes(events: readonly Frame[]): string[] {
  return events.filter((frame) => frame.event === "diagnostic").map((frame) => (frame.data as { code: string }).code);
}

/** `[kind, text]` of every entry of the whole history at `revision`, parts joined. */
export async function pagedEntries(server: TurnServer, sessionId: string, revision: string): Promise<[string, string][]> {
  const out: [string, string][] = [];
  let cursor: string | null = null;
  let last: string | null = null;
  for (let page = 0; page < 1_000; page++) {
    const answer = await request(server, `page-${server.frames().length}`, "history.page", { session_id: sessionId, revision, cursor });
    assert.ok(answer.result, `history.page: ${JSON.stringify(answer.error)}`);
    const result = answer.result as { entries: { message_id: string; kind: string; text: string; part: number }[]; next_cursor: string | null };
    for (const entry of result.entries) {
      if (entry.message_id === last && entry.part > 0) out.at(-1)![1] += entry.text;
      else out.push([entry.kind, entry.text]);
      last = entry.message_id;
    }
    cursor = result.next_cursor;
    if (cursor === null) return out;
  }
  throw new Error("history did not end");
}

/** One real answer meaning "the request does not fit the model's context window". */
export interface OverflowCase {
  readonly name: string;
  readonly api: ProviderApi;
  readonly status: number;
  readonly stream_event: boolean;
  readonly body: Record<string, unknown>;
  readonly source: string;
}

/** The six reported answers, as the shared fixture holds them. */
export function overflowCases(): OverflowCase[] {
  const path = join(repoRoot(), "..", "shared", "fixtures", "provider-errors", "context-too-long.json");
  return (JSON.parse(readFileSync(path, "utf8")) as { cases: OverflowCase[] }).cases;
}

/** The fake provider's answer for `answer`: its status and body, or one SSE error event in a 200 stream. */
export function overflowScript(answer: OverflowCase): Script {
  if (!answer.stream_event) return { status: answer.status, body: answer.body };
  return { chunks: [frameEvent(answer.api, answer.body)] };
}
