/**
 * `edit_file`: exact text replacement in an existing UTF-8 file. `old_text`
 * must occur exactly once (overlapping occurrences count, since either could
 * be meant) unless `replace_all` is set; "no match" and "ambiguous" are
 * ordinary `ok: false` results with a hint. The file is rewritten atomically
 * with its mode kept, and a byte-order mark survives the round trip.
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../../util/exact-object.ts";
import { REDACTION_MARKER } from "../../util/redaction.ts";
import { existingMode, MAX_WRITE_BYTES, writeFileAtomic } from "./atomic-write.ts";
import { refusalText, resolveWorkspacePath } from "../../policy/workspace-paths.ts";
import { count, describeError, finishResult, formatBytes, quote } from "./tool-text.ts";
import type { Tool, ToolContext, ToolResult } from "./tool.ts";
import { scopeOf } from "./tool.ts";

const PATH_TEXT = "File path, relative to the workspace (or absolute inside it).";
const OLD_TEXT = "Exact text to replace, including whitespace and line breaks; it must occur exactly once unless replace_all is true.";
const NEW_TEXT = "The replacement text.";
const ALL_TEXT = "Replace every occurrence instead of requiring exactly one.";

/** Parameters of `edit_file`. */
export const EditFileParams = exactObject({
  path: v.pipe(v.string(), v.minLength(1), v.maxLength(4096), v.description(PATH_TEXT)),
  old_text: v.pipe(v.string(), v.minLength(1), v.description(OLD_TEXT)),
  new_text: v.pipe(v.string(), v.description(NEW_TEXT)),
  replace_all: v.optional(v.pipe(v.boolean(), v.description(ALL_TEXT))),
});

/** Parsed `edit_file` parameters. */
export type EditFileParams = v.InferOutput<typeof EditFileParams>;

/** Occurrences of `needle` in `text`, overlapping ones included, counting stops at `limit`. */
export function countOccurrences(text: string, needle: string, limit = Number.MAX_SAFE_INTEGER): number {
  let found = 0;
  for (let at = text.indexOf(needle); at !== -1 && found < limit; at = text.indexOf(needle, at + 1)) found++;
  return found;
}

/** Why `old_text` probably did not match, for the model's next try. */
function noMatchHint(text: string, oldText: string): string {
  if (oldText.includes(REDACTION_MARKER)) {
    return ` old_text contains ${REDACTION_MARKER}, which stands for text that was hidden from you; choose old_text that avoids it.`;
  }
  if (text.includes("\r\n") && oldText.includes("\n") && !oldText.includes("\r\n")) {
    return " The file uses CRLF line endings; old_text must use them too.";
  }
  if (oldText.trim() !== "" && text.includes(oldText.trim())) {
    return " The text matches when its leading and trailing whitespace is ignored; copy the whitespace exactly.";
  }
  return " Read the file again and copy the text exactly.";
}

async function run(params: EditFileParams, context: ToolContext): Promise<ToolResult> {
  const label = `edit_file ${quote(params.path)}`;
  const fail = (output: string, summary: string) => finishResult(false, output, `${label}: ${summary}`, context.secrets);
  if (params.old_text === params.new_text) return fail("old_text and new_text are identical; nothing would change.", "no change requested");
  const decision = await resolveWorkspacePath(scopeOf(context), params.path, "write");
  if (!decision.ok) return fail(`Refused: ${refusalText(decision.reason)}.`, `refused (${decision.reason})`);
  const target = await existingMode(context, decision.path);
  if (typeof target === "string" || target.created) {
    const reason = typeof target === "string" ? target : "not found";
    return fail(`Cannot edit the file: ${reason}.`, reason);
  }
  let text: string;
  try {
    const bytes = await context.runtime.fs.readFile(decision.path, MAX_WRITE_BYTES);
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (error) {
    const reason = error instanceof TypeError ? "not valid UTF-8 text" : describeError(error);
    return fail(`Cannot edit the file: ${reason}.`, reason);
  }
  const found = countOccurrences(text, params.old_text, params.replace_all === true ? Number.MAX_SAFE_INTEGER : 2);
  if (found === 0) return fail(`No match: old_text does not occur in the file.${noMatchHint(text, params.old_text)}`, "no match");
  if (found > 1 && params.replace_all !== true) {
    const total = countOccurrences(text, params.old_text);
    return fail(
      `Ambiguous: old_text occurs ${total} times. Include more surrounding text to pick one, or set replace_all.`,
      `ambiguous (${total} occurrences)`,
    );
  }
  let edited: string;
  let replaced: number;
  if (params.replace_all === true) {
    const pieces = text.split(params.old_text);
    edited = pieces.join(params.new_text);
    replaced = pieces.length - 1;
  } else {
    const at = text.indexOf(params.old_text);
    edited = text.slice(0, at) + params.new_text + text.slice(at + params.old_text.length);
    replaced = 1;
  }
  const bytes = new TextEncoder().encode(edited);
  if (bytes.length > MAX_WRITE_BYTES) return fail(`The edited file would be larger than ${formatBytes(MAX_WRITE_BYTES)}.`, "result too large");
  try {
    await writeFileAtomic(context.runtime, decision.path, bytes, target.mode);
  } catch (error) {
    return fail(`Writing the file failed: ${describeError(error)}.`, `failed (${describeError(error)})`);
  }
  const what = `replaced ${count(replaced, "occurrence")}`;
  return finishResult(true, `Edited ${quote(params.path, 1024)}: ${what}.`, `${label}: ${what}`, context.secrets);
}

/** The `edit_file` tool. */
export const editFileTool: Tool<EditFileParams> = {
  name: "edit_file",
  description: "Edit a file in the workspace by exact text replacement: old_text must match the file exactly " +
    "(whitespace and line breaks included) and occur exactly once, unless replace_all is true.",
  schema: EditFileParams,
  parameters: {
    type: "object",
    properties: {
      path: { type: "string", minLength: 1, maxLength: 4096, description: PATH_TEXT },
      old_text: { type: "string", minLength: 1, description: OLD_TEXT },
      new_text: { type: "string", description: NEW_TEXT },
      replace_all: { type: "boolean", description: ALL_TEXT },
    },
    required: ["path", "old_text", "new_text"],
    additionalProperties: false,
  },
  describe: (params) => `Edit ${quote(params.path)} (${params.replace_all === true ? "replace every occurrence" : "replace one occurrence"})`,
  run,
};
