/**
 * One `task` call, from the model's arguments to the report it reads: the
 * arguments and the profile checked, the call's own policy applied (settings
 * `tools.task`, then the delegating profile's entry), the user's
 * `PreToolUse` hooks run (as for every tool call), a slot waited for,
 * the ceiling computed once, the child run, and its report bounded. The
 * call is one `activity` of kind `subagent` named after the profile:
 * started with the task's description, completed or failed with a bounded
 * summary, then the `PostToolUse` hooks see that summary. A child's failure is a failed result, never a failed run.
 *
 * @module
 */

import * as v from "valibot";
import { DiagnosticCode, ErrorCode } from "../protocol/errors.ts";
import { escapeInvisible } from "../util/invisible.ts";
import { redactSecrets } from "../util/redaction.ts";
import { clampUtf8, utf8ByteCount } from "../util/utf8.ts";
import { uuid7 } from "../util/uuid7.ts";
import { ANY_TOOL, type ApprovalPolicy, delegatedPolicies, profilePolicy, type ProfilePolicies, resolvePolicy } from "../policy/tool-policies.ts";
import { type DelegatingStep, TASK_TOOL } from "../runner/delegation.ts";
import type { ModelToolCall, ToolResultMessage } from "../runner/providers/conversation.ts";
import { RunStop } from "../runner/run-output.ts";
import { askApproval, recordActivity } from "../runner/tool-calls.ts";
import { afterToolCall, approvalPrompt, beforeToolCall } from "../runner/run-hooks.ts";
import { MAX_SUMMARY_BYTES } from "../runner/tools/tool.ts";
import { runChild } from "./child-run.ts";
import type { SubagentSetup } from "./setup.ts";
import type { AgentProfile } from "../config/agent-settings.ts";
import type { Slots } from "./slots.ts";
import { TaskParams } from "./task-spec.ts";

/** Largest report handed back to the delegating model, in UTF-8 bytes. */
export const MAX_REPORT_BYTES = 32_768;

const REPORT_CUT_NOTE = "\n[report truncated at 32 KiB]";

/** What a call's activity summary quotes of a report at most, in bytes. */
const REPORT_EXCERPT_BYTES = 300;

