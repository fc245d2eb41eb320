/**
 * One step of a turn: one streaming provider request, its assistant
 * segment shown and reconciled, its records appended, and the tool calls it
 * asked for executed. The step extends the conversation in place, so the
 * next request replays the calls paired with their results.
 *
 * @module
 */

import { DiagnosticCode, ErrorCode } from "../protocol/errors.ts";
import type { ApprovalBroker } from "./approvals.ts";
import type { StepChannel } from "./event-channel.ts";
import { providerFailureSummary } from "./provider-hints.ts";
import { openProviderStream } from "./providers/client.ts";
import { isOverflowCode } from "./providers/context-overflow.ts";
import type { ModelMessage, ToolSpec } from "./providers/conversation.ts";
import { StreamErrorCode, type Usage } from "./providers/events.ts";
import { assistantFromEvents, buildRequest } from "./providers/request.ts";
import { accumulate } from "./providers/accumulate.ts";
import { type RunIO, RunStop } from "./run-output.ts";
import type { RunScope } from "./run-events.ts";
import { AssistantSegment, type ContentBudget } from "./segment.ts";
import { RetainedEvents } from "./retained-events.ts";
import { reportNotices, runToolCalls } from "./tool-calls.ts";
import { builtinTools } from "./tools/registry.ts";
import { withCodeTool } from "./code-mode/code-call.ts";
import { CODE_TOOL_NAME } from "./code-mode/code-tool.ts";
import { redactSecrets } from "../util/redaction.ts";
import type { RunConfig } from "./run-config.ts";
import { type ApprovalPolicy, profileEntry, profilePolicy, resolvePolicy } from "../policy/tool-policies.ts";
import { TASK_TOOL } from "./delegation.ts";
import type { ToolCardsPort } from "./card-port.ts";

/** What a step needs from its run. */
export interface StepContext {
  /** The run's events and records. */
  readonly io: RunIO;
  /** 1 for the first request of the turn. */
  readonly step: number;
  /** The conversation so far; the step appends its assistant message and tool results. */
  readonly messages: ModelMessage[];
  /** The run's events. */
  readonly channel: StepChannel;
  /** The run's approvals. */
  readonly broker: ApprovalBroker;
  /** The run's cancellation. */
  readonly signal: AbortSignal;
  /** The run's content budget. */
  readonly budget: ContentBudget;
  /** Receives the step's usage (null: none reported), once, when the provider answered its request. */
  usage(usage: Usage | null): void;
  /** Counts usage toward the turn without taking it as a measure of this conversation's context: a subagent's requests. */
  tally(usage: Usage | null): void;
  /** Issues activity ids. */
  nextActivityId(): string | null;
  /** The run's tool cards, or null when the client did not negotiate them. */
  readonly cards: ToolCardsPort | null;
  /** The request's output room, in tokens (`context-meter.ts`, `outputRoom`). */
  readonly maxOutputTokens: number;
  /**
   * The scope the client sees this step's events in, when it is not `io`'s:
   * a subagent's, whose channel shows them in the delegating run's scope, so
   * a client tool's result naming that scope is its call's.
   */
  readonly wireScope?: RunScope;
}

/** How a step ended when it did not stop the run. */
export interface StepResult {
  /** Whether the model called tools, so another request must follow. */
  readonly calledTools: boolean;
  /**
   * Whether the provider refused the request as longer than the model's
   * context before answering anything: nothing was stored or shown, and the
   * run decides (compaction's reactive path).
   */
  readonly overflowed: boolean;
}

const STREAM_DIAGNOSTIC: Readonly<Record<StreamErrorCode, DiagnosticCode>> = {
  [StreamErrorCode.truncated]: DiagnosticCode.providerStreamTruncated,
  [StreamErrorCode.malformed]: DiagnosticCode.providerStreamMalformed,
  [StreamErrorCode.eventTooLarge]: DiagnosticCode.providerStreamMalformed,
  [StreamErrorCode.providerError]: DiagnosticCode.providerStreamError,
  [StreamErrorCode.connectionLost]: DiagnosticCode.providerConnectionLost,
};

/**
 * Longest pause for room in the event queue before reading on: long enough
 * for the writer's completions to run, short enough that a stalled client
 * only makes deltas coalesce or drop, never holds the provider stream.
 */
const DELTA_PATIENCE_MS = 50;

