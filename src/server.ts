/**
 * One protocol connection over the runtime's stdin and stdout: read frames,
 * admit requests, answer them through the ordered writer, and close along one
 * of the documented paths (`docs/protocol.md#closing`).
 *
 * @module
 */

import { Dispatcher, method } from "./protocol/dispatcher.ts";
import { readEnvelope } from "./protocol/envelope.ts";
import { type ErrorCode, ErrorCode as Codes } from "./protocol/errors.ts";
import { FrameEncoder, type OutputValue } from "./protocol/frames.ts";
import { parseFrame } from "./protocol/json.ts";
import { IdLedger } from "./protocol/ledger.ts";
import { LIMITS } from "./protocol/limits.ts";
import {
  ApprovalAnswerParamsSchema,
  EmptyParamsSchema,
  type HistoryPageParams,
  HistoryPageParamsSchema,
  type InitializeParams,
  InitializeParamsSchema,
  SessionOpenParamsSchema,
  TurnCancelParamsSchema,
  TurnStartParamsSchema,
} from "./protocol/schemas.ts";
import type { Runtime } from "./host/runtime.ts";
import type { TurnWorker } from "./operations/turns/turn-worker.ts";
import { Lifecycle } from "./admission/lifecycle.ts";
import { runStartup, type StartupOutcome } from "./admission/startup.ts";
import type { SessionTask, SessionWorker } from "./operations/sessions/session-worker.ts";
import { LineFramer } from "./transport/line-reader.ts";
import { OrderedWriter } from "./transport/writer.ts";
import { deferred, settlesWithin } from "./util/async.ts";
import { createWorkers } from "./operations/ready-workers.ts";
import type { WorkerReplies } from "./protocol/replies.ts";

/** Why a connection closes; decides draining and the exit code. */
export type CloseReason = "eof" | "shutdown" | "protocol" | "transport";

/** A served connection. */
export interface Server {
  /** Serves until the connection closes; resolves with the process exit code. */
  serve(): Promise<number>;
}

/** Creates a server for `runtime`'s stdio. */
export function createServer(runtime: Runtime): Server {
  return { serve: () => new Connection(runtime).serve() };
}

function isBlank(bytes: Uint8Array): boolean {
  for (const byte of bytes) {
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  }
  return true;
}

/** Pending output frames at which the read loop waits for the writer (half the bound). */
const FLOW_CONTROL_PENDING = LIMITS.pending_output_frames / 2;

const STARTUP_CRASHED: StartupOutcome = { ok: false, code: Codes.startupFailed, contextId: null };

class Connection {
  readonly #runtime: Runtime;
  readonly #encoder: FrameEncoder;
  readonly #writer: OrderedWriter;
  readonly #ledger = new IdLedger(LIMITS.request_ids);
  readonly #framer = new LineFramer(LIMITS.input_frame_bytes);
  readonly #lifecycle = new Lifecycle();
  readonly #dispatcher: Dispatcher;
  readonly #reply: WorkerReplies;
  readonly #cleanups = new Set<Promise<unknown>>();
  readonly #exit = deferred<number>();
  #closing = false;
  #pendingInitialize: string | null = null;
  #sessions: SessionWorker | null = null;
  #turns: TurnWorker | null = null;

