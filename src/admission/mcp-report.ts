/**
 * How MCP servers are described to a person in a terminal, by
 * `magi-code mcp list | approve` and `magi-code config check`: one status
 * line per server, and the canonical definition an approval covers.
 *
 * Everything printed comes from settings files, which a cloned repository
 * may have written, so text is made terminal-safe: strings are JSON-quoted,
 * and every control, format (bidirectional overrides, zero-width),
 * default-ignorable, unassigned or private-use character, line or paragraph
 * separator and non-ASCII space is shown as a `\u{…}` escape; a definition cannot pass
 * for another one on screen. Values of `env` and `headers` are never
 * printed, only their names and one digest.
 *
 * @module
 */

import { escapeInvisible } from "../util/invisible.ts";
import type { McpProbe } from "../mcp/connect.ts";
import type { McpServerStatus } from "../mcp/servers.ts";

/** `text` with every character that could disguise what a terminal shows escaped (`util/invisible.ts`). */
export function terminalSafe(text: string): string {
  return escapeInvisible(text);
}

/** A value as unambiguous terminal-safe JSON. */
function shown(value: unknown): string {
  return terminalSafe(JSON.stringify(value));
}

/** What a status means for a person: whether the server starts, and if not why. */
export function stateText(status: McpServerStatus): string {
  const approve = `run 'magi-code mcp approve ${status.server.name}'`;
  switch (status.state) {
    case "approved":
      return status.server.enabled ? "approved, starts" : "approved";
    case "not_approved":
      return status.server.enabled ? `not approved, will not start: ${approve}` : "not approved";
    case "changed":
      return status.server.enabled ? `changed since approval, will not start: ${approve} again` : "changed since approval";
    case "unresolved": {
      const what = status.reason === "command_not_found" ? "command not found (not on PATH, not executable, or no such file)" : "working directory not found";
      return status.server.enabled && status.approved ? `${what}, approved, so initialize fails` : `${what}, will not start`;
    }
  }
}

/** The `mcp list` line of one server. */
export function statusLine(status: McpServerStatus): string {
  const server = status.server;
  return `${server.name}: ${server.enabled ? "enabled" : "disabled"}, ${stateText(status)} (${server.transport.transport}; ${terminalSafe(server.source)})`;
}

/** The canonical definition of a resolved server, one field a line, for `mcp approve`. */
export function definitionLines(status: Extract<McpServerStatus, { definition: unknown }>): string[] {
  const fields = Object.entries(status.canonical.fields).filter(([key]) => key !== "v");
  const width = Math.max(...fields.map(([key]) => key.length), "digest".length);
  return [
    `MCP server ${status.server.name}, defined in ${terminalSafe(status.server.source)}:`,
    ...fields.map(([key, value]) => `  ${key.padEnd(width)}  ${shown(value)}`),
    `  ${"digest".padEnd(width)}  ${status.canonical.digest}`,
  ];
}

/** Why a server would fail startup, for a person (docs/features/mcp.md, "Lifetime"). */
const FAILURE_TEXT = {
  spawn_failed: "its command could not be started",
  exited: "it exited before startup finished",
  handshake_failed: "the MCP handshake failed",
  timeout: "it did not finish starting within startup_timeout_ms",
  list_failed: "listing its tools failed",
  invalid_schema: "a tool's input schema is invalid or too large",
  name_collision: "two tools get the same exposed name",
  auth_required: "login needed: the server answered 401 and no stored login works",
  cancelled: "cancelled",
} as const;

/** The `mcp list` line saying how connecting a server the way startup does went. */
export function probeLine(probe: McpProbe): string {
  if (probe.ok) return `${probe.server}: connects, ${probe.tools} tool${probe.tools === 1 ? "" : "s"}`;
  const { reason, tool } = probe.failure;
  const which = tool === null ? "" : ` (tool ${terminalSafe(JSON.stringify(tool))})`;
  const next = reason === "auth_required" ? `; run 'magi-code mcp login ${probe.server}'` : "";
  return `${probe.server}: fails to start, initialize would answer mcp_unavailable: ${reason}, ${FAILURE_TEXT[reason]}${which}${next}`;
}