const specs = (skills: boolean) => builtinTools(skills).map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
const TOOL_SPECS = specs(false);
// `skill` is offered only when skills are enabled: a tool with nothing to load would only mislead the model.
const TOOL_SPECS_WITH_SKILL = specs(true);

/**
 * The tools for this step's request: the built-in ones, then the external
 * ones as they stand now (lists refreshed if a server said they changed),
 * after reporting what the external tools have to say (a server stopped).
 */
async function offeredTools(config: RunConfig, io: RunIO, signal: AbortSignal): Promise<readonly ToolSpec[]> {
  const external = config.external;
  if (external !== null) {
    await external.refresh(signal);
    await reportNotices(io, external);
  }
  return currentTools(config);
}

/**
 * The tools a request offers now: built-in, external, `code` with Code Mode
 * on, then `task` where the run may delegate; without the external tools
 * the profile denies, and a subagent's without any tool its ceiling denies.
 */
function currentTools(config: RunConfig): readonly ToolSpec[] {
  const builtin = config.skills.length > 0 ? TOOL_SPECS_WITH_SKILL : TOOL_SPECS;
  const allowed = (name: string, base: ApprovalPolicy) => profilePolicy(base, name, config.profile).policy !== "deny";
  // An external tool the profile denies is never offered (a read-only profile's `*`): the set changes with the
  // servers and the client, and the profile's instructions speak only of built-in ones (docs/features/runner.md).
  const external = (config.external?.offered() ?? [])
    .filter((tool) => profileEntry(config.profile.tools, tool.name) !== "deny")
    .map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters, policy: tool.policy }));
  const delegation = config.delegation ?? null;
  const spec = ({ policy: _, ...rest }: ToolSpec & { readonly policy: ApprovalPolicy }): ToolSpec => rest;
  if (config.subagent === undefined) return [...withCodeTool([...builtin, ...external.map(spec)], config), ...delegation === null ? [] : [delegation.spec]];
  // A subagent is offered only what it may call: a tool its ceiling denies would only cost it a step; `code` too.
  const codeMode = allowed(CODE_TOOL_NAME, resolvePolicy(CODE_TOOL_NAME, config.policies)) ? config.codeMode ?? null : null;
  return [
    ...withCodeTool([
      ...builtin.filter((tool) => allowed(tool.name, resolvePolicy(tool.name, config.policies))),
      ...external.filter((tool) => allowed(tool.name, tool.policy)).map(spec),
    ], { runtime: config.runtime, codeMode }),
    ...delegation === null || !allowed(TASK_TOOL, resolvePolicy(TASK_TOOL, config.policies)) ? [] : [delegation.spec],
  ];
}

/** The bytes of the tool definitions a request of this run offers now, which compaction's estimate counts. */
export function offeredToolBytes(config: RunConfig): number {
  return JSON.stringify(currentTools(config)).length;
}

