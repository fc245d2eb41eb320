/**
 * `glob`: workspace paths matching a pattern (see `glob-match.ts` for the
 * syntax), found by the bounded walk in `walk.ts`, which skips `.git`,
 * `MC_HOME` and symlinked directories. Directories the pattern can no longer
 * match below are not entered, so `src/*.ts` reads one directory.
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../../util/exact-object.ts";
import { compileGlob, type GlobMatcher, type GlobState } from "./glob-match.ts";
import { relativeTo } from "../../policy/workspace-paths.ts";
import { type CallTarget, PATH_TOO_LONG, resolveTarget, TARGET_CHANGED, TARGET_CHANGED_SUMMARY, targetChanged, targetFailure, resolvedArguments } from "./call-target.ts";
import { count, describeError, displayName, finishResult, groupDigits, quote, showExactly } from "./tool-text.ts";
import type { PreparedCall, Tool, ToolContext, ToolResult } from "./tool.ts";
import { walkTree } from "./walk.ts";

const PATTERN_TEXT = "Glob pattern relative to path: * and ? within a name, ** across directories, [abc] classes, {a,b} alternatives.";
const PATH_TEXT = "Directory to search from, relative to the workspace (default: the workspace root).";

/** Parameters of `glob`. */
export const GlobParams = exactObject({
  pattern: v.pipe(v.string(), v.minLength(1), v.maxLength(1024), v.description(PATTERN_TEXT)),
  path: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(4096), v.description(PATH_TEXT))),
});

/** Parsed `glob` parameters. */
export type GlobParams = v.InferOutput<typeof GlobParams>;

/** Most paths returned. */
export const MAX_GLOB_RESULTS = 1000;
/** Most directory entries looked at in one call. */
export const MAX_GLOB_ENTRIES = 100_000;

async function prepare(params: GlobParams, context: ToolContext): Promise<PreparedCall | ToolResult> {
  const label = `glob ${quote(params.pattern)}${params.path === undefined ? "" : ` in ${quote(params.path)}`}`;
  const compiled = compileGlob(params.pattern);
  if (!compiled.ok) return finishResult(false, `Invalid pattern: ${compiled.reason}.`, `${label}: invalid pattern`, context.secrets);
  const resolution = await resolveTarget(context, params.path ?? ".", "read");
  if (!resolution.ok) return targetFailure(resolution, label, context.secrets);
  const { target } = resolution;
  return {
    action: `Find ${showExactly(params.pattern)} in ${target.shown}`,
    tooLongToShow: PATH_TOO_LONG,
    arguments: resolvedArguments(params, context, target),
    mustAsk: false,
    run: () => run(params, context, target, compiled.matcher),
  };
}

async function run(params: GlobParams, context: ToolContext, target: CallTarget, matcher: GlobMatcher): Promise<ToolResult> {
  const label = `glob ${quote(params.pattern)}${params.path === undefined ? "" : ` in ${quote(relativeTo(context.workspace, target.path))}`}`;
  const fail = (output: string, summary: string) => finishResult(false, output, `${label}: ${summary}`, context.secrets);
  if (await targetChanged(context, target)) return fail(TARGET_CHANGED, TARGET_CHANGED_SUMMARY);
  try {
    if ((await context.runtime.fs.stat(target.path)).kind !== "directory") return fail("path is not a directory.", "not a directory");
  } catch (error) {
    return fail(`Cannot search there: ${describeError(error)}.`, describeError(error));
  }
  const found: string[] = [];
  let full = false;
  const stats = await walkTree<GlobState>({
    fs: context.runtime.fs,
    root: target.path,
    workspace: context.workspace,
    home: context.home,
    signal: context.signal,
    maxEntries: MAX_GLOB_ENTRIES,
    initial: matcher.start(),
    visit: (entry, state) => {
      const next = matcher.step(state, entry.name);
      if (matcher.matches(next)) {
        found.push(displayName(entry.relative) + (entry.kind === "directory" ? "/" : ""));
        if (found.length >= MAX_GLOB_RESULTS) {
          full = true;
          return "stop";
        }
      }
      return entry.kind === "directory" && matcher.viable(next) ? { descend: next } : "next";
    },
  });
  found.sort();
  const notes = [`[${count(found.length, "match", "matches")}; ${count(stats.entries, "entry", "entries")} examined.]`];
  if (full) notes.push(`[Stopped at ${groupDigits(MAX_GLOB_RESULTS)} matches; narrow the pattern or path.]`);
  if (stats.truncated) notes.push(`[Stopped after examining ${groupDigits(MAX_GLOB_ENTRIES)} entries; narrow the pattern or path.]`);
  if (stats.unreadable > 0) notes.push(`[${count(stats.unreadable, "directory", "directories")} could not be read.]`);
  if (stats.cancelled) notes.push("[Cancelled.]");
  const incomplete = full || stats.truncated || stats.cancelled;
  const summary = `${label}: ${count(found.length, "match", "matches")}${incomplete ? " (incomplete)" : ""}`;
  return finishResult(!stats.cancelled, [...found, ...notes].join("\n"), summary, context.secrets);
}

/** The `glob` tool. */
export const globTool: Tool<GlobParams> = {
  name: "glob",
  description: "Find files and directories in the workspace whose paths match a glob pattern, e.g. **/*.ts or src/{a,b}/*.json. " +
    "Returns workspace-relative paths, sorted, directories with a trailing /. Skips .git and does not follow symlinked directories.",
  schema: GlobParams,
  parameters: {
    type: "object",
    properties: {
      pattern: { type: "string", minLength: 1, maxLength: 1024, description: PATTERN_TEXT },
      path: { type: "string", minLength: 1, maxLength: 4096, description: PATH_TEXT },
    },
    required: ["pattern"],
    additionalProperties: false,
  },
  prepare,
};
