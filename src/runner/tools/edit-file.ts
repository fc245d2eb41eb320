/**
 * `edit_file`: exact text replacement in an existing UTF-8 file. `old_text`
 * must occur exactly once (overlapping occurrences count, since either could
 * be meant) unless `replace_all` is set; "no match" and "ambiguous" are
 * ordinary `ok: false` results with a hint. The file is rewritten atomically
 * with its mode kept, and a byte-order mark survives the round trip. The
 * match is found while preparing, so the approval prompt says how many
 * replacements in which (canonical) file; the run rewrites the file only if
 * its bytes are still the ones that count was made on. A file with more
 * than one hard link is refused unread: the match result alone would reveal
 * bytes of a file whose other name may be outside the workspace.
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../../util/exact-object.ts";
import { REDACTION_MARKER } from "../../util/redaction.ts";
import { MAX_WRITE_BYTES, writableMode, writeFileAtomic } from "./atomic-write.ts";
import { PATH_TOO_LONG, resolveTarget, shownPath, TARGET_CHANGED, TARGET_CHANGED_SUMMARY, targetChanged, targetFailure, resolvedArguments } from "./call-target.ts";
import { relativeTo } from "../../policy/workspace-paths.ts";
import { count, describeError, finishResult, formatBytes, quote } from "./tool-text.ts";
import type { PreparedCall, Tool, ToolContext, ToolResult } from "./tool.ts";

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

/** The file's text, or why it cannot be edited. */
async function readText(context: ToolContext, path: string): Promise<{ bytes: Uint8Array; text: string } | string> {
  try {
    const bytes = await context.runtime.fs.readFile(path, MAX_WRITE_BYTES);
    return { bytes, text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch (error) {
    return error instanceof TypeError ? "not valid UTF-8 text" : describeError(error);
  }
}

/** Whether two byte arrays hold the same bytes. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

async function prepare(params: EditFileParams, context: ToolContext): Promise<PreparedCall | ToolResult> {
  const label = `edit_file ${quote(params.path)}`;
  const fail = (output: string, summary: string) => finishResult(false, output, `${label}: ${summary}`, context.secrets);
  if (params.old_text === params.new_text) return fail("old_text and new_text are identical; nothing would change.", "no change requested");
  const resolution = await resolveTarget(context, params.path, "write");
  if (!resolution.ok) return targetFailure(resolution, label, context.secrets);
  const { target } = resolution;
  const writable = writableMode(target.info);
  if (typeof writable === "string" || writable.created) {
    const reason = typeof writable === "string" ? writable : "not found";
    return fail(`Cannot edit the file: ${reason}.`, reason);
  }
  // Whether old_text occurs would reveal bytes of the file's other names, which can be outside the
  // workspace, before anyone is asked; and the edit would copy them to a name read without asking.
  if (target.info !== null && target.info.nlink > 1) {
    return fail(`Cannot edit the file: it has ${count(target.info.nlink, "hard link")}, and its other names can be outside the workspace. ` +
      "Read it with read_file (the user is asked) and replace it with write_file.", "refused (more than one hard link)");
  }
  const original = await readText(context, target.path);
  if (typeof original === "string") return fail(`Cannot edit the file: ${original}.`, original);
  const { text } = original;
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
  const shortLabel = `edit_file ${quote(relativeTo(context.workspace, target.path))}`;
  const done = (ok: boolean, output: string, summary: string) => finishResult(ok, output, `${shortLabel}: ${summary}`, context.secrets);
  const what = `replaced ${count(replaced, "occurrence")}`;
  return {
    action: `Edit ${target.shown}: replace ${count(replaced, "occurrence")} (${count(original.bytes.length, "byte")} before, ${count(bytes.length, "byte")} after)`,
    tooLongToShow: PATH_TOO_LONG,
    arguments: resolvedArguments(params, context, target),
    mustAsk: false,
    scopeTarget: target.shown,
    facts: {
      kind: "edit",
      path: shownPath(context, target.path),
      before: text,
      after: edited,
      bytesBefore: original.bytes.length,
      bytesAfter: bytes.length,
      replacements: replaced,
    },
    run: async () => {
      // The replacement count shown was computed from this content: any change to the file voids it.
      const now = await targetChanged(context, target) ? null : await readText(context, target.path);
      if (now === null || typeof now === "string" || !sameBytes(now.bytes, original.bytes)) {
        return done(false, TARGET_CHANGED, TARGET_CHANGED_SUMMARY);
      }
      let written: "written" | "moved";
      try {
        await context.checkpoint?.(target.path, original.bytes, bytes);
        written = await writeFileAtomic(context.runtime, target.path, bytes, writable.mode);
      } catch (error) {
        return done(false, `Writing the file failed: ${describeError(error)}.`, `failed (${describeError(error)})`);
      }
      if (written === "moved") return done(false, TARGET_CHANGED, TARGET_CHANGED_SUMMARY);
      return done(true, `Edited ${quote(relativeTo(context.workspace, target.path), 1024)}: ${what}.`, what);
    },
  };
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
  prepare,
};
