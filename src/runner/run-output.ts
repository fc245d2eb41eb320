/**
 * What one run does to the outside world besides calling the provider and
 * tools: critical events to the client, records to the turn's journal
 * (`journal-port.ts`), and diagnostics to both, each with its failure
 * policy (an undelivered event or input append stops the run, a later
 * append only degrades it). It keeps the run's persistence state, so the
 * terminal event can say truthfully whether history is durable.
 *
 * @module
 */

import { DiagnosticCode, ErrorCode } from "../protocol/errors.ts";
import type { SessionRecord } from "../store/records.ts";
import type { StepChannel } from "./event-channel.ts";
import type { RunJournal } from "./journal-port.ts";
import type { CriticalEvent, RunScope } from "./run-events.ts";

/** How a run ended, as `run.finished` reports it. */
export type RunOutcome = "completed" | "cancelled" | "failed";

/**
 * Unwinds the run loop to its cleanup: thrown by the helpers below and the
 * loop itself, caught once in `executeRun`. Never escapes a run.
 */
export class RunStop extends Error {
  /** The outcome to report. */
  readonly outcome: RunOutcome;
  /** The wire error code, or null for a cancellation. */
  readonly code: ErrorCode | null;

  /** Creates a stop with `outcome` and `code`. */
  constructor(outcome: RunOutcome, code: ErrorCode | null) {
    super(`Run stopped: ${outcome}`);
    this.name = "RunStop";
    this.outcome = outcome;
    this.code = code;
  }
}

/** The fixed, safe summary of each diagnostic code a run emits. */
const DIAGNOSTIC_TEXT: Readonly<Record<DiagnosticCode, string>> = {
  [DiagnosticCode.providerAuth]: "The provider refused the credentials (HTTP 401/403). Check the API key.",
  [DiagnosticCode.providerRateLimited]: "The provider is rate limiting requests (HTTP 429). Try again later.",
  [DiagnosticCode.providerServerError]: "The provider failed with a server error (HTTP 5xx).",
  [DiagnosticCode.providerBadRequest]: "The provider refused the request (HTTP 400/404/413/422). Check the model name.",
  [DiagnosticCode.providerHttpError]: "The provider answered with an unexpected HTTP status.",
  [DiagnosticCode.providerUnreachable]: "The provider could not be reached. Check the base URL and the network.",
  [DiagnosticCode.providerStreamTruncated]: "The provider's stream ended before the reply was complete.",
  [DiagnosticCode.providerStreamMalformed]: "The provider's stream could not be understood.",
  [DiagnosticCode.providerStreamError]: "The provider reported an error while streaming the reply.",
  [DiagnosticCode.providerConnectionLost]: "The connection to the provider was lost during the reply.",
  [DiagnosticCode.outputTokenLimit]: "The reply reached the output token limit and may be cut short.",
  [DiagnosticCode.contentFiltered]: "The provider's content filter stopped the reply.",
  [DiagnosticCode.stepLimit]: "The turn reached its limit of model requests before the model finished.",
  [DiagnosticCode.activityLimit]: "The turn reached its limit of tool activities.",
  [DiagnosticCode.persistenceDegraded]: "Saving this turn's history failed; what follows is not durable.",
  [DiagnosticCode.historyUnavailable]: "The saved history cannot be paged: it could not be read back (reopen the session) or it is over the snapshot budget (8 MiB, 10,000 parts).",
  [DiagnosticCode.sessionFull]: "This session's history is full (64 MiB or 100,000 lines); start a new session to continue.",
  [DiagnosticCode.compactionFailed]: "Compacting the conversation failed; the turn goes on without it while the conversation still fits.",
  [DiagnosticCode.compactionStopped]: "Compaction failed 3 times in a row; this turn stops trying to compact.",
  [DiagnosticCode.contextFull]: "The conversation no longer fits the model's context window, even after compaction. Start a new session or choose a model with a larger window.",
  [DiagnosticCode.mcpServerStopped]: "An MCP server stopped; its tools fail until magi-code is restarted.",
  [DiagnosticCode.mcpToolsUnchanged]: "An MCP server's changed tool list could not be read; its previous tools stay offered.",
  [DiagnosticCode.hookFailed]: "A hook failed; it was ignored.",
  [DiagnosticCode.hookBlockedPrompt]: "A UserPromptSubmit hook blocked this prompt; it is saved, but the model was not asked.",
};

