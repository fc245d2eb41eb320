/**
 * One subagent's run: its own conversation (the profile's system prompt and
 * the task's prompt), the delegating run's workspace, provider, approvals,
 * cancellation and content budget, its own step bound and history. Its
 * steps are the runner's own (`runStep`), with the ceiling as its profile
 * policies and a channel that keeps its text off the wire
 * (`child-channel.ts`). It never compacts: a task that outgrows the model's
 * context fails. Its report is its last assistant text.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { sha256Hex } from "../util/digest.ts";
import type { AgentProfile } from "../config/agent-settings.ts";
import type { DelegatingStep, SubagentIdentity } from "../runner/delegation.ts";
import type { ModelMessage } from "../runner/providers/conversation.ts";
import type { RunConfig } from "../runner/run-config.ts";
import type { RunJournal } from "../runner/journal-port.ts";
import { RunIO, RunStop } from "../runner/run-output.ts";
import { TurnUsage } from "../runner/run-usage.ts";
import { runStep } from "../runner/step.ts";
import type { ProfilePolicies } from "../policy/tool-policies.ts";
import type { TurnContextParts } from "../store/records.ts";
import type { StepChannel } from "../runner/event-channel.ts";
import { childChannel } from "./child-channel.ts";
import { outputRoom } from "../runner/context-meter.ts";

/** Everything a child run is set up with. */
export interface ChildSetup {
  /** The child's history id (its file's session id). */
  readonly childId: string;
  readonly profile: AgentProfile;
  /** The ceiling: the policies the child's calls run under (`delegatedPolicies`). */
  readonly ceiling: ProfilePolicies;
  readonly identity: SubagentIdentity;
  /** The child's system prompt. */
  readonly instructions: string;
  /** What the child's `turn_started` records it was set up with. */
  readonly context: TurnContextParts;
  /** The settings' step bound, which the profile's can only lower. */
  readonly maxSteps: number;
  /** The child's history. */
  readonly journal: RunJournal;
  /** The task. */
  readonly prompt: string;
  /** The delegating run's channel. */
  readonly channel: StepChannel;
}

/** How a child run ended: its report, or why it has none. */
export type ChildOutcome =
  | { readonly ok: true; readonly report: string; readonly steps: number }
  | { readonly ok: false; readonly reason: string };

/** The configuration a child runs with, derived from the delegating run's: never a `task` (the depth bound is 1). */
export function childConfig(parent: RunConfig, setup: Pick<ChildSetup, "profile" | "ceiling" | "identity" | "instructions" | "context" | "maxSteps">): RunConfig {
  const { profile } = setup;
  // A profile's model runs with the delegating run's provider; its effort only where the profile says, since
  // the delegating run's was chosen for the delegating run's model.
  const model = profile.model ?? parent.model;
  // A subagent takes no rewind checkpoints: its history is never opened, so nothing could restore them,
  // and each task call would start a fresh per-session bound of its own.
  const { checkpoints: _unrestorable, ...inherited } = parent;
  return {
    ...inherited,
    model,
    effort: profile.effort ?? (model === parent.model ? parent.effort : "default"),
    contextWindow: model === parent.model ? parent.contextWindow : null,
    instructions: setup.instructions,
    context: setup.context,
    profile: setup.ceiling,
    maxSteps: Math.min(setup.maxSteps, profile.maxSteps ?? Infinity),
    // The depth bound is 1: a subagent is offered no `task` (docs/features/runner.md, "Subagents").
    delegation: null,
    subagent: setup.identity,
  };
}

/**
 * Runs the child to its report. A failure of the child is an outcome, not
 * an exception: only the delegating run's cancellation and an output
 * failure (the client can no longer be told anything) throw {@link RunStop}.
 */
