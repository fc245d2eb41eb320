/**
 * The MCP SDK `Transport` for a stdio server: the server's process
 * (`server-process.ts`: spawning, reading, the staged stop to its whole
 * group) with each line of its output checked as a JSON-RPC message. The
 * process is spawned by `start()`, or was spawned already by startup while
 * the SDK loaded and is handed over here. A server that exits by itself, or
 * whose output ends, is reported through `onclose` at once and stopped the
 * same way as one closed on purpose.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { type JSONRPCMessage, JSONRPCMessageSchema, type Transport } from "./sdk.ts";
import { ServerProcess, type StdioDefinition } from "./server-process.ts";

/** What the connection learns from the transport besides messages. */
export interface StdioHooks {
  /** The server sent a message over the size bound; it was skipped. */
  oversized(): void;
}

const encoder = new TextEncoder();

/** One stdio server, spawned by `start()` unless it was handed over spawned. */
export class StdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;
  readonly #runtime: Runtime;
  readonly #definition: StdioDefinition;
  readonly #hooks: StdioHooks;
  readonly #decoder = new TextDecoder("utf-8", { fatal: true });
  #process: ServerProcess | null;
  #stopping: Promise<void> | null = null;
  #reported = false;

  /** Prepares `definition`'s server; `launched` is its process if startup spawned it already. */
  constructor(runtime: Runtime, definition: StdioDefinition, hooks: StdioHooks, launched?: ServerProcess) {
    this.#runtime = runtime;
    this.#definition = definition;
    this.#hooks = hooks;
    this.#process = launched ?? null;
  }

  /** The server's process id (its group's id), or null when it has not started. */
  get pid(): number | null {
    return this.#process?.pid ?? null;
  }

  /** Spawns the server, unless it was handed over spawned, and starts reading it; rejects when it could not be started. */
  start(): Promise<void> {
    const server = this.#process ??= ServerProcess.spawn(this.#runtime, this.#definition);
    if (server.pid === null) return Promise.reject(new Error("The server could not be started"));
    server.attach({ line: (bytes) => this.#deliver(bytes), oversized: () => this.#hooks.oversized(), lost: () => this.#lost() });
    return Promise.resolve();
  }

  /** Writes one message as a line; writes go out one at a time, in order. */
  send(message: JSONRPCMessage): Promise<void> {
    const server = this.#process;
    if (server === null || this.#stopping !== null) return Promise.reject(new Error("Not connected"));
    return server.write(encoder.encode(`${JSON.stringify(message)}\n`));
  }

  /** Stops the server and its group; resolves once done or given up. Idempotent. */
  close(): Promise<void> {
    this.#stopping ??= this.#process?.stop() ?? Promise.resolve();
    this.#report();
    return this.#stopping;
  }

  /** Settles when the server process has exited (at once when it never started). */
  get exited(): Promise<unknown> {
    return this.#process?.exited ?? Promise.resolve();
  }

  /** Settles when the server and its group are gone (or given up on), however it ended; null before it stopped. */
  get stopped(): Promise<void> | null {
    return this.#stopping;
  }

  #deliver(bytes: Uint8Array): void {
    let message: JSONRPCMessage;
    try {
      const parsed = JSONRPCMessageSchema.safeParse(JSON.parse(this.#decoder.decode(bytes)));
      if (!parsed.success) throw new Error("not a JSON-RPC message");
      message = parsed.data;
    } catch {
      // Never the line itself: it is the server's raw output.
      this.onerror?.(new Error("The server wrote a line that is not a JSON-RPC message"));
      return;
    }
    this.onmessage?.(message);
  }

  /** The server's output ended or it exited without being asked to: report it, and clean up its group. */
  #lost(): void {
    if (this.#stopping !== null) return;
    this.#stopping = this.#process!.stop();
    this.#report();
  }

  #report(): void {
    if (this.#reported) return;
    this.#reported = true;
    this.onclose?.();
  }
}
