/**
 * Compaction of one run's conversation (docs/features/runner.md,
 * "Compaction"): before each request, when the estimate crosses
 * `agent.compaction.threshold` of a known context window, old tool outputs
 * are pruned if that alone is enough, else the conversation is compacted;
 * and when the provider refuses a request as too long, it is compacted once
 * for one retry.
 *
 * A compaction replaces either the turns before this one (this turn's
 * messages stay as they are) or, when this turn alone is too much,
 * everything up to now; the latest step's call and results, which the model
 * has not answered yet, then stay too, after a summary that covers them as
 * well. It is one summary request, then one append group:
 * the compaction activity's `completed` record and the `compaction` record
 * at `v: 2`, whose `through_turn` tells the replay what the summary stands
 * for (docs/storage.md, "Compaction"). A tool call is never parted from its
 * result: a cut falls between steps or before the turn, never inside one.
 * The system prompt is never replaced, and the skills the replaced part
 * loaded come back after the summary, from the startup snapshot, for the
 * rest of the run.
 *
 * @module
 */

import { DiagnosticCode, ErrorCode } from "../protocol/errors.ts";
import { redactSecrets } from "../util/redaction.ts";
import { utf8ByteCount } from "../util/utf8.ts";
import type { ModelMessage } from "./providers/conversation.ts";
import type { Usage } from "./providers/events.ts";
import { summaryMessage } from "./replay.ts";
import type { RunConfig } from "./run-config.ts";
import { type RunIO, RunStop } from "./run-output.ts";
import { boundSummary, groupDigits } from "./tools/tool-text.ts";
import { SKILL_TOOL } from "./tools/skill.ts";
import type { Skill } from "../config/skills.ts";
import { ContextMeter, estimateTokens, inputTokens, outputRoom, tokensOfBytes } from "./context-meter.ts";
import { requestSummary, SUMMARY_MAX_BYTES, type SummaryOutcome, summaryTokens } from "./summary-request.ts";

/** Failed compactions in a row after which a run stops trying. */
export const MAX_CONSECUTIVE_FAILURES = 3;
/** What a pruned tool output becomes. */
export const PRUNED_OUTPUT = "[This output was removed to save context. Run the tool again if you need it.]";
/** Outputs this short are left alone: pruning them frees next to nothing. */
const PRUNE_MIN_BYTES = 1_024;

/** What compaction needs from its run. */
export interface CompactorDeps {
  readonly io: RunIO;
  readonly signal: AbortSignal;
  /** Receives the summary request's usage (null: none reported) once a provider answered it; it counts toward the turn. */
  usage(usage: Usage | null): void;
  nextActivityId(): string | null;
  /** The turn of the last record the replay holds: what a compaction keeping this turn replaces through; null when none. */
  readonly previousTurn: string | null;
  /** What every request sends besides its messages (the tool definitions), in bytes. */
  readonly overheadBytes: number;
}

/** Which messages a compaction summarises and replaces, and the turn its record names. */
interface Plan {
  /** How many messages after the system message the summary covers. */
  readonly summarised: number;
  /** How many messages after the system message it replaces (at most `summarised`). */
  readonly count: number;
  readonly through: string;
  /** Whether this turn's messages stay. */
  readonly keepsTurn: boolean;
}

const FAILURE_TEXT: Readonly<Record<Exclude<SummaryOutcome, { ok: true }>["reason"], string>> = {
  cancelled: "Compaction cancelled",
  failed: "Compaction failed: the summary request failed",
  empty: "Compaction failed: the model returned no summary",
  too_long: "Compaction failed: the conversation is too long for the model to summarise",
};

/** One run's compaction state. */
export class Compactor {
  /** The fill measure. */
  readonly meter: ContextMeter;
  readonly #config: RunConfig;
  readonly #deps: CompactorDeps;
  /** Where this turn's messages start (its prompt); 1 once a compaction replaced the prompt too. */
  #turnStart: number;
  #failures = 0;
  #stopped = false;
  /**
   * False from a compaction until the provider answered a request again, so
   * it cannot fire twice on one estimate; a provider that reports no usage
   * re-arms it too, or a run could compact only once.
   */
  #armed = true;
  #compacted = false;

  /** Creates the state; `turnStart` is the index of the turn's prompt in the run's messages. */
  constructor(config: RunConfig, deps: CompactorDeps, turnStart: number) {
    this.#config = config;
    this.#deps = deps;
    this.#turnStart = turnStart;
    this.meter = new ContextMeter(deps.overheadBytes);
  }

