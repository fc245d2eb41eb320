/**
 * Misbehaving MCP servers (tests/support/mcp-fault-server.mjs, and a
 * loopback HTTP server answering 401) against connectMcpServers() on each
 * real runtime: every fault at startup gives its named reason and leaves no
 * process in the process table; every fault during a call gives a bounded
 * failed call.
 */

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { Runtime } from "../src/host/runtime.ts";
import { connectMcpServers, type McpConnectResult, type McpManager } from "../src/mcp/connect.ts";
import type { McpServerDefinition } from "../src/mcp/definition.ts";
import { isPrepared, MAX_OUTPUT_BYTES, type ToolResult } from "../src/runner/tools/tool.ts";
import { eventually, guarded } from "./support/hang-guard.ts";
import { faultServer, groupMembers, httpServer, isRunning, recordFiles } from "./support/mcp-servers.ts";
import { spawningRuntimes } from "./support/tools.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-mcp-faults-")));
after(() => rmSync(root, { recursive: true, force: true }));

const records = recordFiles(root);
const recordFile = records.next;
const recorded = records.lines;
const pidOf = records.pid;

function connect(runtime: Runtime, definitions: McpServerDefinition[], signal = new AbortController().signal): Promise<McpConnectResult> {
  return guarded(connectMcpServers(runtime, null, definitions, signal), "connectMcpServers");
}

async function connected(runtime: Runtime, definitions: McpServerDefinition[]): Promise<McpManager> {
  const result = await connect(runtime, definitions);
  assert.ok(result.ok, JSON.stringify(!result.ok && result.failure));
  return result.manager;
}

async function call(manager: McpManager, runtime: Runtime, name: string, args: Record<string, unknown> = {}, signal = new AbortController().signal): Promise<ToolResult> {
  const prepared = await manager.find(name)!.prepare(args, { runtime, workspace: root, home: join(root, "home"), signal, secrets: [] });
  assert.ok(isPrepared(prepared), `${name} prepared`);
  return await guarded(prepared.run(), `${name} to end`);
}

/** Starts a loopback HTTP server that answers 401 to everything; returns its URL, the headers it saw and a stop. */
async function unauthorizedServer(): Promise<{ url: string; seen: IncomingHttpHeaders[]; stop(): Promise<void> }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    seen.push(request.headers);
    request.resume();
    response.writeHead(401, { "www-authenticate": 'Bearer realm="test"' }).end("login needed");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return { url: `http://127.0.0.1:${port}/mcp`, seen, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}

