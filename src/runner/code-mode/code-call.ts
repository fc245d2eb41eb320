/**
 * The seam between the runner's tool path (`tool-calls.ts`) and Code Mode:
 * which tools a program may call, the `code` spec a request offers, and one
 * `code` call's nested calls, each made through the same path as a direct
 * call (the caller passes it in), under its own activity id and with a
 * signal that also aborts when the program ends. A nested call that stops
 * the run (an activity limit, output lost) stops the program too, and the
 * stop is raised again once the `code` call has ended.
 *
 * @module
 */

import type { CodeModeSettings } from "../../config/code-mode-settings.ts";
import type { Runtime } from "../../host/runtime.ts";
import type { ModelToolCall, ToolResultMessage, ToolSpec } from "../providers/conversation.ts";
import type { ExternalTools } from "../tools/external.ts";
import { builtinTools } from "../tools/registry.ts";
import { type AnyTool, MAX_SUMMARY_BYTES } from "../tools/tool.ts";
import { utf8ByteCount } from "../../util/utf8.ts";
import { CODE_TOOL_NAME, codeTool, codeToolSpec } from "./code-tool.ts";

/** Where a call came from: the model directly, or a Code Mode program. */
export type CallSource = "direct" | "code_mode";

/** What the seam needs from the step. */
export interface CodeModeOptions {
  /** The merged `code_mode` section, or null when Code Mode is off. */
  readonly codeMode: CodeModeSettings | null;
  readonly runtime: Runtime;
  /** Whether `skill` is offered. */
  readonly skills: boolean;
  readonly external: ExternalTools | null;
  /** The turn's cancellation. */
  readonly signal: AbortSignal;
}

/** Whether `code` is offered: Code Mode is on and this runtime can start its own sandbox host. */
export function codeModeOffered(options: { readonly codeMode?: CodeModeSettings | null; readonly runtime: Runtime }): boolean {
  return options.codeMode !== undefined && options.codeMode !== null && options.runtime.self !== undefined;
}

/** `specs` (what a request offers now) with the `code` tool after them when Code Mode is offered. */
export function withCodeTool(specs: readonly ToolSpec[], options: { readonly codeMode?: CodeModeSettings | null; readonly runtime: Runtime }): readonly ToolSpec[] {
  return codeModeOffered(options) ? [...specs, codeToolSpec(specs)] : specs;
}

const CODE_MODE_LABEL = "Code Mode: ";

/** `summary` as shown for a call from `source`: a nested call's activity says it comes from a Code Mode program. */
export function fromCodeMode(summary: string, source: CallSource): string {
  return source === "direct" ? summary : `${CODE_MODE_LABEL}${summary}`;
}

/**
 * An approval prompt (`approvalSummary`'s) for a call from `source`,
 * labelled like its activity; null, as that function's is, when the
 * labelled prompt no longer fits whole.
 */
export function promptFrom(prompt: string | null, source: CallSource): string | null {
  if (prompt === null) return null;
  const shown = fromCodeMode(prompt, source);
  return utf8ByteCount(shown) > MAX_SUMMARY_BYTES ? null : shown;
}

/** One `code` call: the tool to run, and the check to make once it has run. */
export interface CodeCall {
  readonly tool: AnyTool;
  /** Throws the stop a nested call raised, once the program is over. */
  finish(): void;
}

/**
 * `call` as a `code` call when it is one the model may make (direct, with
 * Code Mode offered), or null. `nested` runs one nested call through the
 * normal path, with `signal` as its cancellation; `ended` aborts only when
 * the program ended first (not when the turn is cancelled), so the call
 * can withdraw a question whose answer no longer matters.
 */
export function codeCall(
  call: ModelToolCall,
  source: CallSource,
  options: CodeModeOptions,
  nested: (call: ModelToolCall, signal: AbortSignal, ended: AbortSignal) => Promise<ToolResultMessage>,
): CodeCall | null {
  const host = options.runtime.self;
  if (source !== "direct" || call.name !== CODE_TOOL_NAME || options.codeMode === null || host === undefined) return null;
  const names = [...builtinTools(options.skills), ...options.external?.offered() ?? []].map((tool) => tool.name);
  let made = 0;
  let stop: unknown = null;
  const halt = new AbortController();
  const program = AbortSignal.any([options.signal, halt.signal]);
  const tool = codeTool(names, host, async (name, args, ended) => {
    made += 1;
    try {
      const result = await nested({ id: `${call.id}.${made}`, name, argumentsJson: args }, AbortSignal.any([program, ended]), ended);
      return { ok: !result.isError, output: result.output };
    } catch (error) {
      // A nested call stopped by the program's end is only cancelled; any other stop ends the run.
      if (!ended.aborted || options.signal.aborted) {
        stop ??= error;
        halt.abort();
      }
      return { ok: false, output: "The tool call was cancelled." };
    }
  });
  return {
    tool: { ...tool, prepare: (params, context) => tool.prepare(params, { ...context, signal: program }) },
    finish: () => {
      if (stop !== null) throw stop;
    },
  };
}
