/**
 * `list_directory`: one directory's entries, sorted, with their kinds marked
 * in `ls -F` style (`/` directory, `@` symlink, `|` FIFO, `=` socket), at most
 * {@link MAX_LIST_ENTRIES} of them. Symlinks are shown, never followed.
 *
 * @module
 */

import * as v from "valibot";
import type { DirEntry, FileKind } from "../../host/runtime.ts";
import { exactObject } from "../../util/exact-object.ts";
import { joinPath } from "../../util/paths.ts";
import { relativeTo } from "../../policy/workspace-paths.ts";
import { type CallTarget, PATH_TOO_LONG, resolveTarget, TARGET_CHANGED, TARGET_CHANGED_SUMMARY, targetChanged, targetFailure, resolvedArguments } from "./call-target.ts";
import { count, describeError, displayName, finishResult, groupDigits, quote } from "./tool-text.ts";
import type { PreparedCall, Tool, ToolContext, ToolResult } from "./tool.ts";

const PATH_TEXT = "Directory path, relative to the workspace (default: the workspace root).";

/** Parameters of `list_directory`. */
export const ListDirectoryParams = exactObject({
  path: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(4096), v.description(PATH_TEXT))),
});

/** Parsed `list_directory` parameters. */
export type ListDirectoryParams = v.InferOutput<typeof ListDirectoryParams>;

/** Most entries listed; the rest are counted. */
export const MAX_LIST_ENTRIES = 1000;

const SUFFIX: Partial<Record<FileKind, string>> = { directory: "/", symlink: "@", fifo: "|", socket: "=" };

function tally(entries: readonly DirEntry[]): string {
  const directories = entries.filter((entry) => entry.kind === "directory").length;
  const files = entries.filter((entry) => entry.kind === "file").length;
  const links = entries.filter((entry) => entry.kind === "symlink").length;
  const other = entries.length - directories - files - links;
  const parts = [count(directories, "directory", "directories"), count(files, "file"), count(links, "symlink")];
  if (other > 0) parts.push(`${groupDigits(other)} other`);
  return parts.join(", ");
}

/**
 * Deno's directory entries only know files, directories and symlinks, so a
 * FIFO or socket arrives as "other"; one lstat names it.
 */
async function refine(context: ToolContext, directory: string, entry: DirEntry): Promise<DirEntry> {
  if (entry.kind !== "other") return entry;
  try {
    return { name: entry.name, kind: (await context.runtime.fs.lstat(joinPath(directory, entry.name))).kind };
  } catch {
    return entry;
  }
}

async function prepare(params: ListDirectoryParams, context: ToolContext): Promise<PreparedCall | ToolResult> {
  const resolution = await resolveTarget(context, params.path ?? ".", "read");
  if (!resolution.ok) return targetFailure(resolution, `list_directory ${quote(params.path ?? ".")}`, context.secrets);
  const { target } = resolution;
  return {
    action: `List ${target.shown}`,
    tooLongToShow: PATH_TOO_LONG,
    arguments: resolvedArguments(params, context, target),
    mustAsk: false,
    scopeTarget: target.shown,
    run: () => run(context, target),
  };
}

async function run(context: ToolContext, target: CallTarget): Promise<ToolResult> {
  const label = `list_directory ${quote(relativeTo(context.workspace, target.path))}`;
  const fail = (output: string, summary: string) => finishResult(false, output, `${label}: ${summary}`, context.secrets);
  if (await targetChanged(context, target)) return fail(TARGET_CHANGED, TARGET_CHANGED_SUMMARY);
  let entries: DirEntry[];
  try {
    entries = await context.runtime.fs.readDir(target.path);
  } catch (error) {
    return fail(`Cannot list the directory: ${describeError(error)}.`, describeError(error));
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const shown = await Promise.all(entries.slice(0, MAX_LIST_ENTRIES).map((entry) => refine(context, target.path, entry)));
  const lines = shown.map((entry) => displayName(entry.name) + (SUFFIX[entry.kind] ?? ""));
  const where = relativeTo(context.workspace, target.path);
  lines.push(`[${count(entries.length, "entry", "entries")} in ${where === "." ? "the workspace root" : quote(where, 1024)}: ${tally(entries)}` +
    `${entries.length > shown.length ? `; only the first ${groupDigits(MAX_LIST_ENTRIES)} are listed` : ""}. ` +
    `Marks: / directory, @ symlink, | FIFO, = socket.]`);
  const summary = `${label}: ${count(entries.length, "entry", "entries")}${entries.length > shown.length ? " (listing truncated)" : ""}`;
  return finishResult(true, lines.join("\n"), summary, context.secrets);
}

/** The `list_directory` tool. */
export const listDirectoryTool: Tool<ListDirectoryParams> = {
  name: "list_directory",
  description: "List the entries of a directory in the workspace, sorted by name, with directories marked by a trailing /. " +
    `At most ${groupDigits(MAX_LIST_ENTRIES)} entries are listed.`,
  schema: ListDirectoryParams,
  parameters: {
    type: "object",
    properties: { path: { type: "string", minLength: 1, maxLength: 4096, description: PATH_TEXT } },
    required: [],
    additionalProperties: false,
  },
  prepare,
};
