/**
 * `magi-code config check`'s view of hooks: a note for each project hook
 * that does not run (not approved, changed since approval, command not
 * found), printed without changing the exit code, as for MCP servers
 * (`mcp-problems.ts`); an approvals file that cannot be used is a problem,
 * since startup fails on it while a project hook is configured.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { configuredHooks, type HooksSettings, parseHooksSettings } from "../config/hooks-settings.ts";
import { jsonPath } from "../util/json-path.ts";
import { hookRuns, hookStatuses } from "../hooks/definition.ts";
import { hookStateText } from "./hooks-report.ts";
import { checkedApprovals, type McpFileProblem } from "./mcp-problems.ts";

/** One settings file's path and its `hooks` section as parsed (unchecked: the schema check ran before). */
export interface HooksSection {
  readonly file: string;
  readonly hooks?: unknown;
}

function checked(section: HooksSection): { file: string; hooks?: HooksSettings } {
  const hooks = section.hooks === undefined ? null : parseHooksSettings(section.hooks);
  return hooks === null ? { file: section.file } : { file: section.file, hooks };
}

/** The approvals file's problem, if any, and a note for each project hook that does not run. */
export async function hookApprovalNotes(
  runtime: Runtime,
  context: { readonly home: string; readonly cwd: string; readonly global: HooksSection; readonly project: HooksSection | null },
): Promise<{ problems: McpFileProblem[]; notes: McpFileProblem[] }> {
  const hooks = configuredHooks(checked(context.global), context.project === null ? null : checked(context.project)).filter((hook) => hook.project);
  if (hooks.length === 0) return { problems: [], notes: [] };
  const read = await checkedApprovals(runtime, context.home);
  if (!read.ok) return { problems: [read.problem], notes: [] };
  const statuses = await hookStatuses(runtime, hooks, read.approvals, context.cwd);
  const position = new Map<string, number>();
  const notes = statuses.flatMap((status) => {
    const index = position.get(status.hook.event) ?? 0;
    position.set(status.hook.event, index + 1);
    return hookRuns(status) ? [] : [{ file: status.hook.source, path: jsonPath(["hooks", status.hook.event, index]), message: `hook ${status.id}: ${hookStateText(status)}` }];
  });
  return { problems: [], notes };
}
