/**
 * Executes the tool calls of one model step, in the order the model made
 * them: resolve the tool, prepare the call (its paths resolved, what it
 * needs read), apply its approval policy (asking the client when it is
 * `ask`, or when the prepared call must ask, with a summary of exactly what
 * will run), run it, and report each call as `activity` events and records.
 * Every call gets a result the model can read, so the next request
 * pairs every call with its result even when a call was refused.
 *
 * @module
 */

import { DiagnosticCode, ErrorCode } from "../protocol/errors.ts";
import { isSafeDisplayName } from "../util/redaction.ts";
import type { ApprovalBroker, ApprovalDecision } from "./approvals.ts";
import { callScopeKey, reportResolved, scopeFields } from "./approval-scope.ts";
import type { ModelToolCall, ToolResultMessage } from "./providers/conversation.ts";
import { type RunIO, RunStop } from "./run-output.ts";
import { approvalSummary, prepareCall, prepareExternalCall } from "./tools/invoke.ts";
import type { ExternalTools } from "./tools/external.ts";
import { boundSummary } from "./tools/tool-text.ts";
import { policySource, profilePolicy, type ProfilePolicies, resolvePolicy } from "../policy/tool-policies.ts";
import { labelPrompt, type SubagentIdentity, TASK_TOOL } from "./delegation.ts";
import { findBuiltinTool } from "./tools/registry.ts";
import { isPrepared, type ToolContext } from "./tools/tool.ts";
import type { ApprovalPolicy } from "../policy/tool-policies.ts";
import type { CallCard, ToolCardsPort } from "./card-port.ts";
import { type CodeModeSettings, codeModePolicy } from "../config/code-mode-settings.ts";
import { type CallSource, codeCall, fromCodeMode, promptFrom } from "./code-mode/code-call.ts";
import type { TurnHooks } from "./hooks-port.ts";
import { afterToolCall, approvalPrompt, beforeToolCall } from "./run-hooks.ts";

/** What tool execution needs from its run. */
export interface ToolStepContext {
  /** The run's events and records. */
  readonly io: RunIO;
  /** The run's approvals. */
  readonly broker: ApprovalBroker;
  /** What tools may touch; its signal is the run's cancellation. */
  readonly tool: ToolContext;
  /** Policies from settings, by tool name (built-in tools only). */
  readonly policies: Readonly<Record<string, ApprovalPolicy>>;
  /** The agent profile's policies, applied after the settings' and only ever tightening them. */
  readonly profile: ProfilePolicies;
  /** Tools from outside the runner, or null. */
  readonly external: ExternalTools | null;
  /** The merged `code_mode` section when Code Mode is on; absent or null when it is off. */
  readonly codeMode?: CodeModeSettings | null;
  /**
   * A nested call's: aborts when its Code Mode program ended before it did.
   * An approval it still waits for is then withdrawn (`superseded`), since
   * no answer could make the call run.
   */
  readonly programEnded?: AbortSignal;
  /** Issues the next run-scoped activity id, or null once the run has used `run_activities`. */
  nextActivityId(): string | null;
  /** The run's tool cards, or null when the client did not negotiate `tool.cards`. */
  readonly cards: ToolCardsPort | null;
  /** The user's hooks, absent when none runs (`run-hooks.ts`). */
  readonly hooks?: TurnHooks;
  /** Starts a `task` call (`delegation.ts`), or null where the run may not delegate. */
  readonly delegate?: ((call: ModelToolCall, index: number) => Promise<ToolResultMessage>) | null;
  /** Set in a subagent's run: its approval prompts name it (`subagentLabel`). */
  readonly subagent?: SubagentIdentity | null;
}

/** One state of an activity. */
export type ActivityState = "started" | "completed" | "failed";

const DENIED_BY_SETTINGS = "The tool call was denied by the user's settings. Do not retry it.";
const DENIED_BY_USER = "The user denied this tool call.";
// Profile names are 1-64 of [a-z0-9-] (agent-settings.ts): safe to name in a result and a summary.
const deniedByProfile = (profile: string, tool: string) =>
  `The tool call was denied: this window runs as the "${profile}" agent profile, which does not allow ${tool}. Do not retry it.`;
const EXPIRED = "No one answered the approval request in time, so this tool call was not run. Do not retry it unless the user asks.";

/**
 * Runs `calls` one after another, except `task` calls, which start in call
 * order and run alongside (`delegation.ts` bounds how many at once); returns
 * the results in call order once all are done. Throws {@link RunStop} on
 * cancellation or output failure.
 */
