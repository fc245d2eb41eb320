/**
 * The built-in tool set, in the order it is offered to the model, and
 * `skill`, which is offered only when skills are enabled. Approval policies
 * live apart, in `policy/tool-policies.ts`, so startup can check them without
 * loading any tool.
 *
 * @module
 */

import { editFileTool } from "./edit-file.ts";
import { globTool } from "./glob.ts";
import { grepTool } from "./grep.ts";
import { listDirectoryTool } from "./list-directory.ts";
import { readFileTool } from "./read-file.ts";
import { shellTool } from "./shell.ts";
import { skillTool } from "./skill.ts";
import type { AnyTool } from "./tool.ts";
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

const WITH_SKILL: readonly AnyTool[] = Object.freeze([...BUILTINS, skillTool as AnyTool]);

/** Every built-in tool, in the order they are offered to the model; `skill` last, when `skills` are enabled. */
export function builtinTools(skills = false): readonly AnyTool[] {
  return skills ? WITH_SKILL : BUILTINS;
}

/** The built-in tool called `name`, if any; `skill` only when `skills` are enabled. */
export function findBuiltinTool(name: string, skills = false): AnyTool | undefined {
  return builtinTools(skills).find((tool) => tool.name === name);
}