/** Events, records and diagnostics of one run. */
export class RunIO {
  /** The run's scope, stamped on every event. */
  readonly scope: RunScope;
  /** The turn id stored records carry. */
  readonly turnId: string;
  /** Known secret values, redacted from everything the run shows or stores. */
  readonly secrets: readonly string[];
  readonly #channel: StepChannel;
  readonly #journal: RunJournal;
  readonly #now: () => number;
  #durable = false;
  #degraded = false;
  #full = false;

  /** Creates the run's I/O. */
  constructor(options: {
    readonly scope: RunScope;
    readonly turnId: string;
    readonly secrets: readonly string[];
    readonly channel: StepChannel;
    readonly journal: RunJournal;
    readonly wallNow: () => number;
  }) {
    this.scope = options.scope;
    this.turnId = options.turnId;
    this.secrets = options.secrets;
    this.#channel = options.channel;
    this.#journal = options.journal;
    this.#now = options.wallNow;
  }

  /** Whether the input append succeeded. */
  get inputDurable(): boolean {
    return this.#durable;
  }

  /** `durable`, `degraded` (a later append failed) or `not_started` (the input never became durable). */
  get persistence(): "durable" | "degraded" | "not_started" {
    return !this.#durable ? "not_started" : this.#degraded ? "degraded" : "durable";
  }

  /** A record timestamp for now. */
  at(): string {
    return new Date(this.#now()).toISOString();
  }

  /**
   * Appends the turn's opening records; a failure stops the run with
   * `persistence_failed`, or `content_limit` (shown as `session_full`, which
   * nothing can store) when the session file is full.
   */
  async persistInput(records: readonly SessionRecord[]): Promise<void> {
    const appended = await this.#journal.appendInput(records);
    if (appended.ok) {
      this.#durable = true;
      return;
    }
    if (appended.code !== ErrorCode.contentLimit) throw new RunStop("failed", ErrorCode.persistenceFailed);
    await this.notify(DiagnosticCode.sessionFull);
    throw new RunStop("failed", ErrorCode.contentLimit);
  }

  /**
   * Appends `records`. A failure degrades the run's persistence (reported
   * once, as a diagnostic) but does not stop it: the reply is still useful.
   * A full session file is different: nothing was written, so the run stops
   * with `content_limit` before doing more it could not store.
   */
  async persist(records: readonly SessionRecord[]): Promise<void> {
    if (!this.#durable || this.#degraded || records.length === 0) return;
    const appended = await this.#journal.append(records);
    if (appended.ok) return;
    this.#degraded = true;
    if (appended.code !== ErrorCode.contentLimit) return await this.diagnostic(DiagnosticCode.persistenceDegraded);
    this.#full = true;
    await this.notify(DiagnosticCode.sessionFull);
    throw new RunStop("failed", ErrorCode.contentLimit);
  }

  /**
   * Appends the records that close the turn. After a full session refused
   * an append the file is still whole, so they go out too (the appender
   * keeps room for them), led by the `session_full` diagnostic, so a reopen
   * shows why the turn stopped.
   */
  async persistClosing(records: readonly SessionRecord[]): Promise<void> {
    if (!this.#full) return await this.persist(records);
    const summary = DIAGNOSTIC_TEXT[DiagnosticCode.sessionFull];
    const diagnostic = { v: 1 as const, type: "diagnostic" as const, session_id: this.scope.session_id, at: this.at(), turn_id: this.turnId };
    await this.#journal.append([{ ...diagnostic, code: DiagnosticCode.sessionFull, summary }, ...records]);
  }

  /**
   * Emits a critical event; stops the run with `output_unavailable` when it
   * cannot be delivered. `sent` runs when the event is handed to the writer.
   */
  async emit(event: CriticalEvent, sent?: () => void): Promise<void> {
    const result = await this.#channel.critical(event, sent);
    if (!result.ok) throw new RunStop("failed", ErrorCode.outputUnavailable);
  }

  /** Emits a `diagnostic` event and records it in history (unless persistence already failed). */
  async diagnostic(code: DiagnosticCode, summary: string = DIAGNOSTIC_TEXT[code]): Promise<void> {
    await this.persist([{ v: 1, type: "diagnostic", session_id: this.scope.session_id, at: this.at(), turn_id: this.turnId, code, summary }]);
    await this.notify(code, summary);
  }

  /** Emits a `diagnostic` event without recording it. */
  async notify(code: DiagnosticCode, summary: string = DIAGNOSTIC_TEXT[code]): Promise<void> {
    await this.emit({ event: "diagnostic", data: { ...this.scope, code, summary } });
  }
}
