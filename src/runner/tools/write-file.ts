/**
 * `write_file`: create or replace a whole file inside the workspace, through
 * the write policy of `paths.ts` and the atomic temp-and-rename of
 * `atomic-write.ts`. Missing parent directories are created. An existing
 * file keeps its permission bits; only regular files are replaced.
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../../util/exact-object.ts";
import { dirname } from "../../util/paths.ts";
import { existingMode, MAX_WRITE_BYTES, writeFileAtomic } from "./atomic-write.ts";
import { refusalText, resolveWorkspacePath } from "../../policy/workspace-paths.ts";
import { count, describeError, finishResult, formatBytes, quote } from "./tool-text.ts";
import type { Tool, ToolContext, ToolResult } from "./tool.ts";
import { scopeOf } from "./tool.ts";

const PATH_TEXT = "File path, relative to the workspace (or absolute inside it).";
const CONTENT_TEXT = "The complete new content of the file.";

/** Parameters of `write_file`. */
export const WriteFileParams = exactObject({
  path: v.pipe(v.string(), v.minLength(1), v.maxLength(4096), v.description(PATH_TEXT)),
  content: v.pipe(v.string(), v.description(CONTENT_TEXT)),
});

/** Parsed `write_file` parameters. */
export type WriteFileParams = v.InferOutput<typeof WriteFileParams>;

function lines(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

async function run(params: WriteFileParams, context: ToolContext): Promise<ToolResult> {
  const label = `write_file ${quote(params.path)}`;
  const fail = (output: string, summary: string) => finishResult(false, output, `${label}: ${summary}`, context.secrets);
  const bytes = new TextEncoder().encode(params.content);
  if (bytes.length > MAX_WRITE_BYTES) return fail(`The content is larger than ${formatBytes(MAX_WRITE_BYTES)}.`, "content too large");
  const decision = await resolveWorkspacePath(scopeOf(context), params.path, "write");
  if (!decision.ok) return fail(`Refused: ${refusalText(decision.reason)}.`, `refused (${decision.reason})`);
  const target = await existingMode(context, decision.path);
  if (typeof target === "string") return fail(`Cannot write there: ${target}.`, target);
  try {
    if (target.created) await context.runtime.fs.mkdir(dirname(decision.path), 0o755);
    await writeFileAtomic(context.runtime, decision.path, bytes, target.mode);
  } catch (error) {
    return fail(`Writing the file failed: ${describeError(error)}.`, `failed (${describeError(error)})`);
  }
  const verb = target.created ? "created" : "overwrote";
  const size = formatBytes(bytes.length);
  return finishResult(true, `Wrote ${quote(params.path, 1024)}: ${verb}, ${count(lines(params.content), "line")} (${size}).`, `${label}: ${verb} (${size})`, context.secrets);
}

/** The `write_file` tool. */
export const writeFileTool: Tool<WriteFileParams> = {
  name: "write_file",
  description: "Create a file in the workspace or replace its whole content (creating missing directories). " +
    "Prefer edit_file for changes to an existing file. Writing into .git, .magi-code or outside the workspace is refused.",
  schema: WriteFileParams,
  parameters: {
    type: "object",
    properties: {
      path: { type: "string", minLength: 1, maxLength: 4096, description: PATH_TEXT },
      content: { type: "string", description: CONTENT_TEXT },
    },
    required: ["path", "content"],
    additionalProperties: false,
  },
  describe: (params) => `Write ${formatBytes(new TextEncoder().encode(params.content).length)} to ${quote(params.path)}`,
  run,
};
