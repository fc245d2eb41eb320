/**
 * Hook faults through real turns (docs/features/runner.md, "Hooks"): a hook
 * that hangs (killed at its timeout with its whole process group), floods
 * its output, dies of a signal, does not exist or prints invalid JSON is one
 * `hook_failed` diagnostic and never blocks the call; a turn cancelled while
 * a hook runs ends cancelled with the hook's process group gone, and so
 * does a child whose input ends while a hook runs.
 */

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { Runtime } from "../src/host/runtime.ts";
import type { Frame } from "./support/harness.ts";
import { eventually } from "./support/hang-guard.ts";
import { reply } from "./support/provider-scripts.ts";
import { mirrorPrograms, spawningRuntimes } from "./support/tools.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { closedAfterAll, request, runEvents, startTurn, startTurnServer, type TurnServer } from "./support/turns.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-hooks-faults-")));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

const started = closedAfterAll();

const diagnostics = (events: readonly Frame[]) => events.filter((frame) => frame.event === "diagnostic").map((frame) => frame.data as { code: string; summary: string });
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Waits until the hook of `cwd` wrote its background child's pid. */
const hookStarted = (cwd: string) =>
  eventually(() => {
    try {
      return readFileSync(join(cwd, "bg.pid"), "utf8").endsWith("\n");
    } catch {
      return false;
    }
  }, "the hook started");

/** A workspace holding `hook.sh`, and a server whose one PreToolUse hook runs it (or `command`). */
async function serverWith(runtime: Runtime, script: string, hook: Record<string, unknown> = {}) {
  const cwd = join(root, `ws-${counter++}`);
  mkdirSync(cwd);
  writeFileSync(join(cwd, "hook.sh"), script);
  const settings = { hooks: { PreToolUse: [{ command: "sh", args: [join(cwd, "hook.sh")], ...hook }] }, tools: { shell: "allow" } };
  const fs = mirrorPrograms(new MemoryFileSystem(), ["sh"]);
  const server = await startTurnServer("openai-chat", { processes: runtime, fetch: runtime.fetch, cwd, fs, env: { PATH: process.env.PATH ?? "" }, settings });
  started.push(server);
  server.provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", name: "shell", args: { command: "echo ran" } }] }));
  server.provider.enqueue(reply("openai-chat", { text: ["Done."] }));
  return { server, cwd };
}

for (const [runtimeName, runtime] of spawningRuntimes()) {
  describe(`hook faults on ${runtimeName}`, () => {
    const failures: [string, string, Record<string, unknown>, RegExp][] = [
      ["hangs past its timeout (its whole process group is killed)", "sleep 600 &\necho $! > bg.pid\nwait\n", { timeout_ms: 300 }, /timed out \(its process group was killed\)/],
      ["floods its output", "cat >/dev/null\nhead -c 300000 /dev/zero | tr '\\0' x\n", {}, /printed more than 64 KiB/],
      ["dies of a signal", "kill -9 $$\n", {}, /was killed by SIGKILL/],
      ["does not exist", "", { command: "/nonexistent/magi-hook" }, /could not be started/],
      ["prints invalid JSON", "cat >/dev/null\necho '{not json'\n", {}, /printed something other than JSON/],
      ["answers with a field its event does not take", "cat >/dev/null\necho '{\"additional_context\":\"x\"}'\n", {}, /field PreToolUse does not take/],
    ];
    for (const [what, script, hook, why] of failures) {
      it(`a PreToolUse hook that ${what} is one hook_failed diagnostic, and the call still runs`, async () => {
        const { server, cwd } = await serverWith(runtime, script, hook);
        const { runId } = await startTurn(server, "Run it");
        const events = await runEvents(server, runId);
        assert.equal((events.at(-1)!.data as { outcome: string }).outcome, "completed");
        const found = diagnostics(events);
        assert.deepEqual(found.map((entry) => entry.code), ["hook_failed"]);
        assert.match(found[0]!.summary, why);
        const result = (server.provider.log[1]!.body as { messages: { tool_call_id?: string; content: string }[] }).messages.find((entry) => entry.tool_call_id === "call_1");
        assert.match(result!.content, /^ran/);
        if (what.startsWith("hangs")) {
          const pid = Number(readFileSync(join(cwd, "bg.pid"), "utf8"));
          await eventually(() => !alive(pid), "the hook's background child is gone");
        }
      });
    }

    const floodedDenials: [string, string, RegExp][] = [
      ["exits 2 after flooding its stderr", "cat >/dev/null\nhead -c 300000 /dev/zero | tr '\\0' x >&2\nexit 2\n", /^The tool call was denied by the user's hook: x{100}/],
      ["answers deny on stdout after flooding its stderr", "cat >/dev/null\nhead -c 300000 /dev/zero | tr '\\0' x >&2\necho '{\"decision\":\"deny\",\"reason\":\"not today\"}'\n", /^The tool call was denied by the user's hook: not today$/],
    ];
    for (const [what, script, result] of floodedDenials) {
      it(`a PreToolUse hook that ${what} still denies the call: a veto never fails open`, async () => {
        const { server } = await serverWith(runtime, script);
        const { runId } = await startTurn(server, "Run it");
        const events = await runEvents(server, runId);
        assert.equal((events.at(-1)!.data as { outcome: string }).outcome, "completed");
        assert.deepEqual(diagnostics(events), []);
        const output = (server.provider.log[1]!.body as { messages: { tool_call_id?: string; content: string }[] }).messages.find((entry) => entry.tool_call_id === "call_1");
        assert.match(output!.content, result);
      });
    }

    it("a turn cancelled while a hook runs ends cancelled, and the hook's process group is killed", async () => {
      const { server, cwd } = await serverWith(runtime, "sleep 600 &\necho $! > bg.pid\nwait\n");
      const { sessionId, runId } = await startTurn(server, "Run it");
      await hookStarted(cwd);
      await request(server, "cancel", "turn.cancel", { session_id: sessionId, run_id: runId });
      const events = await runEvents(server, runId);
      assert.equal((events.at(-1)!.data as { outcome: string }).outcome, "cancelled");
      assert.equal(events.filter((frame) => frame.event === "activity").length, 0, "the call never started");
      assert.equal(server.provider.log.length, 1);
      await eventually(() => !alive(Number(readFileSync(join(cwd, "bg.pid"), "utf8"))), "the hook's background child is gone");
    });

    it("a child whose input ends (EOF) while a hook runs kills the hook's process group", async () => {
      const { server, cwd } = await serverWith(runtime, "sleep 600 &\necho $! > bg.pid\nwait\n");
      await startTurn(server, "Run it");
      await hookStarted(cwd);
      server.runtime.input.end();
      await server.exit;
      await eventually(() => !alive(Number(readFileSync(join(cwd, "bg.pid"), "utf8"))), "no hook process outlives the child");
    });
  });
}
