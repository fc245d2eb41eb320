/**
 * One turn, from the durable input to `run.finished`: append the input,
 * acknowledge it, then alternate provider requests and tool calls until the
 * model answers without calling a tool, the step limit is reached, the run
 * is cancelled or something fails. Cleanup (approvals denied, tools
 * stopped, closing records appended, leases released, the history snapshot
 * extended or re-read)
 * always runs, and then the run returns its one terminal event, which the
 * turn worker delivers (it owns what happens when delivery fails).
 *
 * @module
 */

import { DiagnosticCode, ErrorCode } from "../protocol/errors.ts";
import { LIMITS } from "../protocol/limits.ts";
import type { ApprovalBroker } from "./approvals.ts";
import type { RunEventChannel } from "./event-channel.ts";
import type { TerminalEvent } from "./run-events.ts";
import type { RunJournal } from "./journal-port.ts";
import { replayConversation } from "./replay.ts";
import { RunIO, type RunOutcome, RunStop } from "./run-output.ts";
import { ContentBudget } from "./segment.ts";
import type { RunConfig } from "./run-config.ts";
import { offeredToolBytes, runStep, type StepResult } from "./step.ts";
import { Compactor } from "./compactor.ts";
import type { ModelMessage } from "./providers/conversation.ts";
import { TurnUsage } from "./run-usage.ts";
import { sha256Hex } from "../util/digest.ts";
import { promptForModel, stopOrContinue } from "./run-hooks.ts";

const encoder = new TextEncoder();

/** One admitted run. */
export interface RunRequest {
  readonly sessionId: string;
  /** The run id `turn.start` returned. */
  readonly runId: string;
  /** The stored turn id. */
  readonly turnId: string;
  /** The user's prompt. */
  readonly prompt: string;
  /** The turn's durable side and the conversation it continues. */
  readonly journal: RunJournal;
  /** The run's event channel. */
  readonly channel: RunEventChannel;
  /** The run's approvals. */
  readonly broker: ApprovalBroker;
  /** Aborted by `turn.cancel`, shutdown, EOF or an output failure. */
  readonly signal: AbortSignal;
  /** Whether the client negotiated `run.usage`: the run then reports its usage before `run.finished`. */
  readonly reportUsage: boolean;
  /** Whether the client negotiated `tool.cards`: the run then sends each tool call's card. */
  readonly toolCards: boolean;
}

/** Runs the turn through its cleanup and returns its terminal event, for the worker to deliver; never throws. */
export async function executeRun(config: RunConfig, request: RunRequest): Promise<TerminalEvent> {
  const scope = { session_id: request.sessionId, run_id: request.runId };
  const io = new RunIO({
    scope,
    turnId: request.turnId,
    secrets: config.secrets,
    channel: request.channel,
    journal: request.journal,
    wallNow: () => config.runtime.wallNow(),
  });
  const usage = new TurnUsage(config.endpoint.api);
  let outcome: RunOutcome = "completed";
  let code: ErrorCode | null = null;
  try {
    await converse(config, request, io, usage);
  } catch (error) {
    const stop = error instanceof RunStop ? error : new RunStop("failed", ErrorCode.executionFailed);
    outcome = request.signal.aborted && stop.code !== ErrorCode.outputUnavailable ? "cancelled" : stop.outcome;
    code = outcome === "cancelled" ? null : stop.code;
  }
  // Nothing may stay pending past the run: an approval answered now must find it stale.
  request.broker.cancel("cancelled");
  let revision: string | null = null;
  try {
    if (io.inputDurable) {
      const closing = usage.record(scope, io.turnId, io.at());
      await io.persistClosing([
        ...(closing === null ? [] : [closing]),
        { v: 1, type: "turn_finished", session_id: scope.session_id, at: io.at(), turn_id: io.turnId, outcome, error_code: code },
      ]);
    }
  } catch {
    // Only the degradation diagnostic can throw here (output already unavailable); the
    // persistence state it tracks is set before, and the terminal event still follows.
  } finally {
    revision = await request.journal.complete(io.inputDurable).catch(() => null);
  }
  // The journal is closed by now, so this one is shown but cannot be stored.
  if (io.inputDurable && revision === null) await io.notify(DiagnosticCode.historyUnavailable).catch(() => {});
  const reported = request.reportUsage ? usage.event(scope, request.journal.sessionTokens, config.contextWindow) : null;
  if (reported !== null) await io.emit({ event: "run.usage", data: reported }).catch(() => {});
  return {
    event: "run.finished",
    data: { ...scope, outcome, persistence: io.persistence, revision, error_code: code },
  };
}

