/**
 * `session.rewind` through the real entry points (the Node bundle and the
 * Deno entry) over real pipes, against a loopback provider: a base client
 * neither sees nor can call it, exactly as before it existed; a client that
 * negotiates it previews a rewind to a user message, applies it, and then
 * pages a history and sends a next turn whose replay hold none of the
 * dropped turns, also after a reopen in a new child.
 */

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { startFakeProvider } from "./support/fake-provider.ts";
import { launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { REWIND, rewindSession } from "./support/rewind-turns.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { WireClient, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-rewind-"));
after(() => rmSync(root, { recursive: true, force: true }));


/** Every page of the history at `revision`, as kind and text pairs. */
async function history(client: WireClient, sessionId: string, revision: string): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await client.ok("history.page", { session_id: sessionId, revision, cursor });
    for (const entry of page.entries as { kind: string; text: string }[]) out.push(`${entry.kind}: ${entry.text}`);
    cursor = page.next_cursor as string | null;
  } while (cursor !== null);
  return out;
}

/** The id of the user message with `text` in the history at `revision`. */
async function userMessage(client: WireClient, sessionId: string, revision: string, text: string): Promise<string> {
  const page = await client.ok("history.page", { session_id: sessionId, revision, cursor: null });
  return (page.entries as { kind: string; text: string; message_id: string }[]).find((entry) => entry.kind === "user" && entry.text === text)!.message_id;
}

/** Negotiates rewind, creates a session and runs one turn, prompt "only": the session, its revision and that prompt's message id. */
async function oneTurn(client: WireClient): Promise<{ sessionId: string; revision: string; target: string }> {
  await client.ok("initialize", { required_capabilities: REWIND });
  const sessionId = (await client.ok("session.create")).session_id as string;
  const runId = (await client.ok("turn.start", { session_id: sessionId, prompt: "only" })).run_id as string;
  const revision = (await client.runEvents(runId)).find((frame) => frame.event === "run.finished")!.data!.revision as string;
  return { sessionId, revision, target: await userMessage(client, sessionId, revision, "only") };
}

/** The texts of the user messages a provider request carried. */
function userTexts(body: unknown): string[] {
  const messages = (body as { messages: { role: string; content: unknown }[] }).messages;
  return messages.filter((message) => message.role === "user").map((message) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)));
}

/** A preview's diff shown whole: `text` is ASCII here, so its length is its size. */
const whole = (text: string) => ({ text, truncated: false, total_bytes: text.length });

