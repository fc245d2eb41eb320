/**
 * A hook's identity and canonical definition, and where a project hook
 * stands with the user's approvals (`src/trust/`, kind `hook`).
 *
 * The id `hooks list` prints is the first 12 hex digits of the SHA-256 of
 * the hook as written (event, matcher, command, arguments, defining file),
 * so it is the same on every run and names one hook of one file. The
 * canonical definition an approval covers is that same hook with its
 * command resolved the way MCP servers' are (`mcp/resolve.ts`: from the
 * workspace, or on `PATH` without relative entries): its digest changes when
 * anything written changes, and when the command found changes, so either
 * voids the approval. The timeout is a setting of an approved hook, not part
 * of it. Changing {@link canonicalHookText} voids every hook approval ever
 * given, so `tests/hooks.test.ts` pins a digest.
 *
 * @module
 */

import type { ConfiguredHook, HookEvent } from "../config/hooks-settings.ts";
import type { Runtime } from "../host/runtime.ts";
import { type Approval, type ApprovalState, approvalState, hasApprovals } from "../trust/approvals.ts";
import { sha256Hex } from "../util/digest.ts";
import { resolveCommand } from "../mcp/resolve.ts";

/** The approval kind of hooks in the approvals file. */
export const HOOK_APPROVAL_KIND = "hook";

/** The canonical definition of a hook. */
export interface CanonicalHook {
  readonly v: 1;
  readonly event: HookEvent;
  readonly matcher: string | null;
  /** The absolute path of the program. */
  readonly command: string;
  readonly args: readonly string[];
  readonly source: string;
}

/** The text a hook's digest covers: the canonical JSON, fields in this order, no spaces. */
export function canonicalHookText(fields: CanonicalHook): string {
  return JSON.stringify({ v: fields.v, event: fields.event, matcher: fields.matcher, command: fields.command, args: fields.args, source: fields.source });
}

const encoder = new TextEncoder();

/** The id of `hook`: 12 hex digits of the digest of the hook as written. */
export async function hookId(hook: ConfiguredHook): Promise<string> {
  const written = JSON.stringify([hook.event, hook.matcher, hook.command, hook.args, hook.source]);
  return (await sha256Hex(encoder.encode(written))).slice(0, 12);
}

/**
 * Where one hook stands. Global hooks are `global` (they run as written);
 * a project hook is `approved`, `changed`, `not_approved` or, when its
 * command cannot be found, `unresolved` (then it cannot be approved).
 */
export type HookStatus = {
  readonly hook: ConfiguredHook;
  readonly id: string;
} & (
  | { readonly state: "global"; readonly command: string | null }
  | { readonly state: ApprovalState; readonly canonical: CanonicalHook; readonly digest: string }
  | { readonly state: "unresolved"; readonly approved: boolean }
);

/** Whether a status's hook runs: a global one, or an approved project one. */
export function hookRuns(status: HookStatus): boolean {
  return status.state === "global" || status.state === "approved";
}

/** The approval a project hook's current definition needs (null for a global or unresolved one). */
export function hookApprovalFor(status: HookStatus): Approval | null {
  if (!("digest" in status)) return null;
  return { kind: HOOK_APPROVAL_KIND, name: status.id, source: status.hook.source, digest: status.digest };
}

/** Where each of `hooks` stands in the canonical workspace `workspace` against `approvals`. */
export async function hookStatuses(
  runtime: Runtime,
  hooks: readonly ConfiguredHook[],
  approvals: readonly Approval[],
  workspace: string,
): Promise<HookStatus[]> {
  return await Promise.all(hooks.map(async (hook): Promise<HookStatus> => {
    const id = await hookId(hook);
    const resolved = await resolveCommand(runtime, hook.command, workspace);
    // A global hook whose program is missing is kept, and fails unrun where the user sees it (a diagnostic per run):
    // spawning the bare name would let the OS search PATH's relative entries, finding the workspace's program.
    if (!hook.project) return { hook, id, state: "global", command: resolved };
    const key = { kind: HOOK_APPROVAL_KIND, name: id, source: hook.source };
    if (resolved === null) return { hook, id, state: "unresolved", approved: hasApprovals(approvals, key) };
    const canonical: CanonicalHook = { v: 1, event: hook.event, matcher: hook.matcher, command: resolved, args: hook.args, source: hook.source };
    const digest = await sha256Hex(encoder.encode(canonicalHookText(canonical)));
    return { hook, id, state: approvalState(approvals, { ...key, digest }), canonical, digest };
  }));
}