async function converse(config: RunConfig, request: RunRequest, io: RunIO, usage: TurnUsage): Promise<void> {
  if (request.signal.aborted) throw new RunStop("cancelled", null);
  const context = { system_sha256: await sha256Hex(encoder.encode(config.instructions)), ...config.context };
  const at = io.at();
  await io.persistInput([
    { v: 1, type: "turn_started", session_id: request.sessionId, at, turn_id: request.turnId, run_id: request.runId, context },
    { v: 1, type: "user_input", session_id: request.sessionId, at, turn_id: request.turnId, message_id: "input", text: request.prompt },
  ]);
  const revision = await request.journal.inputRevision();
  await io.emit({
    event: "input.persisted",
    data: { ...io.scope, message_id: request.journal.inputMessageId, durable: true, revision },
  });

  const messages: ModelMessage[] = [
    { role: "system", text: config.instructions },
    ...replayConversation(request.journal.conversation),
    { role: "user", text: await promptForModel(config.hooks, io, request.signal, request.prompt) },
  ];
  let activities = 0;
  const nextActivityId = () => (activities < LIMITS.run_activities ? `t${(++activities).toString(36)}` : null);
  const budget = new ContentBudget();
  // Loaded only for a client that negotiated the extension: a base client's child never loads card code.
  const cards = request.toolCards ? (await import("./tool-cards.ts")).createToolCards(io, config.runtime, request.signal) : null;
  const compactor = new Compactor(config, {
    io,
    signal: request.signal,
    // The summary request counts toward the turn, but it is no measure of the context the turn goes on with.
    usage: (reported) => usage.add(reported, false),
    nextActivityId,
    previousTurn: request.journal.conversation.at(-1)?.turn_id ?? null,
    overheadBytes: offeredToolBytes(config),
  }, messages.length - 1);
  const send = (step: number): Promise<StepResult> => {
    const sent = messages.length;
    return runStep(config, {
      io,
      step,
      messages,
      channel: request.channel,
      broker: request.broker,
      signal: request.signal,
      budget,
      usage: (reported) => {
        usage.add(reported);
        compactor.measured(reported, sent);
      },
      tally: (reported) => usage.add(reported, false),
      nextActivityId,
      cards,
      maxOutputTokens: compactor.outputRoom(messages),
    });
  };
  let continued = 0;
  for (let step = 1; step <= config.maxSteps; step++) {
    await compactor.beforeStep(messages);
    let result = await send(step);
    // The reactive path: one compaction and one retry of the step, never a loop.
    if (result.overflowed) {
      await compactor.afterOverflow(messages);
      result = await send(step);
      if (result.overflowed) {
        await io.diagnostic(DiagnosticCode.contextFull);
        throw new RunStop("failed", ErrorCode.executionFailed);
      }
    }
    if (!result.calledTools) {
      const last = messages.at(-1);
      const goOn = await stopOrContinue(config.hooks, io, request.signal, last?.role === "assistant" ? last.text : "", continued++);
      if (goOn === null) return;
      messages.push({ role: "user", text: goOn });
    }
  }
  await io.diagnostic(DiagnosticCode.stepLimit);
  throw new RunStop("failed", ErrorCode.executionFailed);
}
