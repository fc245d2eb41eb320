/**
 * Approval policies of tool calls: the built-in defaults, their order of
 * strictness, and how a call's policy is chosen. Kept apart from the tools
 * themselves so startup (the project trust rule) can use it without loading
 * any tool code, which is only loaded with the first turn.
 *
 * @module
 */

import * as v from "valibot";
import { ownValue } from "../util/own.ts";

/** What happens when the model calls a tool: run it, ask the user first, or refuse. */
export type ApprovalPolicy = "allow" | "ask" | "deny";

/** Validates one {@link ApprovalPolicy}, for the settings schema. */
export const ApprovalPolicySchema = v.picklist(["allow", "ask", "deny"]);

/**
 * The policy of each built-in tool when settings name none: reads run,
 * writes and shell ask. `skill` only returns an enabled skill's instructions
 * and file names, so it runs too.
 */
export const DEFAULT_POLICIES: Readonly<Record<string, ApprovalPolicy>> = Object.freeze({
  read_file: "allow",
  list_directory: "allow",
  glob: "allow",
  grep: "allow",
  write_file: "ask",
  edit_file: "ask",
  shell: "ask",
  skill: "allow",
});

const STRICTNESS: Readonly<Record<ApprovalPolicy, number>> = Object.freeze({ allow: 0, ask: 1, deny: 2 });

/** Whether `candidate` lets at most as much run unattended as `baseline` (allow < ask < deny). */
export function isAtLeastAsStrict(candidate: ApprovalPolicy, baseline: ApprovalPolicy): boolean {
  return STRICTNESS[candidate] >= STRICTNESS[baseline];
}

/**
 * The policy for calls to `toolName`: `settingsPolicies[toolName]` when it is
 * an own property holding a valid policy (settings validation should have
 * refused anything else), else the built-in default, else `ask` (a tool that
 * is not built in, an MCP tool say).
 */
export function resolvePolicy(toolName: string, settingsPolicies?: Readonly<Record<string, ApprovalPolicy>>): ApprovalPolicy {
  const configured = ownValue(settingsPolicies, toolName);
  if (configured !== undefined && Object.hasOwn(STRICTNESS, configured)) return configured;
  return ownValue(DEFAULT_POLICIES, toolName) ?? "ask";
}
