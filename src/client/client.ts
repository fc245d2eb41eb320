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

import * as v from "valibot";
import type { ErrorCode } from "../protocol/errors.ts";
import { PROTOCOL, PROTOCOL_VERSION } from "../protocol/identity.ts";
import { type Limits, LIMITS } from "../protocol/limits.ts";
import type { MethodName, MethodParams } from "../protocol/methods.ts";
import { NEGOTIATED } from "../protocol/negotiation.ts";
import { type InitializeResult, type MethodResult, RESULTS } from "../protocol/results.ts";
import { ConnectionClosed, ProtocolError, ProtocolViolation, RequestRefused } from "./errors.ts";
import { type OutputFrame, readOutputFrame } from "./frames.ts";
import { readFrames } from "./lines.ts";
import { Run, type RunHandlers } from "./run.ts";

/** The two ends of a child's stdio, from the client's side. */
export interface AgentStreams {
  /** The child's stdout. */
  readonly readable: ReadableStream<Uint8Array>;
  /** The child's stdin. */
  readonly writable: WritableStream<Uint8Array>;
}

/** Options of {@link AgentClient}. */
export interface AgentClientOptions {
  /** Resolves with the child's exit code (null after a signal); {@link AgentClient.shutdown} resolves with it. */
  readonly exited?: Promise<number | null>;
}

interface Pending {
  readonly method: MethodName;
  readonly resolve: (result: unknown) => void;
  readonly reject: (reason: unknown) => void;
  /** For `turn.start`: builds the run when the response is read, before any of its events. */
  readonly onResult?: (result: never) => void;
}

const encoder = new TextEncoder();

/** Methods a client may send whatever the server advertised: the ones that open and end a connection. */
const ALWAYS: ReadonlySet<string> = new Set(["initialize", "shutdown", "status"]);

/** A connection to one magi-code child. */
export class AgentClient {
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #exited: Promise<number | null>;
  readonly #pending = new Map<string, Pending>();
  readonly #runs = new Map<string, Run>();
  #nextId = 0;
  #instance: string | null = null;
  #seq = 0;
  #initialized: InitializeResult | null = null;
  #required: ReadonlySet<string> = new Set();
  #failure: Error | null = null;
  /** Resolves when reading stopped: EOF, a violation or {@link close}. */
  readonly closed: Promise<void>;

  /** Starts reading `streams.readable` at once: a child whose output stalls for 2 s exits. */
  constructor(streams: AgentStreams, options: AgentClientOptions = {}) {
    this.#writer = streams.writable.getWriter();
    this.#writer.closed.catch(() => {});
    this.#reader = streams.readable.getReader();
    this.#exited = options.exited ?? Promise.resolve(null);
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

  /** Sends `initialize` requiring `capabilities`; later requests are checked against what it advertises. */
  async initialize(capabilities: readonly MethodName[]): Promise<InitializeResult> {
    const result = await this.request("initialize", { required_capabilities: [...capabilities] });
    this.#initialized = result;
    this.#required = new Set(capabilities);
    return result;
  }

  /**
   * Sends one request and resolves with its result, validated against the
   * method's result schema; rejects with {@link ProtocolError} (a wire
   * code), {@link RequestRefused} (not sent), {@link ProtocolViolation} or
   * {@link ConnectionClosed}.
   */
  request<M extends MethodName>(method: M, params: MethodParams<M>): Promise<MethodResult<M>> {
    return this.#send(method, params);
  }

  /**
   * Sends `turn.start` and resolves with the admitted {@link Run}; `handlers`
   * see every event in order, including those read together with the
   * admission. Admission is not success: await `run.finished`.
   */
  startTurn(sessionId: string, prompt: string, handlers: RunHandlers = {}): Promise<Run> {
    let run: Run | null = null;
    const port = {
      answer: (runId: string, approvalId: string, allow: boolean) =>
        this.request("approval.answer", { session_id: sessionId, run_id: runId, approval_id: approvalId, allow }),
      cancel: (runId: string) => this.request("turn.cancel", { session_id: sessionId, run_id: runId }),
    };
    const onResult = (result: MethodResult<"turn.start">) => {
      run = new Run(sessionId, result.run_id, port, handlers);
      this.#runs.set(result.run_id, run);
    };
    return this.#send("turn.start", { session_id: sessionId, prompt }, onResult).then(() => run!);
  }

  /**
   * Sends `shutdown`, then closes the child's stdin and resolves with its
   * exit code (0: it finished its work and drained its output in time).
   * After the connection already ended it only waits for the exit.
   */
  async shutdown(): Promise<number | null> {
    if (this.#failure === null) await this.#send("shutdown", {}).catch(() => {});
    return await this.close();
  }

  /** Closes the child's stdin (EOF: it cancels its work and exits) and resolves with its exit code. */
  async close(): Promise<number | null> {
    await this.#writer.close().catch(() => {});
    await this.closed;
    return await this.#exited;
  }

  #send<M extends MethodName>(method: M, params: MethodParams<M>, onResult?: (result: MethodResult<M>) => void): Promise<MethodResult<M>> {
    if (this.#failure !== null) return Promise.reject(this.#failure);
    const capabilities = this.#initialized?.capabilities;
    if (capabilities !== undefined && !ALWAYS.has(method) && !capabilities.includes(method)) {
      return Promise.reject(new RequestRefused(method, "this child does not advertise it"));
    }
    // Some operations exist only for a client that required them: the child would answer unsupported_capability.
    if (capabilities !== undefined && NEGOTIATED.has(method) && !this.#required.has(method)) {
      return Promise.reject(new RequestRefused(method, "it was not required in initialize"));
    }
    // One id is kept for shutdown: the child closes on the first id past its lifetime budget.
    const budget = this.limits.request_ids - (method === "shutdown" ? 0 : 1);
    if (this.#nextId >= budget) return Promise.reject(new RequestRefused(method, "the child's request id budget is spent"));
    const id = `c${++this.#nextId}`;
    const bytes = encoder.encode(`${JSON.stringify({ protocol: PROTOCOL, version: PROTOCOL_VERSION, id, method, params })}\n`);
    // An over-long frame would make the child close the connection; refuse it here instead.
    if (bytes.length - 1 > this.limits.input_frame_bytes) return Promise.reject(new RequestRefused(method, "the request is over the frame bound"));
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { method, resolve: resolve as (result: unknown) => void, reject, ...(onResult ? { onResult } : {}) });
      this.#writer.write(bytes).catch(() => this.#fail(new ConnectionClosed("the child's stdin is closed")));
    });
  }

