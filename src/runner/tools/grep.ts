/**
 * `grep`: lines matching a regular expression (or a literal string) in the
 * files under a workspace path.
 *
 * Regular expressions run on RE2JS, a pure-JavaScript port of RE2, loaded on
 * first use. RE2 matches in time linear in the line, whatever the pattern:
 * V8's backtracking engine, by contrast, spends more than ten seconds on
 * `a*a*a*a*b` against a 200-character line, so bounding line length (the
 * usual guard) does not bound the time. RE2 syntax is what ripgrep and Go
 * use, which models know; it has no lookaround and no backreferences.
 *
 * Bounded everywhere: matches, bytes per file, bytes overall, entries walked,
 * characters matched per line and wall time. Binary files (a NUL in the first 8 KiB), symlinks, `.git`,
 * `MC_HOME` and, in a directory walk, files with more than one hard link (their other names may be
 * outside the workspace) are skipped; a hard-linked file named directly needs the user's approval.
 *
 * @module
 */

import type { RE2JS } from "re2js";
import * as v from "valibot";
import { exactObject } from "../../util/exact-object.ts";
import { compileGlob, type GlobMatcher, type GlobState } from "./glob-match.ts";
import { relativeTo } from "../../policy/workspace-paths.ts";
import { type CallTarget, PATH_TOO_LONG, resolveTarget, TARGET_CHANGED, TARGET_CHANGED_SUMMARY, targetChanged, targetFailure, resolvedArguments } from "./call-target.ts";
import { searchFile, type SearchLimits, type SearchTally } from "./grep-file.ts";
import { clampUtf8 } from "../../util/utf8.ts";
import { count, finishResult, formatBytes, quote, showExactly } from "./tool-text.ts";
import { MAX_OUTPUT_BYTES, type PreparedCall, type Tool, type ToolContext, type ToolResult } from "./tool.ts";
import { walkTree } from "./walk.ts";

const PATTERN_TEXT = "RE2 regular expression (ripgrep/Go syntax; no lookaround or backreferences), or plain text with literal=true.";
const PATH_TEXT = "File or directory to search, relative to the workspace (default: the workspace root).";
const LITERAL_TEXT = "Treat pattern as plain text rather than a regular expression.";
const CASE_TEXT = "Match without regard to case.";
const GLOB_TEXT = "Only search files matching this glob; without a / it matches the file name at any depth (e.g. *.ts).";

/** Parameters of `grep`. */
export const GrepParams = exactObject({
  pattern: v.pipe(v.string(), v.minLength(1), v.maxLength(1000), v.description(PATTERN_TEXT)),
  path: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(4096), v.description(PATH_TEXT))),
  literal: v.optional(v.pipe(v.boolean(), v.description(LITERAL_TEXT))),
  ignore_case: v.optional(v.pipe(v.boolean(), v.description(CASE_TEXT))),
  glob: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(1024), v.description(GLOB_TEXT))),
});

/** Parsed `grep` parameters. */
export type GrepParams = v.InferOutput<typeof GrepParams>;

/** The bounds of one `grep` call. */
export const GREP_LIMITS: SearchLimits & { readonly walkEntries: number } = Object.freeze({
  matches: 500,
  outputBytes: MAX_OUTPUT_BYTES - 2048,
  fileBytes: 4 * 1024 * 1024,
  totalBytes: 64 * 1024 * 1024,
  deadlineMs: 15_000,
  walkEntries: 100_000,
});

let engine: Promise<typeof import("re2js")> | null = null;