/** Runs one step; throws {@link RunStop} when the run must end early. */
export async function runStep(config: RunConfig, context: StepContext): Promise<StepResult> {
  const { io, signal } = context;
  if (signal.aborted) throw new RunStop("cancelled", null);
  const segment = new AssistantSegment(`a${context.step.toString(36)}`, context.channel, context.budget, config.secrets);
  // The step's own abort also stops the stream when the content bound is hit.
  const stream = new AbortController();
  const stopStream = () => stream.abort();
  signal.addEventListener("abort", stopStream, { once: true });
  // Every non-text event counts against the run's budget, which a hostile endpoint cannot outgrow.
  const retained = new RetainedEvents(context.budget);
  let overLimit = false;
  let failure: DiagnosticCode | null = null;
  let failedStatus: number | null = null;
  let answered = false;
  let overflow = false;
  try {
    const request = buildRequest(config.endpoint, {
      model: config.model,
      effort: config.effort,
      messages: context.messages,
      tools: await offeredTools(config, io, signal),
      apiKey: config.apiKey,
      maxOutputTokens: context.maxOutputTokens,
    });
    const opened = await openProviderStream(config.runtime.fetch, config.endpoint, config.model, request, stream.signal);
    // Any HTTP answer, an error status included, means the provider was reached (`run.usage`).
    answered = opened.ok || opened.status !== null;
    if (!opened.ok) [failure, failedStatus, overflow] = [opened.code, opened.status, opened.overflow];
    else {
      for await (const event of opened.events) {
        if (event.type === "text" || event.type === "refusal") {
          if (!segment.push(event.delta)) {
            overLimit = true;
            stream.abort();
            break;
          }
          const room = context.channel.whenDeltaRoom(DELTA_PATIENCE_MS);
          if (room !== null) await room;
          // Text lives in the segment; keeping thousands of delta events alive would only feed the GC.
          continue;
        }
        if (!retained.keep(event)) {
          overLimit = true;
          stream.abort();
          break;
        }
        if (event.type === "error") {
          failure = STREAM_DIAGNOSTIC[event.code];
          overflow ||= isOverflowCode(event.providerCode);
        }
      }
    }
  } finally {
    signal.removeEventListener("abort", stopStream);
  }

  const cancelled = signal.aborted;
  if (overflow && !cancelled && !overLimit && segment.text === "") {
    // Refused for its length, the request still reached the provider (`run.usage`).
    if (answered) context.usage(accumulate(retained.events).usage);
    return { calledTools: false, overflowed: true };
  }
  const cut = cancelled || overLimit || failure !== null;
  const reconciled = await segment.reconcile(io.scope, cut);
  const events = retained.events;
  const folded = accumulate(events);
  // A stream may report usage more than once (Anthropic: at start and at end); the last report is the total.
  if (answered) context.usage(folded.usage);
  await persistSegment(io, segment, folded.reasoningSummary, cut, context.step);
  if (!reconciled.ok) throw new RunStop("failed", ErrorCode.outputUnavailable);
  if (cancelled) throw new RunStop("cancelled", null);
  if (overLimit) throw new RunStop("failed", ErrorCode.contentLimit);
  if (failure !== null) {
    // Unreachable and 404 get a summary naming the base URL (provider-hints.ts); the rest keep their fixed text.
    const hint = providerFailureSummary(failure, failedStatus, config.endpoint, io.secrets);
    await io.diagnostic(failure, hint ?? undefined);
    throw new RunStop("failed", ErrorCode.executionFailed);
  }
  if (folded.finishReason === "length") await io.diagnostic(DiagnosticCode.outputTokenLimit);
  if (folded.finishReason === "content_filter") await io.diagnostic(DiagnosticCode.contentFiltered);

  // The segment holds the text (refusals included: the model said them too).
  const assistant = { ...assistantFromEvents(events), text: segment.text };
  context.messages.push(assistant);
  if (assistant.toolCalls.length === 0) return { calledTools: false, overflowed: false };
  const delegation = config.delegation ?? null;
  const results = await runToolCalls(assistant.toolCalls, {
    io,
    broker: context.broker,
    delegate: delegation === null ? null : delegation.forStep({ config, io, channel: context.channel, broker: context.broker, signal, budget: context.budget, usage: context.tally, nextActivityId: context.nextActivityId }),
    subagent: config.subagent ?? null,
    policies: config.policies,
    profile: config.profile,
    external: config.external,
    codeMode: config.codeMode ?? null,
    nextActivityId: context.nextActivityId,
    cards: context.cards,
    ...(config.hooks === undefined ? {} : { hooks: config.hooks }),
    tool: {
      ...{ runtime: config.runtime, workspace: config.workspace, home: config.home, signal, secrets: config.secrets, skills: config.skills },
      events: { scope: context.wireScope ?? io.scope, emit: (event) => io.emit(event).then(() => true, () => false) },
      ...(config.checkpoints === undefined ? {} : { checkpoint: config.checkpoints(io.scope.session_id, io.turnId) }),
    },
  });
  context.messages.push(...results);
  return { calledTools: true, overflowed: false };
}

/** Appends the segment's reconciled text and the step's provider-proven reasoning summary. */
async function persistSegment(io: RunIO, segment: AssistantSegment, summary: string | null, partial: boolean, step: number): Promise<void> {
  const at = io.at();
  const base = { v: 1 as const, session_id: io.scope.session_id, at, turn_id: io.turnId };
  await io.persist([
    ...(summary === null || summary === "" ? [] : [{
      ...base,
      type: "reasoning_summary" as const,
      item_id: `r${step.toString(36)}`,
      text: redactSecrets(summary, io.secrets),
      provider_summary: true,
    }]),
    ...(segment.text === "" ? [] : [{ ...base, type: "assistant_message" as const, message_id: segment.messageId, text: segment.redacted(), partial }]),
  ]);
}
