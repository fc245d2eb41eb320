/**
 * Which configured MCP servers may start: those enabled **and** whose current
 * canonical definition is approved, from the file that defines it, in the
 * approvals file (`src/trust/`). Every other server is skipped: it is never
 * started and never fails `initialize`; `magi-code mcp list` and
 * `magi-code config check` say why. One exception: an enabled server that
 * was approved (some approval exists for its name and file) but whose
 * command or working directory can no longer be resolved fails startup with
 * `mcp_unavailable` (`spawn_failed`), as it would had it been resolved and
 * failed to start: the user asked for it to run, so it must not vanish
 * silently.
 *
 * A project file that sets `enabled: true` on a server the global file
 * defines and disables starts the global definition, and only once that is
 * approved: the project cannot change the definition (`config/mcp-merge.ts`)
 * nor approve anything.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import type { Runtime } from "../host/runtime.ts";
import type { ConfiguredMcpServer } from "../config/mcp-merge.ts";
import { type Approval, type ApprovalState, approvalState, hasApprovals } from "../trust/approvals.ts";
import { approvalsPath, readApprovals } from "../trust/approvals-file.ts";
import type { CanonicalDefinition } from "./canonical.ts";
import type { McpServerDefinition } from "./definition.ts";
import { type ResolveFailure, resolveServer } from "./resolve.ts";

/** The approval kind of MCP servers in the approvals file. */
export const MCP_APPROVAL_KIND = "mcp";

/** Where one configured server stands. */
export type McpServerStatus =
  | {
    readonly server: ConfiguredMcpServer;
    /** Approval of the current definition from its source file. */
    readonly state: ApprovalState;
    readonly definition: McpServerDefinition;
    readonly canonical: CanonicalDefinition;
  }
  | {
    readonly server: ConfiguredMcpServer;
    /** The definition could not be resolved, so it cannot be compared with any approval. */
    readonly state: "unresolved";
    readonly reason: ResolveFailure;
    /** Whether an approval exists for its name and source (of whatever definition). */
    readonly approved: boolean;
  };

/** Whether a status's server starts: enabled and approved. */
export function startsNow(status: McpServerStatus): status is Extract<McpServerStatus, { state: ApprovalState }> {
  return status.server.enabled && status.state === "approved";
}

/** Whether a status's server fails startup unstarted: enabled, approved once, and now unresolvable. */
export function failsUnresolved(status: McpServerStatus): boolean {
  return status.server.enabled && status.state === "unresolved" && status.approved;
}

/** The approval `status`'s current definition would need (null when it is unresolved). */
export function approvalFor(status: McpServerStatus): Approval | null {
  if (status.state === "unresolved") return null;
  return { kind: MCP_APPROVAL_KIND, name: status.server.name, source: status.server.source, digest: status.canonical.digest };
}

/** A configured server that was not started, as `agent.info` shows it: its name and why. */
export interface SkippedMcpServer {
  readonly name: string;
  /** `disabled` when its settings disable it, else `not_approved` (never approved, changed since, or its command not found). */
  readonly state: "disabled" | "not_approved";
}

/** The servers among `statuses` that do not start, and why. */
function skippedMcpServers(statuses: readonly McpServerStatus[]): SkippedMcpServer[] {
  return statuses.filter((status) => !startsNow(status)).map(({ server }) => ({ name: server.name, state: server.enabled ? "not_approved" : "disabled" }));
}

/** Resolves every server in `workspace` and compares its definition with `approvals`. */
export async function mcpServerStatuses(
  runtime: Runtime,
  servers: readonly ConfiguredMcpServer[],
  approvals: readonly Approval[],
  workspace: string,
): Promise<McpServerStatus[]> {
  return await Promise.all(servers.map(async (server): Promise<McpServerStatus> => {
    const resolved = await resolveServer(runtime, server, workspace);
    const key = { kind: MCP_APPROVAL_KIND, name: server.name, source: server.source };
    if (!resolved.ok) return { server, state: "unresolved", reason: resolved.reason, approved: hasApprovals(approvals, key) };
    const subject = { ...key, digest: resolved.canonical.digest };
    return { server, state: approvalState(approvals, subject), definition: resolved.definition, canonical: resolved.canonical };
  }));
}

/** The outcome of {@link startableMcpServers}. */
export type StartableMcpServers =
  | {
    readonly ok: true;
    readonly servers: readonly McpServerDefinition[];
    readonly statuses: readonly McpServerStatus[];
    readonly skipped: readonly SkippedMcpServer[];
  }
  | {
    readonly ok: false;
    readonly code:
      | typeof ErrorCode.configurationInvalid
      | typeof ErrorCode.startupFailed
      | typeof ErrorCode.startupCancelled
      | typeof ErrorCode.mcpUnavailable;
  };

/**
 * What startup starts: reads the approvals file once (an invalid one is
 * `configuration_invalid`, an unreadable one `startup_failed`) and returns
 * the definitions of the enabled, approved servers among `servers` (the
 * startup snapshot's `mcpServers`), in name order; `mcp_unavailable` when
 * one of them {@link failsUnresolved}.
 */
export async function startableMcpServers(
  runtime: Runtime,
  input: { readonly home: string; readonly cwd: string; readonly servers: readonly ConfiguredMcpServer[] },
  signal: AbortSignal,
): Promise<StartableMcpServers> {
  const read = await readApprovals(runtime.fs, approvalsPath(input.home), signal);
  if (!read.ok) return read;
  const statuses = await mcpServerStatuses(runtime, input.servers, read.approvals, input.cwd);
  if (signal.aborted) return { ok: false, code: ErrorCode.startupCancelled };
  if (statuses.some(failsUnresolved)) return { ok: false, code: ErrorCode.mcpUnavailable };
  return { ok: true, servers: statuses.filter(startsNow).map((status) => status.definition), statuses, skipped: skippedMcpServers(statuses) };
}
