/**
 * The user's hooks on the `task` call that starts a subagent (docs/features/runner.md,
 * "Hooks"): a server on the in-memory runtime whose subprocesses are the
 * real runtime's, a scripted loopback provider, and real `sh` hooks. A
 * `PreToolUse` hook sees `task` with its checked arguments and can deny it
 * (no subagent starts) or force its approval; a `PostToolUse` hook on `*`
 * sees how the task ended and adds to the report the model reads.
 */

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { Runtime } from "../src/host/runtime.ts";
import { BUILTIN_PROFILES } from "../src/config/agent-settings.ts";
import type { Frame } from "./support/harness.ts";
import type { LoggedRequest, Script } from "./support/fake-provider.ts";
import { reply } from "./support/provider-scripts.ts";
import { mirrorPrograms, spawningRuntimes } from "./support/tools.ts";
import { closedAfterAll, nextEvent, request, runEvents, startTurn, startTurnServer, terminalData, type TurnServer } from "./support/turns.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-hooks-task-")));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

const API = "openai-chat";
const EXPLORE = BUILTIN_PROFILES.get("explore")!.body;
type ChatMessage = { role: string; content: string | null };
const messagesOf = (logged: LoggedRequest) => (logged.body as { messages: ChatMessage[] }).messages;
const isExplore = (logged: LoggedRequest) => String(messagesOf(logged)[0]!.content).includes(EXPLORE);
const results = (logged: LoggedRequest) => messagesOf(logged).filter((message) => message.role === "tool").map((message) => String(message.content));
const subagentActivities = (events: readonly Frame[]) =>
  events.filter((frame) => frame.event === "activity" && (frame.data as { kind: string }).kind === "subagent").map((frame) => {
    const data = frame.data as { state: string; summary: string };
    return [data.state, data.summary];
  });
const TASK_ARGS = { profile: "explore", description: "Find the loader", prompt: "Where is the loader?" };

const started = closedAfterAll();

/** A real workspace holding `files` (the hook scripts), and a server whose primary delegates once to explore, which answers at once. */
async function startWith(runtime: Runtime, files: Record<string, string>, hooks: (cwd: string) => Record<string, unknown>): Promise<{ server: TurnServer; cwd: string }> {
  const cwd = join(root, `ws-${counter++}`);
  mkdirSync(cwd);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(cwd, name), text);
  const fs = mirrorPrograms(new MemoryFileSystem(), ["sh"]);
  const server = await startTurnServer(API, { processes: runtime, fetch: runtime.fetch, cwd, fs, env: { PATH: process.env.PATH ?? "" }, settings: { hooks: hooks(cwd) } });
  started.push(server);
  server.provider.handler = (logged): Script => {
    if (isExplore(logged)) return reply(API, { text: ["The loader is in src/load.ts."] });
    return results(logged).length === 0 ? reply(API, { calls: [{ id: "t", name: "task", args: TASK_ARGS }] }) : reply(API, { text: ["Done."] });
  };
  return { server, cwd };
}

/** A hook that keeps its input in `<name>.json` and exits `exit`, printing `stderr` on its stderr. */
const recorder = (name: string, exit: number, stderr = "") => `cat > ${name}.json\n${stderr === "" ? "" : `echo "${stderr}" >&2\n`}exit ${exit}\n`;

for (const [runtimeName, runtime] of spawningRuntimes()) {
  describe(`hooks on the task call on ${runtimeName}`, () => {
    it("a PreToolUse hook matching task sees its arguments and, exiting 2, denies it: no subagent starts and the model reads why", async () => {
      const { server, cwd } = await startWith(runtime, { "veto.sh": recorder("pre", 2, "no delegating today") }, (dir) => ({
        PreToolUse: [{ command: "sh", args: [join(dir, "veto.sh")], matcher: "task" }],
      }));
      const events = await runEvents(server, (await startTurn(server, "Find the loader")).runId);
      assert.equal(terminalData(events).outcome, "completed");
      assert.equal(server.provider.log.filter(isExplore).length, 0, "the subagent never made a request");
      assert.deepEqual(subagentActivities(events), [["failed", "Find the loader (denied by a hook)"]]);
      assert.match(results(server.provider.log[1]!)[0]!, /denied by the user's hook: no delegating today/);
      const input = JSON.parse(readFileSync(join(cwd, "pre.json"), "utf8"));
      assert.deepEqual({ event: input.event, tool: input.tool }, { event: "PreToolUse", tool: { name: "task", arguments: TASK_ARGS } });
    });

    it("a PreToolUse hook answering ask forces the approval of an allowed task, and the prompt says a hook asked", async () => {
      const { server } = await startWith(runtime, { "ask.sh": "cat >/dev/null\necho '{\"decision\":\"ask\"}'\n" }, (dir) => ({
        PreToolUse: [{ command: "sh", args: [join(dir, "ask.sh")], matcher: "task" }],
      }));
      const { sessionId, runId } = await startTurn(server, "Find the loader");
      const approval = (await nextEvent(server, runId, "approval.requested")).data as { approval_id: string; summary: string };
      assert.equal(approval.summary, "A hook asks for approval: Delegate to the explore subagent: Find the loader");
      await request(server, "allow", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: approval.approval_id, allow: true });
      const events = await runEvents(server, runId);
      assert.equal(terminalData(events).outcome, "completed");
      assert.equal(server.provider.log.filter(isExplore).length, 1, "the subagent ran once allowed");
    });

    it("a PostToolUse hook on * sees the task's outcome and adds its text to the report the model reads", async () => {
      const { server, cwd } = await startWith(runtime, { "post.sh": "cat > post.json\necho '{\"additional_context\":\"Check src/load.ts too.\"}'\n" }, (dir) => ({
        PostToolUse: [{ command: "sh", args: [join(dir, "post.sh")], matcher: "*" }],
      }));
      const events = await runEvents(server, (await startTurn(server, "Find the loader")).runId);
      assert.equal(terminalData(events).outcome, "completed");
      assert.equal(results(server.provider.log.at(-1)!)[0], "The loader is in src/load.ts.\n\n[Hook feedback]\nCheck src/load.ts too.");
      const input = JSON.parse(readFileSync(join(cwd, "post.json"), "utf8"));
      assert.deepEqual({ tool: input.tool, result: input.result }, {
        tool: { name: "task", arguments: TASK_ARGS },
        result: { ok: true, summary: "Find the loader: The loader is in src/load.ts." },
      });
    });
  });
}
