/**
 * Where a run meets its hooks (`hooks-port.ts`; docs/features/runner.md,
 * "Hooks"): around each tool call, for `tool-calls.ts`; before the first
 * request and at each stop, for `run.ts`; and the scope every hook call
 * gets. A run without hooks calls none of them.
 *
 * `UserPromptSubmit` runs once the prompt is durable and acknowledged,
 * before the first model request: a block fails the run with
 * `execution_failed` after one `hook_blocked_prompt` diagnostic (the prompt
 * stays in the history: nothing the user typed is lost); context is added
 * to the prompt the model reads in this turn, after a marked line, and not
 * stored. `Stop` runs whenever the model answers without calling a tool: a
 * hook that denies the stop has its reason sent to the model as the next
 * user message (not stored either), at most {@link MAX_STOP_CONTINUATIONS}
 * times a turn; each continuation is a step and counts toward
 * `agent.max_steps`.
 *
 * Around a tool call: `PreToolUse` runs after the policy (a `deny` policy
 * never reaches a hook, so no hook can override it) and after the call is
 * prepared, before any approval. Its `deny` ends the call with the reason as
 * the model's result; `ask` asks the user even where the policy allows, the
 * prompt saying a hook asked; `allow` skips the question of an `ask` policy,
 * but never of a call that must ask whatever the policy (a path outside the
 * workspace, say). `PostToolUse` runs after the call; what its hooks say is
 * added to the result the model reads, after a marked line.
 *
 * @module
 */

import { DiagnosticCode, ErrorCode } from "../protocol/errors.ts";
import { MAX_SUMMARY_BYTES } from "./tools/tool.ts";
import { utf8ByteCount } from "../util/utf8.ts";
import type { HookedCall, HookScope, TurnHooks } from "./hooks-port.ts";
import { type RunIO, RunStop } from "./run-output.ts";
import { boundSummary } from "./tools/tool-text.ts";

/** What the approval prompt starts with when a hook asked for it. */
export const HOOK_ASKED = "A hook asks for approval: ";
/** The line between a tool's output and what `PostToolUse` hooks add. */
export const HOOK_FEEDBACK = "\n\n[Hook feedback]\n";

/** The scope of a hook call made by the run of `io`. */
export function hookScope(io: RunIO, signal: AbortSignal): HookScope {
  return {
    sessionId: io.scope.session_id,
    signal,
    secrets: io.secrets,
    report: (summary) => io.diagnostic(DiagnosticCode.hookFailed, boundSummary(summary, io.secrets)),
  };
}

/** What `PreToolUse` leaves of a call: denied (the model's result), or whether to ask and whether a hook asked. */
export type BeforeToolCall = { readonly denied: string } | { readonly ask: boolean; readonly hookAsked: boolean };

/**
 * Runs the `PreToolUse` hooks of a prepared call. `asks` says whether the
 * policy asks, `mustAsk` whether the call must ask whatever the policy.
 * Throws {@link RunStop} when the run was cancelled meanwhile.
 */
export async function beforeToolCall(
  hooks: TurnHooks | undefined,
  io: RunIO,
  signal: AbortSignal,
  call: HookedCall,
  policy: { readonly asks: boolean; readonly mustAsk: boolean },
): Promise<BeforeToolCall> {
  if (hooks === undefined) return { ask: policy.asks || policy.mustAsk, hookAsked: false };
  const verdict = await hooks.preToolUse(hookScope(io, signal), call);
  if (signal.aborted) throw new RunStop("cancelled", null);
  if (verdict.decision === "deny") return { denied: `The tool call was denied by the user's hook: ${verdict.reason}` };
  if (verdict.decision === "ask") return { ask: true, hookAsked: true };
  return { ask: policy.mustAsk || (policy.asks && verdict.decision !== "allow"), hookAsked: false };
}

/** The approval prompt: `summary`, after {@link HOOK_ASKED} when a hook asked and both fit the summary bound; the action itself always shows whole. */
export function approvalPrompt(hookAsked: boolean, summary: string): string {
  return hookAsked && utf8ByteCount(HOOK_ASKED) + utf8ByteCount(summary) <= MAX_SUMMARY_BYTES ? `${HOOK_ASKED}${summary}` : summary;
}

/** The call's output for the model, with what its `PostToolUse` hooks add. */
export async function afterToolCall(
  hooks: TurnHooks | undefined,
  io: RunIO,
  signal: AbortSignal,
  call: HookedCall,
  outcome: { readonly ok: boolean; readonly summary: string; readonly output: string },
): Promise<string> {
  if (hooks === undefined) return outcome.output;
  const added = await hooks.postToolUse(hookScope(io, signal), call, { ok: outcome.ok, summary: boundSummary(outcome.summary, io.secrets) });
  return added === null ? outcome.output : `${outcome.output}${HOOK_FEEDBACK}${added}`;
}

/** Most times the `Stop` hooks may send the model back to work in one turn. */
export const MAX_STOP_CONTINUATIONS = 3;

/** The prompt as the model reads it in this turn. Throws {@link RunStop} when a hook blocked it, or the run was cancelled. */
export async function promptForModel(hooks: TurnHooks | undefined, io: RunIO, signal: AbortSignal, prompt: string): Promise<string> {
  if (hooks === undefined) return prompt;
  const verdict = await hooks.userPromptSubmit(hookScope(io, signal), prompt);
  if (signal.aborted) throw new RunStop("cancelled", null);
  if (verdict.blocked) {
    await io.diagnostic(DiagnosticCode.hookBlockedPrompt, boundSummary(`A UserPromptSubmit hook blocked this prompt (it is saved; the model was not asked): ${verdict.reason}`, io.secrets));
    throw new RunStop("failed", ErrorCode.executionFailed);
  }
  return verdict.context === null ? prompt : `${prompt}${HOOK_FEEDBACK}${verdict.context}`;
}

/**
 * What the model is told to go on with after answering `finalText`, or null
 * to end the turn: `continued` is how many times this turn already went on.
 * Throws {@link RunStop} when the run was cancelled meanwhile.
 */
export async function stopOrContinue(hooks: TurnHooks | undefined, io: RunIO, signal: AbortSignal, finalText: string, continued: number): Promise<string | null> {
  if (hooks === undefined || continued >= MAX_STOP_CONTINUATIONS) return null;
  const reason = await hooks.stop(hookScope(io, signal), finalText);
  if (signal.aborted) throw new RunStop("cancelled", null);
  return reason === null ? null : `${HOOK_FEEDBACK.trimStart()}${reason}`;
}
