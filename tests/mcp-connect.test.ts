/**
 * connectMcpServers() against real MCP servers, on each real runtime (Node,
 * and Deno under Deno): `server-everything` over stdio and Streamable HTTP,
 * `server-filesystem` over stdio. Startup lists every tool under its
 * exposed name, calls reach the server and come back bounded, and closing
 * leaves no server process in the process table.
 */

import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { connectMcpServers, type McpManager } from "../src/mcp/connect.ts";
import type { ExternalTool } from "../src/runner/tools/external.ts";
import { isPrepared, type ToolContext, type ToolResult } from "../src/runner/tools/tool.ts";
import { guarded } from "./support/hang-guard.ts";
import { everythingStdio, filesystemStdio, isRunning, httpServer, startEverythingHttp } from "./support/mcp-servers.ts";
import { spawningRuntimes } from "./support/tools.ts";
import type { Runtime } from "../src/host/runtime.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-mcp-connect-")));
after(() => rmSync(root, { recursive: true, force: true }));

function context(runtime: Runtime, signal = new AbortController().signal, secrets: readonly string[] = []): ToolContext {
  return { runtime, workspace: root, home: join(root, "home"), signal, secrets };
}

/** Prepares and runs `name` with `args`, as an `allow` policy would. */
async function call(manager: McpManager, runtime: Runtime, name: string, args: unknown, secrets: readonly string[] = []): Promise<ToolResult> {
  const tool = manager.find(name);
  assert.ok(tool, `tool ${name} is exposed`);
  const prepared = await tool.prepare(args, context(runtime, undefined, secrets));
  assert.ok(isPrepared(prepared), `${name} prepared`);
  return await guarded(prepared.run(), `${name} to answer`);
}

async function connected(runtime: Runtime, ...definitions: Parameters<typeof connectMcpServers>[2]): Promise<McpManager> {
  const result = await guarded(connectMcpServers(runtime, null, definitions, new AbortController().signal), "servers to connect");
  assert.ok(result.ok, `connected: ${JSON.stringify(!result.ok && result.failure)}`);
  return result.manager;
}

for (const [runtimeName, runtime] of spawningRuntimes()) {
  describe(`connectMcpServers() on ${runtimeName}`, () => {
    it("server-everything over stdio: lists its tools, calls echo, summarises an image, and leaves no process after close()", async () => {
      const manager = await connected(runtime, everythingStdio("everything", root));
      try {
        const [server] = manager.servers;
        assert.ok(server !== undefined && server.pid !== null);
        const names = manager.offered().map((tool: ExternalTool) => tool.name);
        assert.ok(names.includes("mcp__everything__echo"), names.join(", "));
        assert.ok(names.every((name) => /^mcp__everything__[A-Za-z0-9_-]+$/.test(name) && name.length <= 64), names.join(", "));
        // No sampling, elicitation or roots advertised: the tools that need them are not offered.
        assert.ok(!names.some((name) => /sampling|elicitation|roots/.test(name)), names.join(", "));
        assert.equal(manager.find("mcp__everything__echo")!.policy, "ask");

        const echoed = await call(manager, runtime, "mcp__everything__echo", { message: "hello from magi" });
        assert.equal(echoed.ok, true);
        assert.match(echoed.output, /hello from magi/);
        assert.match(echoed.summary, /^everything "echo": completed \(\d+ bytes of text\)$/);

        const image = await call(manager, runtime, "mcp__everything__get-tiny-image", {});
        assert.equal(image.ok, true);
        assert.match(image.output, /\[image: image\/png, [\d.]+ (bytes|KiB), not shown\]/);
        assert.doesNotMatch(image.output, /iVBOR/, "no base64 payload reaches the model");
      } finally {
        await guarded(manager.close(), "close()");
      }
      assert.equal(isRunning(manager.servers[0]!.pid!), false, "the server process is gone");
    });

    it("a server inherits only the allowlisted variables and the ones its definition names", async () => {
      process.env.MAGI_TEST_SECRET_TOKEN = "sk-should-not-leak-0123456789";
      let manager: McpManager;
      try {
        manager = await connected(runtime, everythingStdio("env", root, { env: { MAGI_PASSED: "passed-by-name" } }));
      } finally {
        delete process.env.MAGI_TEST_SECRET_TOKEN;
      }
      try {
        const result = await call(manager, runtime, "mcp__env__get-env", {});
        assert.equal(result.ok, true);
        assert.match(result.output, /MAGI_PASSED/);
        assert.doesNotMatch(result.output, /MAGI_TEST_SECRET_TOKEN|sk-should-not-leak/);
      } finally {
        await guarded(manager.close(), "close()");
      }
    });

    it("server-filesystem over stdio: lists and reads a file in its directory", async () => {
      const directory = realpathSync(mkdtempSync(join(root, "fs-")));
      writeFileSync(join(directory, "note.txt"), "a note for the model\n");
      const manager = await connected(runtime, filesystemStdio("files", directory));
      try {
        const listed = await call(manager, runtime, "mcp__files__list_directory", { path: directory });
        assert.equal(listed.ok, true, listed.output);
        assert.match(listed.output, /note\.txt/);
        const read = await call(manager, runtime, "mcp__files__read_text_file", { path: join(directory, "note.txt") });
        assert.equal(read.ok, true, read.output);
        assert.match(read.output, /a note for the model/);
        const outside = await call(manager, runtime, "mcp__files__read_text_file", { path: "/etc/hostname" });
        assert.equal(outside.ok, false, "the server's own refusal reaches the model as a failure");
      } finally {
        await guarded(manager.close(), "close()");
      }
      assert.equal(isRunning(manager.servers[0]!.pid!), false);
    });

    it("server-everything over Streamable HTTP: lists, calls echo, and ends its session on close()", async () => {
      const server = await startEverythingHttp();
      try {
        const manager = await connected(runtime, httpServer("remote", server.url, { toolPolicies: { echo: "allow" } }));
        try {
          assert.equal(manager.find("mcp__remote__echo")!.policy, "allow");
          const echoed = await call(manager, runtime, "mcp__remote__echo", { message: "over http" });
          assert.equal(echoed.ok, true, echoed.output);
          assert.match(echoed.output, /over http/);
        } finally {
          await guarded(manager.close(), "close()");
        }
        // The session DELETE reached the server, which logs the session it removed.
        await guarded((async () => {
          while (!/Session termination|Transport closed for session/.test(server.log())) await new Promise((resolve) => setTimeout(resolve, 10));
        })(), "the session to end");
      } finally {
        await server.stop();
      }
    });
  });
}
