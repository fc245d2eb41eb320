/**
 * MCP servers in the startup task and in cleanup, through a whole server on
 * the in-memory runtime whose subprocesses are the real runtime's (Node,
 * and Deno under Deno): a failed server is `mcp_unavailable` after every
 * started server was closed; shutdown or EOF during startup answers
 * `startup_cancelled` and leaves no server process; a ready child closes
 * every server (its whole process group) on shutdown, before the session
 * leases are released. Every "no process" claim reads the process table.
 */

import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { Runtime } from "../src/host/runtime.ts";
import type { McpServerDefinition } from "../src/mcp/definition.ts";
import { initLine, line, type Run, startServer } from "./support/harness.ts";
import { eventually, guarded } from "./support/hang-guard.ts";
import { faultServer, groupMembers, isRunning, recordFiles } from "./support/mcp-servers.ts";
import { reply } from "./support/provider-scripts.ts";
import { spawningRuntimes } from "./support/tools.ts";
import { HOME, request, runEvents, startTurn, startTurnServer, TURN_CAPABILITIES } from "./support/turns.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-mcp-startup-")));
after(() => rmSync(root, { recursive: true, force: true }));

const records = recordFiles(root);
const recordFile = records.next;
const lines = records.lines;
const pidOf = records.pid;

// A test that fails midway leaves its server (and its MCP servers) running: close them all, or the file never exits.
const started: (Run & { provider?: { close(): Promise<void> } })[] = [];
after(async () => {
  for (const run of started) {
    run.runtime.input.end();
    await run.exit.catch(() => {});
    await run.provider?.close();
  }
});

/** A server whose startup starts `definitions` with `runtime`'s subprocesses; initialize is sent but not awaited. */
function starting(runtime: Runtime, definitions: McpServerDefinition[]): Run {
  const run = startServer({ processes: runtime, env: { PATH: process.env.PATH ?? "" }, mcpServers: () => Promise.resolve(definitions) });
  run.runtime.fs.writeFile(`${HOME}/settings.jsonc`, JSON.stringify({ model: { provider: "ollama", model: "qwen" } }), 0o600);
  run.runtime.input.push(initLine("init", ["status", "shutdown"]));
  started.push(run);
  return run;
}

async function response(run: Run, id: string): Promise<Record<string, unknown>> {
  for (;;) {
    const found = run.frames().find((frame) => frame.type === "response" && frame.id === id);
    if (found) return found;
    await run.waitFrames(run.frames().length + 1);
  }
}

for (const [runtimeName, runtime] of spawningRuntimes()) {
  describe(`MCP startup and cleanup on ${runtimeName}`, () => {
    it("a failing server fails initialize with mcp_unavailable (the code alone), after the server that connected was closed", async () => {
      const good = recordFile();
      const bad = recordFile();
      const run = starting(runtime, [faultServer("good", "well", root, good), faultServer("bad", "invalid-schema", root, bad)]);
      const answered = await response(run, "init");
      assert.deepEqual(answered.error, { code: "mcp_unavailable" });
      assert.equal(isRunning(pidOf(good)), false);
      assert.equal(isRunning(pidOf(bad)), false);
      run.runtime.input.push(line("status", "status"));
      const status = await response(run, "status");
      assert.equal((status.result as { readiness: string }).readiness, "mcp_unavailable");
      run.runtime.input.end();
      assert.equal(await guarded(run.exit, "exit"), 0);
    });

    for (const how of ["shutdown", "EOF"] as const) {
      it(`${how} during startup answers startup_cancelled and leaves no server process`, async () => {
        const record = recordFile();
        const run = starting(runtime, [faultServer("slow", "silent", root, record)]);
        await eventually(() => lines(record).includes("initialize"), "the handshake to start");
        if (how === "shutdown") run.runtime.input.push(line("bye", "shutdown"));
        else run.runtime.input.end();
        const answered = await response(run, "init");
        assert.deepEqual(answered.error, { code: "startup_cancelled" });
        await guarded(run.exit, "exit");
        assert.equal(isRunning(pidOf(record)), false);
      });
    }

    it("shutdown closes every server's whole group, and the session lease is released only after that", async () => {
      const record = recordFile();
      const server = await startTurnServer("openai-chat", {
        processes: runtime,
        env: { PATH: process.env.PATH ?? "" },
        mcpServers: () => Promise.resolve([faultServer("stubborn", "stubborn", root, record)]),
        capabilities: TURN_CAPABILITIES,
      });
      started.push(server);
      const pid = pidOf(record);
      const grandchild = Number(lines(record).find((entry) => entry.startsWith("grandchild "))!.slice(11));
      server.provider.enqueue(reply("openai-chat", { text: ["Hello."] }));
      const { sessionId, runId } = await startTurn(server, "Hello");
      await runEvents(server, runId);
      const lease = `${HOME}/sessions/${sessionId}.writer.lease`;
      const leaseHeld = () => server.runtime.fs.exists(lease);
      assert.ok(leaseHeld(), "a durable session holds its lease");
      // The server ignores stdin's end and SIGTERM: closing it takes the whole escalation.
      let runningWhenReleased: boolean | null = null;
      const watch = eventually(() => {
        if (leaseHeld()) return false;
        runningWhenReleased = isRunning(pid);
        return true;
      }, "the lease to be released", { intervalMs: 1 });
      await request(server, "bye", "shutdown");
      await watch;
      assert.equal(runningWhenReleased, false, "the server was gone when the lease was released");
      assert.equal(await guarded(server.exit, "exit"), 0);
      // The grandchild got the group's SIGKILL; it dies when next scheduled and init reaps it on its own time.
      await eventually(() => !isRunning(grandchild) && groupMembers(pid).length === 0, "the grandchild to die");
      await server.provider.close();
    });
  });
}
