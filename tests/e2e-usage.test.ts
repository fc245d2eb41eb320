/**
 * `run.usage` and session titles through the real entry points (the Node
 * bundle and the Deno entry) over real pipes, against a loopback provider:
 * a client that does not negotiate `run.usage` sees, byte for byte, the
 * events a client saw before the extension existed (a checked-in
 * transcript, ids masked); one that negotiates it sees the same bytes plus
 * one `run.usage` right before `run.finished`; and a title the model
 * answers appears in `session.list` after the first turn.
 */

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { startFakeProvider } from "./support/fake-provider.ts";
import { eventually } from "./support/hang-guard.ts";
import { type Launcher, launchers, repoRoot } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { streamedTexts, WireClient, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-usage-"));
after(() => rmSync(root, { recursive: true, force: true }));

/**
 * The base client's events of the scripted turn as the release before
 * `run.usage` wrote them (captured from its build, deltas left out, ids
 * masked). Never regenerate it: it is what base clients were promised.
 */
const BASE_TRANSCRIPT = join(repoRoot(), "tests", "fixtures", "transcripts", "base-turn.jsonl");

const PROMPT = "What does a.txt say?";

/**
 * The run's event lines as the child wrote them, deltas left out (best
 * effort: they may coalesce differently from one run to the next), with
 * what differs between children masked: the instance, session and run ids,
 * revisions and sequence numbers.
 */
function maskedEvents(client: WireClient, runId: string): string[] {
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

/** One child's scripted turn (a read_file call, then the answer); returns the masked events and the streamed texts. */
async function scriptedTurn(launcher: Launcher, name: string, capabilities: readonly string[]) {
  const provider = await startFakeProvider();
  const ws = workspace(root, `${name}-${launcher.name}`, provider);
  writeFileSync(join(ws.cwd, "a.txt"), "alpha\n");
  provider.enqueue(reply("openai-chat", { text: ["Let me ", "read it."], calls: [{ id: "call_1", name: "read_file", args: { path: "a.txt" } }], usage: { prompt: 800, cached: 300, output: 20 } }));
  provider.enqueue(reply("openai-chat", { text: ["It says ", "alpha."], usage: { prompt: 900, cached: 800, output: 6 } }));
  const client = new WireClient(launcher, ws.cwd, ws.env);
  try {
    await client.ok("initialize", { required_capabilities: capabilities });
    const sessionId = (await client.ok("session.create")).session_id as string;
    const runId = (await client.ok("turn.start", { session_id: sessionId, prompt: PROMPT })).run_id as string;
    const events = await client.runEvents(runId);
    const masked = maskedEvents(client, runId);
    const streamed = streamedTexts(events);
    assert.equal((await client.shutdown()).code, 0);
    assert.equal(await client.stderr, "");
    return { masked, streamed, usage: events.filter((frame) => frame.event === "run.usage").map((frame) => frame.data!) };
  } finally {
    client.abandon();
    await provider.close();
  }
}

for (const launcher of launchers()) {
  describe(`${launcher.name}: run.usage over real pipes`, () => {
    it("a client that does not negotiate run.usage sees byte for byte the events it saw before run.usage existed", async () => {
      const base = await scriptedTurn(launcher, "base", TURN_CAPABILITIES);
      const expected = readFileSync(BASE_TRANSCRIPT, "utf8").split("\n").filter((line) => line !== "");
      assert.deepEqual(base.masked, expected);
      assert.deepEqual(base.usage, []);
    });

    it("a client that negotiates it sees the same bytes plus one run.usage right before run.finished", async () => {
      const base = await scriptedTurn(launcher, "base-pair", TURN_CAPABILITIES);
      const negotiated = await scriptedTurn(launcher, "negotiated", [...TURN_CAPABILITIES, "run.usage"]);
      assert.equal(negotiated.masked.length, base.masked.length + 1);
      assert.match(negotiated.masked.at(-2)!, /^\{"protocol":"magi-code\.local-agent","version":1,"type":"event","instance_id":"<instance>","seq":"<seq>","event":"run\.usage",/u);
      assert.deepEqual([...negotiated.masked.slice(0, -2), negotiated.masked.at(-1)], base.masked);
      assert.deepEqual(negotiated.streamed, base.streamed);
      assert.equal(negotiated.usage.length, 1);
      const { session_id: _, run_id: __, ...tokens } = negotiated.usage[0]!;
      assert.deepEqual(tokens, {
        input_tokens: 1_700,
        output_tokens: 26,
        cached_input_tokens: 1_100,
        reasoning_tokens: null,
        session_input_tokens: 1_700,
        session_output_tokens: 26,
        context_window: null,
        context_used: 900,
      });
    });
  });

  describe(`${launcher.name}: session titles over real pipes`, () => {
    it("the title the model answers after the first turn appears in session.list; the child exits 0 leaving no lease", async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `title-${launcher.name}`, provider, { agent: { titles: { enabled: true } } });
      provider.enqueue(reply("openai-chat", { text: ["Use a binary search."] }));
      provider.enqueue(reply("openai-chat", { text: ["Title: Binary search for the bug"] }));
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        await client.ok("initialize", { required_capabilities: [...TURN_CAPABILITIES, "session.list"] });
        const sessionId = (await client.ok("session.create")).session_id as string;
        const runId = (await client.ok("turn.start", { session_id: sessionId, prompt: "How do I find which commit broke it?" })).run_id as string;
        const finished = (await client.runEvents(runId)).at(-1)!.data!;
        assert.equal(finished.outcome, "completed");
        const file = join(ws.home, "sessions", `${sessionId}.jsonl`);
        await eventually(() => readFileSync(file, "utf8").includes('"type":"session_title"'), "the stored title");
        const listed = await client.ok("session.list", {});
        const entry = (listed.sessions as { session_id: string; title: unknown }[]).find((session) => session.session_id === sessionId);
        assert.equal(entry?.title, "Binary search for the bug");
        // The revision run.finished gave still pages: the title projects nothing.
        const page = await client.ok("history.page", { session_id: sessionId, revision: finished.revision });
        assert.equal((page.entries as unknown[]).length, 2);
        assert.equal((await client.shutdown()).code, 0);
        assert.equal(await client.stderr, "");
        const sessions = join(ws.home, "sessions");
        assert.deepEqual(existsSync(sessions) ? readdirSync(sessions).filter((name) => name.includes(".lease")) : [], []);
      } finally {
        client.abandon();
        await provider.close();
      }
    });
  });
}
