/**
 * `read_file`: a bounded read of one regular text file, optionally a line
 * range. The file is streamed in 64 KiB chunks, so a line range deep in a
 * large file costs one pass and no more memory than the output. FIFOs,
 * devices and directories are refused by the runtime's `openRead`, which
 * never blocks on a FIFO. The text is returned as stored (no line-number
 * prefixes), so the model can quote it verbatim into `edit_file`. A regular
 * file with more than one hard link needs the user's approval whatever the
 * policy: its other names may be outside the workspace.
 *
 * @module
 */

import * as v from "valibot";
import type { ReadHandle } from "../../host/runtime.ts";
import { concatBytes } from "../../util/bytes.ts";
import { exactObject } from "../../util/exact-object.ts";
import { utf8ByteCount } from "../../util/utf8.ts";
import { type CallTarget, PATH_TOO_LONG, resolveTarget, sameObject, shownPath, TARGET_CHANGED, TARGET_CHANGED_SUMMARY, targetFailure, resolvedArguments } from "./call-target.ts";
import { count, describeError, finishResult, formatBytes, quote } from "./tool-text.ts";
import { MAX_OUTPUT_BYTES, type PreparedCall, scopeOf, type Tool, type ToolContext, type ToolResult } from "./tool.ts";

const PATH_TEXT = "File path, relative to the workspace (or absolute inside it).";
const START_TEXT = "First line to return, counting from 1 (default 1).";
const END_TEXT = "Last line to return, inclusive (default: as far as the output limit allows).";

/** Parameters of `read_file`. */
export const ReadFileParams = exactObject({
  path: v.pipe(v.string(), v.minLength(1), v.maxLength(4096), v.description(PATH_TEXT)),
  start_line: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.description(START_TEXT))),
  end_line: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.description(END_TEXT))),
});

/** Parsed `read_file` parameters. */
export type ReadFileParams = v.InferOutput<typeof ReadFileParams>;

const CHUNK_BYTES = 65_536;
/** File text shown at most; the rest of the 64 KiB output is left for the trailing note. */
const CONTENT_BYTES = MAX_OUTPUT_BYTES - 1024;
/** How far into a file a line range is looked for. */
export const MAX_SCAN_BYTES = 32 * 1024 * 1024;
/** A NUL byte in this prefix marks the file as binary, as git and grep decide. */
const BINARY_SNIFF_BYTES = 8192;

interface Scan {
  readonly binary: boolean;
  readonly bytes: Uint8Array;
  /** Set when the whole file was read; then the file's line count. */
  readonly totalLines: number | null;
  readonly cut: "budget" | "scan" | null;
}

