/**
 * One protocol connection over the runtime's stdin and stdout: read frames,
 * admit requests, answer them through the ordered writer, and close along one
 * of the documented paths (`docs/protocol.md#closing`).
 *
 * @module
 */

import { Dispatcher } from "./protocol/dispatcher.ts";
import { type ErrorCode, ErrorCode as Codes } from "./protocol/errors.ts";
import { FrameEncoder, type OutputValue } from "./protocol/frames.ts";
import { LIMITS } from "./protocol/limits.ts";
import { CAPABILITIES, isMethodName } from "./protocol/methods.ts";
import { PhaseGate } from "./protocol/phase-gate.ts";
import type { InitializeParams } from "./protocol/schemas.ts";
import type { Runtime } from "./host/runtime.ts";
import type { TurnWorker } from "./operations/turns/turn-worker.ts";
import { Lifecycle } from "./admission/lifecycle.ts";
import { runStartup, type StartupOutcome } from "./admission/startup.ts";
import type { SessionWorker } from "./operations/sessions/session-worker.ts";
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

/** Pending output frames at which the read loop waits for the writer (half the bound). */
const FLOW_CONTROL_PENDING = LIMITS.pending_output_frames / 2;

const STARTUP_CRASHED: StartupOutcome = { ok: false, code: Codes.startupFailed, contextId: null };

class Connection {
  readonly #runtime: Runtime;
  readonly #encoder: FrameEncoder;
  readonly #writer: OrderedWriter;
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
    // Both workers are created together once startup succeeded.
    const workers = () => this.#turns && this.#sessions && { turns: this.#turns, sessions: this.#sessions };
    const gate = new PhaseGate(() => this.#lifecycle.phase, workers, (id, code) => this.#sendError(id, code));
    this.#dispatcher = new Dispatcher({
      "initialize": (id, params) => this.#initialize(id, params),
      "status": (id) => this.#status(id),
      "shutdown": (id) => this.#shutdown(id),
      "session.create": gate.ready(({ sessions }, id) => sessions.create(id)),
      "session.open": gate.ready(({ sessions }, id, params) => sessions.open(id, params)),
      "history.page": gate.ready(({ sessions }, id, params) => sessions.page(id, params)),
      "turn.start": gate.ready(({ turns }, id, params) => turns.start(id, params)),
      "turn.cancel": gate.ready(({ turns }, id, params) => turns.cancel(id, params)),
      "approval.answer": gate.ready(({ turns }, id, params) => turns.answer(id, params)),
    }, (id, code) => this.#sendError(id, code));
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
        if (this.#dispatcher.frame(event.bytes)) this.#close("protocol");
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

  #initialize(id: string, params: InitializeParams): void {
    if (this.#lifecycle.phase.kind !== "new") return this.#sendError(id, Codes.alreadyInitialized);
    if (!params.required_capabilities.every((name) => isMethodName(name))) {
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
          capabilities: CAPABILITIES,
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