  constructor(runtime: Runtime) {
    this.#runtime = runtime;
    this.#encoder = new FrameEncoder(runtime.randomUUID(), LIMITS.output_frame_bytes);
    this.#writer = new OrderedWriter(
      runtime.stdout,
      runtime,
      { maxPending: LIMITS.pending_output_frames, deadlineMs: LIMITS.output_deadline_ms },
      () => this.#close("transport"),
    );
    const reply: WorkerReplies = {
      result: (id: string, result: OutputValue) => this.#send(() => this.#encoder.result(id, result)),
      error: (id: string, code: ErrorCode) => this.#send(() => this.#encoder.error(id, code)),
    };
    this.#dispatcher = new Dispatcher(
      new Map([
        ["initialize", method(InitializeParamsSchema, (id, params) => this.#initialize(id, params))],
        ["status", method(EmptyParamsSchema, (id) => this.#status(id))],
        ["shutdown", method(EmptyParamsSchema, (id) => this.#shutdown(id))],
        ["session.create", method(EmptyParamsSchema, (id) => this.#session(id, (store) => store.create()))],
        [
          "session.open",
          method(SessionOpenParamsSchema, (id, params) =>
            this.#session(id, (store, signal) => store.open(params.session_id, signal))),
        ],
        [
          "history.page",
          method(HistoryPageParamsSchema, (id, params: HistoryPageParams) =>
            this.#session(id, (store) => store.page(params.session_id, params.revision, params.cursor ?? null))),
        ],
        ["turn.start", method(TurnStartParamsSchema, (id, params) => this.#turn(id, (turns) => turns.start(id, params)))],
        ["turn.cancel", method(TurnCancelParamsSchema, (id, params) => this.#turn(id, (turns) => turns.cancel(id, params)))],
        [
          "approval.answer",
          method(ApprovalAnswerParamsSchema, (id, params) => this.#turn(id, (turns) => turns.answer(id, params))),
        ],
      ]),
      reply.error,
    );
    this.#reply = reply;
  }

  serve(): Promise<number> {
    void this.#readLoop();
    return this.#exit.promise;
  }

  #send(encode: () => Uint8Array): void {
    let bytes: Uint8Array;
    try {
      bytes = encode();
    } catch {
      // An unencodable frame is a backend bug; dropping it silently would break the contract.
      this.#close("transport");
      return;
    }
    this.#writer.enqueue(bytes);
  }

  #sendError(id: string | null, code: ErrorCode): void {
    this.#send(() => this.#encoder.error(id, code));
  }

  async #readLoop(): Promise<void> {
    const stdin = this.#runtime.stdin;
    const framer = this.#framer;
    while (!this.#closing) {
      let chunk: Uint8Array | null;
      try {
        chunk = await stdin.read();
      } catch {
        this.#close("transport");
        return;
      }
      if (this.#closing) return;
      if (chunk === null) {
        if (framer.hasPartial) this.#sendError(null, Codes.incompleteFrame);
        this.#close("eof");
        return;
      }
      framer.feed(chunk);
      // Answers to one read batch leave in one write call.
      this.#writer.cork();
      for (let event = framer.next(); event !== null && !this.#closing; event = framer.next()) {
        if (event.kind === "too_large") {
          this.#sendError(null, Codes.frameTooLarge);
          this.#writer.uncork();
          this.#close("protocol");
          return;
        }
        this.#handleFrame(event.bytes);
        // Flow control for pipelining clients: let output catch up before answering more. A reader
        // that has stopped still meets the output deadline, so this cannot hang the child.
        if (this.#writer.pending >= FLOW_CONTROL_PENDING) {
          this.#writer.uncork();
          await this.#writer.whenPendingBelow(FLOW_CONTROL_PENDING);
          this.#writer.cork();
        }
      }
      this.#writer.uncork();
    }
  }

  #handleFrame(bytes: Uint8Array): void {
    if (isBlank(bytes)) return this.#sendError(null, Codes.invalidFrame);
    const envelope = readEnvelope(parseFrame(bytes, LIMITS.json_depth), this.#ledger);
    if (!envelope.ok) {
      this.#sendError(envelope.rejection.id, envelope.rejection.code);
      if (envelope.rejection.close) this.#close("protocol");
      return;
    }
    this.#dispatcher.dispatch(envelope.request);
  }

  #initialize(id: string, params: InitializeParams): void {
    if (this.#lifecycle.phase.kind !== "new") return this.#sendError(id, Codes.alreadyInitialized);
    const offered = new Set(this.#dispatcher.methods);
    if (!params.required_capabilities.every((name) => offered.has(name))) {
      return this.#sendError(id, Codes.unsupportedCapability);
    }
    const abort = this.#lifecycle.begin();
    this.#pendingInitialize = id;
    const task = runStartup(this.#runtime, abort.signal).catch(() => STARTUP_CRASHED);
    this.#track(task);
    void task.then((outcome) => {
      if (this.#pendingInitialize !== id) return;
      this.#pendingInitialize = null;
      this.#lifecycle.settle(outcome);
      if (!outcome.ok) return this.#sendError(id, outcome.code);
      const workers = createWorkers({
        runtime: this.#runtime,
        instanceId: this.#encoder.instanceId,
        replies: this.#reply,
        writer: this.#writer,
        sendEvent: (event) => this.#send(() => this.#encoder.event(event.event, event.data)),
      }, outcome.snapshot);
      this.#sessions = workers.sessions;
      this.#turns = workers.turns;
      this.#send(() =>
        this.#encoder.result(id, {
          capabilities: this.#dispatcher.methods,
          limits: LIMITS,
          status: this.#lifecycle.status(),
        })
      );
      // Warm-up: the first turn should not pay for loading the provider clients and tools.
      void this.#turns?.warm().catch(() => {});
    });
  }

  #status(id: string): void {
    if (this.#lifecycle.phase.kind === "new") return this.#sendError(id, Codes.notInitialized);
    const status = this.#lifecycle.status();
    const sessionId = this.#sessions?.sessionId ?? null;
    const runId = this.#turns?.runId ?? null;
    if (sessionId === null && runId === null) return this.#send(() => this.#encoder.result(id, status));
    const running = runId === null ? {} : { state: "running", run_id: runId };
    this.#send(() => this.#encoder.result(id, { ...status, session_id: sessionId, ...running }));
  }

  /** Turn operations need a ready startup; a failed one answers its own code. */
  #turn(id: string, operation: (turns: TurnWorker) => void): void {
    const phase = this.#lifecycle.phase;
    if (phase.kind === "failed") return this.#sendError(id, phase.code);
    if (this.#turns === null) return this.#sendError(id, Codes.notInitialized);
    operation(this.#turns);
  }

  /** Session and history operations need a ready startup; a failed one answers its own code. */
  #session(id: string, task: SessionTask): void {
    const phase = this.#lifecycle.phase;
    if (phase.kind === "failed") return this.#sendError(id, phase.code);
    if (this.#sessions === null) return this.#sendError(id, Codes.notInitialized);
    this.#sessions.submit(id, task, Codes.sessionInvalid);
  }

  #shutdown(id: string): void {
    this.#send(() => this.#encoder.result(id, { state: "stopping" }));
    this.#close("shutdown");
  }

  #track(work: Promise<unknown>): void {
    this.#cleanups.add(work);
    void work.finally(() => this.#cleanups.delete(work));
  }

  /** Stops admission, cancels work and answers what it cancelled; idempotent. */
  #close(reason: CloseReason): void {
    if (this.#closing) return;
    this.#closing = true;
    this.#runtime.stdin.close();
    const pending = this.#pendingInitialize;
    if (this.#lifecycle.cancel() && pending !== null) {
      this.#pendingInitialize = null;
      if (reason !== "transport") this.#sendError(pending, Codes.startupCancelled);
    }
    this.#turns?.cancelForClose();
    if (this.#sessions !== null) {
      const sessions = this.#sessions;
      sessions.cancel(reason !== "transport");
      // The run uses the store until its cleanup ends; leases are released after both.
      const turnDone = this.#turns?.idle() ?? Promise.resolve();
      this.#track(turnDone.then(() => sessions.close()));
    }
    void this.#finish(reason);
  }

  /** Drains output under the closing deadline, then waits for cleanup under its own bound. */
  async #finish(reason: CloseReason): Promise<void> {
    const setTimer = (ms: number, callback: () => void) => this.#runtime.setTimer(ms, callback);
    let code = 1;
    if (reason !== "transport") {
      // A cancelled run's terminal event is part of what drains; its cleanup counts against this deadline.
      const turnDone = this.#turns?.idle() ?? Promise.resolve();
      const drained = await settlesWithin(turnDone.then(() => this.#writer.whenIdle()), LIMITS.closing_deadline_ms, setTimer);
      if (drained && this.#writer.failure === null && this.#writer.pending === 0) code = 0;
    }
    await settlesWithin(Promise.allSettled([...this.#cleanups]), LIMITS.cleanup_wait_ms, setTimer);
    this.#exit.resolve(code);
  }
}
