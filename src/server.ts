/**
 * One protocol connection over the runtime's stdin and stdout: read frames,
 * admit requests, answer them through the ordered writer, and close along one
 * of the documented paths (`docs/protocol.md#closing`).
 *
 * @module
 */

import { Dispatcher } from "./protocol/dispatcher.ts";
import { ErrorCode as Codes } from "./protocol/errors.ts";
import { LIMITS } from "./protocol/limits.ts";
import { CAPABILITIES, isMethodName } from "./protocol/methods.ts";
import { PhaseGate } from "./protocol/phase-gate.ts";
import type { InitializeParams } from "./protocol/schemas.ts";
import type { Runtime } from "./host/runtime.ts";
import type { TurnWorker } from "./operations/turns/turn-worker.ts";
import { Lifecycle } from "./admission/lifecycle.ts";
import { runStartup, type StartupOutcome } from "./admission/startup.ts";
import type { SessionWorker } from "./operations/sessions/session-worker.ts";
import { ConnectionClose } from "./transport/closing.ts";
import { ProtocolOutput } from "./transport/output.ts";
import { readLoop } from "./transport/read-loop.ts";
import { createWorkers } from "./operations/ready-workers.ts";

/** A served connection. */
export interface Server {
  /** Serves until the connection closes; resolves with the process exit code. */
  serve(): Promise<number>;
}

/** Creates a server for `runtime`'s stdio. */
export function createServer(runtime: Runtime): Server {
  return { serve: () => new Connection(runtime).serve() };
}

const STARTUP_CRASHED: StartupOutcome = { ok: false, code: Codes.startupFailed, contextId: null };

class Connection {
  readonly #runtime: Runtime;
  readonly #output: ProtocolOutput;
  readonly #closing: ConnectionClose;
  readonly #lifecycle = new Lifecycle();
  readonly #dispatcher: Dispatcher;
  #startup: Promise<StartupOutcome> | null = null;
  #pendingInitialize: string | null = null;
  #sessions: SessionWorker | null = null;
  #turns: TurnWorker | null = null;

  constructor(runtime: Runtime) {
    this.#runtime = runtime;
    this.#output = new ProtocolOutput(runtime, () => this.#closing.close("transport"));
    this.#closing = new ConnectionClose(runtime, this.#output, {
      cancel: (answer) => this.#cancel(answer),
      settled: () => this.#turns?.idle() ?? Promise.resolve(),
    });
    // Both workers are created together once startup succeeded.
    const workers = () => this.#turns && this.#sessions && { turns: this.#turns, sessions: this.#sessions };
    const gate = new PhaseGate(() => this.#lifecycle.phase, workers, (id, code) => this.#output.error(id, code));
    this.#dispatcher = new Dispatcher({
      "initialize": (id, params) => this.#initialize(id, params),
      "status": (id) => this.#status(id),
      "shutdown": (id) => this.#closing.shutdown(id),
      "session.create": gate.ready(({ sessions }, id) => sessions.create(id)),
      "session.open": gate.ready(({ sessions }, id, params) => sessions.open(id, params)),
      "history.page": gate.ready(({ sessions }, id, params) => sessions.page(id, params)),
      "turn.start": gate.ready(({ turns }, id, params) => turns.start(id, params)),
      "turn.cancel": gate.ready(({ turns }, id, params) => turns.cancel(id, params)),
      "approval.answer": gate.ready(({ turns }, id, params) => turns.answer(id, params)),
    }, (id, code) => this.#output.error(id, code));
  }

  serve(): Promise<number> {
    void readLoop(this.#runtime.stdin, this.#output, this.#closing, (bytes) => this.#dispatcher.frame(bytes));
    return this.#closing.exitCode;
  }

  #initialize(id: string, params: InitializeParams): void {
    if (this.#lifecycle.phase.kind !== "new") return this.#output.error(id, Codes.alreadyInitialized);
    if (!params.required_capabilities.every((name) => isMethodName(name))) {
      return this.#output.error(id, Codes.unsupportedCapability);
    }
    const abort = this.#lifecycle.begin();
    this.#pendingInitialize = id;
    const task = runStartup(this.#runtime, abort.signal).catch(() => STARTUP_CRASHED);
    this.#startup = task;
    void task.then((outcome) => {
      if (this.#pendingInitialize !== id) return;
      this.#pendingInitialize = null;
      this.#lifecycle.settle(outcome);
      if (!outcome.ok) return this.#output.error(id, outcome.code);
      const output = this.#output;
      const workers = createWorkers({
        runtime: this.#runtime,
        instanceId: output.instanceId,
        replies: output,
        writer: output.writer,
        sendEvent: (event) => output.event(event.event, event.data),
      }, outcome.snapshot);
      this.#sessions = workers.sessions;
      this.#turns = workers.turns;
      output.result(id, {
        capabilities: CAPABILITIES,
        limits: LIMITS,
        status: this.#lifecycle.status(),
      });
      // Warm-up: the first turn should not pay for loading the provider clients and tools.
      void this.#turns?.warm().catch(() => {});
    });
  }

  #status(id: string): void {
    if (this.#lifecycle.phase.kind === "new") return this.#output.error(id, Codes.notInitialized);
    const status = this.#lifecycle.status();
    const sessionId = this.#sessions?.sessionId ?? null;
    const runId = this.#turns?.runId ?? null;
    if (sessionId === null && runId === null) return this.#output.result(id, status);
    const running = runId === null ? {} : { state: "running", run_id: runId };
    this.#output.result(id, { ...status, session_id: sessionId, ...running });
  }

  /** Cancels startup and the workers for a close; returns the cleanup exit waits for. */
  #cancel(answer: boolean): Promise<unknown>[] {
    const cleanups: Promise<unknown>[] = this.#startup === null ? [] : [this.#startup];
    const pending = this.#pendingInitialize;
    if (this.#lifecycle.cancel() && pending !== null) {
      this.#pendingInitialize = null;
      if (answer) this.#output.error(pending, Codes.startupCancelled);
    }
    this.#turns?.cancelForClose();
    if (this.#sessions !== null) {
      const sessions = this.#sessions;
      sessions.cancel(answer);
      // The run uses the store until its cleanup ends; leases are released after both.
      const turnDone = this.#turns?.idle() ?? Promise.resolve();
      cleanups.push(turnDone.then(() => sessions.close()));
    }
    return cleanups;
  }
}
