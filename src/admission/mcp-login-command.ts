/**
 * `magi-code mcp login <name>` and `mcp logout <name>`: the OAuth login of
 * an HTTP server, from a terminal (`mcp/oauth-login.ts`), and its removal.
 * Only an approved HTTP server can be logged in to, so a login never
 * contacts a URL the person has not approved. The tokens go to
 * `$MC_HOME/mcp-tokens.json` (mode 0600) and are never printed.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { approvalsPath, readApprovals } from "../trust/approvals-file.ts";
import { mcpServerStatuses } from "../mcp/servers.ts";
import { mcpTokensPath, updateMcpTokens } from "../mcp/oauth-tokens.ts";
import type { McpContext } from "./mcp-context.ts";
import { print, refuse } from "./mcp-print.ts";
import { terminalSafe } from "./mcp-report.ts";

const FAILED = {
  not_required: "the server did not ask for a login (it answered without one)",
  listen_failed: "could not listen on 127.0.0.1 for the browser's redirect",
  refused: "the authorization was refused (the redirect carried no code)",
  timeout: "no redirect came back within 5 minutes",
  failed: "the OAuth flow failed (discovery, registration or the token exchange)",
  unusable: "the server still refuses the new login",
} as const;

/** Runs `mcp login <name>`; resolves with the exit code. */
export async function login(runtime: Runtime, context: McpContext, name: string): Promise<number> {
  const server = context.servers.find((candidate) => candidate.name === name);
  if (server === undefined) return await refuse(runtime, `no MCP server named ${terminalSafe(JSON.stringify(name))}`);
  if (server.transport.transport !== "http") return await refuse(runtime, `${name} is a stdio server; only HTTP servers log in`);
  const read = await readApprovals(runtime.fs, approvalsPath(context.home), new AbortController().signal);
  if (!read.ok) return await refuse(runtime, `${terminalSafe(approvalsPath(context.home))} is not a valid approvals file`);
  const [status] = await mcpServerStatuses(runtime, [server], read.approvals, context.cwd);
  if (status!.state !== "approved" || status!.definition.transport !== "http") {
    const why = status!.state === "changed" ? "its definition changed since it was approved" : "it is not approved";
    return await refuse(runtime, `not logging in to ${name}: ${why}; run 'magi-code mcp approve ${name}' first`);
  }
  const { loginMcpServer } = await import("../mcp/oauth-login.ts");
  const outcome = await loginMcpServer(runtime, context.home, status!.definition, async (url) => {
    await print(runtime, [`Open this URL in a browser to log in to ${name}:`, terminalSafe(url.href), "Waiting for the browser to come back…"]);
  });
  if (!outcome.ok) return await refuse(runtime, `login to ${name} failed: ${FAILED[outcome.reason]}`);
  return await print(runtime, [`Logged in to ${name} (${outcome.tools} tool${outcome.tools === 1 ? "" : "s"}); the tokens are in ${terminalSafe(mcpTokensPath(context.home))}.`]) ? 0 : 1;
}

/** Runs `mcp logout <name>`; resolves with the exit code. */
export async function logout(runtime: Runtime, context: McpContext, name: string): Promise<number> {
  const result = await updateMcpTokens(runtime, context.home, name, () => null);
  if (!result.ok) return await refuse(runtime, `${terminalSafe(mcpTokensPath(context.home))} could not be read or written (it must be owner-only, chmod 600)`);
  if (!result.existed) return await refuse(runtime, `no stored login for ${terminalSafe(JSON.stringify(name))}`);
  return await print(runtime, [`Logged out of ${name}; its tokens are removed.`]) ? 0 : 1;
}