/** Collects the bytes of lines `start`..`end` within the budget. */
async function scan(handle: ReadHandle, start: number, end: number, signal: AbortSignal): Promise<Scan> {
  const buffer = new Uint8Array(CHUNK_BYTES);
  const pieces: Uint8Array[] = [];
  let collected = 0;
  let line = 1;
  let position = 0;
  let lastByte = -1;
  const result = (cut: Scan["cut"], totalLines: number | null): Scan =>
    ({ binary: false, bytes: concatBytes(pieces), totalLines, cut });
  for (;;) {
    if (position >= MAX_SCAN_BYTES || signal.aborted) return result("scan", null);
    const length = await handle.read(buffer, position);
    if (length === 0) return result(null, position === 0 ? 0 : lastByte === 10 ? line - 1 : line);
    const chunk = buffer.subarray(0, length);
    if (position === 0 && chunk.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return { ...result(null, null), binary: true };
    position += length;
    lastByte = chunk[length - 1]!;
    for (let at = 0; at < length;) {
      const newline = chunk.indexOf(10, at);
      const lineEnd = newline === -1 ? length : newline + 1;
      if (line >= start) {
        const take = Math.min(lineEnd - at, CONTENT_BYTES - collected);
        pieces.push(chunk.slice(at, at + take));
        collected += take;
        if (take < lineEnd - at) return result("budget", null);
      }
      if (newline === -1) break;
      at = lineEnd;
      if (++line > end) return result(null, null);
    }
  }
}

/** Lines in `text`, a trailing partial line included. */
function lineCount(text: string): number {
  let lines = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines++;
  return text.length > 0 && !text.endsWith("\n") ? lines + 1 : lines;
}

function range(params: ReadFileParams): string {
  if (params.start_line === undefined && params.end_line === undefined) return "";
  return ` lines ${params.start_line ?? 1}–${params.end_line ?? "end"}`;
}

async function prepare(params: ReadFileParams, context: ToolContext): Promise<PreparedCall | ToolResult> {
  const label = `read_file ${quote(params.path)}${range(params)}`;
  const fail = (output: string, summary: string) => finishResult(false, output, `${label}: ${summary}`, context.secrets);
  if ((params.end_line ?? Number.MAX_SAFE_INTEGER) < (params.start_line ?? 1)) return fail("end_line must not be less than start_line.", "invalid line range");
  // The enabled skills' directories are readable too, wherever they are: the `skill` tool lists their files.
  const readable = context.skills?.map((skill) => skill.directory);
  const resolution = await resolveTarget(context, params.path, "read", { ...scopeOf(context), ...(readable === undefined ? {} : { readable }) });
  if (!resolution.ok) return targetFailure(resolution, label, context.secrets);
  const { target } = resolution;
  if (target.info === null) return fail("Cannot read the file: not found.", "not found");
  // A hard link's other names are invisible from here: one of them may be ~/.ssh/id_ed25519.
  const links = target.info.kind === "file" ? target.info.nlink : 1;
  return {
    action: `Read ${target.shown}${range(params)}${links > 1 ? ` (a file with ${count(links, "hard link")}: its other names can be outside the workspace)` : ""}`,
    tooLongToShow: PATH_TOO_LONG,
    arguments: resolvedArguments(params, context, target),
    mustAsk: links > 1,
    scopeTarget: target.shown,
    facts: { kind: "read", path: shownPath(context, target.path) },
    run: () => run(params, context, target),
  };
}

async function run(params: ReadFileParams, context: ToolContext, target: CallTarget): Promise<ToolResult> {
  const label = `read_file ${quote(shownPath(context, target.path))}${range(params)}`;
  const fail = (output: string, summary: string) => finishResult(false, output, `${label}: ${summary}`, context.secrets);
  const start = params.start_line ?? 1;
  const end = params.end_line ?? Number.MAX_SAFE_INTEGER;
  let handle: ReadHandle;
  try {
    handle = await context.runtime.fs.openRead(target.path);
  } catch (error) {
    return fail(`Cannot read the file: ${describeError(error)}.`, describeError(error));
  }
  let result: Scan;
  let size: number;
  try {
    const opened = await handle.stat();
    // The open handle is the object read: it must be the one prepared (and, if asked, approved).
    if (!sameObject(target.info, opened)) return fail(TARGET_CHANGED, TARGET_CHANGED_SUMMARY);
    size = opened.size;
    result = await scan(handle, start, end, context.signal);
  } catch (error) {
    return fail(`Reading the file failed: ${describeError(error)}.`, describeError(error));
  } finally {
    await handle.close().catch(() => {});
  }
  if (result.binary) return fail(`This is a binary file (${formatBytes(size)}); it is not shown.`, `binary file (${formatBytes(size)}), not shown`);
  if (result.totalLines !== null && start > Math.max(result.totalLines, 1)) {
    const output = `start_line ${start} is past the end of the file (${count(result.totalLines, "line")}).`;
    return fail(output, "start_line past the end of the file");
  }
  let text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(result.bytes);
  const notes: string[] = [];
  if (result.cut === "budget") {
    // Show whole lines only, unless a single line is longer than the budget.
    const lastNewline = text.lastIndexOf("\n");
    if (lastNewline !== -1) text = text.slice(0, lastNewline + 1);
    const last = start + lineCount(text) - 1;
    notes.push(lastNewline === -1
      ? `[Line ${start} is longer than the output limit; only its start is shown.]`
      : `[Output limit reached after line ${last}; continue with start_line=${last + 1}.]`);
  } else if (result.cut === "scan") {
    notes.push(context.signal.aborted ? "[Cancelled before the read finished.]" : `[Stopped after scanning ${formatBytes(MAX_SCAN_BYTES)} of the file.]`);
  } else if (text.length === 0) {
    notes.push("[The file is empty.]");
  }
  const shown = lineCount(text);
  if (range(params) !== "" && result.cut === null && shown > 0) {
    const total = result.totalLines === null ? "" : `; the file has ${count(result.totalLines, "line")}`;
    notes.push(`[Lines ${start}–${start + shown - 1}${total}.]`);
  }
  const output = notes.length === 0 ? text : `${text}${text === "" || text.endsWith("\n") ? "" : "\n"}${notes.join("\n")}`;
  const summary = `${label}: ${count(shown, "line")} (${formatBytes(utf8ByteCount(text))})${context.signal.aborted ? ", cancelled" : result.cut === null ? "" : ", truncated"}`;
  const facts = { kind: "read" as const, lines: shown, bytes: utf8ByteCount(text), truncated: result.cut !== null };
  return { ...finishResult(!context.signal.aborted, output, summary, context.secrets), facts };
}

/** The `read_file` tool. */
export const readFileTool: Tool<ReadFileParams> = {
  name: "read_file",
  description: "Read a text file in the workspace, optionally a range of lines. Returns the text as stored, " +
    "at most 64 KiB; notes in [brackets] at the end say where output stopped and how to continue.",
  schema: ReadFileParams,
  parameters: {
    type: "object",
    properties: {
      path: { type: "string", minLength: 1, maxLength: 4096, description: PATH_TEXT },
      start_line: { type: "integer", minimum: 1, description: START_TEXT },
      end_line: { type: "integer", minimum: 1, description: END_TEXT },
    },
    required: ["path"],
    additionalProperties: false,
  },
  prepare,
};
