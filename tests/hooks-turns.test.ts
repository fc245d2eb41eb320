/**
 * Hooks through real turns (docs/features/runner.md, "Hooks"): a server on
 * the in-memory runtime whose subprocesses are the real runtime's (Node, and
 * Deno under Deno), its workspace a real directory, a scripted loopback
 * provider, and real hook scripts run by `sh` and `node`. What each event's
 * decisions do to the turn, what the model and the client see, and the
 * approval rule a project hook lives under (a canary file proves whether it
 * ran).
 */

import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { Runtime } from "../src/host/runtime.ts";
import { configuredHooks, type HooksSettings } from "../src/config/hooks-settings.ts";
import { hookApprovalFor, hookStatuses } from "../src/hooks/definition.ts";
import { withApproval } from "../src/trust/approvals.ts";
import { updateApprovals } from "../src/trust/approvals-write.ts";
import type { Frame } from "./support/harness.ts";
import { reply } from "./support/provider-scripts.ts";
import { mirrorPrograms, spawningRuntimes } from "./support/tools.ts";
import { closedAfterAll, HOME, nextEvent, request, runEvents, startTurn, startTurnServer, TURN_CAPABILITIES, type TurnServer } from "./support/turns.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-hooks-turns-")));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

type ChatMessage = { role: string; content: string | null; tool_call_id?: string };
const sent = (server: TurnServer, index: number) => (server.provider.log[index]!.body as { messages: ChatMessage[] }).messages;
const toolResult = (server: TurnServer, index: number, callId: string) => sent(server, index).find((entry) => entry.tool_call_id === callId)?.content ?? "";
const diagnostics = (events: readonly Frame[]) => events.filter((frame) => frame.event === "diagnostic").map((frame) => frame.data as { code: string; summary: string });
const activities = (events: readonly Frame[]) => events.filter((frame) => frame.event === "activity").map((frame) => frame.data as { state: string; summary: string });
const finished = (events: readonly Frame[]) => events.at(-1)!.data as { outcome: string; error_code: string | null };

