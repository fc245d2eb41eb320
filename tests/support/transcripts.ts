/**
 * The scripted read_file turn whose base-client events are checked in as
 * `tests/fixtures/transcripts/base-turn.jsonl`, run through a real entry
 * over real pipes: negotiated extensions (`run.usage`, `tool.cards`) are
 * held to it, a base client byte for byte, a negotiating one to exactly its
 * documented additions.
 *
 * @module
 */

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "./fake-provider.ts";
import { type Launcher, repoRoot } from "./processes.ts";
import { reply } from "./provider-scripts.ts";
import { streamedTexts, type WireClient as Client, WireClient, type WireFrame, workspace } from "./wire-client.ts";

/**
 * The base client's events of the scripted turn as the release before
 * `run.usage` wrote them (captured from its build, deltas left out, ids
 * masked). Never regenerate it: it is what base clients were promised.
 */
export function baseTranscript(): string[] {
  return readFileSync(join(repoRoot(), "tests", "fixtures", "transcripts", "base-turn.jsonl"), "utf8").split("\n").filter((line) => line !== "");
}

/**
 * The run's event lines as the child wrote them, deltas left out (best
 * effort: they may coalesce differently from one run to the next), with
 * what differs between children masked: the instance, session and run ids,
 * revisions and sequence numbers.
 */
export function maskedEvents(client: Client, runId: string): string[] {
  const out: string[] = [];
  client.frames.forEach((frame, index) => {
    if (frame.type !== "event" || frame.data?.run_id !== runId || frame.event === "message.delta") return;
    out.push(
      client.lines[index]!
        .replaceAll(frame.instance_id as string, "<instance>")
        .replaceAll(frame.data.session_id as string, "<session>")
        .replaceAll(runId, "<run>")
        .replace(/"seq":\d+/u, '"seq":"<seq>"')
        .replace(/"revision":"[^"]+"/u, '"revision":"<revision>"'),
    );
  });
  return out;
}

/** What one scripted turn showed its client. */
export interface ScriptedTurn {
  /** `initialize`'s result. */
  readonly initialized: Record<string, unknown>;
  /** The run's events, masked (see {@link maskedEvents}). */
  readonly masked: string[];
  /** The streamed texts per message. */
  readonly streamed: string[];
  /** The run's events as frames. */
  readonly events: WireFrame[];
}

/** One child's scripted turn (a read_file call, then the answer), in `root`, initialized with `capabilities`. */
export async function scriptedTurn(launcher: Launcher, root: string, name: string, capabilities: readonly string[]): Promise<ScriptedTurn> {
  const provider = await startFakeProvider();
  const ws = workspace(root, `${name}-${launcher.name}`, provider);
  writeFileSync(join(ws.cwd, "a.txt"), "alpha\n");
  provider.enqueue(reply("openai-chat", { text: ["Let me ", "read it."], calls: [{ id: "call_1", name: "read_file", args: { path: "a.txt" } }], usage: { prompt: 800, cached: 300, output: 20 } }));
  provider.enqueue(reply("openai-chat", { text: ["It says ", "alpha."], usage: { prompt: 900, cached: 800, output: 6 } }));
  const client = new WireClient(launcher, ws.cwd, ws.env);
  try {
    const initialized = await client.ok("initialize", { required_capabilities: capabilities });
    const sessionId = (await client.ok("session.create")).session_id as string;
    const runId = (await client.ok("turn.start", { session_id: sessionId, prompt: "What does a.txt say?" })).run_id as string;
    const events = await client.runEvents(runId);
    const masked = maskedEvents(client, runId);
    assert.equal((await client.shutdown()).code, 0);
    assert.equal(await client.stderr, "");
    return { initialized, masked, streamed: streamedTexts(events), events };
  } finally {
    client.abandon();
    await provider.close();
  }
}
