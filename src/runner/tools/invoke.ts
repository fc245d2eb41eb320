/**
 * The one way the turn loop should call a tool: validate the model's raw
 * arguments against the tool's schema, prepare the call, and bound and
 * redact what comes back even if the tool itself slipped. A tool that throws
 * anyway becomes an `ok: false` result with a fixed phrase; no exception
 * message (which could carry a path or a secret) reaches the model or the
 * client.
 *
 * @module
 */

import * as v from "valibot";
import { redactSecrets, redactStrings } from "../../util/redaction.ts";
import { clampUtf8, utf8ByteCount } from "../../util/utf8.ts";
import { boundSummary, describeError, finishResult } from "./tool-text.ts";
import type { ExternalTool } from "./external.ts";
import { type AnyTool, isPrepared, MAX_SUMMARY_BYTES, type PreparedCall, type ToolContext, type ToolResult } from "./tool.ts";

/** Most validation issues listed back to the model. */
const MAX_ISSUES = 5;

/** Why a call whose prompt redaction would partly hide was refused, for the model. */
export const HIDDEN_IN_PROMPT = "The call contains text shaped like a credential (a key or token, a URL password, or a long run of " +
  "letters and digits such as a full commit hash), which the approval prompt would have to hide, so it was not offered " +
  "for approval. Avoid that text: use a short commit hash, an environment variable, or a file the command reads.";

/** The validation issues as one short paragraph for the model. */
function issuesText(issues: readonly v.BaseIssue<unknown>[]): string {
  const lines = issues.slice(0, MAX_ISSUES).map((issue) => {
    const path = issue.path?.map((item) => String(item.key)).join(".") ?? "";
    return `${path === "" ? "arguments" : path}: ${clampUtf8(issue.message, 300)}`;
  });
  if (issues.length > MAX_ISSUES) lines.push(`(${issues.length - MAX_ISSUES} more)`);
  return lines.join("; ");
}

/** The failure a throwing tool becomes: a fixed phrase, never the exception's message. */
function thrown(name: string, error: unknown, secrets: readonly string[]): ToolResult {
  const reason = describeError(error);
  return finishResult(false, `${name} failed: ${reason}.`, `${name}: failed (${reason})`, secrets);
}

/**
 * Validates `args` (the model's parsed JSON) and prepares the call. Always
 * resolves: with a {@link PreparedCall} whose `run()` also always resolves,
 * or with the bounded, redacted `ok: false` result of a call that cannot go
 * ahead, which is returned to the model without asking anyone.
 */
export async function prepareCall(tool: AnyTool, args: unknown, context: ToolContext): Promise<PreparedCall | ToolResult> {
  const parsed = v.safeParse(tool.schema, args);
  if (!parsed.success) {
    return finishResult(false, `Invalid arguments for ${tool.name}: ${issuesText(parsed.issues)}.`, `${tool.name}: invalid arguments`, context.secrets);
  }
  return await guardPrepared(tool.name, parsed.output, context, () => tool.prepare(parsed.output, context));
}

/**
 * Prepares a call to an external tool (an MCP server's) with the same
 * safety net as a built-in one: thrown errors become fixed phrases, and
 * results are bounded and redacted. The tool checks its arguments itself.
 */
export async function prepareExternalCall(tool: ExternalTool, args: unknown, context: ToolContext): Promise<PreparedCall | ToolResult> {
  return await guardPrepared(tool.name, args, context, () => tool.prepare(args, context));
}

async function guardPrepared(
  name: string,
  args: unknown,
  context: ToolContext,
  prepare: () => Promise<PreparedCall | ToolResult>,
): Promise<PreparedCall | ToolResult> {
  // Result summaries quote arguments cut to a few hundred bytes, before anything redacts them,
  // so a secret in an argument could show as an unrecognisable prefix: then the summary is
  // built from the whole action instead (redacted before it is bounded), or is the bare outcome.
  const hidesSecret = JSON.stringify(redactStrings(args, context.secrets)) !== JSON.stringify(args);
  let prepared: PreparedCall | ToolResult;
  try {
    prepared = await prepare();
  } catch (error) {
    return thrown(name, error, context.secrets);
  }
  if (!isPrepared(prepared)) {
    return finishResult(prepared.ok, prepared.output, hidesSecret ? `${name}: refused` : prepared.summary, context.secrets);
  }
  const { action, mustAsk } = prepared;
  // A prompt showing [redacted] would ask the user to approve text they cannot see.
  const tooLongToShow = redactSecrets(action, context.secrets) === action ? prepared.tooLongToShow : HIDDEN_IN_PROMPT;
  const run = async (): Promise<ToolResult> => {
    let result: ToolResult;
    try {
      result = await prepared.run();
    } catch (error) {
      return thrown(name, error, context.secrets);
    }
    const summary = hidesSecret ? `${prepared.activity ?? action}: ${result.ok ? "done" : "failed"}` : result.summary;
    const finished = finishResult(result.ok, result.output, summary, context.secrets);
    return result.facts === undefined ? finished : { ...finished, facts: result.facts };
  };
  return {
    action,
    tooLongToShow,
    mustAsk,
    run,
    // Hooks get the arguments as prepared: what the tool resolved, else what its schema checked.
    arguments: prepared.arguments ?? args,
    ...(prepared.activity === undefined ? {} : { activity: prepared.activity }),
    ...(prepared.scopeTarget === undefined ? {} : { scopeTarget: prepared.scopeTarget }),
    ...(prepared.facts === undefined ? {} : { facts: prepared.facts }),
  };
}

/**
 * The approval prompt for `prepared`: its whole action, or null when that
 * does not fit the 1,024-byte summary or redaction would change any of it.
 * A prompt that had to be cut could hide the part that matters (`git status`
 * followed by a thousand spaces and `; curl … | sh`), and so could one with
 * `[redacted]` in place of a base64 payload or a path segment, so such a
 * call is refused, not offered.
 */
export function approvalSummary(prepared: PreparedCall, secrets: readonly string[]): string | null {
  const shown = redactSecrets(prepared.action, secrets);
  if (shown !== prepared.action || utf8ByteCount(shown) > MAX_SUMMARY_BYTES) return null;
  return boundSummary(shown, secrets);
}
