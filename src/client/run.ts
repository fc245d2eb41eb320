/**
 * One turn as a client sees it, assembled from its events: each assistant
 * message's streamed text, replaced (never appended to) by its authoritative
 * reconciliation once the last part arrived; the latest state of each
 * activity; the pending approvals with an `answer(allow)` helper; and one
 * promise that resolves exactly once, at `run.finished`. Rules that cannot
 * hold in a correct stream (a delta part going backwards, reconcile parts out
 * of order, an event after the terminal one) are protocol violations, which
 * the client fails closed on.
 *
 * @module
 */

import type { EventData, WireEvent } from "../protocol/events.ts";
import { ErrorCode } from "../protocol/errors.ts";
import { ProtocolError } from "./errors.ts";
import { type Approval, type ApprovalResolution, type ApprovalScope, RunApprovals } from "./approvals.ts";

export { type Approval, type ApprovalResolution, type ApprovalScope, negotiatedBy } from "./approvals.ts";

/** One assistant message of a run, as far as it arrived. */
export interface RunMessage {
  /** The run-scoped message id (`a1`, `a2`, … today; opaque). */
  readonly messageId: string;
  /** The reconciled text once `complete`, else the streamed deltas so far. */
  readonly text: string;
  /** True once every reconcile part arrived: `text` is then authoritative. */
  readonly complete: boolean;
  /** The reconciliation says the message was cut (cancellation, failure, content bound). */
  readonly partial: boolean;
  /** A delta part was skipped (dropped under pressure): streamed text is incomplete until reconciled. */
  readonly gap: boolean;
}

/** What the client hands a run so it can answer approvals and cancel. */
export interface RunPort {
  answer(runId: string, approvalId: string, allow: boolean, scope: ApprovalScope): Promise<unknown>;
  cancel(runId: string): Promise<unknown>;
}

/** Callbacks a caller registers when starting a turn; they see events in order, before any promise continuation. */
export interface RunHandlers {
  /** Every event of the run, already validated, after the run's state was updated. */
  readonly onEvent?: (event: WireEvent, run: Run) => void;
  /** Each approval request; without this handler approvals wait in {@link Run.approvals} (and expire if unanswered). */
  readonly onApproval?: (approval: Approval, run: Run) => void;
}

interface MessageState {
  messageId: string;
  streamed: string;
  nextDelta: number;
  gap: boolean;
  parts: string[];
  reconciled: string | null;
  partial: boolean;
}

/** The data of `run.finished`. */
export type RunFinished = EventData<"run.finished">;

/** The data of `run.usage` (negotiated). */
export type RunUsage = EventData<"run.usage">;

/** The latest snapshot of one tool call's card (`tool.cards`, negotiated). */
export type RunCard = EventData<"tool.card">;

/** One admitted run. Created by the client when `turn.start` is answered, before its first event is read. */
export class Run {
  readonly sessionId: string;
  readonly runId: string;
  /** Resolves once, with `run.finished`'s data; rejects if the connection ends or breaks first. */
  readonly finished: Promise<RunFinished>;
  readonly #messages = new Map<string, MessageState>();
  readonly #activities = new Map<string, EventData<"activity">>();
  readonly #approvals = new RunApprovals();
  readonly #port: RunPort;
  readonly #handlers: RunHandlers;
  #settle!: { resolve(data: RunFinished): void; reject(reason: unknown): void };
  #result: RunFinished | null = null;
  #persisted: EventData<"input.persisted"> | null = null;
  #usage: RunUsage | null = null;
  readonly #cards = new Map<string, RunCard>();