  /** Records that the provider answered a request of the first `sent` messages, and its count when `usage` has one. */
  measured(usage: Usage | null, sent: number): void {
    this.#armed = true;
    const tokens = usage === null ? null : inputTokens(this.#config.endpoint.api, usage);
    if (tokens !== null) this.meter.measure(tokens, sent);
  }

  /** The output room of a request of `messages`: what the window leaves beside their estimate (docs/features/runner.md, "Output room"). */
  outputRoom(messages: readonly ModelMessage[]): number {
    return outputRoom(this.#config.contextWindow, this.meter.estimate(messages), this.meter.unmeasured(messages));
  }

  /**
   * Before a request: prunes or compacts `messages` when the estimate
   * crosses the threshold. A failed compaction leaves them as they were,
   * and the run goes on while they fit the window; throws {@link RunStop}
   * when cancelled or when they cannot fit.
   */
  async beforeStep(messages: ModelMessage[]): Promise<void> {
    const { compaction, contextWindow: window } = this.#config;
    if (!compaction.enabled || window === null || this.#stopped || !this.#armed) return;
    const limit = compaction.threshold * window;
    const estimate = this.meter.estimate(messages);
    if (estimate < limit || this.#prune(messages, estimate, limit)) return;
    const plan = this.#plan(messages, false);
    if (plan === null) return;
    const percent = Math.min(999, Math.round((100 * estimate) / window));
    if (!(await this.#compact(messages, plan, `about ${percent}% of the model's context is used`)) && estimate >= window) await this.#full();
  }

  /**
   * After the provider refused a request as too long: compacts once, or
   * throws {@link RunStop} (`context_full`) when compaction is off, has
   * stopped, has nothing to replace or fails.
   */
  async afterOverflow(messages: ModelMessage[]): Promise<void> {
    const plan = this.#config.compaction.enabled && !this.#stopped ? this.#plan(messages, true) : null;
    if (plan === null || !(await this.#compact(messages, plan, "the provider said the conversation is too long for the model's context"))) await this.#full();
  }

  /** Ends the run: the conversation cannot be made to fit. */
  async #full(): Promise<never> {
    await this.#deps.io.diagnostic(DiagnosticCode.contextFull);
    throw new RunStop("failed", ErrorCode.executionFailed);
  }

  /**
   * Replaces the outputs of this turn's tool calls the model has already
   * answered (all but the latest step's) when that alone brings the
   * estimate under `limit`; only the run's messages change, never a record.
   */
  #prune(messages: ModelMessage[], estimate: number, limit: number): boolean {
    const latest = messages.findLastIndex((message) => message.role === "assistant");
    const targets: number[] = [];
    let freed = 0;
    for (let index = this.#turnStart; index < latest; index++) {
      const message = messages[index]!;
      if (message.role !== "tool" || utf8ByteCount(message.output) < PRUNE_MIN_BYTES) continue;
      targets.push(index);
      freed += utf8ByteCount(message.output) - utf8ByteCount(PRUNED_OUTPUT);
    }
    if (targets.length === 0 || estimate - tokensOfBytes(freed) >= limit) return false;
    for (const index of targets) messages[index] = { ...(messages[index] as Extract<ModelMessage, { role: "tool" }>), output: PRUNED_OUTPUT };
    this.meter.forget(tokensOfBytes(freed));
    return true;
  }

  /**
   * What to replace: the earlier turns, when there are some and this turn
   * alone (with a summary) is estimated under the threshold or, after a
   * refusal (`reactive`, where an estimate already proved wrong) or with an
   * unknown window, has not gone past its prompt; else everything before
   * the latest step, once this turn went past its prompt; else nothing can
   * help (null).
   */
  #plan(messages: readonly ModelMessage[], reactive: boolean): Plan | null {
    const { previousTurn } = this.#deps;
    const window = this.#config.contextWindow;
    const start = this.#turnStart;
    const turnAlone = this.meter.overhead + estimateTokens([messages[0]!, ...messages.slice(start)]) + summaryTokens(window);
    const turnFits = window === null || reactive ? messages.length - 1 === start : turnAlone < this.#config.compaction.threshold * window;
    if (!this.#compacted && start > 1 && previousTurn !== null && turnFits) {
      return { summarised: start - 1, count: start - 1, through: previousTurn, keepsTurn: true };
    }
    const latest = messages.findLastIndex((message) => message.role === "assistant");
    if (latest > start) return { summarised: messages.length - 1, count: latest - 1, through: this.#deps.io.turnId, keepsTurn: false };
    return null;
  }

  /** Runs one compaction of `plan`; false, with the failure shown, when it produced nothing. */
  async #compact(messages: ModelMessage[], plan: Plan, why: string): Promise<boolean> {
    const { io } = this.#deps;
    const id = this.#deps.nextActivityId();
    if (id === null) {
      await io.diagnostic(DiagnosticCode.activityLimit);
      throw new RunStop("failed", ErrorCode.executionFailed);
    }
    await this.#activity(id, "started", `Compacting the conversation: ${why}`);
    const outcome = await requestSummary(this.#config, messages.slice(1, 1 + plan.summarised), this.#deps.signal, (usage) => this.#deps.usage(usage));
    if (!outcome.ok) {
      await this.#activity(id, "failed", FAILURE_TEXT[outcome.reason]);
      if (outcome.reason === "cancelled") throw new RunStop("cancelled", null);
      await io.diagnostic(DiagnosticCode.compactionFailed);
      if (++this.#failures >= MAX_CONSECUTIVE_FAILURES) {
        this.#stopped = true;
        await io.diagnostic(DiagnosticCode.compactionStopped);
      }
      return false;
    }
    this.#failures = 0;
    const summary = redactSecrets(outcome.summary, io.secrets);
    const bytes = groupDigits(utf8ByteCount(summary));
    const text = boundSummary(
      `Compacted the conversation: ${plan.count} earlier messages replaced by a ${bytes}-byte summary${outcome.cut ? ` (cut at ${groupDigits(SUMMARY_MAX_BYTES)} bytes)` : ""}`,
      io.secrets,
    );
    const base = { session_id: io.scope.session_id, at: io.at(), turn_id: io.turnId };
    // The summary's title is the session's latest title metadata (docs/storage.md), unless titles are off.
    const title = outcome.title === null ? null : this.#config.compactionTitle?.(outcome.title) ?? null;
    await io.persist([
      { v: 1, type: "activity", ...base, activity_id: id, kind: "compaction", name: "compaction", state: "completed", summary: text },
      { v: 2, type: "compaction", ...base, summary, ...(title === null ? {} : { title }), through_turn: plan.through },
    ]);
    await io.emit({ event: "activity", data: { ...io.scope, activity_id: id, kind: "compaction", state: "completed", name: "compaction", summary: text } });
    messages.splice(1, plan.count, withSkills(summaryMessage(summary), loadedSkills(messages.slice(1, 1 + plan.count), this.#config.skills)));
    this.#turnStart = plan.keepsTurn ? 2 : 1;
    this.#compacted = true;
    this.#armed = false;
    this.meter.reset();
    return true;
  }

  /** Records and emits one state of the compaction activity. */
  async #activity(id: string, state: "started" | "failed", summary: string): Promise<void> {
    const { io } = this.#deps;
    const text = boundSummary(summary, io.secrets);
    await io.persist([{ v: 1, type: "activity", session_id: io.scope.session_id, at: io.at(), turn_id: io.turnId, activity_id: id, kind: "compaction", name: "compaction", state, summary: text }]);
    await io.emit({ event: "activity", data: { ...io.scope, activity_id: id, kind: "compaction", state, name: "compaction", summary: text } });
  }
}

/**
 * The skills `replaced` loaded (a `skill` call whose result was not an
 * error), as the startup snapshot holds them: a summary would otherwise
 * reduce instructions the model is following to a mention.
 */
function loadedSkills(replaced: readonly ModelMessage[], skills: readonly Skill[]): Skill[] {
  const succeeded = new Set(replaced.flatMap((message) => (message.role === "tool" && message.name === SKILL_TOOL && !message.isError ? [message.callId] : [])));
  const names = new Set<string>();
  for (const message of replaced) {
    if (message.role !== "assistant") continue;
    for (const call of message.toolCalls) {
      if (call.name !== SKILL_TOOL || !succeeded.has(call.id)) continue;
      try {
        names.add(String((JSON.parse(call.argumentsJson) as { name?: unknown }).name));
      } catch {
        // A call whose arguments did not parse loaded nothing.
      }
    }
  }
  return skills.filter((skill) => names.has(skill.name));
}

/** `message` (a summary) followed by the instructions of `skills`, each as the `skill` tool shows them. */
function withSkills(message: ModelMessage, skills: readonly Skill[]): ModelMessage {
  if (skills.length === 0 || message.role !== "user") return message;
  const blocks = skills.map((skill) => `<skill name="${skill.name}">\n${skill.body}\n</skill>`);
  return { role: "user", text: `${message.text}\n\n[Skills loaded earlier in this conversation, as their instructions stand:]\n\n${blocks.join("\n\n")}` };
}
