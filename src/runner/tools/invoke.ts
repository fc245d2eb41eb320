/**
 * The one way the turn loop should call a tool: validate the model's raw
 * arguments against the tool's schema, run it, and bound and redact what
 * comes back even if the tool itself slipped. A tool that throws anyway
 * becomes an `ok: false` result with a fixed phrase; no exception message
 * (which could carry a path or a secret) reaches the model or the client.
 *
 * @module
 */

import * as v from "valibot";
import { redactStrings } from "../../util/redaction.ts";
import { clampUtf8 } from "../../util/utf8.ts";
import { boundSummary, describeError, finishResult } from "./tool-text.ts";
import type { AnyTool, ToolContext, ToolResult } from "./tool.ts";

/** Most validation issues listed back to the model. */
const MAX_ISSUES = 5;

/** The validation issues as one short paragraph for the model. */
function issuesText(issues: readonly v.BaseIssue<unknown>[]): string {
  const lines = issues.slice(0, MAX_ISSUES).map((issue) => {
    const path = issue.path?.map((item) => String(item.key)).join(".") ?? "";
    return `${path === "" ? "arguments" : path}: ${clampUtf8(issue.message, 300)}`;
  });
  if (issues.length > MAX_ISSUES) lines.push(`(${issues.length - MAX_ISSUES} more)`);
  return lines.join("; ");
}

/**
 * Validates `args` (the model's parsed JSON) and runs `tool`. Always resolves;
 * an aborted `context.signal` makes the tool stop early and report it.
 */
export async function invokeTool(tool: AnyTool, args: unknown, context: ToolContext): Promise<ToolResult> {
  const parsed = v.safeParse(tool.schema, args);
  if (!parsed.success) {
    return finishResult(false, `Invalid arguments for ${tool.name}: ${issuesText(parsed.issues)}.`, `${tool.name}: invalid arguments`, context.secrets);
  }
  let result: ToolResult;
  try {
    result = await tool.run(parsed.output, context);
  } catch (error) {
    const reason = describeError(error);
    return finishResult(false, `${tool.name} failed: ${reason}.`, `${tool.name}: failed (${reason})`, context.secrets);
  }
  // A tool quotes its arguments cut to a few hundred bytes before anything redacts its summary,
  // so a secret in an argument could show as an unrecognisable prefix: then the summary is
  // rebuilt from the redacted arguments instead.
  const redacted = redactStrings(parsed.output, context.secrets);
  const summary = JSON.stringify(redacted) === JSON.stringify(parsed.output)
    ? result.summary
    : `${describeParams(tool, redacted)}: ${result.ok ? "done" : "failed"}`;
  return finishResult(result.ok, result.output, summary, context.secrets);
}

/**
 * The approval prompt and `activity` start text for a call: the tool's own
 * {@link AnyTool.describe}, redacted and bounded to 1,024 bytes, or a fixed
 * phrase when the arguments do not validate.
 */
export function describeCall(tool: AnyTool, args: unknown, secrets: readonly string[]): string {
  const parsed = v.safeParse(tool.schema, args);
  if (!parsed.success) return boundSummary(`${tool.name} (invalid arguments)`, secrets);
  // Descriptions quote arguments cut to a few hundred bytes; a key cut in half there would no
  // longer be recognisable, so every argument string is redacted before it is quoted.
  return boundSummary(describeParams(tool, redactStrings(parsed.output, secrets)), secrets);
}

/** The tool's own description of `params`, or its name when describing throws. */
function describeParams(tool: AnyTool, params: unknown): string {
  try {
    return tool.describe(params);
  } catch {
    return tool.name;
  }
}
