/**
 * The turn worker: admission of `turn.start`, `turn.cancel` and
 * `approval.answer`, and ownership of the one active run.
 *
 * Admission is synchronous, so two `turn.start` requests in one read batch
 * cannot both pass the `busy` check, and the admission response is enqueued
 * before the run (which starts on a later tick) can emit anything. The run
 * module itself (provider clients, tools) is loaded on first use, or warmed
 * in the background once the workers have loaded (see {@link TurnWorker.warm}).
 *
 * The worker owns terminal delivery: it offers the run's `run.finished` and
 * releases the run once that event is handed to the writer. Should the
 * channel give up on it (no room within the critical wait), the client can
 * never learn the run ended, which is the spec's output failure: the worker
 * releases the run anyway and closes the connection (exit 1), so `status`
 * never says `running` for a run that is over.
 *
 * @module
 */

import { ErrorCode } from "../../protocol/errors.ts";
import type { ApprovalAnswerParams, TurnCancelParams, TurnStartParams } from "../../protocol/schemas.ts";
import type { Runtime } from "../../host/runtime.ts";
import type { SessionStore } from "../../store/sessions.ts";
import { deferred } from "../../util/async.ts";
import { uuid7 } from "../../util/uuid7.ts";
import { ApprovalBroker } from "../../runner/approvals.ts";
import type { SessionGrants } from "../../grants/session-grants.ts";
import { RunEventChannel, type RunEventSink } from "../../runner/event-channel.ts";
import type { TerminalEvent } from "../../runner/run-events.ts";
import type { WorkerReplies } from "../../protocol/replies.ts";
import type { MethodResult } from "../../protocol/results.ts";
import type { RunConfig } from "../../runner/run-config.ts";
import type { RunJournal } from "../../runner/journal-port.ts";
import type { SessionRecord } from "../../store/records.ts";
import type { SessionTitles } from "./session-titles.ts";

/** What the worker needs from its connection. */
export interface TurnHost {
  /** The runtime (ids, timers). */
  readonly runtime: Runtime;
  /** The session store the session worker also uses. */
  readonly store: SessionStore;
  /** Whether a session or history operation is running. */
  sessionsBusy(): boolean;
  readonly replies: WorkerReplies;
  /** Where run events go (the ordered writer, leaving room for responses). */
  readonly sink: RunEventSink;
  /** The configuration of the next run (the current selection applied), read when the run starts. */
  readonly config: RunConfig;
  /**
   * Checked after admission and before anything is appended or sent: a
   * refusal fails the run `not_started` with its code, and `after` runs once
   * that terminal event is on its way.
   */
  beforeRun?(signal: AbortSignal): Promise<{ readonly code: ErrorCode; readonly after: () => void } | null>;
  /** Closes the connection as an output failure (exit 1): a run's terminal event could not be delivered. */
  outputFailed(): void;
  /** Whether the client negotiated `run.usage` (runs then report their usage); default false. */
  readonly reportUsage?: boolean;
  /** The child's session grants when the client negotiated `approval.scope`; absent: every answer is for one call. */
  readonly grants?: SessionGrants;
  /** Whether the client negotiated `tool.cards` (runs then send and keep cards); default false. */
  readonly toolCards?: boolean;
  /** Session titling, told about each run once its terminal event is on its way; cancelled and awaited on close. */
  readonly titles?: SessionTitles;
}

interface ActiveRun {
  readonly sessionId: string;
  readonly runId: string;
  readonly abort: AbortController;
  readonly broker: ApprovalBroker;
  readonly done: Promise<void>;
}

type RunModule = typeof import("../../runner/run.ts");

/** Owns at most one run at a time. */
export class TurnWorker {
  readonly #host: TurnHost;
  #active: ActiveRun | null = null;
  #module: Promise<RunModule> | null = null;

  constructor(host: TurnHost) {
    this.#host = host;
  }

  /** The active run's id until its terminal event was handed to the writer, else null. */
  get runId(): string | null {
    return this.#active?.runId ?? null;
  }

  /** Loads the run module (providers, tools) ahead of the first turn. */
  warm(): Promise<RunModule> {
    this.#module ??= import("../../runner/run.ts");
    return this.#module;
  }

