/**
 * `magi-code mcp list | approve <name> [--yes] | revoke <name>`: what a
 * person runs in a terminal, in the workspace and with the `MC_HOME` the
 * client uses, to see the MCP servers the settings configure and approve or
 * revoke their definitions. These are the only writers of the approvals
 * file (`src/trust/`); `serve --stdio` only reads it.
 *
 * `approve` prints the canonical definition, then asks on a terminal. With
 * `--yes` it approves without asking; with neither a terminal on stdin nor
 * `--yes` it refuses (exit 1), so a script can never approve by accident.
 * A stdio server whose `env` sets a variable that makes programs load other
 * code (`mcp/code-loading-env.ts`) gets a warning on stderr first.
 * Exit codes: 0 done, 1 refused or failed (the reason on stderr), 2 a wrong
 * command line.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import type { Runtime } from "../host/runtime.ts";
import { withApproval, withoutApprovals } from "../trust/approvals.ts";
import { approvalsPath, readApprovals } from "../trust/approvals-file.ts";
import { updateApprovals, type UpdateApprovalsResult } from "../trust/approvals-write.ts";
import type { McpProbe } from "../mcp/connect.ts";
import { codeLoadingNames } from "../mcp/code-loading-env.ts";
import { approvalFor, failsUnresolved, MCP_APPROVAL_KIND, mcpServerStatuses, startsNow } from "../mcp/servers.ts";
import { definitionLines, probeLine, stateText, statusLine, terminalSafe } from "./mcp-report.ts";
import { loadMcpContext, type McpContext } from "./mcp-context.ts";
import { print, readAnswer, refuse } from "./mcp-print.ts";

/** The usage line of a wrong `mcp` command line. */
export const MCP_USAGE = "'mcp' takes list, approve <name> [--yes], revoke <name>, login <name> or logout <name>";

const live = new AbortController().signal;

/** A parsed `mcp` command line, or null when it is wrong. */
export type McpVerb =
  | { readonly verb: "list" }
  | { readonly verb: "approve"; readonly name: string; readonly yes: boolean }
  | { readonly verb: "revoke" | "login" | "logout"; readonly name: string };

/** Parses the words after `mcp`. */
export function parseMcpArgs(args: readonly string[]): McpVerb | null {
  const [verb, ...rest] = args;
  if (verb === "list" && rest.length === 0) return { verb };
  if ((verb === "revoke" || verb === "login" || verb === "logout") && rest.length === 1 && !rest[0]!.startsWith("-")) return { verb, name: rest[0]! };
  if (verb !== "approve") return null;
  const names = rest.filter((arg) => arg !== "--yes");
  if (names.length !== 1 || names[0]!.startsWith("-") || rest.length - names.length > 1) return null;
  return { verb, name: names[0]!, yes: rest.length === 2 };
}

function filesOf(context: McpContext): string {
  return [context.files.global, ...(context.files.project === null ? [] : [context.files.project])].map(terminalSafe).join(" or ");
}

function updateFailure(context: McpContext, result: Extract<UpdateApprovalsResult, { ok: false }>): string {
  const path = terminalSafe(approvalsPath(context.home));
  if (result.reason === "invalid") return `${path} is not a valid approvals file (it must be owner-only, chmod 600); fix or remove it`;
  if (result.reason === "contended") return `${path} kept changing while this command ran; try again`;
  return `${path} could not be read or written`;
}

async function list(runtime: Runtime, context: McpContext): Promise<number> {
  if (context.servers.length === 0) return await print(runtime, [`magi-code mcp: no MCP servers in ${filesOf(context)}`]) ? 0 : 1;
  const read = await readApprovals(runtime.fs, approvalsPath(context.home), live);
  if (!read.ok) return await refuse(runtime, updateFailure(context, { ok: false, reason: read.code === ErrorCode.configurationInvalid ? "invalid" : "failed" }));
  const statuses = await mcpServerStatuses(runtime, context.servers, read.approvals, context.cwd);
  const lines = statuses.map((status) => {
    const token = status.server.transport.transport === "http" ? status.server.transport.bearerTokenEnv : null;
    const unset = token !== null && (runtime.env(token) ?? "").trim() === "";
    return unset ? `${statusLine(status)}; ${token} is not set, so no bearer token is sent` : statusLine(status);
  });
  // Every server that would start is connected the way startup does, so a failure is named here, not first met as mcp_unavailable.
  const starting = statuses.filter(startsNow).map((status) => status.definition);
  const connected = starting.length === 0 ? [] : await (await import("../mcp/connect.ts")).probeMcpServers(runtime, context.home, starting, live);
  // An approved server that can no longer be resolved fails startup as one that could not be spawned.
  const unresolved = statuses.filter(failsUnresolved).map(({ server }): McpProbe => ({ server: server.name, ok: false, failure: { server: server.name, reason: "spawn_failed", tool: null } }));
  const probes = [...unresolved, ...connected];
  if (!await print(runtime, [...lines, ...probes.map(probeLine)])) return 1;
  return probes.every((probe) => probe.ok) ? 0 : 1;
}