/** Runs one task call of `step`; resolves with its result, rejects only with {@link RunStop}. */
export async function runTaskCall(
  setup: SubagentSetup,
  step: DelegatingStep,
  slots: Slots,
  call: ModelToolCall,
  index: number,
  activityId: string | null,
): Promise<ToolResultMessage> {
  const { io, config } = step;
  const result = (output: string, isError: boolean): ToolResultMessage => ({ role: "tool", callId: call.id, name: call.name, output, isError });
  if (activityId === null) {
    await io.diagnostic(DiagnosticCode.activityLimit);
    throw new RunStop("failed", ErrorCode.executionFailed);
  }
  const refuse = async (name: string, summary: string, output: string) => {
    await recordActivity(io, null, activityId, name, "failed", summary, null, "subagent");
    return result(output, true);
  };
  let args: unknown;
  try {
    args = JSON.parse(call.argumentsJson);
  } catch {
    return await refuse(TASK_TOOL, "task: arguments were not valid JSON", "The arguments were not valid JSON.");
  }
  const parsed = v.safeParse(TaskParams, args);
  if (!parsed.success) {
    const fields = [...new Set(parsed.issues.map((issue) => issue.path?.map((item) => String(item.key)).join(".") || "arguments"))].slice(0, 5);
    return await refuse(TASK_TOOL, "task: invalid arguments", `Invalid arguments for task (${fields.join(", ")}): it takes exactly profile, description and prompt, all non-empty text.`);
  }
  const params = parsed.output;
  const profile = setup.profiles.find((candidate) => candidate.name === params.profile);
  if (profile === undefined) {
    const names = setup.profiles.map((candidate) => candidate.name).join(", ");
    return await refuse(TASK_TOOL, `task: no subagent profile ${JSON.stringify(params.profile)}`, `There is no subagent profile named ${JSON.stringify(params.profile)}. Delegate to one of: ${names}.`);
  }
  const name = profile.name;
  if (!modelAdmitted(profile, config, setup)) {
    const model = redactSecrets(escapeInvisible(profile.model!), io.secrets);
    return await refuse(name, `${name}: its model is not enabled`, `The ${name} subagent's model ${model} is not enabled for ${config.endpoint.name} (providers.catalog.enabled), so it cannot run. Do not retry it; do the task yourself or delegate to another profile.`);
  }
  // One line, every invisible character visible, secrets hidden: the user decides on what this says.
  const description = redactSecrets(escapeInvisible(params.description), io.secrets);
  const { policy, byProfile } = profilePolicy(resolvePolicy(TASK_TOOL, config.policies), TASK_TOOL, config.profile);
  if (policy === "deny") {
    const by = byProfile ? `the ${config.profile.name} profile` : "settings";
    return await refuse(name, `${name} (task denied by ${by})`, `Delegating was denied by ${by}. Do not retry it; do the task yourself.`);
  }
  // The user's hooks see `task` as any other call (docs/features/runner.md, "Hooks"): after its policy, before its approval.
  const hooked = { name: TASK_TOOL, arguments: params };
  const before = await beforeToolCall(config.hooks, io, step.signal, hooked, { asks: policy === "ask", mustAsk: false });
  if ("denied" in before) return await refuse(name, `${description} (denied by a hook)`, before.denied);
  if (before.ask) {
    const shown = `Delegate to the ${name} subagent: ${description}`;
    if (utf8ByteCount(shown) > MAX_SUMMARY_BYTES) return await refuse(name, `${name}: refused, cannot be shown whole for approval`, "The description is too long to show for approval; use a shorter one.");
    const decision = await askApproval(io, step.broker, approvalPrompt(before.hookAsked, shown), null);
    if (step.signal.aborted) {
      await recordActivity(io, null, activityId, name, "failed", `${description} (cancelled)`, null, "subagent");
      throw new RunStop("cancelled", null);
    }
    if (decision !== "allowed") {
      const expired = decision === "expired";
      await recordActivity(io, null, activityId, name, "failed", `${description} (${expired ? "approval expired" : "denied"})`, null, "subagent");
      return result(expired ? "No one answered the approval request in time, so the task was not delegated." : "The user denied delegating this task.", true);
    }
  }
  let release: () => void;
  try {
    release = await slots.acquire(step.signal);
  } catch (error) {
    await recordActivity(io, null, activityId, name, "failed", `${description} (cancelled)`, null, "subagent");
    throw error;
  }
  try {
    await recordActivity(io, null, activityId, name, "started", description, null, "subagent");
    const childId = uuid7(config.runtime.wallNow(), config.runtime.randomUUID());
    // Computed once, from the delegating run's own ceiling: nothing the child does can widen it.
    const ceiling = delegatedPolicies(config.profile, { name, tools: profile.tools });
    const identity = { profile: name, activityId, description };
    // The link is the delegating history's only trace of where the child's is and what it could do.
    await io.persist([{
      v: 3,
      type: "subagent_link",
      session_id: io.scope.session_id,
      at: io.at(),
      ignorable: true,
      turn_id: io.turnId,
      activity_id: activityId,
      call_id: call.id,
      call_index: index,
      child: { session_id: childId, profile: name },
      ...storedCeiling(ceiling),
    }]);
    let outcome;
    try {
      outcome = await runChild(step, {
        childId,
        profile,
        ceiling,
        identity,
        instructions: setup.instructions(profile),
        context: setup.context(profile),
        maxSteps: setup.maxSteps,
        journal: setup.journal(childId),
        prompt: params.prompt,
        channel: step.channel,
      });
    } catch (error) {
      await recordActivity(io, null, activityId, name, "failed", `${description} (cancelled)`, null, "subagent").catch(() => {});
      throw error;
    }
    let ended: { ok: boolean; summary: string; output: string };
    if (!outcome.ok) {
      ended = { ok: false, summary: `${description}: failed, ${outcome.reason}`, output: `The ${name} subagent failed: ${outcome.reason}. It produced no report.` };
    } else {
      const report = clampUtf8(redactSecrets(outcome.report, io.secrets), MAX_REPORT_BYTES, REPORT_CUT_NOTE);
      const excerpt = clampUtf8(report.replace(/\s+/g, " ").trim(), REPORT_EXCERPT_BYTES);
      ended = { ok: true, summary: excerpt === "" ? `${description}: done` : `${description}: ${excerpt}`, output: report === "" ? `The ${name} subagent finished without a report.` : report };
    }
    await recordActivity(io, null, activityId, name, ended.ok ? "completed" : "failed", ended.summary, null, "subagent");
    const output = await afterToolCall(config.hooks, io, step.signal, hooked, ended);
    if (step.signal.aborted) throw new RunStop("cancelled", null);
    return result(output, !ended.ok);
  } finally {
    release();
  }
}

/** The `subagent_link` record's `ceiling` and `ceiling_unnamed` fields: the `*` entry apart (`store/subagent-link.ts`). */
function storedCeiling(ceiling: ProfilePolicies): {
  ceiling: { tools: Record<string, ApprovalPolicy>; sources: Record<string, string> };
  ceiling_unnamed?: { policy: ApprovalPolicy; source: string };
} {
  const { [ANY_TOOL]: unnamed, ...tools } = ceiling.tools;
  const { [ANY_TOOL]: source, ...sources } = ceiling.sources ?? {};
  return { ceiling: { tools, sources }, ...(unnamed === undefined ? {} : { ceiling_unnamed: { policy: unnamed, source: source ?? ceiling.name } }) };
}

/**
 * Whether `profile` may run on the delegating run's provider: a model of its
 * own must be one the user enabled there (`providers.catalog.enabled`), as
 * for any selection, so a profile file never spends on a model the user
 * never chose. The delegating run's own model needs no check: it already
 * runs, with the same provider and key, so it is as ready as the child.
 */
function modelAdmitted(profile: AgentProfile, config: DelegatingStep["config"], setup: SubagentSetup): boolean {
  if (profile.model === undefined || profile.model === config.model) return true;
  return setup.enabled.some((choice) => choice.provider === config.endpoint.name && choice.model === profile.model);
}
