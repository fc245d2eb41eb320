/**
 * Startup's MCP entry (`src/mcp/start.ts`), which spawns the stdio servers
 * before the SDK loads (`src/mcp/server-process.ts`), on each real runtime:
 * a startup cancelled before it spawned starts nothing; a server spawned
 * ahead is the one the connection talks to; one spawned ahead whose startup
 * is cancelled before anything connected to it is stopped with its whole
 * process group, as a connected one would be.
 */

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { connectMcpServers } from "../src/mcp/connect.ts";
import { ServerProcess, type StdioDefinition } from "../src/mcp/server-process.ts";
import { startMcpServers } from "../src/mcp/start.ts";
import { eventually, guarded } from "./support/hang-guard.ts";
import { faultServer, groupMembers, isRunning, recordFiles } from "./support/mcp-servers.ts";
import { spawningRuntimes } from "./support/tools.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-mcp-start-")));
after(() => rmSync(root, { recursive: true, force: true }));
const records = recordFiles(root);

/** A cancelled signal. */
function cancelled(): AbortSignal {
  const abort = new AbortController();
  abort.abort();
  return abort.signal;
}

for (const [runtimeName, runtime] of spawningRuntimes()) {
  describe(`MCP start on ${runtimeName}`, () => {
    it("startMcpServers() with a cancelled signal spawns nothing and answers cancelled", async () => {
      const record = records.next();
      const result = await guarded(startMcpServers(runtime, join(root, "home"), [faultServer("well", "well", root, record)], cancelled()), "startMcpServers");
      assert.equal(result.ok ? null : result.failure.reason, "cancelled");
      assert.equal(existsSync(record), false, "the server was never spawned");
    });

    it("a server spawned ahead is the one the connection talks to; closing stops it", async () => {
      const record = records.next();
      const definition = faultServer("well", "well", root, record) as StdioDefinition;
      const launched = ServerProcess.spawn(runtime, definition);
      const result = await guarded(connectMcpServers(runtime, null, [definition], new AbortController().signal, [launched]), "connectMcpServers");
      assert.ok(result.ok, JSON.stringify(!result.ok && result.failure));
      assert.deepEqual(result.manager.servers.map((server) => server.pid), [launched.pid]);
      assert.equal(records.pid(record), launched.pid, "no second process was spawned");
      assert.ok(records.lines(record).includes("initialize"), "the handshake went to it");
      await guarded(result.manager.close(), "close()");
      assert.equal(isRunning(launched.pid!), false);
    });

    it("a server spawned ahead and cancelled before anything connected to it is stopped with its whole group", async () => {
      const record = records.next();
      const definition = faultServer("stubborn", "stubborn", root, record) as StdioDefinition;
      const launched = ServerProcess.spawn(runtime, definition);
      await eventually(() => records.lines(record).some((line) => line.startsWith("grandchild ")), "the server and its grandchild to start");
      const pid = records.pid(record);
      const result = await guarded(connectMcpServers(runtime, null, [definition], cancelled(), [launched]), "connectMcpServers");
      assert.equal(result.ok ? null : result.failure.reason, "cancelled");
      assert.ok(!records.lines(record).includes("initialize"), "nothing was sent to it");
      // Stopping awaits the server's own exit (it ignores stdin's end and SIGTERM), so it is reaped by now.
      assert.equal(existsSync(`/proc/${pid}`), false, "the server is gone from the process table");
      await eventually(() => groupMembers(pid).length === 0, "its grandchild to die");
    });

    it("a server spawned ahead that wrote and exited before anything attached fails startup with exited", async () => {
      // 256 KiB of stderr and a message on stdout, more than a pipe holds unread, then an exit before the SDK loaded.
      const script = 'process.stderr.write("x".repeat(262144)); process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "early" } }) + "\\n", () => process.exit(3));';
      const definition = faultServer("early", "well", root, undefined, { args: ["-e", script] }) as StdioDefinition;
      const launched = ServerProcess.spawn(runtime, definition);
      await eventually(() => !isRunning(launched.pid!), "the server to exit");
      const result = await guarded(connectMcpServers(runtime, null, [definition], new AbortController().signal, [launched]), "connectMcpServers");
      assert.equal(result.ok ? null : result.failure.reason, "exited");
      await guarded(launched.stopping ?? Promise.resolve(), "the stop");
      assert.equal(existsSync(`/proc/${launched.pid}`), false, "the server is gone from the process table");
    });
  });
}
