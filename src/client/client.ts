/**
 * A typed client for one magi-code child over web streams: the child's stdout
 * as a `ReadableStream<Uint8Array>` and its stdin as a
 * `WritableStream<Uint8Array>` (the shape of the ACP SDK's `ndJsonStream`),
 * so the same class runs on Node, Deno, in Electron and in a VS Code
 * extension host. It correlates responses by fresh ids, checks every
 * result and event against the schemas the server's output is typed by,
 * negotiates capabilities from `initialize`'s result, turns `turn.start` into
 * a {@link Run}, and fails closed on whatever the protocol does not define.
 * Spawning is the host's business: `magi-code/client` on Node adds
 * `spawnAgent()` (runtime/node-client.ts).
 *
 * @module
 */

import { type Limits, LIMITS } from "../protocol/limits.ts";
import { type Capability, NEGOTIATED } from "../protocol/negotiation.ts";
import type { InitializeResult, MethodResult } from "../protocol/results.ts";
import type { ClientMethod, ClientParams, ClientResult } from "./methods.ts";
import { explainEnding } from "./ending.ts";
import { ConnectionClosed, ProtocolViolation, RequestAborted, RequestRefused } from "./errors.ts";
import { Exchange } from "./exchange.ts";
import { type OutputFrame, readOutputFrame } from "./frames.ts";
import { readFrames } from "./lines.ts";
import type { RequestOptions } from "./requests.ts";
import { type ApprovalScope, negotiatedBy, Run, type RunHandlers } from "./run.ts";
import { type ClientToolDefinition, ClientToolHost, initializeParams } from "./client-tools.ts";

/** The two ends of a child's stdio, from the client's side. */
export interface AgentStreams {
  /** The child's stdout. */
  readonly readable: ReadableStream<Uint8Array>;
  /** The child's stdin. */
  readonly writable: WritableStream<Uint8Array>;
}

/** Options of {@link AgentClient}: what the host knows of the child, so an ended connection can say why. */
export interface AgentClientOptions {
  /** Resolves with the child's exit code (null after a signal); rejects with a {@link ConnectionClosed} (a `SpawnError`) when it never started: everything pending then rejects with it. */
  readonly exited?: Promise<number | null>;
  /** The last bytes the child wrote to stderr, when the host keeps them: they go into the error of a child that exits before `initialize` answered. */
  readonly stderrTail?: () => string;
  /** Tools this client lends the agent (`client.tools`): `initialize` registers them and requires `client.tools`; calls go to their handlers. */
  readonly clientTools?: readonly ClientToolDefinition[];
}

/** The methods {@link AgentClient.request} sends: every one but `turn.start` ({@link AgentClient.startTurn}'s), and `agent.info`. */
export type RequestMethod = Exclude<ClientMethod, "turn.start">;

/** Methods a client may send whatever the server advertised: the ones that open and end a connection. */
const ALWAYS: ReadonlySet<string> = new Set(["initialize", "shutdown", "status"]);

/** A connection to one magi-code child. */
export class AgentClient {
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #exited: Promise<number | null> | null;
  readonly #stderrTail: () => string;
  readonly #exchange: Exchange;
  readonly #runs = new Map<string, Run>();
  readonly #tools: ClientToolHost | null;
  #instance: string | null = null;
  #seq = 0;
  #initialized: InitializeResult | null = null;
  #required: ReadonlySet<string> = new Set();
  #failure: Error | null = null;
  #ending: Promise<void> | null = null;
  /** Set by close() and shutdown(): the end of output is then expected, and only a spawn failure explains it. */
  #closing = false;
  /** Resolves when reading stopped: EOF, a violation or {@link close}. */
  readonly closed: Promise<void>;

