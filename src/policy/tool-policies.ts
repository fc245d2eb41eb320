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
 * and file names, so it runs too; so does `code` (offered only with Code
 * Mode on): its program can do nothing but call tools, and each call is
 * governed by its own Code Mode policy; and so does `task`: what a subagent
 * does is held to the delegating run's policies call by call
 * (`delegatedPolicies`).
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
  task: "allow",
  code: "allow",
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

/** The stricter of `a` and `b`. */
export function stricter(a: ApprovalPolicy, b: ApprovalPolicy): ApprovalPolicy {
  return isAtLeastAsStrict(a, b) ? a : b;
}

/** An agent profile's restrictions: its name (for saying why) and its policies by tool name. */
export interface ProfilePolicies {
  readonly name: string;
  readonly tools: Readonly<Record<string, ApprovalPolicy>>;
  /** Which profile each entry of `tools` came from, when they are several (a delegated ceiling); absent: all `name`'s. */
  readonly sources?: Readonly<Record<string, string>>;
}

/**
 * A profile's `tools` key for every tool it does not name (MCP and client
 * tools included): the read-only built-ins deny all but the read tools this way,
 * so no tool added later, and no server's, acts through them.
 */
export const ANY_TOOL = "*";

/** `tools`' entry for `toolName`: its own, else the {@link ANY_TOOL} entry, else none. */
export function profileEntry(tools: Readonly<Record<string, ApprovalPolicy>>, toolName: string): ApprovalPolicy | undefined {
  const entry = ownValue(tools, toolName) ?? ownValue(tools, ANY_TOOL);
  return entry !== undefined && Object.hasOwn(STRICTNESS, entry) ? entry : undefined;
}

/**
 * Two profiles' `tools` as one: for every name either names (and
 * {@link ANY_TOOL}), the stricter of their entries, each side's falling back
 * to its `*`, so neither's entry nor its `*` is ever loosened by the other.
 * `sources` names the side whose entry won (the first on a tie).
 */
export function combineTools(
  first: Readonly<Record<string, ApprovalPolicy>>,
  second: Readonly<Record<string, ApprovalPolicy>>,
): { readonly tools: Record<string, ApprovalPolicy>; readonly from: Record<string, 0 | 1> } {
  // Maps, not objects: a tool may be called `__proto__`, which an assignment would not store.
  const tools = new Map<string, ApprovalPolicy>();
  const from = new Map<string, 0 | 1>();
  for (const name of new Set([...Object.keys(first), ...Object.keys(second)])) {
    const a = profileEntry(first, name);
    const b = profileEntry(second, name);
    if (a === undefined && b === undefined) continue;
    const firstWins = b === undefined || (a !== undefined && isAtLeastAsStrict(a, b));
    tools.set(name, firstWins ? a! : b);
    from.set(name, firstWins ? 0 : 1);
  }
  return { tools: Object.fromEntries(tools), from: Object.fromEntries(from) };
}

/**
 * The ceiling of a run delegated to the profile `child` by a run restricted
 * by `parent`: per tool the stricter of the two entries (each falling back
 * to its {@link ANY_TOOL} entry), remembering which profile set it. Both
 * runs share the settings' policies, so under {@link profilePolicy} the
 * child's policy for any tool is the stricter of the parent's effective
 * policy and the child profile's: never looser than either, and a `deny`
 * anywhere stays `deny`. Delegating again from the child starts from this
 * ceiling, so no depth widens it.
 */
export function delegatedPolicies(parent: ProfilePolicies, child: ProfilePolicies): ProfilePolicies {
  const { tools, from } = combineTools(parent.tools, child.tools);
  const sources = Object.fromEntries(Object.entries(from).map(([tool, side]) => {
    const source = side === 0 ? parent : child;
    return [tool, ownValue(source.sources, tool) ?? ownValue(source.sources, ANY_TOOL) ?? source.name];
  }));
  return { name: child.name, tools, sources };
}

/** The profile that set `toolName`'s entry (or the `*` entry it falls back to) in `profile`, to name in a refusal. */
export function policySource(profile: ProfilePolicies, toolName: string): string {
  const key = ownValue(profile.tools, toolName) !== undefined ? toolName : ANY_TOOL;
  return ownValue(profile.sources, key) ?? profile.name;
}

/**
 * The policy a call runs under, evaluated in one order for every tool:
 * first what settings say (`base`: a built-in's `tools` entry or default, an
 * MCP tool's server entry), then the agent profile's entry for `toolName`
 * (else its `*` entry), which can only tighten it, never loosen it. `byProfile` is true when the
 * profile made it stricter, so a refusal can say why.
 */
export function profilePolicy(base: ApprovalPolicy, toolName: string, profile: ProfilePolicies): { policy: ApprovalPolicy; byProfile: boolean } {
  const entry = profileEntry(profile.tools, toolName);
  if (entry === undefined || isAtLeastAsStrict(base, entry)) return { policy: base, byProfile: false };
  return { policy: entry, byProfile: true };
}
