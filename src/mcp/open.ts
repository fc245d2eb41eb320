/**
 * Opening one server at startup: start it, complete the MCP handshake and
 * list its tools (every page), all within its `startupTimeoutMs`; on any
 * failure close what was started and say which of a small fixed set of
 * reasons it was. The reason is all that leaves here: never the server's
 * output, an exception message, its environment or its headers.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { settlesWithin } from "../util/async.ts";
import type { McpServerDefinition } from "./definition.ts";
import { type ConnectionStart, McpConnection } from "./connection.ts";
import { UnauthorizedError } from "./sdk.ts";
import { StdioTransport } from "./stdio-transport.ts";
import type { ListRefusal } from "./tool-list.ts";

/** Why a server could not be started; `connectMcpServers` reports the first. */
export type McpFailureReason =
  | "spawn_failed"
  | "exited"
  | "handshake_failed"
  | "timeout"
  | "list_failed"
  | "invalid_schema"
  | "name_collision"
  | "auth_required"
  | "cancelled";

/** A failed start: the server's settings name, the reason, and the tool concerned, if one is. */
export interface McpStartFailure {
  readonly server: string;
  readonly reason: McpFailureReason;
  /** The server's own tool name for `invalid_schema` and `name_collision`, when it has a usable one. */
  readonly tool: string | null;
}

/** What {@link openServer} resolves with. */
export type Opened = { readonly ok: true; readonly connection: McpConnection } | { readonly ok: false; readonly failure: McpStartFailure };

class Refused extends Error {
  readonly refusal: ListRefusal;
  constructor(refusal: ListRefusal) {
    super(refusal.reason);
    this.refusal = refusal;
  }
}

/**
 * How long a failed handshake waits to see whether the server exited: a
 * server that dies at once can fail the first write before its exit is seen.
 */
const EXIT_SETTLE_MS = 250;

/** Why the attempt on `connection` failed with `error` in `phase`. */
async function reasonOf(runtime: Runtime, connection: McpConnection, phase: "handshake" | "list", error: unknown): Promise<McpFailureReason> {
  if (error instanceof Refused) return error.refusal.reason;
  // The OAuth provider refused to start a new authorization (startup never prompts), or the SDK gave up on one.
  if (error instanceof UnauthorizedError || (error instanceof Error && error.name === "LoginNeeded")) return "auth_required";
  const transport = connection.transport;
  if (transport instanceof StdioTransport) {
    if (transport.pid === null) return "spawn_failed";
    if (await settlesWithin(transport.exited, EXIT_SETTLE_MS, (ms, callback) => runtime.setTimer(ms, callback))) return "exited";
  }
  if (connection.unauthorized) return "auth_required";
  if (connection.stopped) return "exited";
  return phase === "handshake" ? "handshake_failed" : "list_failed";
}

/**
 * Opens `definition`'s server. `signal` cancels the attempt (`cancelled`);
 * the server's own `startupTimeoutMs` bounds it (`timeout`). A failed
 * attempt has closed everything it started or took over when this resolves.
 */
export async function openServer(runtime: Runtime, definition: McpServerDefinition, signal: AbortSignal, options: ConnectionStart = {}): Promise<Opened> {
  const connection = new McpConnection(runtime, definition, options);
  const attempt = new AbortController();
  let timedOut = false;
  // A server spawned before the MCP chunk loaded has used part of its bound already.
  const spent = options.launched === undefined ? 0 : runtime.monotonicNow() - options.launched.startedAt;
  const timer = runtime.setTimer(Math.max(0, definition.startupTimeoutMs - spent), () => {
    timedOut = true;
    attempt.abort("timeout");
  });
  const cancel = () => attempt.abort("cancelled");
  if (signal.aborted) cancel();
  else signal.addEventListener("abort", cancel, { once: true });
  let phase: "handshake" | "list" = "handshake";
  try {
    if (attempt.signal.aborted) throw new Error("cancelled");
    // The SDK's own request timeout (60 s by default) must not cut a longer startup bound short.
    await connection.client.connect(connection.transport, { signal: attempt.signal, timeout: definition.startupTimeoutMs });
    phase = "list";
    const listed = await connection.list(attempt.signal, definition.startupTimeoutMs);
    if (!listed.ok) throw new Refused(listed);
    connection.adopt(listed.tools);
    return { ok: true, connection };
  } catch (error) {
    const reason = timedOut ? "timeout" : signal.aborted ? "cancelled" : await reasonOf(runtime, connection, phase, error);
    const tool = error instanceof Refused && error.refusal.reason === "invalid_schema" ? error.refusal.tool : null;
    await connection.close(runtime);
    return { ok: false, failure: { server: definition.name, reason, tool } };
  } finally {
    timer.dispose();
    signal.removeEventListener("abort", cancel);
  }
}
