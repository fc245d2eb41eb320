/**
 * The runner's side of the negotiated `approval.scope` extension
 * (`docs/features/local-agent-extensions.md`): which key a session grant
 * for a call would cover, the extra fields of its `approval.requested`, and
 * its `approval.resolved` event. The grants themselves are
 * `grants/session-grants.ts`; the broker holds them for its run.
 *
 * @module
 */

import { scopeKey } from "../grants/session-grants.ts";
import type { ApprovalBroker, ApprovalDecision, ApprovalRequest } from "./approvals.ts";
import type { RunIO } from "./run-output.ts";
import type { PreparedCall } from "./tools/tool.ts";

/**
 * The key a session grant for `prepared` (a call of tool `name`) would
 * cover, or null: no key without `approval.scope`, none for a call that
 * must ask whatever its policy (a hard-linked file: the user sees each
 * one), none for a tool without a scope target.
 */
export function callScopeKey(broker: ApprovalBroker, name: string, prepared: PreparedCall, secrets: readonly string[]): string | null {
  if (!broker.scoped || prepared.mustAsk || prepared.scopeTarget === undefined) return null;
  return scopeKey(name, prepared.scopeTarget, secrets);
}

/** `approval.requested`'s extra fields with `approval.scope` negotiated; none (a base client's bytes) otherwise. */
export function scopeFields(broker: ApprovalBroker, approval: ApprovalRequest): { scopes?: ("once" | "session")[]; scope_key?: string | null } {
  if (!broker.scoped) return {};
  return approval.scopeKey === null ? { scopes: ["once"], scope_key: null } : { scopes: ["once", "session"], scope_key: approval.scopeKey };
}

/** Emits `approval.resolved` once for the settled `approval`, with `approval.scope` negotiated. */
export async function reportResolved(io: RunIO, broker: ApprovalBroker, approval: ApprovalRequest, decision: ApprovalDecision): Promise<void> {
  if (!broker.scoped) return;
  await io.emit({ event: "approval.resolved", data: { ...io.scope, approval_id: approval.approvalId, outcome: decision } });
}
