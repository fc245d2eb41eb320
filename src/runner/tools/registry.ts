/**
 * The built-in tool set, in the order it is offered to the model. Approval
 * policies live apart, in `policies.ts`, so startup can check them without
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

/** Every built-in tool, in the order they are offered to the model. */
export function builtinTools(): readonly AnyTool[] {
  return BUILTINS;
}

/** The built-in tool called `name`, if any. */
export function findBuiltinTool(name: string): AnyTool | undefined {
  return BUILTINS.find((tool) => tool.name === name);
}