  /** Creates the run `runId` of `sessionId`; `port` sends its answers and cancellation. */
  constructor(sessionId: string, runId: string, port: RunPort, handlers: RunHandlers = {}) {
    this.sessionId = sessionId;
    this.runId = runId;
    this.#port = port;
    this.#handlers = handlers;
    this.finished = new Promise((resolve, reject) => (this.#settle = { resolve, reject }));
    // A caller that only reads state must not see an unhandled rejection when the connection drops.
    this.finished.catch(() => {});
  }

  /** The assistant messages so far, in order of their first event. */
  get messages(): ReadonlyMap<string, RunMessage> {
    return new Map([...this.#messages].map(([id, state]) => [id, view(state)]));
  }

  /** The latest `activity` event's data per activity id. */
  get activities(): ReadonlyMap<string, EventData<"activity">> {
    return this.#activities;
  }

  /** Approvals requested and not yet answered through {@link Approval.answer}. */
  get approvals(): ReadonlyMap<string, Approval> {
    return this.#approvals.pending;
  }

  /**
   * How each approval of this run ended, by approval id, once its
   * `approval.resolved` arrived (only with `approval.scope`), else null.
   */
  get resolutions(): ReadonlyMap<string, ApprovalResolution | null> {
    return this.#approvals.resolutions;
  }

  /** `input.persisted`'s data once the prompt is durable (from then on the session id may be saved), else null. */
  get persisted(): EventData<"input.persisted"> | null {
    return this.#persisted;
  }

  /**
   * `run.usage`'s data once it arrived, else null: only a client that
   * required `run.usage` gets it, once per run that reached a provider.
   */
  get usage(): RunUsage | null {
    return this.#usage;
  }

  /** Each tool call's card as of its latest snapshot, by `card_id` (only a client that required `tool.cards` gets any). */
  get cards(): ReadonlyMap<string, RunCard> {
    return this.#cards;
  }

  /** `run.finished`'s data once it arrived, else null. */
  get result(): RunFinished | null {
    return this.#result;
  }

  /** The reconciled texts of the complete messages, joined by blank lines: the answer as history will hold it. */
  text(): string {
    return [...this.#messages.values()].filter((m) => m.reconciled !== null).map((m) => m.reconciled).join("\n\n");
  }

  /** Sends `turn.cancel`; resolves when it is acknowledged or the run had already ended. Still wait for {@link finished}. */
  async cancel(): Promise<void> {
    try {
      await this.#port.cancel(this.runId);
    } catch (error) {
      if (!(error instanceof ProtocolError && error.code === ErrorCode.staleRun)) throw error;
    }
  }

  /** Applies one event of this run; returns what was wrong with it, or null. Called by the client only. */
  accept(event: WireEvent): string | null {
    if (this.#result !== null) return `${event.event} after run.finished`;
    const problem = this.#apply(event);
    if (problem !== null) return problem;
    const { onEvent, onApproval } = this.#handlers;
    if (onEvent !== undefined) callOut(() => onEvent(event, this));
    if (event.event === "approval.requested" && onApproval !== undefined) {
      const approval = this.#approvals.pending.get(event.data.approval_id)!;
      callOut(() => onApproval(approval, this));
    }
    if (event.event === "run.finished") this.#settle.resolve(event.data);
    return null;
  }

  /** Ends the run without its terminal event: the connection is gone. */
  abandon(reason: unknown): void {
    if (this.#result === null) this.#settle.reject(reason);
  }

  #apply(event: WireEvent): string | null {
    switch (event.event) {
      case "input.persisted":
        this.#persisted = event.data;
        return null;
      case "message.delta":
        return this.#delta(event.data);
      case "message.reconcile":
        return this.#reconcile(event.data);
      case "activity":
        this.#activities.set(event.data.activity_id, event.data);
        return null;
      case "approval.requested":
        return this.#approvals.requested(event.data, (approvalId, allow, scope) => this.#port.answer(this.runId, approvalId, allow, scope));
      case "approval.resolved":
        return this.#approvals.resolved(event.data);
      case "diagnostic":
        return null;
      case "run.usage":
        if (this.#usage !== null) return "run.usage repeated";
        this.#usage = event.data;
        return null;
      case "client.tool.call":
      case "client.tool.cancel":
        // The client routes them to its handlers (client.ts); they change nothing a run assembles.
        return null;
      case "tool.card":
        return this.#card(event.data);
      case "run.finished": {
        // A violating terminal leaves the run unsettled, so the failing connection rejects it.
        const problem = this.#approvals.finished();
        if (problem === null) this.#result = event.data;
        return problem;
      }
    }
  }

  /** Keeps a newer snapshot; a card's revisions rise (gaps allowed) and nothing follows its terminal one. */
  #card(data: RunCard): string | null {
    const known = this.#cards.get(data.card_id);
    if (known?.stage === "terminal") return "tool.card after its terminal snapshot";
    if (known !== undefined && (data.revision <= known.revision || data.activity_id !== known.activity_id)) return "tool.card out of order";
    this.#cards.set(data.card_id, data);
    return null;
  }

  #message(messageId: string): MessageState {
    let state = this.#messages.get(messageId);
    if (state === undefined) {
      state = { messageId, streamed: "", nextDelta: 0, gap: false, parts: [], reconciled: null, partial: false };
      this.#messages.set(messageId, state);
    }
    return state;
  }

  #delta(data: EventData<"message.delta">): string | null {
    const state = this.#message(data.message_id);
    if (state.reconciled !== null) return "message.delta after the message was reconciled";
    // A skipped part is text dropped under pressure that reconciliation repairs; going back is a broken stream.
    if (data.part < state.nextDelta) return "message.delta part went backwards";
    if (data.part > state.nextDelta) state.gap = true;
    state.nextDelta = data.part + 1;
    state.streamed += data.text;
    return null;
  }

  #reconcile(data: EventData<"message.reconcile">): string | null {
    const state = this.#message(data.message_id);
    if (state.reconciled !== null) return "message.reconcile after the message was complete";
    // Authoritative parts are never dropped, so they arrive contiguous from 0.
    if (data.part !== state.parts.length) return "message.reconcile parts out of order";
    state.parts.push(data.text);
    if (!data.last_part) return null;
    // Replace, never append: the reconciled text supersedes everything streamed.
    state.reconciled = state.parts.join("");
    state.parts = [];
    state.partial = data.partial;
    return null;
  }
}

/**
 * Runs a caller's handler inside the read loop: a handler that throws is the
 * caller's bug, not the server's, so it must neither stop reading (a stalled
 * reader makes the child exit) nor be swallowed; it is rethrown on its own.
 */
function callOut(handler: () => void): void {
  try {
    handler();
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}

function view(state: MessageState): RunMessage {
  const complete = state.reconciled !== null;
  return {
    messageId: state.messageId,
    text: state.reconciled ?? state.streamed,
    complete,
    partial: state.partial,
    gap: state.gap && !complete,
  };
}