export async function runChild(parent: DelegatingStep, setup: ChildSetup): Promise<ChildOutcome> {
  const config = childConfig(parent.config, setup);
  const scope = { session_id: setup.childId, run_id: parent.io.scope.run_id };
  const channel = childChannel(setup.channel, parent.io.scope, setup.identity, config.secrets);
  const io = new RunIO({ scope, turnId: setup.childId, secrets: config.secrets, channel, journal: setup.journal, wallNow: () => config.runtime.wallNow() });
  const usage = new TurnUsage(config.endpoint.api);
  let outcome: ChildOutcome = { ok: false, reason: "it did not finish" };
  let stop: RunStop | null = null;
  try {
    outcome = await converse(config, setup, io, channel, parent, usage);
  } catch (error) {
    stop = error instanceof RunStop ? error : new RunStop("failed", ErrorCode.executionFailed);
    outcome = { ok: false, reason: failureReason(stop) };
  }
  await close(io, setup, usage, parent.signal.aborted ? "cancelled" : outcome.ok ? "completed" : "failed", stop?.code ?? null);
  if (parent.signal.aborted) throw new RunStop("cancelled", null);
  if (stop?.code === ErrorCode.outputUnavailable) throw stop;
  return outcome;
}

async function converse(config: RunConfig, setup: ChildSetup, io: RunIO, channel: StepChannel, parent: DelegatingStep, usage: TurnUsage): Promise<ChildOutcome> {
  const at = io.at();
  const base = { v: 1 as const, session_id: setup.childId, at, turn_id: setup.childId };
  const context = { system_sha256: await sha256Hex(new TextEncoder().encode(config.instructions)), ...config.context };
  // A child whose history cannot be stored still runs: its report matters more than its record.
  await io.persistInput([
    { ...base, type: "turn_started", run_id: parent.io.scope.run_id, context },
    { ...base, type: "user_input", message_id: "input", text: setup.prompt },
  ]).catch(() => {});
  const messages: ModelMessage[] = [{ role: "system", text: config.instructions }, { role: "user", text: setup.prompt }];
  const counted = (reported: Parameters<typeof parent.usage>[0]) => {
    usage.add(reported);
    parent.usage(reported);
  };
  for (let step = 1; step <= config.maxSteps; step++) {
    const result = await runStep(config, {
      io,
      step,
      messages,
      channel,
      broker: parent.broker,
      signal: parent.signal,
      budget: parent.budget,
      usage: counted,
      tally: counted,
      nextActivityId: parent.nextActivityId,
      // A subagent's calls get no tool cards: a card's records belong with the activity's, in the child's history.
      cards: null,
      // No compaction measures a child's context, so it gets the provider's whole output room.
      maxOutputTokens: outputRoom(null, 0, 0),
      // Its channel shows its events in the delegating run's scope: a client tool's result names that scope.
      wireScope: parent.io.scope,
    });
    if (result.overflowed) return { ok: false, reason: "the task outgrew the model's context window" };
    if (!result.calledTools) {
      const last = messages.at(-1);
      return { ok: true, report: last?.role === "assistant" ? last.text : "", steps: step };
    }
  }
  return { ok: false, reason: `it reached its limit of ${config.maxSteps} model requests before finishing` };
}

/** Why a stopped child failed, in words for the delegating model. */
function failureReason(stop: RunStop): string {
  switch (stop.code) {
    case ErrorCode.contentLimit:
      return "the run's content budget ran out";
    case ErrorCode.outputUnavailable:
      return "the client could no longer be reached";
    default:
      return "its model request failed";
  }
}

/** Appends the closing records of the child's history, as a turn's. */
async function close(io: RunIO, setup: ChildSetup, usage: TurnUsage, outcome: "completed" | "cancelled" | "failed", code: ErrorCode | null): Promise<void> {
  try {
    if (io.inputDurable) {
      const at = io.at();
      const closing = usage.record(io.scope, setup.childId, at);
      await io.persistClosing([
        ...(closing === null ? [] : [closing]),
        { v: 1, type: "turn_finished", session_id: setup.childId, at, turn_id: setup.childId, outcome, error_code: outcome === "cancelled" ? null : code },
      ]);
    }
  } catch {
    // A full or failing child history is the child's loss only; the report still goes back.
  } finally {
    await setup.journal.complete(io.inputDurable).catch(() => null);
  }
}
