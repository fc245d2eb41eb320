/**
 * The live tool cards of one run, for a client that negotiated `tool.cards`
 * (`docs/features/local-agent-tool-cards.md`): implements the seam of
 * `card-port.ts` over the builders of `src/cards/`, and sends each card's
 * snapshots as critical `tool.card` events. Loaded by `run.ts` with a
 * dynamic `import()` only for such a client.
 *
 * @module
 */

import type { Disposable, Runtime } from "../host/runtime.ts";
import type { ApprovalOutcome } from "../protocol/approval-outcomes.ts";
import { CARD_LIMITS, type Card, type CardStage } from "../protocol/tool-cards.ts";
import { DetailBudget } from "../cards/bounds.ts";
import { cardKind, effectOf, emptyCard, type Ending, finishedCard, fitCard, outcomeOf, preparedCard, runningCard } from "../cards/card.ts";
import type { CallFacts } from "../cards/facts.ts";
import type { CallCard, ToolCardsPort } from "./card-port.ts";
import type { RunIO } from "./run-output.ts";
import type { PreparedCall, ToolResult } from "./tools/tool.ts";
import { boundSummary } from "./tools/tool-text.ts";

/** How often a running command's card may be updated with its output so far. */
export const SHELL_UPDATE_MS = 1_000;

/** The cards of the run whose events and records go through `io`. */
export function createToolCards(io: RunIO, runtime: Runtime, signal: AbortSignal): ToolCardsPort {
  const budget = new DetailBudget(CARD_LIMITS.run_detail_bytes);
  return { open: (activityId, tool) => new LiveCard(io, runtime, signal, budget, activityId, tool) };
}

/** One call's card: its state so far, and the snapshots it sent. */
class LiveCard implements CallCard {
  readonly #io: RunIO;
  readonly #runtime: Runtime;
  readonly #signal: AbortSignal;
  readonly #budget: DetailBudget;
  readonly #activityId: string;
  readonly #cardId: string;
  #card: Card;
  #revision = -1;
  #idGiven = false;
  #ending: { decision: ApprovalOutcome | null; deniedByPolicy: boolean; ran: boolean; ok: boolean } = { decision: null, deniedByPolicy: false, ran: false, ok: false };
  #result: ToolResult | null = null;
  #facts: CallFacts | undefined = undefined;
  // A running command's update timer, the update on its way, and the output bytes it showed.
  #timer: Disposable | null = null;
  #inFlight: Promise<void> | null = null;
  #shownBytes = 0;

  constructor(io: RunIO, runtime: Runtime, signal: AbortSignal, budget: DetailBudget, activityId: string, tool: string) {
    this.#io = io;
    this.#runtime = runtime;
    this.#signal = signal;
    this.#budget = budget;
    this.#activityId = activityId;
    // Activity ids are `t` and a base-36 count: the card's id is as short and as unique within the run.
    this.#cardId = `card.${activityId}`;
    this.#card = emptyCard(tool, cardKind(tool, undefined));
  }

  async prepared(call: PreparedCall, decision: "not_asked" | "allowed" | null, forced: boolean): Promise<void> {
    const base = { ...this.#card, kind: cardKind(this.#card.tool, call.facts), summary: boundSummary(call.activity ?? call.action, this.#io.secrets) };
    const card = await preparedCard(base, call.facts, this.#runtime.fs, this.#io.secrets, this.#budget);
    this.#card = { ...card, phase: decision === null ? "awaiting_approval" : "running", decision, forced };
    this.#ending.decision = decision;
    this.#facts = call.facts;
    await this.#send("initial");
    if (decision !== null) this.#watch();
  }

  async decided(decision: ApprovalOutcome): Promise<void> {
    this.#ending.decision = decision;
    this.#card = { ...this.#card, decision };
    if (decision === "allowed") {
      this.#card = { ...this.#card, phase: "running" };
      await this.#send("update");
      this.#watch();
    }
  }

  deniedByPolicy(): void {
    this.#ending.deniedByPolicy = true;
  }

  ran(result: ToolResult): void {
    this.#stopWatching();
    this.#ending.ran = true;
    this.#ending.ok = result.ok;
    this.#result = result;
  }

  activityField(): { readonly card_id?: string } {
    if (this.#idGiven) return {};
    this.#idGiven = true;
    return { card_id: this.#cardId };
  }

  async finished(summary: string): Promise<void> {
    this.#stopWatching();
    // The terminal snapshot follows every update of the card.
    await this.#inFlight;
    const finished = finishedCard({ ...this.#card, summary }, this.#result?.facts, this.#io.secrets, this.#budget);
    const facts = this.#result?.facts;
    const ending: Ending = { ...this.#ending, cancelled: this.#signal.aborted, unanswered: facts?.kind === "mcp" && facts.unanswered };
    this.#card = fitCard({ ...finished, phase: "finished", outcome: outcomeOf(finished, ending), effect: effectOf(finished, ending) });
    // Saved as it ends, for history.page: after the call's last activity record, which it attaches to.
    const { session_id } = this.#io.scope;
    const saved = { v: 3, type: "tool_card", ignorable: true, session_id, at: this.#io.at(), turn_id: this.#io.turnId } as const;
    try {
      await this.#io.persist([{ ...saved, activity_id: this.#activityId, card_id: this.#cardId, card: this.#card }]);
    } finally {
      // A card a full session file refused (the run then stops) still ends live: the terminal snapshot is critical.
      await this.#send("terminal");
    }
  }

  /**
   * Updates a running command's card with its output so far, at most every
   * {@link SHELL_UPDATE_MS} while it grows. An update still waiting for room
   * in the run's channel is not followed by another: the next tick sends the
   * latest output, so updates coalesce under pressure.
   */
  #watch(): void {
    const facts = this.#facts;
    if (facts?.kind !== "shell") return;
    const tick = () => {
      this.#timer = this.#runtime.setTimer(SHELL_UPDATE_MS, tick);
      if (this.#inFlight !== null) return;
      const output = facts.outputSoFar();
      if (output === null || output.totalBytes === this.#shownBytes) return;
      this.#shownBytes = output.totalBytes;
      this.#card = runningCard(this.#card, output, this.#io.secrets);
      // A failed delivery fails the run's channel for good: the call's own events report it.
      this.#inFlight = this.#send("update").catch(() => {}).finally(() => (this.#inFlight = null));
    };
    this.#timer = this.#runtime.setTimer(SHELL_UPDATE_MS, tick);
  }

  #stopWatching(): void {
    this.#timer?.dispose();
    this.#timer = null;
  }

  async #send(stage: CardStage): Promise<void> {
    this.#card = fitCard(this.#card);
    this.#revision++;
    await this.#io.emit({
      event: "tool.card",
      data: { ...this.#io.scope, card_id: this.#cardId, activity_id: this.#activityId, stage, revision: this.#revision, card: this.#card },
    });
  }
}
