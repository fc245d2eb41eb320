/**
 * The built-in tool set and how a call's approval policy is chosen: a policy
 * named in settings wins, then the tool's default (reads `allow`, writes and
 * shell `ask`), and a tool that is not built in (an MCP tool, say) asks.
 *
 * @module
 */

import { editFileTool } from "./edit-file.ts";
import { globTool } from "./glob.ts";
import { grepTool } from "./grep.ts";
import { listDirectoryTool } from "./list-directory.ts";
import { readFileTool } from "./read-file.ts";
import { shellTool } from "./shell.ts";
import { APPROVAL_POLICIES, type AnyTool, type ApprovalPolicy } from "./tool.ts";
import { writeFileTool } from "./write-file.ts";

const BUILTINS: readonly AnyTool[] = Object.freeze([
  readFileTool,
  listDirectoryTool,
  globTool,
  grepTool,
  writeFileTool,
  editFileTool,
  shellTool,
] as AnyTool[]);

/** Every built-in tool, in the order they are offered to the model. */
export function builtinTools(): readonly AnyTool[] {
  return BUILTINS;
}

/** The built-in tool called `name`, if any. */
export function findBuiltinTool(name: string): AnyTool | undefined {
  return BUILTINS.find((tool) => tool.name === name);
}

/**
 * The policy for calls to `toolName`: `settingsPolicies[toolName]` when it is
 * an own property holding a valid policy (settings validation should have
 * refused anything else), else the built-in default, else `ask`.
 */
export function resolvePolicy(toolName: string, settingsPolicies?: Readonly<Record<string, ApprovalPolicy>>): ApprovalPolicy {
  if (settingsPolicies !== undefined && Object.prototype.hasOwnProperty.call(settingsPolicies, toolName)) {
    const configured = settingsPolicies[toolName];
    if (APPROVAL_POLICIES.includes(configured as ApprovalPolicy)) return configured as ApprovalPolicy;
  }
  return findBuiltinTool(toolName)?.defaultPolicy ?? "ask";
}
