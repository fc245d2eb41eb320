/**
 * The `code` tool (docs/features/code-mode.md): the model writes one short
 * JavaScript program, run as the body of an async function in the QuickJS
 * sandbox (`src/sandbox/`, loaded on the first call, so a child whose
 * settings leave Code Mode off never loads it), and each `tools.<name>(args)`
 * it awaits is one nested call through the runner's normal tool path, under
 * that tool's Code Mode policy. The program's `console.log` output and
 * return value come back bounded and redacted like any tool's output.
 *
 * @module
 */

import * as v from "valibot";
import type { HostCommand, NestedResult, ProgramOutcome } from "../../sandbox/program.ts";
import { exactObject } from "../../util/exact-object.ts";
import { clampUtf8, utf8ByteCount } from "../../util/utf8.ts";
import type { ToolSpec } from "../providers/conversation.ts";
import { count, finishResult, quote } from "../tools/tool-text.ts";
import type { AnyTool, PreparedCall, ToolContext, ToolResult } from "../tools/tool.ts";
import { toolDeclarations } from "./declarations.ts";

/** The tool's name. */
export const CODE_TOOL_NAME = "code";

/** Largest program, in UTF-8 bytes. */
export const MAX_SOURCE_BYTES = 32_768;

const SOURCE_TEXT = "The program: the body of an async function.";

const PARAMS = exactObject({
  source: v.pipe(v.string(), v.minLength(1), v.maxBytes(MAX_SOURCE_BYTES), v.description(SOURCE_TEXT)),
});

const DESCRIPTION = `Run a short JavaScript program that calls other tools, so that many calls, and filtering their results, take one step.
The program is the body of an async function: use await and return at its top level. It sees only the language, console.log, and \`tools\`, with one async function per tool below: each takes that tool's arguments object and resolves with the tool's text output, or throws an Error whose message is the tool's when the call fails, is refused or is denied.
Each call is checked, and may need the user's approval, exactly like a direct call. There is no filesystem, network, module, timer or process access except through tools.
The result is the console.log output and the returned value (a string as is, anything else as JSON), both cut when long. Limits: ${MAX_SOURCE_BYTES} bytes of source, a 32 MiB heap, 5 s of CPU, 64 tool calls.`;

/** The `code` tool's spec, its description declaring `tools` for the `offered` tools. */
export function codeToolSpec(offered: readonly ToolSpec[]): ToolSpec {
  return {
    name: CODE_TOOL_NAME,
    description: `${DESCRIPTION}\n\n${toolDeclarations(offered)}`,
    parameters: {
      type: "object",
      properties: { source: { type: "string", minLength: 1, description: SOURCE_TEXT } },
      required: ["source"],
      additionalProperties: false,
    },
  };
}

/** Runs one nested call for the program; `signal` aborts when the program ends first. Never rejects. */
export type NestedCaller = (name: string, args: string, signal: AbortSignal) => Promise<NestedResult>;

/** What the activity says the call runs: the program's size and first line, never all of it. */
function describeProgram(source: string): string {
  const first = source.split("\n").find((line) => line.trim() !== "") ?? "";
  return `code: ${count(utf8ByteCount(source), "byte")} program, first line ${quote(first.trim(), 120)}`;
}

/** The `code` tool over `names` (what `tools` offers), its nested calls made by `call`, the host started as `host`. */
export function codeTool(names: readonly string[], host: HostCommand, call: NestedCaller): AnyTool {
  return {
    name: CODE_TOOL_NAME,
    description: DESCRIPTION,
    schema: PARAMS as unknown as AnyTool["schema"],
    parameters: codeToolSpec([]).parameters,
    prepare: (params: unknown, context: ToolContext): Promise<PreparedCall> => {
      const source = (params as v.InferOutput<typeof PARAMS>).source;
      const action = describeProgram(source);
      return Promise.resolve({
        action,
        tooLongToShow: "The program's first line is too long to show for approval; start it with a short comment.",
        mustAsk: false,
        run: () => runCode(source, names, host, call, context),
      });
    },
  };
}

async function runCode(source: string, names: readonly string[], host: HostCommand, call: NestedCaller, context: ToolContext): Promise<ToolResult> {
  const [{ runProgram }, { SANDBOX_LIMITS }] = await Promise.all([import("../../sandbox/program.ts"), import("../../sandbox/limits.ts")]);
  const outcome = await runProgram({
    runtime: context.runtime,
    host,
    cwd: context.workspace,
    source,
    tools: names,
    limits: SANDBOX_LIMITS,
    signal: context.signal,
    call,
  });
  return resultOf(outcome, SANDBOX_LIMITS.wallMs, context.secrets);
}

function resultOf(outcome: ProgramOutcome, wallMs: number, secrets: readonly string[]): ToolResult {
  const calls = count(outcome.calls, "tool call");
  switch (outcome.kind) {
    case "returned":
    case "threw": {
      const logs = outcome.logs === "" ? "" : `console.log output:\n${outcome.logs}\n`;
      const ended = outcome.kind === "returned"
        ? (outcome.text === "" ? "The program returned nothing." : `The program returned:\n${outcome.text}`)
        : `The program threw: ${outcome.text}`;
      return finishResult(outcome.kind === "returned", `${logs}${ended}`, `code: ${outcome.kind} after ${calls}`, secrets);
    }
    case "deadline":
      return finishResult(false, `The program was stopped: it ran for more than ${wallMs / 1000} s. Tool calls it made before that stand.`, `code: stopped at the time limit after ${calls}`, secrets);
    case "cancelled":
      return finishResult(false, "The program was cancelled.", `code: cancelled after ${calls}`, secrets);
    case "protocol":
      return finishResult(false, "The sandbox failed and the program was stopped. Tool calls it made before that stand.", clampUtf8(`code: the sandbox failed after ${calls}`, 200), secrets);
  }
}
