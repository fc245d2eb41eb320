/**
 * Startup's MCP step: open every startable server at once, each within its
 * own `startupTimeoutMs`, strictly. The first failure cancels the attempts
 * still running and closes every server already connected before it is
 * reported; so does cancelling `signal` (shutdown or EOF during startup).
 * When every server connected, their exposed tool names must be distinct
 * across servers, or startup fails naming the collision.
 *
 * This module is the entry of the MCP chunk: startup loads it through
 * `start.ts` only when at least one server is startable (so a child with
 * none loads no MCP code and no SDK), after spawning the stdio servers.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import type { McpServerDefinition } from "./definition.ts";
import type { McpConnection } from "./connection.ts";
import { McpManager } from "./manager.ts";
import { type McpStartFailure, openServer } from "./open.ts";
import type { ServerProcess } from "./server-process.ts";
import { firstCollision } from "./tool-list.ts";
import { startupAuthProviders } from "./stored-auth.ts";

export type { McpFailureReason, McpStartFailure } from "./open.ts";
export { McpManager } from "./manager.ts";

/** What {@link connectMcpServers} resolves with. */
export type McpConnectResult =
  | { readonly ok: true; readonly manager: McpManager }
  | { readonly ok: false; readonly failure: McpStartFailure };

/**
 * Connects `definitions` (all startable: enabled and approved) and lists
 * their tools; an HTTP server with a login stored in `home`'s tokens file
 * uses it (refreshing it if the server says it expired). `launched` holds,
 * at a stdio definition's index, its process if it was spawned already
 * (`start.ts`); this takes it over. On failure nothing it started or took
 * over is left running when it resolves.
 */
export async function connectMcpServers(
  runtime: Runtime,
  home: string | null,
  definitions: readonly McpServerDefinition[],
  signal: AbortSignal,
  launched: readonly (ServerProcess | undefined)[] = [],
): Promise<McpConnectResult> {
  const attempts = new AbortController();
  const cancel = () => attempts.abort();
  if (signal.aborted) cancel();
  else signal.addEventListener("abort", cancel, { once: true });
  let first: McpStartFailure | null = null;
  const connections: McpConnection[] = [];
  const providers = await startupAuthProviders(runtime, home, definitions);
  try {
    await Promise.all(definitions.map(async (definition, index) => {
      const opened = await openServer(runtime, definition, attempts.signal, { authProvider: providers[index], launched: launched[index] });
      if (opened.ok) connections[index] = opened.connection;
      else if (first === null) {
        // Strict: the first failure is the one reported; the others are cancelled by it.
        first = opened.failure;
        attempts.abort();
      }
    }));
  } finally {
    signal.removeEventListener("abort", cancel);
  }
  const connected = connections.filter((connection) => connection !== undefined);
  const collision = first === null ? firstCollision(connected.map((connection) => ({ server: connection.server, tools: connection.tools }))) : null;
  const failure: McpStartFailure | null = first ??
    (collision !== null ? { server: collision.server, reason: "name_collision", tool: collision.tool } : null) ??
    (signal.aborted ? { server: definitions[0]?.name ?? "", reason: "cancelled", tool: null } : null);
  const manager = new McpManager(runtime, connected);
  if (failure === null) return { ok: true, manager };
  await manager.close();
  return { ok: false, failure };
}

/** What `mcp list` learns of one server by connecting it the way startup does. */
export type McpProbe =
  | { readonly server: string; readonly ok: true; readonly tools: number }
  | { readonly server: string; readonly ok: false; readonly failure: McpStartFailure };

/**
 * Connects each of `definitions` on its own, as startup would (the same
 * bounds and checks, name collisions across them included), reports each,
 * and closes them all again. Unlike startup, one failure does not cancel
 * the others, so a person sees every server that would fail.
 */
export async function probeMcpServers(runtime: Runtime, home: string, definitions: readonly McpServerDefinition[], signal: AbortSignal): Promise<readonly McpProbe[]> {
  const providers = await startupAuthProviders(runtime, home, definitions);
  const opened = await Promise.all(definitions.map((definition, index) => openServer(runtime, definition, signal, { authProvider: providers[index] })));
  const connected = opened.flatMap((result) => (result.ok ? [result.connection] : []));
  const collision = firstCollision(connected.map((connection) => ({ server: connection.server, tools: connection.tools })));
  await new McpManager(runtime, connected).close();
  return opened.map((result, index): McpProbe => {
    const server = definitions[index]!.name;
    if (!result.ok) return { server, ok: false, failure: result.failure };
    if (collision !== null && collision.server === server) return { server, ok: false, failure: { server, reason: "name_collision", tool: collision.tool } };
    return { server, ok: true, tools: result.connection.tools.length };
  });
}