for (const launcher of launchers()) {
  describe(`${launcher.name}: session.rewind over real pipes`, () => {
    it("a base client is not offered session.rewind and its calls are answered as an unknown method's, params unread", async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `base-${launcher.name}`, provider);
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        const init = await client.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
        const capabilities = init.capabilities as string[];
        assert.equal(capabilities.includes("session.rewind"), false);
        assert.equal(capabilities.includes("session.rewind.preview"), false);
        const unknown = await client.call("session.nonexistent", { bogus: 1 });
        for (const method of ["session.rewind", "session.rewind.preview"]) {
          const frame = await client.call(method, { bogus: 1 });
          assert.deepEqual(frame.error, unknown.error);
        }
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
        await provider.close();
      }
    });

    it("preview then rewind to the second prompt drops it and what followed from the history and the next replay, also after a reopen", async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `rewind-${launcher.name}`, provider);
      for (const text of ["One.", "Two.", "Three.", "Four."]) provider.enqueue(reply("openai-chat", { text: [text] }));
      const client = new WireClient(launcher, ws.cwd, ws.env);
      let sessionId = "";
      // Closed on every path: a failure before the reopen must not leave the server holding the process open.
      after(() => provider.close());
      try {
        const init = await client.ok("initialize", { required_capabilities: REWIND });
        assert.ok((init.capabilities as string[]).includes("session.rewind"));
        sessionId = (await client.ok("session.create")).session_id as string;
        let revision = "";
        for (const prompt of ["first", "second", "third"]) {
          const runId = (await client.ok("turn.start", { session_id: sessionId, prompt })).run_id as string;
          const events = await client.runEvents(runId);
          revision = events.find((frame) => frame.event === "run.finished")!.data!.revision as string;
        }
        const target = await userMessage(client, sessionId, revision, "second");
        const preview = await client.ok("session.rewind.preview", { session_id: sessionId, revision, message_id: target });
        assert.deepEqual(preview, { session_id: sessionId, message_id: target, revision, dropped_turns: 2, dropped_messages: 4, unrestorable: [], files: [] });
        // A preview writes nothing: the revision still pages.
        assert.equal((await history(client, sessionId, revision)).length, 6);
        const applied = await client.ok("session.rewind", { session_id: sessionId, revision, message_id: target, restore_files: false });
        assert.equal(applied.dropped_turns, 2);
        const next = applied.revision as string;
        assert.notEqual(next, revision);
        assert.deepEqual(await history(client, sessionId, next), ["user: first", "assistant: One."]);
        // The revision the rewind was made at is stale now, for pages and for another rewind.
        assert.equal((await client.call("history.page", { session_id: sessionId, revision, cursor: null })).error!.code, "stale_revision");
        assert.equal((await client.call("session.rewind", { session_id: sessionId, revision, message_id: target, restore_files: false })).error!.code, "stale_revision");
        const runId = (await client.ok("turn.start", { session_id: sessionId, prompt: "again" })).run_id as string;
        await client.runEvents(runId);
        assert.deepEqual(userTexts(provider.log.at(-1)!.body), ["first", "again"]);
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
      }
      const lines = readFileSync(join(ws.home, "sessions", `${sessionId}.jsonl`), "utf8").trimEnd().split("\n");
      assert.equal(lines.filter((line) => line.includes('"type":"rewind"')).length, 1);
      assert.match(lines.find((line) => line.includes('"type":"rewind"'))!, /^\{"v":4,"type":"rewind",/u);
      const reopened = new WireClient(launcher, ws.cwd, ws.env);
      try {
        await reopened.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
        const open = await reopened.ok("session.open", { session_id: sessionId });
        assert.deepEqual(await history(reopened, sessionId, open.revision as string), ["user: first", "assistant: One.", "user: again", "assistant: Four."]);
        assert.equal((await reopened.shutdown()).code, 0);
      } finally {
        reopened.abandon();
      }
    });

    it("a rewind with restore_files puts back the files its dropped turns wrote, and leaves one changed by hand since untouched and reported", async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `files-${launcher.name}`, provider, { tools: { write_file: "allow", edit_file: "allow" } });
      writeFileSync(join(ws.cwd, "b.txt"), "beta\n");
      writeFileSync(join(ws.cwd, "c.txt"), "gamma\n");
      provider.enqueue(reply("openai-chat", { text: ["One."] }));
      provider.enqueue(reply("openai-chat", {
        text: ["Writing."],
        calls: [
          { id: "call_1", name: "write_file", args: { path: "a.txt", content: "new\n" } },
          { id: "call_2", name: "edit_file", args: { path: "b.txt", old_text: "beta", new_text: "BETA" } },
          { id: "call_3", name: "write_file", args: { path: "c.txt", content: "GAMMA\n" } },
        ],
      }));
      provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        const { sessionId, revision } = await rewindSession(client, ["first", "second"]);
        assert.equal(readFileSync(join(ws.cwd, "b.txt"), "utf8"), "BETA\n");
        writeFileSync(join(ws.cwd, "c.txt"), "gamma by hand\n");
        const target = await userMessage(client, sessionId, revision, "second");
        const preview = await client.ok("session.rewind.preview", { session_id: sessionId, revision, message_id: target });
        assert.deepEqual(preview.unrestorable, [{ tool: "edit_file", calls: 1 }, { tool: "write_file", calls: 2 }]);
        assert.deepEqual(preview.files, [
          { path: "a.txt", created: true, state: "restorable", diff: whole("--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-new\n"), diff_omitted: false },
          { path: "b.txt", created: false, state: "restorable", diff: whole("--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-BETA\n+beta\n"), diff_omitted: false },
          { path: "c.txt", created: false, state: "changed", diff: null, diff_omitted: false },
        ]);
        const applied = await client.ok("session.rewind", { session_id: sessionId, revision, message_id: target, restore_files: true });
        assert.deepEqual(applied.files, [
          { path: "a.txt", created: true, state: "restored" },
          { path: "b.txt", created: false, state: "restored" },
          { path: "c.txt", created: false, state: "changed" },
        ]);
        assert.equal(existsSync(join(ws.cwd, "a.txt")), false);
        assert.equal(readFileSync(join(ws.cwd, "b.txt"), "utf8"), "beta\n");
        assert.equal(readFileSync(join(ws.cwd, "c.txt"), "utf8"), "gamma by hand\n");
        assert.deepEqual(await history(client, sessionId, applied.revision as string), ["user: first", "assistant: One."]);
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
        await provider.close();
      }
    });

    it("a preview's diffs are redacted, each cut to diff_bytes with a marker naming its size, and past preview_diff_bytes left out and marked", async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `diffs-${launcher.name}`, provider, { tools: { write_file: "allow" } });
      const token = "ghp_0123456789abcdefABCDEF";
      // Nine files of 20,000 bytes: each diff is cut, and seven cut diffs fill the preview's budget.
      const calls = Array.from({ length: 9 }, (_, index) => ({ id: `call_${index}`, name: "write_file", args: { path: `f${index}.txt`, content: `${token}\n${"x".repeat(80)}\n`.repeat(200) } }));
      provider.enqueue(reply("openai-chat", { text: ["Writing."], calls }));
      provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        const { sessionId, revision, target } = await oneTurn(client);
        const preview = await client.ok("session.rewind.preview", { session_id: sessionId, revision, message_id: target });
        const files = preview.files as { path: string; diff: { text: string; truncated: boolean; total_bytes: number } | null; diff_omitted: boolean }[];
        assert.equal(files.length, 9);
        const shown = files.filter((file) => file.diff !== null);
        assert.ok(shown.length >= 1 && shown.length < 9, `${shown.length} diffs shown`);
        for (const file of shown) {
          assert.equal(file.diff_omitted, false);
          assert.equal(file.diff!.truncated, true);
          assert.ok(!file.diff!.text.includes(token), "a token starting a removed line leaks through the diff");
          assert.match(file.diff!.text, /^--- a\/f\d\.txt\n\+\+\+ \/dev\/null\n@@ -1,400 \+0,0 @@\n-\[redacted\]\n/u);
          assert.match(file.diff!.text, new RegExp(`\\n\\[… diff truncated: \\d+ of ${file.diff!.total_bytes} bytes shown …\\]$`, "u"));
          assert.ok(new TextEncoder().encode(JSON.stringify(file.diff!.text)).length - 2 <= 4_096);
        }
        assert.ok(shown.reduce((sum, file) => sum + file.diff!.text.length, 0) <= 32_768);
        for (const file of files.filter((file) => file.diff === null)) assert.equal(file.diff_omitted, true);
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
        await provider.close();
      }
    });

    it("a rewind without restore_files leaves every file as the dropped turns left it", async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `keep-${launcher.name}`, provider, { tools: { write_file: "allow" } });
      provider.enqueue(reply("openai-chat", { text: ["Writing."], calls: [{ id: "call_1", name: "write_file", args: { path: "a.txt", content: "new\n" } }] }));
      provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        const { sessionId, revision, target } = await oneTurn(client);
        const applied = await client.ok("session.rewind", { session_id: sessionId, revision, message_id: target, restore_files: false });
        assert.deepEqual(applied.files, [{ path: "a.txt", created: true, state: "kept" }]);
        assert.equal(readFileSync(join(ws.cwd, "a.txt"), "utf8"), "new\n");
        assert.deepEqual(await history(client, sessionId, applied.revision as string), []);
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
        await provider.close();
      }
    });
  });
}