for (const [runtimeName, runtime] of spawningRuntimes()) {
  describe(`MCP faults on ${runtimeName}`, () => {
    for (const [mode, reason, tool] of [
      ["exit-handshake", "exited", null],
      ["huge-schema", "invalid_schema", "huge"],
      ["invalid-schema", "invalid_schema", "wrong"],
      ["collide", "name_collision", "a_b"],
    ] as const) {
      it(`a server in mode ${mode} fails startup with ${reason} and leaves no process`, async () => {
        const record = recordFile();
        const result = await connect(runtime, [faultServer("fault", mode, root, record)]);
        assert.deepEqual(result.ok ? null : result.failure, { server: "fault", reason, tool });
        assert.equal(isRunning(pidOf(record)), false);
      });
    }

    it("a server that never answers fails startup with timeout after its startupTimeoutMs, and leaves no process", async () => {
      const record = recordFile();
      const result = await connect(runtime, [faultServer("mute", "silent", root, record, { startupTimeoutMs: 300 })]);
      assert.deepEqual(result.ok ? null : result.failure, { server: "mute", reason: "timeout", tool: null });
      assert.equal(isRunning(pidOf(record)), false);
    });

    it("a command that cannot be started fails startup with spawn_failed", async () => {
      const missing = { ...faultServer("missing", "well", root), command: join(root, "no-such-server") };
      const result = await connect(runtime, [missing]);
      assert.deepEqual(result.ok ? null : result.failure, { server: "missing", reason: "spawn_failed", tool: null });
    });

    it("an HTTP server answering 401 fails startup with auth_required, and got the bearer token", async () => {
      const server = await unauthorizedServer();
      try {
        const result = await connect(runtime, [httpServer("hosted", server.url, { headers: { "x-team": "blue" }, bearerToken: "token-value-123" })]);
        assert.deepEqual(result.ok ? null : result.failure, { server: "hosted", reason: "auth_required", tool: null });
        assert.equal(server.seen[0]?.authorization, "Bearer token-value-123");
        assert.equal(server.seen[0]?.["x-team"], "blue");
      } finally {
        await server.stop();
      }
    });

    for (const [mode, reason, pages] of [["many-pages", "list_failed", 2], ["heavy-pages", "invalid_schema", 5]] as const) {
      it(`tools/list in mode ${mode} fails with ${reason} after page ${pages}, the first over the bound, without asking for more`, async () => {
        const record = recordFile();
        const result = await connect(runtime, [faultServer("endless", mode, root, record)]);
        assert.equal(result.ok ? null : result.failure.reason, reason);
        assert.equal(recorded(record).filter((line) => line === "tools/list").length, pages);
      });
    }

    it("one failing server fails startup and closes the servers that had connected", async () => {
      const good = recordFile();
      const bad = recordFile();
      const result = await connect(runtime, [
        faultServer("good", "well", root, good),
        faultServer("bad", "exit-handshake", root, bad, { startupTimeoutMs: 30_000 }),
      ]);
      assert.deepEqual(result.ok ? null : result.failure, { server: "bad", reason: "exited", tool: null });
      assert.equal(isRunning(pidOf(good)), false, "the server that connected was closed");
      assert.equal(isRunning(pidOf(bad)), false);
    });

    it("cancelling startup while a server handshakes answers cancelled and leaves no process", async () => {
      const record = recordFile();
      const abort = new AbortController();
      const pending = connect(runtime, [faultServer("slow", "silent", root, record)], abort.signal);
      await eventually(() => recorded(record).includes("initialize"), "the handshake to start");
      abort.abort();
      const result = await pending;
      assert.equal(result.ok ? null : result.failure.reason, "cancelled");
      assert.equal(isRunning(pidOf(record)), false);
    });

    it("a server flooding stderr still connects and answers: its stderr is drained and dropped", async () => {
      const manager = await connected(runtime, [faultServer("noisy", "stderr-flood", root)]);
      try {
        const result = await call(manager, runtime, "mcp__noisy__echo", { text: "still here" });
        assert.equal(result.output, "echo: still here");
      } finally {
        await manager.close();
      }
    });

    it("tools/list is read across every page", async () => {
      const manager = await connected(runtime, [faultServer("pages", "paged", root)]);
      try {
        assert.deepEqual(manager.offered().map((tool) => tool.name), ["mcp__pages__page0", "mcp__pages__page1", "mcp__pages__page2"]);
      } finally {
        await manager.close();
      }
    });

    it("a relist after list_changed is bounded as a whole by tool_timeout_ms, not per page", async () => {
      // Two pages of 700 ms each: within the bound one page at a time, over it together.
      const manager = await connected(runtime, [faultServer("slowlist", "slow-pages", root, undefined, { toolTimeoutMs: 1000 })]);
      try {
        assert.equal((await call(manager, runtime, "mcp__slowlist__grow")).ok, true);
        await guarded(manager.refresh(new AbortController().signal), "refresh()");
        assert.ok(!manager.offered().some((tool) => tool.name === "mcp__slowlist__grown"), "the late list was not taken");
        assert.deepEqual(manager.takeNotices().map((notice) => notice.code), ["mcp_tools_unchanged"]);
      } finally {
        await manager.close();
      }
    });

    it("a server that dies mid-call fails the call clearly, is reported once, and its tools are no longer offered", async () => {
      const record = recordFile();
      const manager = await connected(runtime, [faultServer("fragile", "well", root, record)]);
      try {
        const result = await call(manager, runtime, "mcp__fragile__crash");
        assert.equal(result.ok, false);
        assert.match(result.output, /has stopped/);
        assert.match(result.summary, /the server has stopped/);
        const notices = manager.takeNotices();
        assert.deepEqual(notices.map((notice) => notice.code), ["mcp_server_stopped"]);
        assert.match(notices[0]!.summary, /"fragile"/);
        assert.deepEqual(manager.takeNotices(), [], "reported once");
        assert.deepEqual(manager.offered(), []);
        // Still callable by name, and refused before anyone is asked.
        const again = await manager.find("mcp__fragile__echo")!.prepare({ text: "x" }, { runtime, workspace: root, home: root, signal: new AbortController().signal, secrets: [] });
        assert.equal(isPrepared(again), false);
        assert.equal(isRunning(pidOf(record)), false);
      } finally {
        await manager.close();
      }
    });

    it("cancelling a call sends notifications/cancelled and returns at once, even when the server ignores it", async () => {
      const record = recordFile();
      const manager = await connected(runtime, [faultServer("stubborn", "well", root, record)]);
      try {
        const abort = new AbortController();
        const pending = call(manager, runtime, "mcp__stubborn__slow", {}, abort.signal);
        await eventually(() => recorded(record).includes("tools/call"), "the call to reach the server");
        abort.abort();
        const result = await pending;
        assert.equal(result.ok, false);
        assert.match(result.summary, /cancelled/);
        await eventually(() => recorded(record).includes("notifications/cancelled"), "the cancellation to reach the server");
        assert.equal((await call(manager, runtime, "mcp__stubborn__echo", { text: "after" })).output, "echo: after");
      } finally {
        await manager.close();
      }
    });

    it("a call that outlives tool_timeout_ms fails with the timeout and is cancelled on the server", async () => {
      const record = recordFile();
      const manager = await connected(runtime, [faultServer("late", "well", root, record, { toolTimeoutMs: 300 })]);
      try {
        const result = await call(manager, runtime, "mcp__late__slow");
        assert.equal(result.ok, false);
        assert.match(result.output, /did not answer within 300 ms/);
        await eventually(() => recorded(record).includes("notifications/cancelled"), "the cancellation to reach the server");
      } finally {
        await manager.close();
      }
    });

    it("a 10 MiB answer fails the call within the bound, and the server keeps serving", async () => {
      const manager = await connected(runtime, [faultServer("huge", "well", root)]);
      try {
        const result = await call(manager, runtime, "mcp__huge__big");
        assert.equal(result.ok, false);
        assert.match(result.output, /larger than 4\.0 MiB/);
        assert.ok(new TextEncoder().encode(result.output).length <= MAX_OUTPUT_BYTES);
        assert.equal((await call(manager, runtime, "mcp__huge__echo", { text: "next" })).output, "echo: next");
      } finally {
        await manager.close();
      }
    });

    it("notifications/tools/list_changed makes refresh() list again", async () => {
      const manager = await connected(runtime, [faultServer("growing", "well", root)]);
      try {
        assert.equal(manager.find("mcp__growing__grown"), undefined);
        assert.equal((await call(manager, runtime, "mcp__growing__grow")).output, "grown");
        await manager.refresh(new AbortController().signal);
        assert.ok(manager.offered().some((tool) => tool.name === "mcp__growing__grown"));
      } finally {
        await manager.close();
      }
    });

    it("close() stops a server that ignores stdin's end and SIGTERM, and its whole process group", async () => {
      const record = recordFile();
      const manager = await connected(runtime, [faultServer("stubborn", "stubborn", root, record)]);
      const pid = pidOf(record);
      const grandchild = Number(recorded(record).find((line) => line.startsWith("grandchild "))!.slice(11));
      assert.ok(isRunning(grandchild));
      assert.deepEqual(groupMembers(pid).sort(), [pid, grandchild].sort(), "the grandchild shares the server's group");
      await guarded(manager.close(), "close()");
      // close() awaits the server's own exit, so it is reaped by now.
      assert.equal(existsSync(`/proc/${pid}`), false, "the server is gone from the process table");
      // The grandchild got SIGKILL too, but dies when next scheduled and is reaped by init on its own time.
      await eventually(() => !isRunning(grandchild) && groupMembers(pid).length === 0, "the grandchild to die");
    });
  });
}