/** Writes a hook script into a fresh real directory, which is also the workspace. */
function scripts(files: Record<string, string>): string {
  const dir = join(root, `ws-${counter++}`);
  mkdirSync(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const started = closedAfterAll();

async function startWith(runtime: Runtime, cwd: string, settings: Record<string, unknown>, fs = new MemoryFileSystem()): Promise<TurnServer> {
  const server = await startTurnServer("openai-chat", { processes: runtime, fetch: runtime.fetch, cwd, fs: mirrorPrograms(fs, ["sh", "node"]), env: { PATH: process.env.PATH ?? "" }, settings });
  started.push(server);
  return server;
}

const shellCall = (command: string) => reply("openai-chat", { calls: [{ id: "call_1", name: "shell", args: { command } }] });
const sh = (script: string, extra: Record<string, unknown> = {}) => ({ command: "sh", args: [script], ...extra });
const node = (script: string, extra: Record<string, unknown> = {}) => ({ command: "node", args: [script], ...extra });

for (const [runtimeName, runtime] of spawningRuntimes()) {
  describe(`hooks in turns on ${runtimeName}`, () => {
    it("a PreToolUse sh hook exiting 2 denies the call; the model reads its stderr; the activity says a hook denied it", async () => {
      const cwd = scripts({ "veto.sh": 'input=$(cat)\ncase "$input" in *"rm -rf"*) echo "rm -rf is not allowed here" >&2; exit 2;; esac\nexit 0\n' });
      const server = await startWith(runtime, cwd, { hooks: { PreToolUse: [sh(join(cwd, "veto.sh"), { matcher: "shell" })] }, tools: { shell: "allow" } });
      server.provider.enqueue(shellCall("rm -rf build"));
      server.provider.enqueue(reply("openai-chat", { text: ["Understood."] }));
      const { runId } = await startTurn(server, "Clean up");
      const events = await runEvents(server, runId);
      assert.equal(finished(events).outcome, "completed");
      assert.match(toolResult(server, 1, "call_1"), /denied by the user's hook: rm -rf is not allowed here/);
      assert.deepEqual(activities(events).map((entry) => entry.state), ["failed"]);
      assert.match(activities(events)[0]!.summary, /\(denied by a hook\)$/);
    });

    it("a PreToolUse node hook answering ask forces an approval of an allowed tool, and the prompt says a hook asked", async () => {
      const cwd = scripts({ "ask.mjs": 'process.stdin.resume();process.stdin.on("end",()=>console.log(JSON.stringify({decision:"ask"})));\n' });
      const server = await startWith(runtime, cwd, { hooks: { PreToolUse: [node(join(cwd, "ask.mjs"))] }, tools: { shell: "allow" } });
      server.provider.enqueue(shellCall("echo hi"));
      server.provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      const { sessionId, runId } = await startTurn(server, "Say hi");
      const approval = (await nextEvent(server, runId, "approval.requested")).data as { approval_id: string; summary: string };
      assert.match(approval.summary, /^A hook asks for approval: Run "echo hi"/);
      await request(server, "allow", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: approval.approval_id, allow: true });
      const events = await runEvents(server, runId);
      assert.equal(finished(events).outcome, "completed");
      assert.match(toolResult(server, 1, "call_1"), /hi/);
    });

    it("with approval.scope, a session grant skips the policy's question on the next call but never the question a hook asks", async () => {
      // Asks from its third run on: the third call is one the grant covers.
      const cwd = scripts({ "ask.sh": 'cat >/dev/null\nn=$(($(cat runs 2>/dev/null || echo 0) + 1))\necho $n > runs\n[ $n -lt 3 ] || echo \'{"decision":"ask"}\'\n' });
      const server = await startTurnServer("openai-chat", {
        processes: runtime,
        fetch: runtime.fetch,
        cwd,
        fs: mirrorPrograms(new MemoryFileSystem(), ["sh"]),
        env: { PATH: process.env.PATH ?? "" },
        settings: { hooks: { PreToolUse: [sh(join(cwd, "ask.sh"))] }, tools: { shell: "ask" } },
        capabilities: [...TURN_CAPABILITIES, "approval.scope"],
      });
      started.push(server);
      const calls = [{ id: "c1", command: "echo first" }, { id: "c2", command: "echo first" }, { id: "c3", command: "echo first" }];
      server.provider.enqueue(reply("openai-chat", { calls: calls.map(({ id, command }) => ({ id, name: "shell", args: { command } })) }));
      server.provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      const { sessionId, runId } = await startTurn(server, "Echo");
      const first = (await nextEvent(server, runId, "approval.requested")).data as { approval_id: string; summary: string };
      assert.match(first.summary, /^Run "echo first"/);
      await request(server, "grant", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: first.approval_id, allow: true, scope: "session" });
      // c2 runs under the grant; c3, which the grant covers too, is asked for by the hook.
      const hooked = (await nextEvent(server, runId, "approval.requested", 1)).data as { approval_id: string; summary: string };
      assert.match(hooked.summary, /^A hook asks for approval: Run "echo first"/);
      await request(server, "once", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: hooked.approval_id, allow: true });
      const events = await runEvents(server, runId);
      assert.equal(finished(events).outcome, "completed");
      assert.equal(events.filter((frame) => frame.event === "approval.requested").length, 2);
    });

    it("a global PreToolUse hook answering allow skips the question of an ask policy; PostToolUse text reaches the next request", async () => {
      const cwd = scripts({
        "allow.sh": 'cat >/dev/null\necho \'{"decision":"allow"}\'\n',
        "post.mjs": 'let s="";process.stdin.on("data",(c)=>s+=c).on("end",()=>{const i=JSON.parse(s);console.log(JSON.stringify({additional_context:`formatted after ${i.tool.name}, ok=${i.result.ok}`}));});\n',
      });
      const hooks = { PreToolUse: [sh(join(cwd, "allow.sh"))], PostToolUse: [node(join(cwd, "post.mjs"), { matcher: "sh*" })] };
      const server = await startWith(runtime, cwd, { hooks, tools: { shell: "ask" } });
      server.provider.enqueue(shellCall("echo hi"));
      server.provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      const { runId } = await startTurn(server, "Say hi");
      const events = await runEvents(server, runId);
      assert.equal(finished(events).outcome, "completed");
      assert.equal(events.filter((frame) => frame.event === "approval.requested").length, 0);
      assert.match(toolResult(server, 1, "call_1"), /hi[\s\S]*\[Hook feedback\]\nformatted after shell, ok=true$/);
    });

    it("an unapproved project PreToolUse hook answering allow does not skip the question of an ask policy", async () => {
      const cwd = scripts({ "allow.sh": 'cat >/dev/null\necho \'{"decision":"allow"}\'\n' });
      const fs = new MemoryFileSystem();
      fs.writeFile("/bin/sh", "", 0o755);
      fs.writeFile(join(cwd, ".magi-code", "settings.jsonc"), JSON.stringify({ hooks: { PreToolUse: [{ command: "/bin/sh", args: [join(cwd, "allow.sh")] }] } }), 0o644);
      const server = await startWith(runtime, cwd, { tools: { shell: "ask" } }, fs);
      server.provider.enqueue(shellCall("echo hi"));
      server.provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      const { sessionId, runId } = await startTurn(server, "Say hi");
      const approval = (await nextEvent(server, runId, "approval.requested")).data as { approval_id: string; summary: string };
      assert.match(approval.summary, /^Run "echo hi"/);
      await request(server, "deny", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: approval.approval_id, allow: false });
      assert.equal(finished(await runEvents(server, runId)).outcome, "completed");
    });

    it("no PreToolUse hook runs for a call the policy denies, nor for a tool its matcher does not select (canary)", async () => {
      const canary = join(root, `canary-policy-${counter}`);
      const cwd = scripts({ "canary.sh": `cat >/dev/null\necho ran >> ${canary}\necho '{"decision":"allow"}'\n` });
      const hooks = { PreToolUse: [sh(join(cwd, "canary.sh"), { matcher: "shell" }), sh(join(cwd, "canary.sh"), { matcher: "read_*" })] };
      const server = await startWith(runtime, cwd, { hooks, tools: { shell: "deny" } });
      server.provider.enqueue(shellCall("echo hi"));
      server.provider.enqueue(reply("openai-chat", { calls: [{ id: "call_2", name: "list_directory", args: { path: "." } }] }));
      server.provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      const { runId } = await startTurn(server, "Say hi");
      assert.equal(finished(await runEvents(server, runId)).outcome, "completed");
      assert.match(toolResult(server, 1, "call_1"), /denied by the user's settings/);
      assert.equal(existsSync(canary), false);
    });

    it("a PreToolUse hook gets the prepared call's canonical arguments: the checked parameters, the path resolved", async () => {
      const seen = join(root, `seen-${counter}`);
      const cwd = scripts({ "seen.sh": `cat > ${seen}\n` });
      const fs = new MemoryFileSystem();
      fs.writeFile(join(cwd, "notes.txt"), "hello\n", 0o644);
      fs.writeFile(join(cwd, "sub", "keep.txt"), "", 0o644);
      const server = await startWith(runtime, cwd, { hooks: { PreToolUse: [sh(join(cwd, "seen.sh"), { matcher: "read_file" })] }, tools: { read_file: "allow" } }, fs);
      server.provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", name: "read_file", args: { path: "./sub/../notes.txt" } }] }));
      server.provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      const { runId } = await startTurn(server, "Read the notes");
      assert.equal(finished(await runEvents(server, runId)).outcome, "completed");
      const input = JSON.parse(readFileSync(seen, "utf8")) as { tool: { name: string; arguments: { path: string } } };
      assert.equal(input.tool.name, "read_file");
      assert.equal(input.tool.arguments.path, "notes.txt");
    });

    it("a PreToolUse hook cannot be bypassed by arguments too large for its input: the call is denied, not run unchecked", async () => {
      const cwd = scripts({ "veto.sh": 'cat >/dev/null\necho "no writes" >&2\nexit 2\n' });
      const fs = new MemoryFileSystem();
      const server = await startWith(runtime, cwd, { hooks: { PreToolUse: [sh(join(cwd, "veto.sh"), { matcher: "write_file" })] }, tools: { write_file: "allow" } }, fs);
      // Over 1 MiB of arguments, streamed in pieces as a provider does (one SSE event holds at most 1 MiB).
      const args = JSON.stringify({ path: "big.txt", content: "x".repeat(1_100_000) });
      const event = (delta: Record<string, unknown>, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const pieces = Array.from({ length: Math.ceil(args.length / 100_000) }, (_, index) => args.slice(index * 100_000, (index + 1) * 100_000));
      server.provider.enqueue({
        chunks: [
          event({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "write_file", arguments: "" } }] }),
          ...pieces.map((piece) => event({ tool_calls: [{ index: 0, function: { arguments: piece } }] })),
          event({}, "tool_calls"),
          "data: [DONE]\n\n",
        ],
      });
      server.provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      const { runId } = await startTurn(server, "Write a big file");
      const events = await runEvents(server, runId);
      assert.equal(finished(events).outcome, "completed", JSON.stringify(diagnostics(events)));
      assert.equal(fs.exists(join(cwd, "big.txt")), false, "the unchecked write did not happen");
      assert.match(toolResult(server, 1, "call_1"), /^The tool call was denied by the user's hook: .*too large/);
      assert.match(activities(events)[0]!.summary, /\(denied by a hook\)$/);
    });

    it("a global hook whose bare command is on no absolute PATH entry fails unrun: never the workspace's program of that name (canary)", async () => {
      const canary = join(root, `canary-path-${counter}`);
      const cwd = scripts({ "magi-lint-hook": `#!/bin/sh\necho ran >> ${canary}\n` });
      chmodSync(join(cwd, "magi-lint-hook"), 0o755);
      const server = await startTurnServer("openai-chat", {
        processes: runtime,
        fetch: runtime.fetch,
        cwd,
        env: { PATH: `${process.env.PATH ?? ""}:.` },
        settings: { hooks: { UserPromptSubmit: [{ command: "magi-lint-hook" }] } },
      });
      started.push(server);
      server.provider.enqueue(reply("openai-chat", { text: ["Hi."] }));
      const { runId } = await startTurn(server, "Hello");
      const events = await runEvents(server, runId);
      assert.equal(finished(events).outcome, "completed");
      assert.equal(existsSync(canary), false, "the repository's program did not run");
      assert.deepEqual(diagnostics(events).map((entry) => entry.code), ["hook_failed"]);
      assert.match(diagnostics(events)[0]!.summary, /could not be started/);
    });

    it("a Stop hook that always denies sends the model back at most 3 times, its reason as the next user message", async () => {
      const cwd = scripts({ "stop.sh": 'cat >/dev/null\necho \'{"decision":"deny","reason":"tests still fail"}\'\n' });
      const server = await startWith(runtime, cwd, { hooks: { Stop: [sh(join(cwd, "stop.sh"))] } });
      for (let index = 0; index < 4; index++) server.provider.enqueue(reply("openai-chat", { text: [`Answer ${index}.`] }));
      const { runId } = await startTurn(server, "Fix the tests");
      const events = await runEvents(server, runId);
      assert.equal(finished(events).outcome, "completed");
      assert.equal(server.provider.log.length, 4);
      assert.deepEqual(sent(server, 3).slice(-2).map((message) => [message.role, message.content]), [["assistant", "Answer 2."], ["user", "[Hook feedback]\ntests still fail"]]);
    });

    it("a UserPromptSubmit hook exiting 2 fails the run with execution_failed and hook_blocked_prompt; the prompt stays in the history", async () => {
      const cwd = scripts({ "ticket.sh": 'cat >/dev/null\necho "name a ticket" >&2\nexit 2\n' });
      const server = await startWith(runtime, cwd, { hooks: { UserPromptSubmit: [sh(join(cwd, "ticket.sh"))] } });
      const { sessionId, runId } = await startTurn(server, "Refactor everything");
      const events = await runEvents(server, runId);
      assert.deepEqual([finished(events).outcome, finished(events).error_code], ["failed", "execution_failed"]);
      assert.deepEqual(diagnostics(events).map((entry) => entry.code), ["hook_blocked_prompt"]);
      assert.match(diagnostics(events)[0]!.summary, /name a ticket/);
      assert.equal(server.provider.log.length, 0);
      const revision = (events.at(-1)!.data as { revision: string }).revision;
      const page = await request(server, "page", "history.page", { session_id: sessionId, revision, cursor: null });
      const entries = (page.result as { entries: { kind: string; text: string }[] }).entries;
      assert.ok(entries.some((entry) => entry.kind === "user" && entry.text === "Refactor everything"), JSON.stringify(entries));
    });

    it("an unapproved project hook never runs (canary); approved it runs; a changed argument voids the approval", async () => {
      const cwd = scripts({ "canary.sh": `cat >/dev/null\necho ran >> ${join(root, `canary-${counter}`)}\n` });
      const canary = join(root, `canary-${counter - 1}`);
      const project = { hooks: { UserPromptSubmit: [{ command: "/bin/sh", args: [join(cwd, "canary.sh")] }] } };
      const fs = new MemoryFileSystem();
      fs.writeFile("/bin/sh", "", 0o755);
      fs.writeFile(join(cwd, ".magi-code", "settings.jsonc"), JSON.stringify(project), 0o644);
      const turn = async () => {
        const server = await startWith(runtime, cwd, {}, fs);
        server.provider.enqueue(reply("openai-chat", { text: ["Hi."] }));
        const { runId } = await startTurn(server, "Hello");
        assert.equal(finished(await runEvents(server, runId)).outcome, "completed");
      };
      await turn();
      assert.equal(existsSync(canary), false, "the unapproved project hook did not run");

      // Approved as `magi-code hooks approve` does: the same statuses and approvals module.
      const { createMemoryRuntime } = await import("../runtime/memory.ts");
      const memory = createMemoryRuntime({ fs, cwd, env: { HOME: "/home/user" } });
      const hooks = configuredHooks({ file: `${HOME}/settings.jsonc` }, { file: join(cwd, ".magi-code", "settings.jsonc"), hooks: project.hooks as HooksSettings });
      const [status] = await hookStatuses(memory, hooks, [], cwd);
      assert.equal(status!.state, "not_approved");
      assert.ok((await updateApprovals(memory, HOME, (current) => withApproval(current, hookApprovalFor(status!)!))).ok);
      await turn();
      assert.equal(readFileSync(canary, "utf8"), "ran\n");

      project.hooks.UserPromptSubmit[0]!.args.push("--changed");
      fs.writeFile(join(cwd, ".magi-code", "settings.jsonc"), JSON.stringify(project), 0o644);
      await turn();
      assert.equal(readFileSync(canary, "utf8"), "ran\n", "the changed hook did not run");
    });
  });
}