export async function runToolCalls(calls: readonly ModelToolCall[], context: ToolStepContext): Promise<ToolResultMessage[]> {
  const results: Promise<ToolResultMessage>[] = [];
  let stop: unknown = null;
  for (const [index, call] of calls.entries()) {
    if (context.tool.signal.aborted) stop ??= new RunStop("cancelled", null);
    if (stop !== null) break;
    const delegated = call.name === TASK_TOOL ? context.delegate ?? null : null;
    if (delegated !== null) {
      const started = delegated(call, index);
      // Observed now, so a task that fails while later calls run is never an unhandled rejection.
      started.catch(() => {});
      results.push(started);
      continue;
    }
    try {
      results.push(Promise.resolve(await runOne(call, context)));
    } catch (error) {
      stop = error;
    }
  }
  // Every started task is awaited, even when the step stops: a child never outlives its step.
  const settled = await Promise.allSettled(results);
  if (stop !== null) throw stop;
  const failed = settled.find((result) => result.status === "rejected");
  if (failed !== undefined) throw failed.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<ToolResultMessage>).value);
}

/**
 * Runs one call; `source` says whether the model made it or a Code Mode
 * program did, which picks its policy (`tools` or `code_mode.tools`, never
 * both) and marks its approval prompt and activity.
 */
async function runOne(call: ModelToolCall, context: ToolStepContext, source: CallSource = "direct"): Promise<ToolResultMessage> {
  const { io, broker } = context;
  const secrets = context.tool.secrets;
  const result = (output: string, isError: boolean): ToolResultMessage => ({ role: "tool", callId: call.id, name: call.name, output, isError });
  // Every activity of a nested call says it comes from Code Mode, whatever the state.
  const activity = (runIO: RunIO, card: CallCard | null, id: string, tool: string, state: ActivityState, summary: string, grant: string | null = null) =>
    recordActivity(runIO, card, id, tool, state, fromCodeMode(summary, source), grant);
  const activityId = context.nextActivityId();
  if (activityId === null) {
    await io.diagnostic(DiagnosticCode.activityLimit);
    throw new RunStop("failed", ErrorCode.executionFailed);
  }
  const skills = (context.tool.skills ?? []).length > 0;
  const code = codeCall(call, source, { ...context.tool, codeMode: context.codeMode ?? null, external: context.external, skills }, (nested, signal, ended) => runOne(nested, { ...context, tool: { ...context.tool, signal }, programEnded: ended }, "code_mode"));
  const builtin = code?.tool ?? findBuiltinTool(call.name, skills);
  const external = builtin === undefined ? context.external?.find(call.name) : undefined;
  const name = isSafeDisplayName(call.name) ? call.name : "unknown";
  const card = context.cards?.open(activityId, name) ?? null;
  if (builtin === undefined && external === undefined) {
    await activity(io, card, activityId, name, "failed", `${name}: no such tool`);
    return result(`There is no tool named ${JSON.stringify(name)}.`, true);
  }
  let args: unknown;
  try {
    args = call.argumentsJson.trim() === "" ? {} : JSON.parse(call.argumentsJson);
  } catch {
    await activity(io, card, activityId, name, "failed", `${name}: arguments were not valid JSON`);
    return result("The arguments were not valid JSON.", true);
  }
  const base = source === "code_mode"
    ? codeModePolicy(call.name, context.codeMode ?? undefined)
    : builtin !== undefined ? resolvePolicy(builtin.name, context.policies) : external!.policy;
  const { policy, byProfile } = profilePolicy(base, call.name, context.profile);
  if (policy === "deny") {
    card?.deniedByPolicy();
    // Nothing is prepared: a denied tool does not even look at the filesystem.
    const profile = policySource(context.profile, call.name);
    await activity(io, card, activityId, name, "failed", byProfile ? `${name} (denied by the ${profile} profile)` : `${name} (denied by settings)`);
    return result(byProfile ? deniedByProfile(profile, name) : DENIED_BY_SETTINGS, true);
  }
  const prepared = builtin !== undefined ? await prepareCall(builtin, args, context.tool) : await prepareExternalCall(external!, args, context.tool);
  if (!isPrepared(prepared)) {
    // Refused before anyone is asked: a protected path, a missing file, an edit that matches nothing.
    await activity(io, card, activityId, name, "failed", prepared.summary);
    return result(prepared.output, true);
  }
  const summary = prepared.activity ?? prepared.action;
  const hooked = { name, arguments: prepared.arguments ?? args };
  const before = await beforeToolCall(context.hooks, io, context.tool.signal, hooked, { asks: policy === "ask", mustAsk: prepared.mustAsk });
  if ("denied" in before) {
    // The user's hook is the user's rule: its card ends as a call the settings denied.
    card?.deniedByPolicy();
    await activity(io, card, activityId, name, "failed", `${summary} (denied by a hook)`);
    return result(before.denied, true);
  }
  // A session grant (`approval.scope`) answers only what would be asked, never a deny, for exactly its key, and never a hook's ask;
  // a nested call's key is labelled like its prompt, so a direct grant never covers a program's call, nor the reverse.
  // A subagent's calls neither use nor create one: each of its approvals covers that call (docs/features/runner.md).
  const scopeKey = context.subagent == null ? promptFrom(callScopeKey(broker, builtin?.name ?? external!.name, prepared, secrets), source) : null;
  if (before.ask && (before.hookAsked || !broker.granted(scopeKey))) {
    const shown = labelPrompt(context.subagent, promptFrom(approvalSummary(prepared, secrets), source));
    if (shown === null) {
      await activity(io, card, activityId, name, "failed", `${name}: refused, cannot be shown whole for approval`);
      return result(prepared.tooLongToShow, true);
    }
    await card?.prepared(prepared, null, policy !== "ask");
    const decision = await askApproval(io, broker, approvalPrompt(before.hookAsked, shown), scopeKey, context.programEnded);
    // A withdrawn question keeps its own word; any other answer a cancelled run got is its cancellation.
    await card?.decided(context.tool.signal.aborted && decision !== "superseded" ? "cancelled" : decision);
    if (context.tool.signal.aborted) {
      await activity(io, card, activityId, name, "failed", `${summary} (cancelled)`);
      throw new RunStop("cancelled", null);
    }
    if (decision !== "allowed") {
      const expired = decision === "expired";
      await activity(io, card, activityId, name, "failed", `${summary} (${expired ? "approval expired" : "denied"})`);
      return result(expired ? EXPIRED : DENIED_BY_USER, true);
    }
  } else {
    // Not asked: the policy or a hook allows it, or a session grant (an earlier allow) covers it.
    await card?.prepared(prepared, before.ask ? "allowed" : "not_asked", false);
  }
  // The public record of a session grant: the key that let this call run, granted now or earlier.
  await activity(io, card, activityId, name, "started", summary, broker.granted(scopeKey) ? scopeKey : null);
  const outcome = await prepared.run();
  card?.ran(outcome);
  await activity(io, card, activityId, name, outcome.ok ? "completed" : "failed", outcome.summary);
  code?.finish();
  // A server that stopped during the call is reported by the run that noticed.
  if (context.external !== null) await reportNotices(io, context.external);
  const output = context.tool.signal.aborted ? outcome.output : await afterToolCall(context.hooks, io, context.tool.signal, hooked, outcome);
  if (context.tool.signal.aborted) throw new RunStop("cancelled", null);
  return result(output, !outcome.ok);
}