  async #read(): Promise<void> {
    try {
      const problem = await readFrames(this.#reader, this.limits.output_frame_bytes - 1, (bytes) => this.#onFrame(bytes));
      if (problem === "frame_too_long") this.#fail(new ProtocolViolation("an output frame exceeds the output frame bound"));
      // A child that died mid-write: the partial line is not a usable message.
      if (problem === "partial_frame_at_eof") this.#fail(new ConnectionClosed("the child's output ended inside a frame"));
    } catch {
      // A read error: the pipe broke. Handled as the end of output below.
    }
    this.#fail(new ConnectionClosed("the child closed its output"));
  }

  #onFrame(bytes: Uint8Array): boolean {
    const reading = readOutputFrame(bytes);
    if (!reading.ok) return this.#violation(reading.problem);
    const frame = reading.frame;
    // seq strictly increases across all frames of one instance; anything else is lost or foreign output.
    if ((this.#instance ?? frame.instance_id) !== frame.instance_id || frame.seq <= this.#seq) return this.#violation("frame out of sequence");
    this.#instance = frame.instance_id;
    this.#seq = frame.seq;
    return "event" in frame ? this.#onEvent(frame) : this.#onResponse(frame);
  }

  #onResponse(frame: Exclude<OutputFrame, { event: string }>): boolean {
    if (frame.id === null) {
      // This client never sends a frame without a recoverable id, so the state of the connection is unknown.
      return this.#violation(`the child rejected a frame without an id (${"error" in frame ? frame.error.code : "result"})`);
    }
    const pending = this.#pending.get(frame.id);
    if (pending === undefined) return this.#violation("a response to no pending request");
    if ("error" in frame) {
      this.#pending.delete(frame.id);
      pending.reject(new ProtocolError(pending.method, frame.error.code));
      return true;
    }
    const result = v.safeParse(RESULTS[pending.method], frame.result);
    // Still pending here, so the violation rejects this request too.
    if (!result.success) return this.#violation(`malformed ${pending.method} result`);
    this.#pending.delete(frame.id);
    pending.onResult?.(result.output as never);
    pending.resolve(result.output);
    return true;
  }

  #onEvent(frame: Extract<OutputFrame, { event: string }>): boolean {
    const event = { event: frame.event, data: frame.data } as Parameters<Run["accept"]>[0];
    const run = this.#runs.get(event.data.run_id);
    // turn.start's response precedes its run's events, and nothing follows run.finished.
    if (run === undefined || run.sessionId !== event.data.session_id) return this.#violation(`${event.event} outside an active run`);
    const problem = run.accept(event);
    if (problem !== null) return this.#violation(problem);
    if (event.event === "run.finished") this.#runs.delete(run.runId);
    return true;
  }

  #violation(problem: string): boolean {
    this.#fail(new ProtocolViolation(problem));
    return false;
  }

  /** Ends the connection once: stops reading, closes the child's stdin, rejects every pending request and run. */
  #fail(error: Error): void {
    if (this.#failure !== null) return;
    this.#failure = error;
    this.#reader.cancel().catch(() => {});
    this.#writer.close().catch(() => {});
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    for (const run of this.#runs.values()) run.abandon(error);
    this.#runs.clear();
  }

  /** Why the connection ended, once it did: a {@link ProtocolViolation} or {@link ConnectionClosed}; else null. */
  get failure(): Error | null {
    return this.#failure;
  }
}

/** Whether `error` is a wire error with `code`. */
export function isProtocolError(error: unknown, code?: ErrorCode): error is ProtocolError {
  return error instanceof ProtocolError && (code === undefined || error.code === code);
}
