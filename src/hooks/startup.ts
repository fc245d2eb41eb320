/**
 * Which configured hooks a child runs: every global hook, and each project
 * hook whose canonical definition is approved from the project file
 * (`definition.ts`). The approvals file is read once, and only when a
 * project hook is configured; an invalid one fails startup with
 * `configuration_invalid`, as for MCP servers. A project hook that is not
 * approved, changed since, or whose command cannot be found is skipped:
 * it never runs, and `magi-code hooks list` and `config check` say why.
 *
 * This module is the entry of the hooks chunk: startup imports it only when
 * a settings file lists a hook.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import type { ConfiguredHook } from "../config/hooks-settings.ts";
import type { Runtime } from "../host/runtime.ts";
import type { TurnHooks } from "../runner/hooks-port.ts";
import { approvalsPath, readApprovals } from "../trust/approvals-file.ts";
import { hookRuns, hookStatuses } from "./definition.ts";
import { createTurnHooks } from "./turn-hooks.ts";

/** What `agent.info` shows of one configured hook: never its command, matcher or file. */
export interface HookState {
  readonly event: ConfiguredHook["event"];
  /** `user` for a hook of the global settings, `project` for one of the workspace's. */
  readonly scope: "user" | "project";
  /** Whether it runs: a global hook always does, a project hook once its current definition is approved. */
  readonly approved: boolean;
}

/** The outcome of {@link startupHooks}: the port, or null when no configured hook runs, and every configured hook's state. */
export type StartupHooks =
  | { readonly ok: true; readonly hooks: TurnHooks | null; readonly states: readonly HookState[] }
  | { readonly ok: false; readonly code: typeof ErrorCode.configurationInvalid | typeof ErrorCode.startupFailed | typeof ErrorCode.startupCancelled };

/** The hooks among `hooks` that run, in the canonical workspace `cwd`, as the runner's port. */
export async function startupHooks(
  runtime: Runtime,
  input: { readonly home: string; readonly cwd: string; readonly hooks: readonly ConfiguredHook[] },
  signal: AbortSignal,
): Promise<StartupHooks> {
  let approvals: Awaited<ReturnType<typeof readApprovals>> = { ok: true, approvals: [], bytes: null };
  if (input.hooks.some((hook) => hook.project)) approvals = await readApprovals(runtime.fs, approvalsPath(input.home), signal);
  if (!approvals.ok) return approvals;
  const statuses = await hookStatuses(runtime, input.hooks, approvals.approvals, input.cwd);
  if (signal.aborted) return { ok: false, code: ErrorCode.startupCancelled };
  const runnable = statuses.filter(hookRuns).map((status) => ({
    id: status.id,
    event: status.hook.event,
    matcher: status.hook.matcher,
    command: status.state === "global" ? status.command : "canonical" in status ? status.canonical.command : status.hook.command,
    args: status.hook.args,
    timeoutMs: status.hook.timeoutMs,
  }));
  const states = statuses.map((status): HookState => ({ event: status.hook.event, scope: status.hook.project ? "project" : "user", approved: hookRuns(status) }));
  return { ok: true, hooks: runnable.length === 0 ? null : createTurnHooks(runtime, runnable, input.cwd), states };
}
