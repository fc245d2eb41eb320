/**
 * How hooks are described to a person in a terminal, by `magi-code hooks
 * list | approve` and `magi-code config check`: one status line per hook,
 * and the canonical definition an approval covers. Text from settings files
 * is made terminal-safe as `mcp-report.ts` does.
 *
 * @module
 */

import type { HookStatus } from "../hooks/definition.ts";
import { terminalSafe } from "./mcp-report.ts";

const shown = (value: unknown) => terminalSafe(JSON.stringify(value));

/** Whether a hook runs, and if not why. */
export function hookStateText(status: HookStatus): string {
  const approve = `run 'magi-code hooks approve ${status.id}'`;
  switch (status.state) {
    case "global":
      return status.command === null ? "global, command not found (not on PATH, not executable, or no such file), fails each time it would run" : "global, runs";
    case "approved":
      return "project, approved, runs";
    case "not_approved":
      return `project, not approved, does not run: ${approve}`;
    case "changed":
      return `project, changed since approval, does not run: ${approve} again`;
    case "unresolved":
      return "project, command not found (not on PATH, not executable, or no such file), does not run";
  }
}

/** The `hooks list` line of one hook. */
export function hookStatusLine(status: HookStatus): string {
  const { hook } = status;
  const matcher = hook.matcher === null ? "" : ` ${shown(hook.matcher)}`;
  return `${status.id}: ${hook.event}${matcher} ${shown([hook.command, ...hook.args])}, ${hookStateText(status)} (${terminalSafe(hook.source)})`;
}

/** The canonical definition of a resolved project hook, one field a line, for `hooks approve`. */
export function hookDefinitionLines(status: Extract<HookStatus, { canonical: unknown }>): string[] {
  const fields = Object.entries(status.canonical).filter(([key]) => key !== "v" && key !== "source");
  const width = Math.max(...fields.map(([key]) => key.length), "digest".length);
  return [
    `Hook ${status.id}, defined in ${terminalSafe(status.hook.source)}:`,
    ...fields.map(([key, value]) => `  ${key.padEnd(width)}  ${shown(value)}`),
    `  ${"digest".padEnd(width)}  ${status.digest}`,
  ];
}
