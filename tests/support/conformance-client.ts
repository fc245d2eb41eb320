/**
 * The client-under-test the MCP conformance kit spawns
 * (`@modelcontextprotocol/conformance client --command …`): it appends the
 * scenario server's URL as the last argument and names the scenario in
 * `MCP_CONFORMANCE_SCENARIO`. This drives our own MCP client code on the
 * runtime that runs it (Node from dist/, Deno from source): for an `auth/*`
 * scenario the `mcp login` flow (the kit's authorization endpoint redirects
 * at once, so fetching the printed URL plays the browser and reaches our
 * loopback listener), then the startup connection with the stored login;
 * the `initialize` handshake and `tools/list`; and every tool the server
 * lists, called with the arguments the kit's tools take.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import type { Runtime } from "../../src/host/runtime.ts";
import type { McpServerDefinition } from "../../src/mcp/definition.ts";
import { connectMcpServers } from "../../src/mcp/connect.ts";
import { loginMcpServer } from "../../src/mcp/oauth-login.ts";
import { isPrepared } from "../../src/runner/tools/tool.ts";
import { browse } from "./oauth-browser.ts";

import { createNodeRuntime } from "../../runtime/node-runtime.ts";

// A variable specifier keeps tsc from compiling the Deno adapter for Node (as support/tools.ts does).
const denoAdapter = "../../runtime/deno-runtime.ts";
const runtime: Runtime = "Deno" in globalThis
  ? (await import(denoAdapter) as { createDenoRuntime(): Runtime }).createDenoRuntime()
  : createNodeRuntime();
const url = process.argv.at(-1)!;
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const home = mkdtempSync(join(tmpdir(), "magi-conformance-"));
const definition: Extract<McpServerDefinition, { transport: "http" }> = {
  transport: "http",
  name: "conformance",
  url,
  headers: {},
  bearerToken: null,
  startupTimeoutMs: 20_000,
  toolTimeoutMs: 20_000,
  toolPolicies: {},
};

async function main(): Promise<number> {
  if (scenario.startsWith("auth/")) {
    const login = await loginMcpServer(runtime, home, definition, (authorization) => void browse(authorization.href));
    if (!login.ok) {
      console.error(`login failed: ${login.reason}`);
      return 1;
    }
  }
  const connected = await connectMcpServers(runtime, home, [definition], new AbortController().signal);
  if (!connected.ok) {
    console.error(`connect failed: ${connected.failure.reason}`);
    return 1;
  }
  const manager = connected.manager;
  try {
    for (const tool of manager.offered()) {
      const prepared = await tool.prepare({ a: 2, b: 3 }, { runtime, workspace: home, home, signal: new AbortController().signal, secrets: [] });
      if (isPrepared(prepared)) console.log(`${tool.name}: ${(await prepared.run()).ok ? "ok" : "failed"}`);
    }
  } finally {
    await manager.close();
  }
  return 0;
}

const code = await main().catch((error) => {
  console.error(error instanceof Error ? error.message : String(error));
  return 1;
});
rmSync(home, { recursive: true, force: true });
process.exit(code);
