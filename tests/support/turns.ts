/**
 * Turn test helpers: a server on the in-memory runtime whose settings point
 * a provider at a loopback fake, reached through the real runtime's HTTP
 * client, and small request/collect helpers.
 *
 * @module
 */

import assert from "node:assert/strict";
import { after } from "node:test";
import { MemoryFileSystem } from "../../runtime/memory-fs.ts";
import type { ProviderApi } from "../../src/config/settings.ts";
import { type FakeProvider, startFakeProvider } from "./fake-provider.ts";
import { guarded } from "./hang-guard.ts";
import { type Frame, initLine, line, type Run, type ServerRunOptions, startServer } from "./harness.ts";
import { runtimeFetch } from "./runtime-fetch.ts";

/** The storage root the memory runtime's default `HOME` implies. */
export const HOME = "/home/user/.magi-code";
/** The memory runtime's default cwd. */
export const CWD = "/work/project";
/** Every capability a turn client uses. */
export const TURN_CAPABILITIES = [
  "session.create",
  "session.open",
  "history.page",
  "turn.start",
  "turn.cancel",
  "approval.answer",
  "status",
  "shutdown",
];

/**
 * `agent` settings with session titles off unless `agent` turns them on:
 * a titling request after each first turn would take a script from the fake
 * provider's queue that a test meant for its next turn. Tests of titles
 * enable them explicitly.
 */
export function withoutTitles(agent: unknown): Record<string, unknown> {
  return { titles: { enabled: false }, ...(agent as Record<string, unknown> | undefined) };
}

/** The provider name each API is configured under in these tests. */
function providerFor(api: ProviderApi): string {
  return api === "openai-chat" ? "ollama" : api === "anthropic-messages" ? "anthropic" : "openai";
}

/** A server wired to `provider` for `api`, with extra settings merged in. */
export interface TurnServer extends Run {
  readonly provider: FakeProvider;
}

/** Options of {@link startTurnServer}. */
export interface TurnServerOptions extends ServerRunOptions {
  /** Extra top-level settings (e.g. `tools`, `agent`). */
  readonly settings?: Record<string, unknown>;
  /** An already running fake provider to reuse. */
  readonly provider?: FakeProvider;
  /** The model id (default one per API). */
  readonly model?: string;
  /** The capabilities `initialize` requires (default {@link TURN_CAPABILITIES}). */
  readonly capabilities?: readonly string[];
}

/**
 * A list for the servers a test file starts, each closed (with its MCP
 * servers and its provider) after the file: a test that fails midway leaves
 * its server running, and the file would never exit.
 */
export function closedAfterAll(): TurnServer[] {
  const started: TurnServer[] = [];
  after(async () => {
    for (const server of started) {
      server.runtime.input.end();
      await server.exit.catch(() => {});
      await server.provider.close();
    }
  });
  return started;
}

/** Starts a fake provider and a server whose selected provider speaks `api` to it, then initializes. */
export async function startTurnServer(api: ProviderApi, options: TurnServerOptions = {}): Promise<TurnServer> {
  const provider = options.provider ?? (await startFakeProvider());
  const name = providerFor(api);
  const model = options.model ?? (api === "anthropic-messages" ? "claude-sonnet-4-5" : api === "openai-responses" ? "gpt-5-mini" : "qwen");
  const fs = options.fs ?? new MemoryFileSystem();
  const settings = {
    model: { provider: name, model },
    providers: { endpoints: { [name]: { base_url: `${provider.url}/v1` } } },
    ...options.settings,
    agent: withoutTitles(options.settings?.agent),
  };
  fs.writeFile(`${HOME}/settings.jsonc`, JSON.stringify(settings), 0o600);
  const env = { HOME: "/home/user", OPENAI_API_KEY: "sk-test-openai-0123456789abcdef", ANTHROPIC_API_KEY: "sk-ant-test-0123456789abcdef", ...options.env };
  // Through the runtime's own HTTP client (node:http on Node, the Deno runtime's fetch on Deno), not a test client.
  const run = startServer({ fetch: runtimeFetch, ...options, fs, env });
  const frames = await request(run, "init", "initialize", { required_capabilities: options.capabilities ?? TURN_CAPABILITIES }, initLine);
  assert.ok(frames.result, `initialize succeeded: ${JSON.stringify(frames.error)}`);
  return { ...run, provider };
}