/** Emits and records, once each, the notices the external tools have not reported yet. */
export async function reportNotices(io: RunIO, external: ExternalTools): Promise<void> {
  for (const notice of external.takeNotices()) await io.diagnostic(notice.code, boundSummary(notice.summary, io.secrets));
}

/**
 * Emits `approval.requested` for `shown` (a whole, safe summary) and waits
 * for the decision, which the broker settles exactly once; with
 * `approval.scope`, the grant `scopeKey` may be offered (null: once only)
 * and `approval.resolved` follows. Once `withdrawOn` aborts (a nested
 * call's program ended), the question is withdrawn: `superseded`.
 */
export async function askApproval(io: RunIO, broker: ApprovalBroker, shown: string, scopeKey: string | null, withdrawOn?: AbortSignal): Promise<ApprovalDecision> {
  const approval = broker.request(shown, scopeKey);
  await io.emit({
    event: "approval.requested",
    data: { ...io.scope, approval_id: approval.approvalId, summary: approval.summary, expires_in_ms: approval.expiresInMs, ...scopeFields(broker, approval) },
  }, approval.delivered);
  const withdraw = () => broker.withdraw(approval.approvalId);
  withdrawOn?.addEventListener("abort", withdraw, { once: true });
  if (withdrawOn?.aborted) withdraw();
  const decision = await approval.decision;
  withdrawOn?.removeEventListener("abort", withdraw);
  await reportResolved(io, broker, approval, decision);
  return decision;
}

/**
 * Records and emits one activity state (of `kind`, a tool's by default), its summary redacted and bounded to
 * `summary_bytes`; tells the call's card, if any (the first state carries
 * its id, the last one is followed by its terminal snapshot).
 */
export async function recordActivity(
  io: RunIO,
  card: CallCard | null,
  activityId: string,
  name: string,
  state: ActivityState,
  summary: string,
  grant: string | null = null,
  kind: "tool" | "subagent" = "tool",
): Promise<void> {
  const bounded = boundSummary(summary, io.secrets);
  await io.persist([{
    v: 1,
    type: "activity",
    session_id: io.scope.session_id,
    at: io.at(),
    turn_id: io.turnId,
    activity_id: activityId,
    kind,
    name,
    state,
    summary: bounded,
    ...(grant === null ? {} : { session_grant: grant }),
  }]);
  await io.emit({ event: "activity", data: { ...io.scope, activity_id: activityId, kind, state, name, summary: bounded, ...card?.activityField() } });
  if (card !== null && state !== "started") await card.finished(bounded);
}
