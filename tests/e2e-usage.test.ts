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
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { startFakeProvider } from "./support/fake-provider.ts";
import { eventually } from "./support/hang-guard.ts";
import { launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { baseTranscript, scriptedTurn } from "./support/transcripts.ts";
import { WireClient, type WireFrame, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-usage-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** The `run.usage` events' data among `events`. */
const usageOf = (events: readonly WireFrame[]) => events.filter((frame) => frame.event === "run.usage").map((frame) => frame.data!);

for (const launcher of launchers()) {
  describe(`${launcher.name}: run.usage over real pipes`, () => {
    it("a client that does not negotiate run.usage sees byte for byte the events it saw before run.usage existed", async () => {
      const base = await scriptedTurn(launcher, root, "base", TURN_CAPABILITIES);
      assert.deepEqual(base.masked, baseTranscript());
      assert.deepEqual(usageOf(base.events), []);
    });

    it("a client that negotiates it sees the same bytes plus one run.usage right before run.finished", async () => {
      const base = await scriptedTurn(launcher, root, "base-pair", TURN_CAPABILITIES);
      const negotiated = await scriptedTurn(launcher, root, "negotiated", [...TURN_CAPABILITIES, "run.usage"]);
      assert.equal(negotiated.masked.length, base.masked.length + 1);
      assert.match(negotiated.masked.at(-2)!, /^\{"protocol":"magi-code\.local-agent","version":1,"type":"event","instance_id":"<instance>","seq":"<seq>","event":"run\.usage",/u);
      assert.deepEqual([...negotiated.masked.slice(0, -2), negotiated.masked.at(-1)], base.masked);
      assert.deepEqual(negotiated.streamed, base.streamed);
      const usage = usageOf(negotiated.events);
      assert.equal(usage.length, 1);
      const { session_id: _, run_id: __, ...tokens } = usage[0]!;
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
