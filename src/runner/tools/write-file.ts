/**
 * `write_file`: create or replace a whole file inside the workspace, through
 * the write policy of `workspace-paths.ts` and the atomic temp-and-rename of
 * `atomic-write.ts`. The approval prompt names the canonical target, whether
 * it is created or replaced, and the exact byte count. Missing parent directories are created. An existing
 * file keeps its permission bits; only regular files are replaced.
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../../util/exact-object.ts";
import { dirname } from "../../util/paths.ts";
import { MAX_WRITE_BYTES, writableMode, writeFileAtomic } from "./atomic-write.ts";
import { PATH_TOO_LONG, resolveTarget, shownPath, TARGET_CHANGED, TARGET_CHANGED_SUMMARY, targetChanged, targetFailure, resolvedArguments } from "./call-target.ts";
import { relativeTo } from "../../policy/workspace-paths.ts";
import { count, describeError, finishResult, formatBytes, quote } from "./tool-text.ts";
import type { PreparedCall, Tool, ToolContext, ToolResult } from "./tool.ts";

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

async function prepare(params: WriteFileParams, context: ToolContext): Promise<PreparedCall | ToolResult> {
  const label = `write_file ${quote(params.path)}`;
  const fail = (output: string, summary: string) => finishResult(false, output, `${label}: ${summary}`, context.secrets);
  const bytes = new TextEncoder().encode(params.content);
  if (bytes.length > MAX_WRITE_BYTES) return fail(`The content is larger than ${formatBytes(MAX_WRITE_BYTES)}.`, "content too large");
  const resolution = await resolveTarget(context, params.path, "write");
  if (!resolution.ok) return targetFailure(resolution, label, context.secrets);
  const { target } = resolution;
  const writable = writableMode(target.info);
  if (typeof writable === "string") return fail(`Cannot write there: ${writable}.`, writable);
  const shortLabel = `write_file ${quote(relativeTo(context.workspace, target.path))}`;
  const done = (ok: boolean, output: string, summary: string) => finishResult(ok, output, `${shortLabel}: ${summary}`, context.secrets);
  return {
    action: `Write ${count(bytes.length, "byte")} to ${target.shown}, ${writable.created ? "creating a new file" : "replacing the whole existing file"}`,
    tooLongToShow: PATH_TOO_LONG,
    arguments: resolvedArguments(params, context, target),
    mustAsk: false,
    scopeTarget: target.shown,
    facts: {
      kind: "write",
      path: shownPath(context, target.path),
      target: target.path,
      created: writable.created,
      bytesBefore: target.info?.size ?? 0,
      links: target.info?.nlink ?? 1,
      after: bytes,
    },
    run: async () => {
      if (await targetChanged(context, target)) return done(false, TARGET_CHANGED, TARGET_CHANGED_SUMMARY);
      let written: "written" | "moved";
      try {
        if (writable.created) await context.runtime.fs.mkdir(dirname(target.path), 0o755);
        // The content being replaced, for `session.rewind`; one it cannot read leaves the turn unrestorable.
        if (context.checkpoint !== undefined) {
          const before = writable.created ? null : await context.runtime.fs.readFile(target.path, MAX_WRITE_BYTES).catch(() => "unreadable" as const);
          await context.checkpoint(target.path, before, bytes);
        }
        written = await writeFileAtomic(context.runtime, target.path, bytes, writable.mode);
      } catch (error) {
        return done(false, `Writing the file failed: ${describeError(error)}.`, `failed (${describeError(error)})`);
      }
      if (written === "moved") return done(false, TARGET_CHANGED, TARGET_CHANGED_SUMMARY);
      const verb = writable.created ? "created" : "overwrote";
      const size = formatBytes(bytes.length);
      const where = quote(relativeTo(context.workspace, target.path), 1024);
      return done(true, `Wrote ${where}: ${verb}, ${count(lines(params.content), "line")} (${size}).`, `${verb} (${size})`);
    },
  };
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
  prepare,
};
