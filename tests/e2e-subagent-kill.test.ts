// A SIGKILL while a subagent waits for an approval, against the real entry
// over real pipes on each runtime: a fresh child reopens the delegating
// session (the started `subagent` activity, then the interruption notice),
// the child's own history reads back whole up to where it stopped, nothing
// the pending approval guarded ran, and the fresh child takes a new turn.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { createNodeRuntime } from "../runtime/node-runtime.ts";
import { loadAttachment } from "../src/store/attachment.ts";
import { startFakeProvider, type LoggedRequest, type Script } from "./support/fake-provider.ts";
import { INTERRUPTED, pagedHistory } from "./support/kill-turns.ts";
import { launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { WireClient, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-subagent-kill-"));
after(() => rmSync(root, { recursive: true, force: true }));

const API = "openai-chat";
const isChild = (logged: LoggedRequest) => String((logged.body as { messages: { content?: unknown }[] }).messages[0]!.content).includes("You are a subagent");
const tools = (logged: LoggedRequest) => (logged.body as { messages: { role: string }[] }).messages.filter((message) => message.role === "tool").length;
const lastPrompt = (logged: LoggedRequest) => String((logged.body as { messages: { role: string; content?: unknown }[] }).messages.findLast((message) => message.role === "user")?.content);

describe("SIGKILL during a subagent", () => {
  for (const launcher of launchers()) {
    it(`${launcher.name}: a SIGKILL while a subagent's approval is pending leaves both histories readable and runs nothing`, async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `${launcher.name}-${Date.now()}`, provider);
      const clients: WireClient[] = [];
      try {
        provider.handler = (logged): Script => {
          if (isChild(logged)) return reply(API, { calls: [{ id: "w", name: "write_file", args: { path: "never.txt", content: "no\n" } }] });
          if (tools(logged) === 0 && lastPrompt(logged) === "Delegate the write.") {
            return reply(API, { calls: [{ id: "t", name: "task", args: { profile: "general", description: "Write never.txt", prompt: "Write never.txt." } }] });
          }
          return reply(API, { text: ["Still here."] });
        };
        const doomed = new WireClient(launcher, ws.cwd, ws.env);
        clients.push(doomed);
        await doomed.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
        const sessionId = (await doomed.ok("session.create")).session_id as string;
        const runId = (await doomed.ok("turn.start", { session_id: sessionId, prompt: "Delegate the write." })).run_id as string;
        const requested = await doomed.event(runId, "approval.requested");
        assert.match(String(requested.data!.summary), /^\[general t1: Write never\.txt\] /);
        assert.equal(await doomed.kill("SIGKILL"), null, "the child died of the signal");
        assert.equal(existsSync(join(ws.cwd, "never.txt")), false, "the pending write never ran");

        const subagents = join(ws.home, "sessions", "subagents");
        const [childFile] = readdirSync(subagents).filter((name) => name.endsWith(".jsonl"));
        assert.ok(childFile !== undefined, "the child's history was created before its first request");
        const childId = childFile.slice(0, -".jsonl".length);
        const context = { runtime: createNodeRuntime(), instanceId: "reader", cwd: ws.cwd, secrets: [], nextGeneration: () => 1 };
        const child = await loadAttachment(context, join(subagents, childFile), childId, new AbortController().signal, true);
        assert.ok(child.ok, "the child's history reads back");
        assert.deepEqual(child.attachment.conversation.map((record) => record.type), ["user_input"], "its prompt, and nothing it did not finish");

        const fresh = new WireClient(launcher, ws.cwd, ws.env);
        clients.push(fresh);
        await fresh.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
        const opened = await fresh.ok("session.open", { session_id: sessionId });
        const reopened = await pagedHistory(fresh, sessionId, opened.revision as string);
        assert.deepEqual(reopened.entries, [
          ["user", "Delegate the write.", false],
          ["activity", "Write never.txt", true],
          ["diagnostic", INTERRUPTED, true],
        ]);
        const last = (await fresh.ok("turn.start", { session_id: sessionId, prompt: "Are you there?" })).run_id as string;
        assert.equal((await fresh.event(last, "run.finished")).data!.outcome, "completed");
        assert.equal((await fresh.shutdown()).code, 0);
      } finally {
        for (const client of clients) client.abandon();
        await provider.close();
      }
    });
  }
});