async function approve(runtime: Runtime, context: McpContext, name: string, yes: boolean): Promise<number> {
  const server = context.servers.find((candidate) => candidate.name === name);
  if (server === undefined) return await refuse(runtime, `no MCP server named ${terminalSafe(JSON.stringify(name))} in ${filesOf(context)}`);
  const read = await readApprovals(runtime.fs, approvalsPath(context.home), live);
  if (!read.ok) return await refuse(runtime, updateFailure(context, { ok: false, reason: read.code === ErrorCode.configurationInvalid ? "invalid" : "failed" }));
  const [status] = await mcpServerStatuses(runtime, [server], read.approvals, context.cwd);
  const approval = approvalFor(status!);
  if (approval === null || status!.state === "unresolved") return await refuse(runtime, `cannot approve ${name}: ${stateText(status!)}`);
  if (!await print(runtime, definitionLines(status!))) return 1;
  if (status!.state === "approved") return await print(runtime, [`${name} is already approved.`]) ? 0 : 1;
  const loading = status!.definition.transport === "stdio" ? codeLoadingNames(status!.definition.env) : [];
  if (loading.length > 0) {
    // Only names: the values are never shown. A warning, not a refusal: a wrapper may need LD_LIBRARY_PATH.
    const names = loading.map((entry) => terminalSafe(entry)).join(", ");
    await print(runtime, [`magi-code mcp: warning: ${name}'s env sets ${names}, which make programs load code their command line does not name; approve it only if you set them on purpose`], "stderr");
  }
  if (!yes) {
    if (await runtime.stdioKind(0) !== "tty") return await refuse(runtime, `not approving ${name}: stdin is not a terminal; run 'magi-code mcp approve ${name} --yes' to approve without a question`);
    if (!await print(runtime, [`Approve ${name}? It will run as you, with your files and network. [y/N]`])) return 1;
    const answer = await readAnswer(runtime);
    if (answer !== "y" && answer !== "yes") return await refuse(runtime, `${name} not approved`);
  }
  const result = await updateApprovals(runtime, context.home, (current) => withApproval(current, approval));
  if (!result.ok) return await refuse(runtime, updateFailure(context, result));
  return await print(runtime, [`Approved ${name}${server.enabled ? "; it starts with the next child" : " (it is disabled in settings)"}.`]) ? 0 : 1;
}

async function revoke(runtime: Runtime, context: McpContext, name: string): Promise<number> {
  const sources = [context.files.global, ...(context.files.project === null ? [] : [context.files.project])];
  const result = await updateApprovals(runtime, context.home, (current) => withoutApprovals(current, MCP_APPROVAL_KIND, name, sources));
  if (!result.ok) return await refuse(runtime, updateFailure(context, result));
  if (!result.changed) return await refuse(runtime, `no approval of ${terminalSafe(JSON.stringify(name))} from ${filesOf(context)}`);
  return await print(runtime, [`Revoked ${name}; it no longer starts.`]) ? 0 : 1;
}

/** Runs `magi-code mcp …` (`runtime.args` starts with `mcp`); resolves with the exit code. */
export async function mcpCommand(runtime: Runtime, verb: McpVerb): Promise<number> {
  // revoke and logout need only the file paths, so they work even while the settings are broken.
  const context = await loadMcpContext(runtime, { settings: verb.verb !== "revoke" && verb.verb !== "logout" });
  if (!context.ok) return await refuse(runtime, context.message);
  if (verb.verb === "login" || verb.verb === "logout") {
    const oauth = await import("./mcp-login-command.ts");
    return verb.verb === "login" ? await oauth.login(runtime, context.context, verb.name) : await oauth.logout(runtime, context.context, verb.name);
  }
  if (verb.verb === "list") return await list(runtime, context.context);
  if (verb.verb === "approve") return await approve(runtime, context.context, verb.name, verb.yes);
  return await revoke(runtime, context.context, verb.name);
}