/** Compiles the pattern; a syntax error is returned as text. */
async function compile(params: GrepParams): Promise<RE2JS | string> {
  const { RE2JS } = await (engine ??= import("re2js"));
  try {
    const source = params.literal === true ? RE2JS.quote(params.pattern) : params.pattern;
    return RE2JS.compile(source, params.ignore_case === true ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    return error instanceof Error ? error.message : "invalid pattern";
  }
}

function label(params: GrepParams): string {
  return `grep ${quote(params.pattern)}${params.path === undefined ? "" : ` in ${quote(params.path)}`}` +
    `${params.glob === undefined ? "" : ` (files ${quote(params.glob)})`}`;
}

function notesFor(tally: SearchTally, limits: typeof GREP_LIMITS, walked: { truncated: boolean; unreadable: number }): string[] {
  const notes = [`[${count(tally.matches, "match", "matches")} in ${count(tally.matchedFiles, "file")}; ${count(tally.files, "file")} searched.]`];
  if (tally.stop === "matches") notes.push(`[Stopped at ${limits.matches} matches; narrow the pattern, path or glob.]`);
  if (tally.stop === "output") notes.push("[Stopped at the 64 KiB output limit; narrow the pattern, path or glob.]");
  if (tally.stop === "bytes") notes.push(`[Stopped after reading ${formatBytes(limits.totalBytes)}; narrow the path or glob.]`);
  if (tally.stop === "time") notes.push(`[Stopped after ${limits.deadlineMs / 1000} s; narrow the path or glob.]`);
  if (walked.truncated) notes.push(`[Stopped after examining ${count(limits.walkEntries, "directory entry", "directory entries")}; narrow the path or glob.]`);
  if (tally.binary > 0) notes.push(`[${count(tally.binary, "binary file")} skipped.]`);
  if (tally.linked > 0) notes.push(`[${count(tally.linked, "hard-linked file")} skipped; read_file reads one after the user approves.]`);
  if (tally.partial > 0) notes.push(`[${count(tally.partial, "file")} larger than ${formatBytes(limits.fileBytes)} searched only in part.]`);
  if (tally.unreadable + walked.unreadable > 0) notes.push(`[${count(tally.unreadable + walked.unreadable, "file or directory", "files or directories")} could not be read.]`);
  return notes;
}

async function prepare(params: GrepParams, context: ToolContext): Promise<PreparedCall | ToolResult> {
  const title = label(params);
  const fail = (output: string, summary: string) => finishResult(false, output, `${title}: ${summary}`, context.secrets);
  const regex = await compile(params);
  if (typeof regex === "string") return fail(`Invalid regular expression: ${clampUtf8(regex, 1024)}`, "invalid pattern");
  let filter: GlobMatcher | null = null;
  if (params.glob !== undefined) {
    const compiled = compileGlob(params.glob, { anyDepth: true });
    if (!compiled.ok) return fail(`Invalid glob: ${compiled.reason}.`, "invalid glob");
    filter = compiled.matcher;
  }
  const resolution = await resolveTarget(context, params.path ?? ".", "read");
  if (!resolution.ok) return targetFailure(resolution, title, context.secrets);
  const { target } = resolution;
  if (target.info === null) return fail("Cannot search there: not found.", "not found");
  // A file named directly is read like read_file reads it; one met in a walk is skipped instead.
  const links = target.info.kind === "file" ? target.info.nlink : 1;
  const flags = `${params.literal === true ? ", literal" : ""}${params.ignore_case === true ? ", ignoring case" : ""}`;
  return {
    action: `Search for ${showExactly(params.pattern)}${flags} in ${target.shown}` +
      `${params.glob === undefined ? "" : ` (files ${showExactly(params.glob)})`}` +
      `${links > 1 ? ` (a file with ${count(links, "hard link")}: its other names can be outside the workspace)` : ""}`,
    tooLongToShow: PATH_TOO_LONG,
    arguments: resolvedArguments(params, context, target),
    mustAsk: links > 1,
    run: () => run(params, context, target, regex, filter),
  };
}

async function run(params: GrepParams, context: ToolContext, target: CallTarget, regex: RE2JS, filter: GlobMatcher | null): Promise<ToolResult> {
  const title = label(params);
  const fail = (output: string, summary: string) => finishResult(false, output, `${title}: ${summary}`, context.secrets);
  if (await targetChanged(context, target)) return fail(TARGET_CHANGED, TARGET_CHANGED_SUMMARY);
  const kind = target.info?.kind;
  const limits = GREP_LIMITS;
  const tally: SearchTally = {
    matches: 0,
    matchedFiles: 0,
    files: 0,
    binary: 0,
    partial: 0,
    linked: 0,
    unreadable: 0,
    outputBytes: 0,
    readBytes: 0,
    stop: null,
  };
  const lines: string[] = [];
  const deadline = context.runtime.monotonicNow() + limits.deadlineMs;
  const search = (path: string, hardLinks: boolean) =>
    searchFile({
      fs: context.runtime.fs,
      path,
      shown: relativeTo(context.workspace, path),
      hardLinks,
      regex,
      limits,
      tally,
      lines,
      deadline,
      now: () => context.runtime.monotonicNow(),
    });
  let walked = { truncated: false, unreadable: 0, cancelled: false };
  if (kind === "file") await search(target.path, true);
  else if (kind === "directory") {
    walked = await walkTree<GlobState | null>({
      fs: context.runtime.fs,
      root: target.path,
      workspace: context.workspace,
      home: context.home,
      signal: context.signal,
      maxEntries: limits.walkEntries,
      initial: filter?.start() ?? null,
      visit: async (entry, state) => {
        const next = filter === null || state === null ? null : filter.step(state, entry.name);
        if (entry.kind === "directory") return filter === null || (next !== null && filter.viable(next)) ? { descend: next } : "next";
        if (entry.kind !== "file" || (filter !== null && (next === null || !filter.matches(next)))) return "next";
        await search(entry.path, false);
        return tally.stop === null ? "next" : "stop";
      },
    });
  } else {
    return fail("path is neither a file nor a directory.", "not a file or directory");
  }
  const notes = notesFor(tally, limits, walked);
  if (walked.cancelled) notes.push("[Cancelled.]");
  const incomplete = tally.stop !== null || walked.truncated || walked.cancelled;
  const summary = `${title}: ${count(tally.matches, "match", "matches")} in ${count(tally.matchedFiles, "file")}` +
    `${incomplete ? " (incomplete)" : ""}`;
  return finishResult(!walked.cancelled, [...lines, ...notes].join("\n"), summary, context.secrets);
}

/** The `grep` tool. */
export const grepTool: Tool<GrepParams> = {
  name: "grep",
  description: "Search file contents in the workspace for lines matching a regular expression (RE2 syntax) or plain text. " +
    "Returns path:line: text for each matching line, at most 500 matches; skips binary files, symlinks and .git.",
  schema: GrepParams,
  parameters: {
    type: "object",
    properties: {
      pattern: { type: "string", minLength: 1, maxLength: 1000, description: PATTERN_TEXT },
      path: { type: "string", minLength: 1, maxLength: 4096, description: PATH_TEXT },
      literal: { type: "boolean", description: LITERAL_TEXT },
      ignore_case: { type: "boolean", description: CASE_TEXT },
      glob: { type: "string", minLength: 1, maxLength: 1024, description: GLOB_TEXT },
    },
    required: ["pattern"],
    additionalProperties: false,
  },
  prepare,
};
