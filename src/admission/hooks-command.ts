/**
 * `magi-code hooks list | approve <id> [--yes] | approve --all [--yes] |
 * revoke <id>`: what a person runs in a terminal, in the workspace and with
 * the client's `MC_HOME`, to see the hooks the settings list and approve or
 * revoke project hooks, exactly as `magi-code mcp` does for MCP servers
 * (`mcp-command.ts`; the same approvals file, kind `hook`).
 *
 * `list` prints one line per hook with its id (`hooks/definition.ts`).
 * `approve` prints each canonical definition it would approve, then asks on
 * a terminal; `--yes` approves without asking, and with neither a terminal
 * nor `--yes` it refuses. `--all` approves every project hook that does not
 * run yet (not approved, or changed since). Global hooks need no approval.
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
import { HOOK_APPROVAL_KIND, hookApprovalFor, type HookStatus, hookStatuses } from "../hooks/definition.ts";
import { hookDefinitionLines, hookStateText, hookStatusLine } from "./hooks-report.ts";
import { loadMcpContext, type McpContext } from "./mcp-context.ts";
import { terminalSafe } from "./mcp-report.ts";
import { print, readAnswer, refuse as refuseAs } from "./mcp-print.ts";

/** The usage line of a wrong `hooks` command line. */
export const HOOKS_USAGE = "'hooks' takes list, approve <id> [--yes], approve --all [--yes] or revoke <id>";

/** A parsed `hooks` command line, or null when it is wrong. */
export type HooksVerb =
  | { readonly verb: "list" }
  | { readonly verb: "approve"; readonly id: string | "--all"; readonly yes: boolean }
  | { readonly verb: "revoke"; readonly id: string };

/** Parses the words after `hooks`. */
export function parseHooksArgs(args: readonly string[]): HooksVerb | null {
  const [verb, ...rest] = args;
  if (verb === "list" && rest.length === 0) return { verb };
  if (verb === "revoke" && rest.length === 1 && !rest[0]!.startsWith("-")) return { verb, id: rest[0]! };
  if (verb !== "approve") return null;
  const yes = rest.filter((arg) => arg === "--yes").length;
  const targets = rest.filter((arg) => arg !== "--yes");
  if (yes > 1 || targets.length !== 1 || (targets[0]!.startsWith("-") && targets[0] !== "--all")) return null;
  return { verb, id: targets[0]!, yes: yes === 1 };
}

const refuse = (runtime: Runtime, line: string) => refuseAs(runtime, line, "hooks");

function updateFailure(context: McpContext, result: Extract<UpdateApprovalsResult, { ok: false }>): string {
  const path = terminalSafe(approvalsPath(context.home));
  if (result.reason === "invalid") return `${path} is not a valid approvals file (it must be owner-only, chmod 600); fix or remove it`;
  if (result.reason === "contended") return `${path} kept changing while this command ran; try again`;
  return `${path} could not be read or written`;
}

/** Every hook's status, or the line saying why the approvals file cannot be read. */
async function statuses(runtime: Runtime, context: McpContext): Promise<HookStatus[] | string> {
  const read = await readApprovals(runtime.fs, approvalsPath(context.home), new AbortController().signal);
  if (!read.ok) return updateFailure(context, { ok: false, reason: read.code === ErrorCode.configurationInvalid ? "invalid" : "failed" });
  return await hookStatuses(runtime, context.hooks, read.approvals, context.cwd);
}

async function approve(runtime: Runtime, context: McpContext, id: string, yes: boolean): Promise<number> {
  const all = await statuses(runtime, context);
  if (typeof all === "string") return await refuse(runtime, all);
  const named = id === "--all" ? all.filter((status) => status.hook.project) : all.filter((status) => status.id === id);
  if (named.length === 0) return await refuse(runtime, id === "--all" ? "no project hooks in the settings" : `no hook with the id ${terminalSafe(JSON.stringify(id))}`);
  const global = named.find((status) => status.state === "global");
  if (global !== undefined) return await refuse(runtime, `${id} is a global hook: it runs without approval`);
  const unresolved = named.find((status) => status.state === "unresolved");
  if (unresolved !== undefined) return await refuse(runtime, `cannot approve ${unresolved.id}: ${hookStateText(unresolved)}`);
  const pending = named.filter((status) => status.state !== "approved");
  if (pending.length === 0) return await print(runtime, [`${id === "--all" ? "Every project hook is" : `${id} is`} already approved.`]) ? 0 : 1;
  const lines = pending.flatMap((status) => "canonical" in status ? hookDefinitionLines(status) : []);
  if (!await print(runtime, lines)) return 1;
  const which = pending.length === 1 ? `hook ${pending[0]!.id}` : `these ${pending.length} hooks`;
  if (!yes) {
    if (await runtime.stdioKind(0) !== "tty") return await refuse(runtime, `not approving: stdin is not a terminal; add --yes to approve without a question`);
    if (!await print(runtime, [`Approve ${which}? It will run as you, with your files and network. [y/N]`])) return 1;
    const answer = await readAnswer(runtime);
    if (answer !== "y" && answer !== "yes") return await refuse(runtime, "not approved");
  }
  const approvals = pending.map(hookApprovalFor).filter((approval) => approval !== null);
  const result = await updateApprovals(runtime, context.home, (current) => approvals.reduce((next, approval) => withApproval(next, approval), [...current]));
  if (!result.ok) return await refuse(runtime, updateFailure(context, result));
  return await print(runtime, [`Approved ${which}; it runs from the next child on.`]) ? 0 : 1;
}

async function revoke(runtime: Runtime, context: McpContext, id: string): Promise<number> {
  const sources = context.files.project === null ? [] : [context.files.project];
  const result = await updateApprovals(runtime, context.home, (current) => withoutApprovals(current, HOOK_APPROVAL_KIND, id, sources));
  if (!result.ok) return await refuse(runtime, updateFailure(context, result));
  if (!result.changed) return await refuse(runtime, `no approval of the hook ${terminalSafe(JSON.stringify(id))} from ${terminalSafe(sources[0] ?? "a project file")}`);
  return await print(runtime, [`Revoked ${id}; it no longer runs.`]) ? 0 : 1;
}

/** Runs `magi-code hooks …`; resolves with the exit code. */
export async function hooksCommand(runtime: Runtime, verb: HooksVerb): Promise<number> {
  // revoke needs only the file paths, so it works even while the settings are broken.
  const loaded = await loadMcpContext(runtime, { settings: verb.verb !== "revoke" });
  if (!loaded.ok) return await refuse(runtime, loaded.message);
  const context = loaded.context;
  if (verb.verb === "revoke") return await revoke(runtime, context, verb.id);
  if (verb.verb === "approve") return await approve(runtime, context, verb.id, verb.yes);
  if (context.hooks.length === 0) return await print(runtime, ["magi-code hooks: no hooks in the settings"]) ? 0 : 1;
  const all = await statuses(runtime, context);
  if (typeof all === "string") return await refuse(runtime, all);
  return await print(runtime, all.map(hookStatusLine)) ? 0 : 1;
}
