/**
 * Startup's MCP step, as admission calls it: spawn every stdio server at
 * once, then load the MCP chunk (`connect.ts`: the connection layer and the
 * SDK) and connect them. Spawning needs no SDK (`server-process.ts`), so the
 * chunk loads while the servers start instead of before they do: a
 * server's start, typically hundreds of milliseconds, hides the chunk's
 * load. This module is what admission imports when at least one server is
 * startable, and it loads nothing of the SDK itself.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import type { McpServerDefinition } from "./definition.ts";
import type { McpConnectResult } from "./connect.ts";
import { ServerProcess } from "./server-process.ts";

/**
 * Connects `definitions` (all startable) as `connectMcpServers` does, its
 * stdio servers spawned before the chunk loads. If the chunk cannot be
 * loaded (a damaged installation) or connecting throws, every server
 * spawned here is stopped before the error is rethrown.
 */
export async function startMcpServers(runtime: Runtime, home: string, definitions: readonly McpServerDefinition[], signal: AbortSignal): Promise<McpConnectResult> {
  const launched = signal.aborted
    ? []
    : definitions.map((definition) => (definition.transport === "stdio" ? ServerProcess.spawn(runtime, definition) : undefined));
  try {
    const { connectMcpServers } = await import("./connect.ts");
    return await connectMcpServers(runtime, home, definitions, signal, launched);
  } catch (error) {
    await Promise.all(launched.map((server) => server?.stop()));
    throw error;
  }
}