/** Sends one request and waits for its response frame. */
export async function request(
  run: Run,
  id: string,
  method: string,
  params: Record<string, unknown> = {},
  encode: (id: string, capabilities: string[]) => string = () => line(id, method, params),
): Promise<Frame> {
  const before = run.frames().length;
  run.runtime.input.push(encode(id, params.required_capabilities as string[]));
  return await guarded((async () => {
    // The next wait starts after the frames just examined, not after whatever arrived since.
    for (let seen = before + 1;;) {
      const frames = await run.waitFrames(seen);
      seen = frames.length + 1;
      const response = frames.find((frame) => frame.type === "response" && frame.id === id);
      if (response) return response;
    }
  })(), `the response to ${method} (${id})`);
}

/** Waits for the `run.finished` event of `runId` and returns every event of that run, in order. */
export function runEvents(run: Run, runId: string): Promise<Frame[]> {
  return guarded((async () => {
    // The next wait starts after the frames just examined, not after whatever arrived since.
    for (let seen = 1;;) {
      const frames = await run.waitFrames(seen);
      seen = frames.length + 1;
      const events = frames.filter((frame) => frame.type === "event" && (frame.data as { run_id?: string }).run_id === runId);
      if (events.some((frame) => frame.event === "run.finished")) return events;
    }
  })(), `run.finished of ${runId}`);
}

/** Waits for the first event named `name` of `runId`. */
export function nextEvent(run: Run, runId: string, name: string, after = 0): Promise<Frame> {
  return guarded((async () => {
    // The next wait starts after the frames just examined, not after whatever arrived since.
    for (let seen = 1;;) {
      const frames = await run.waitFrames(seen);
      seen = frames.length + 1;
      const found = frames.filter((frame) => frame.type === "event" && frame.event === name && (frame.data as { run_id?: string }).run_id === runId);
      if (found.length > after) return found[after]!;
    }
  })(), `${name} #${after} of ${runId}`);
}

/** The authoritative text of every reconciled message of `events`, by message id. */
export function reconciled(events: readonly Frame[]): Map<string, { text: string; partial: boolean }> {
  const out = new Map<string, { text: string; partial: boolean }>();
  for (const frame of events) {
    if (frame.event !== "message.reconcile") continue;
    const data = frame.data as { message_id: string; text: string; partial: boolean; part: number };
    const entry = out.get(data.message_id) ?? { text: "", partial: data.partial };
    entry.text += data.text;
    out.set(data.message_id, entry);
  }
  return out;
}

/** Starts a session and a turn; returns the session and run ids. */
export async function startTurn(run: Run, prompt: string, sessionId?: string): Promise<{ sessionId: string; runId: string }> {
  let session = sessionId;
  if (session === undefined) {
    const created = await request(run, `create-${prompt.length}-${run.frames().length}`, "session.create");
    session = (created.result as { session_id: string }).session_id;
  }
  const started = await request(run, `turn-${run.frames().length}`, "turn.start", { session_id: session, prompt });
  assert.ok(started.result, `turn.start admitted: ${JSON.stringify(started.error)}`);
  return { sessionId: session, runId: (started.result as { run_id: string }).run_id };
}

/** Ends input, waits for the exit code, and closes the fake provider. */
export async function stopTurnServer(server: TurnServer): Promise<number> {
  server.runtime.input.end();
  const code = await guarded(server.exit, "the exit after EOF");
  await server.provider.close();
  return code;
}

/** The `run.finished` data of a run's events (its last event). */
export function terminalData(events: readonly Frame[]): Record<string, unknown> {
  return events.at(-1)!.data as Record<string, unknown>;
}
