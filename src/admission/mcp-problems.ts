/**
 * `magi-code config check`'s view of MCP servers: the merge's broken rules
 * (`config/mcp-merge.ts`), which fail startup, and, once there are none, the
 * approvals file and every enabled server that will not start (not approved,
 * changed since approval, command or directory not found), which do not:
 * such a server is skipped, so these are notes, printed without changing
 * the exit code. An approved one whose command or directory is gone does
 * fail startup; its note says so, but like a server that would fail to
 * spawn it is `mcp list`'s to report with exit 1, since this check starts
 * nothing.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import type { Runtime } from "../host/runtime.ts";
import { type McpMerge, mergeMcpServers } from "../config/mcp-merge.ts";
import { parseMcpSettings } from "../config/mcp-settings.ts";
import type { Approval } from "../trust/approvals.ts";
import { approvalsPath, readApprovals } from "../trust/approvals-file.ts";
import { jsonPath } from "../util/json-path.ts";
import { mcpServerStatuses, startsNow } from "../mcp/servers.ts";
import { stateText } from "./mcp-report.ts";

/** A problem or note in one file at one JSON path. */
export interface McpFileProblem {
  readonly file: string;
  readonly path: string;
  readonly message: string;
}

/** One settings file's path and its `mcp` section as parsed (unchecked: the schema check ran before). */
export interface McpSection {
  readonly file: string;
  readonly mcp?: unknown;
}

/** The servers of both files and the merge's broken rules; an invalid section counts as none (its schema problems are reported already). */
export function mcpMergeOf(global: McpSection, project: McpSection | null): McpMerge {
  const section = (layer: McpSection) => ({ file: layer.file, mcp: layer.mcp === undefined ? undefined : parseMcpSettings(layer.mcp) ?? undefined });
  return mergeMcpServers(section(global), project === null ? null : section(project));
}

/** The approvals in `home`, or the problem an approvals file that startup would refuse is. */
export async function checkedApprovals(runtime: Runtime, home: string): Promise<{ ok: true; approvals: readonly Approval[] } | { ok: false; problem: McpFileProblem }> {
  const file = approvalsPath(home);
  const read = await readApprovals(runtime.fs, file, new AbortController().signal);
  if (read.ok) return { ok: true, approvals: read.approvals };
  const message = read.code === ErrorCode.configurationInvalid
    ? "must be an owner-only (chmod 600) regular file as 'magi-code mcp approve' and 'magi-code hooks approve' write it; fix or remove it, then approve again"
    : "cannot be read";
  return { ok: false, problem: { file, path: "$", message } };
}

/** The approvals file's problem, if any, and a note for each enabled server that will not start. */
export async function mcpApprovalNotes(
  runtime: Runtime,
  context: { readonly home: string; readonly cwd: string; readonly merge: McpMerge },
): Promise<{ problems: McpFileProblem[]; notes: McpFileProblem[] }> {
  if (context.merge.servers.length === 0) return { problems: [], notes: [] };
  const read = await checkedApprovals(runtime, context.home);
  if (!read.ok) return { problems: [read.problem], notes: [] };
  const statuses = await mcpServerStatuses(runtime, context.merge.servers, read.approvals, context.cwd);
  const notes = statuses
    .filter((status) => status.server.enabled && !startsNow(status))
    .map((status) => ({ file: status.server.source, path: jsonPath(["mcp", "servers", status.server.name]), message: stateText(status) }));
  return { problems: [], notes };
}