  /** Starts reading `streams.readable` at once: a child whose output stalls for 2 s exits. */
  constructor(streams: AgentStreams, options: AgentClientOptions = {}) {
    this.#writer = streams.writable.getWriter();
    this.#writer.closed.catch(() => {});
    this.#reader = streams.readable.getReader();
    this.#exited = options.exited ?? null;
    // A child that never started is reported through the requests; nothing else may see the rejection unhandled.
    this.#exited?.catch(() => {});
    this.#stderrTail = options.stderrTail ?? (() => "");
    this.#tools = options.clientTools === undefined ? null : new ClientToolHost(options.clientTools);
    this.#exchange = new Exchange({
      write: (bytes) => void this.#writer.write(bytes).catch(() => this.#end("the child's stdin is closed")),
      limits: () => this.limits,
      runActive: () => this.#runs.size > 0,
      canCancel: () => this.#required.has("operation.cancel") && this.supports("operation.cancel"),
    });
    this.closed = this.#read();
  }

  /** `initialize`'s result once it succeeded, else null. */
  get initialized(): InitializeResult | null {
    return this.#initialized;
  }

  /** The bounds the child published (the protocol's own before `initialize` answered). */
  get limits(): Limits | InitializeResult["limits"] {
    return this.#initialized?.limits ?? LIMITS;
  }

  /** Whether the child advertised `capability` (before `initialize` answered: false). */
  supports(capability: string): boolean {
    return this.#initialized?.capabilities.includes(capability) ?? false;
  }

  /**
   * Sends `initialize` requiring `capabilities` (and `client.tools` with the
   * registry when tools were given); later requests are checked against what
   * it advertises, negotiated events only accepted when required here.
   * Refused with a wire code, it may be sent again. Given up through
   * `options` ({@link RequestOptions}) it rejects with `RequestAborted` and
   * closes the connection (the child may still initialize, unknown how):
   * `failure` is a {@link ConnectionClosed}; {@link close} collects the exit.
   */
  async initialize(capabilities: readonly Capability[], options: RequestOptions = {}): Promise<InitializeResult> {
    const tools = this.#tools;
    const params = initializeParams(capabilities, tools);
    const result = await this.request("initialize", params, options).catch((error: unknown) => {
      if (error instanceof RequestAborted) this.#fail(new ConnectionClosed("initialize was given up (aborted or timed out), so the connection was closed"));
      throw error;
    });
    this.#initialized = result;
    this.#required = new Set(params.required_capabilities);
    this.#exchange.fit(result.limits.pending_output_frames);
    tools?.attach((params) => this.#exchange.submit("client.tool.result", params, {}));
    return result;
  }

  /**
   * Sends one request and resolves with its result, validated against the
   * method's result schema; rejects with {@link ProtocolError} (a wire
   * code), {@link RequestRefused} (not sent), `RequestAborted`
   * (`options.signal` or `options.timeoutMs`, see {@link RequestOptions}),
   * {@link ProtocolViolation} or {@link ConnectionClosed}. At most 16
   * requests are unanswered (4 during a run) and the rest wait in order;
   * session, history, catalog and selection operations and `turn.start` go
   * one at a time; `shutdown`, `turn.cancel`, `operation.cancel` and
   * `approval.answer` skip the queue (src/client/outbox.ts). `turn.start`
   * is {@link startTurn}'s: its run's events need the {@link Run} that
   * registers, so here it is refused (`RequestRefused`, nothing sent).
   */
  request<M extends RequestMethod>(method: M, params: ClientParams<M>, options: RequestOptions = {}): Promise<ClientResult<M>> {
    // Typed out, but a JavaScript caller (or a cast) can still pass it; sent, its run's first event would end the connection.
    if ((method as ClientMethod) === "turn.start") return Promise.reject(new RequestRefused(method, "use startTurn(), which follows the run's events"));
    return this.#submit(method, params, options);
  }

  /**
   * Sends `turn.start` and resolves with the admitted {@link Run}; `handlers`
   * see every event in order, including those read together with the
   * admission. Admission is not success: await `run.finished`. Given up
   * through `options` while it still waits (for the lane or the window),
   * it is never sent (`RequestAborted`, `not_sent`); once sent it cannot be
   * taken back: the promise rejects at once (`discarded`), and a run the
   * child admits anyway is still followed, its events going to `handlers`
   * (whose `run` argument can `cancel()` it), so the connection stays
   * valid. To stop a run the caller holds, use `run.cancel()`.
   */
  startTurn(sessionId: string, prompt: string, handlers: RunHandlers = {}, options: RequestOptions = {}): Promise<Run> {
    let run: Run | null = null;
    const port = {
      // `once` is sent as the base answer, without `scope`: a base child knows no such field.
      answer: (runId: string, approvalId: string, allow: boolean, scope: ApprovalScope) =>
        this.request("approval.answer", { session_id: sessionId, run_id: runId, approval_id: approvalId, allow, ...(scope === "once" ? {} : { scope }) }),
      cancel: (runId: string) => this.request("turn.cancel", { session_id: sessionId, run_id: runId }),
    };
    const onResult = (result: MethodResult<"turn.start">) => {
      run = new Run(sessionId, result.run_id, port, handlers);
      this.#runs.set(result.run_id, run);
    };
    return this.#submit("turn.start", { session_id: sessionId, prompt }, options, onResult).then(() => run!);
  }

  /**
   * Sends `shutdown` (at once, ahead of anything queued, which is then
   * refused), closes the child's stdin and resolves with its exit code (0:
   * it finished its work and drained its output in time). After the
   * connection already ended it only waits for the exit.
   */
  async shutdown(): Promise<number | null> {
    this.#closing = true;
    if (this.#failure === null && this.#ending === null) await this.#submit("shutdown", {}, {}).catch(() => {});
    return await this.close();
  }

  /** Closes the child's stdin (EOF: it cancels its work and exits) and resolves with its exit code (null if it never started). */
  async close(): Promise<number | null> {
    this.#closing = true;
    await this.#writer.close().catch(() => {});
    await this.closed;
    return await (this.#exited ?? Promise.resolve(null)).catch(() => null);
  }

  #submit<M extends ClientMethod>(method: M, params: ClientParams<M>, options: RequestOptions, onResult?: (result: ClientResult<M>) => void): Promise<ClientResult<M>> {
    if (this.#failure !== null) return Promise.reject(this.#failure);
    if (this.#ending !== null) return this.#ending.then(() => Promise.reject(this.#failure));
    const capabilities = this.#initialized?.capabilities;
    if (capabilities !== undefined && !ALWAYS.has(method) && !capabilities.includes(method)) {
      return Promise.reject(new RequestRefused(method, "this child does not advertise it"));
    }
    // Some operations exist only for a client that required them: the child would answer unsupported_capability.
    if (capabilities !== undefined && (NEGOTIATED as ReadonlySet<string>).has(method) && !this.#required.has(method)) {
      return Promise.reject(new RequestRefused(method, "it was not required in initialize"));
    }
    return this.#exchange.submit(method, params, options, onResult as ((result: never) => void) | undefined) as Promise<ClientResult<M>>;
  }

  async #read(): Promise<void> {
    let ended = "the child closed its output";
    try {
      const problem = await readFrames(this.#reader, this.limits.output_frame_bytes - 1, (bytes) => this.#onFrame(bytes));
      if (problem === "frame_too_long") this.#violation("an output frame exceeds the output frame bound");
      // A child that died mid-write: the partial line is not a usable message.
      if (problem === "partial_frame_at_eof") ended = "the child's output ended inside a frame";
    } catch {
      // A read error: the pipe broke. Handled as the end of output below.
    }
    await this.#end(ended);
  }

  /** Ends the connection once, with the host's account of the child when it has one (`violation`: see {@link explainEnding}). */
  #end(message: string, violation?: string): Promise<void> {
    this.#ending ??= this.#explain(message, violation).then((error) => this.#fail(error));
    return this.#ending;
  }

  #explain(message: string, violation?: string): Promise<Error> {
    if (this.#failure !== null || this.#exited === null) return Promise.resolve(new ConnectionClosed(message));
    const waitMs = this.limits.closing_deadline_ms + this.limits.cleanup_wait_ms;
    const initialized = this.#initialized !== null;
    return explainEnding({ message, violation, exited: this.#exited, initialized, expected: this.#closing, stderrTail: this.#stderrTail, waitMs });
  }

  #onFrame(bytes: Uint8Array): boolean {
    const reading = readOutputFrame(bytes);
    if (!reading.ok) return this.#violation(reading.problem);
    const frame = reading.frame;
    // seq strictly increases across all frames of one instance; anything else is lost or foreign output.
    if ((this.#instance ?? frame.instance_id) !== frame.instance_id || frame.seq <= this.#seq) return this.#violation("frame out of sequence");
    this.#instance = frame.instance_id;
    this.#seq = frame.seq;
    if ("event" in frame) return this.#onEvent(frame);
    if (frame.id === null) {
      // This client never sends a frame without a recoverable id, so the state of the connection is unknown.
      return this.#violation(`the child rejected a frame without an id (${"error" in frame ? frame.error.code : "result"})`);
    }
    const problem = this.#exchange.answer(frame as Parameters<Exchange["answer"]>[0]);
    return problem === null || this.#violation(problem);
  }

  #onEvent(frame: Extract<OutputFrame, { event: string }>): boolean {
    const event = { event: frame.event, data: frame.data } as Parameters<Run["accept"]>[0];
    const run = this.#runs.get(event.data.run_id);
    // turn.start's response precedes its run's events, and nothing follows run.finished.
    if (run === undefined || run.sessionId !== event.data.session_id) return this.#violation(`${event.event} outside an active run`);
    // A negotiated event is no part of the base contract: unrequired, it is as unknown as any other.
    const needs = negotiatedBy(event);
    if (needs !== null && !this.#required.has(needs)) return this.#violation(`${event.event} needs ${needs}, which was not required in initialize`);
    const toolProblem = event.event === "client.tool.call" || event.event === "client.tool.cancel" ? this.#tools!.accept(event) : undefined;
    if (toolProblem !== undefined) return toolProblem === null || this.#violation(toolProblem);
    const problem = run.accept(event);
    if (problem !== null) return this.#violation(problem);
    if (event.event === "run.finished") {
      this.#runs.delete(run.runId);
      // Its events no longer compete for the child's output slots: the full window reopens.
      this.#exchange.pump();
    }
    return true;
  }

  #violation(problem: string): boolean {
    if (this.#initialized !== null || this.#exited === null) {
      this.#fail(new ProtocolViolation(problem, this.#initialized === null ? this.#stderrTail() : ""));
      return false;
    }
    // Before initialize answered, such output is most often a wrong command, whose exit and stderr say more than the bytes.
    this.#reader.cancel().catch(() => {});
    void this.#end("the child's output is not the protocol", problem);
    return false;
  }

  /** Ends the connection once: stops reading, closes the child's stdin, rejects every request (sent or queued) and run. */
  #fail(error: Error): void {
    if (this.#failure !== null) return;
    this.#failure = error;
    this.#reader.cancel().catch(() => {});
    this.#writer.close().catch(() => {});
    this.#exchange.failAll(error);
    for (const run of this.#runs.values()) run.abandon(error);
    this.#tools?.abandon();
    this.#runs.clear();
  }

  /** Why the connection ended, once it did: a {@link ProtocolViolation} or {@link ConnectionClosed}; else null. */
  get failure(): Error | null {
    return this.#failure;
  }
}