  /** `turn.start`: admits or refuses at once; the run proceeds off the protocol loop. */
  start(id: string, params: TurnStartParams): void {
    const { replies, store, runtime } = this.#host;
    if (this.#host.sessionsBusy()) return replies.error(id, ErrorCode.busy);
    const refusal = store.turnRefusal(params.session_id);
    if (refusal !== null) return replies.error(id, refusal);
    if (this.#active !== null) return replies.error(id, ErrorCode.busy);

    const runId = runtime.randomUUID();
    const turnId = uuid7(runtime.wallNow(), runtime.randomUUID());
    const abort = new AbortController();
    const grants = this.#host.grants;
    const broker = new ApprovalBroker(runtime, grants === undefined ? null : { grants, sessionId: params.session_id });
    // What the run stored, kept for titling: the journal forgets it once closed.
    let stored: readonly SessionRecord[] = [];
    const handedOff = deferred<void>();
    const release = () => {
      if (this.#active?.runId === runId) this.#active = null;
      handedOff.resolve();
    };
    const channel = new RunEventChannel({
      sink: {
        room: () => this.#host.sink.room(),
        whenRoom: () => this.#host.sink.whenRoom(),
        send: (event) => {
          this.#host.sink.send(event);
          // The run stays active (status `running`, other work `busy`) until its terminal
          // event is on its way to the client, which is after its cleanup.
          if (event.event === "run.finished") release();
        },
      },
      setTimer: (ms, callback) => runtime.setTimer(ms, callback),
      scope: { session_id: params.session_id, run_id: runId },
      deltaHoldMs: runtime.stdout.batchMs ?? 0,
    });
    const terminal = (error_code: ErrorCode): TerminalEvent => ({
      event: "run.finished",
      data: { session_id: params.session_id, run_id: runId, outcome: "failed", persistence: "not_started", revision: null, error_code },
    });
    const run = this.warm().then(
      async (module) => {
        const refused = (await this.#host.beforeRun?.(abort.signal)) ?? null;
        if (refused !== null) {
          void handedOff.promise.then(refused.after);
          return terminal(refused.code);
        }
        // A title append in flight finishes first: the turn's journal starts from the file it leaves.
        await this.#host.titles?.quiet();
        const start = store.beginTurn();
        // The store's turn bound to the runner's port: the run never sees the store or its journal class.
        const journal: RunJournal = {
          conversation: start.conversation,
          inputMessageId: start.inputMessageId,
          sessionTokens: { input: start.metadata.inputTokens, output: start.metadata.outputTokens },
          appendInput: (records) => start.journal.appendInput(records),
          append: (records) => start.journal.append(records),
          inputRevision: () => store.inputRevision(turnId),
          complete: (durable) => {
            stored = start.journal.writes?.records ?? [];
            return store.completeTurn(start.journal, durable);
          },
        };
        return await module.executeRun(this.#host.config, {
          sessionId: params.session_id,
          runId,
          turnId,
          prompt: params.prompt,
          journal,
          channel,
          broker,
          signal: abort.signal,
          reportUsage: this.#host.reportUsage ?? false,
          toolCards: this.#host.toolCards ?? false,
        });
      },
      // The run module could not load: nothing was appended and no lease taken.
      () => terminal(ErrorCode.executionFailed),
    );
    // executeRun never throws; this is a last guard, so the client still learns the run ended.
    const done = run.catch(() => terminal(ErrorCode.executionFailed))
      .then(async (event) => {
        const delivered = await channel.finish(event);
        if (!delivered.ok) {
          release();
          return this.#host.outputFailed();
        }
        await handedOff.promise;
        this.#host.titles?.afterRun({ sessionId: params.session_id, finished: event.data, records: stored });
      });
    this.#active = { sessionId: params.session_id, runId, abort, broker, done };
    replies.result(id, { run_id: runId, accepted: true } satisfies MethodResult<"turn.start">);
  }

  /** `turn.cancel`: idempotent for the active run; anything else is `stale_run`. */
  cancel(id: string, params: TurnCancelParams): void {
    const { replies } = this.#host;
    const active = this.#activeFor(id, params, ErrorCode.staleRun);
    if (active === null) return;
    active.abort.abort();
    active.broker.cancel("cancelled");
    replies.result(id, { cancellation_requested: true } satisfies MethodResult<"turn.cancel">);
  }

  /** `approval.answer`: the first reply for a pending approval of the active run wins. */
  answer(id: string, params: ApprovalAnswerParams): void {
    const { replies } = this.#host;
    const active = this.#activeFor(id, params, ErrorCode.staleApproval);
    if (active === null) return;
    const answered = active.broker.answer(params.approval_id, params.allow, params.scope);
    if (!answered.ok) return replies.error(id, answered.code);
    replies.result(id, { recorded: true } satisfies MethodResult<"approval.answer">);
  }

  /**
   * The active run `params` name, or null after answering request `id` with
   * `session_missing` (nothing attached) or `stale`: the spec gives
   * `stale_run` / `stale_approval` for any wrong identity, another session's
   * included (`stale_session` is `turn.start`'s).
   */
  #activeFor(id: string, params: { readonly session_id: string; readonly run_id: string }, stale: ErrorCode): ActiveRun | null {
    // Only identity matters here: a stale attachment still owns its run until the run ends.
    const attached = this.#host.store.sessionId;
    const active = this.#active;
    if (attached === params.session_id && active !== null && active.runId === params.run_id && active.sessionId === params.session_id) return active;
    this.#host.replies.error(id, attached === null ? ErrorCode.sessionMissing : stale);
    return null;
  }

  /** Cancels the active run because the connection is closing; its approvals are denied as disconnected. */
  cancelForClose(): void {
    this.#host.titles?.cancel();
    const active = this.#active;
    if (active === null) return;
    active.broker.cancel("disconnected");
    active.abort.abort();
  }

  /** Resolves once the run active now (if any) ended: its cleanup finished and its terminal event was handed to the writer. */
  async runEnded(): Promise<void> {
    await this.#active?.done;
  }

  /** Resolves once no run is active and titling has stopped: what closing waits for before the leases go. */
  async idle(): Promise<void> {
    await this.#active?.done;
    await this.#host.titles?.idle();
  }
}
