/**
 * The MCP SDK `Transport` for a stdio server, over the runtime's subprocess
 * contract, so Node, Deno and the single executable start and stop servers
 * alike. The server runs in its own process group with the environment of
 * `server-env.ts`; its stdout carries newline-delimited JSON-RPC messages of
 * at most {@link MAX_MESSAGE_BYTES} each; its stderr is read as it comes
 * and discarded, so a chatty server never blocks on a full pipe and nothing
 * it writes reaches the child's stdout or memory.
 *
 * Closing ({@link StdioTransport.close}) is staged, to the whole group,
 * because servers started through `npx` or a shell leave grandchildren:
 * stdin is ended, and a server still running (or a group member still
 * holding its pipes) {@link STDIN_GRACE_MS} later gets SIGTERM, then SIGKILL
 * {@link TERM_GRACE_MS} after that; {@link KILL_WAIT_MS} after SIGKILL the
 * pipes are let go whatever holds them. A last SIGKILL to the group takes
 * members that left the pipes behind, and closing ends once the server's own
 * exit is seen (it is then reaped). A server that exits by itself is
 * reported through `onclose` at once and cleaned up the same way.
 *
 * @module
 */

import type { ByteReader, Runtime, Subprocess } from "../host/runtime.ts";
import { settlesWithin } from "../util/async.ts";
import type { McpServerDefinition } from "./definition.ts";
import { MAX_MESSAGE_BYTES } from "./limits.ts";
import { MessageLines } from "./message-lines.ts";
import { type JSONRPCMessage, JSONRPCMessageSchema, type Transport } from "./sdk.ts";
import { serverEnvironment } from "./server-env.ts";

/** From ending a server's stdin to SIGTERM. */
export const STDIN_GRACE_MS = 500;
/** From SIGTERM to SIGKILL. */
export const TERM_GRACE_MS = 500;
/** From SIGKILL to letting go of pipes that something outside the group still holds. */
export const KILL_WAIT_MS = 500;
/** How long output written just before a server exited may still arrive before the exit is reported. */
const EXIT_FLUSH_MS = 100;

type StdioDefinition = Extract<McpServerDefinition, { transport: "stdio" }>;

/** What the connection learns from the transport besides messages. */
export interface StdioHooks {
  /** The server sent a message over {@link MAX_MESSAGE_BYTES}; it was skipped. */
  oversized(): void;
}

const encoder = new TextEncoder();

/** One stdio server, spawned by `start()`. */
export class StdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;
  readonly #runtime: Runtime;
  readonly #definition: StdioDefinition;
  readonly #hooks: StdioHooks;
  readonly #decoder = new TextDecoder("utf-8", { fatal: true });
  #child: Subprocess | null = null;
  #exited: Promise<unknown> = Promise.resolve();
  /** Settles once the server exited and both its pipes ended. */
  #gone: Promise<unknown> = Promise.resolve();
  #writes: Promise<void> = Promise.resolve();
  #stopping: Promise<void> | null = null;
  #reported = false;

  /** Prepares `definition`'s server; nothing starts before `start()`. */
  constructor(runtime: Runtime, definition: StdioDefinition, hooks: StdioHooks) {
    this.#runtime = runtime;
    this.#definition = definition;
    this.#hooks = hooks;
  }

  /** The server's process id (its group's id), or null when it has not started. */
  get pid(): number | null {
    const pid = this.#child?.pid;
    return pid === undefined || pid <= 0 ? null : pid;
  }

  /** Spawns the server; rejects when it cannot be started (throws, for runtimes that know at once). */
  start(): Promise<void> {
    const definition = this.#definition;
    const child = this.#runtime.spawn(definition.command, {
      args: definition.args,
      cwd: definition.cwd,
      env: serverEnvironment(this.#runtime.envAll(), definition.env),
      stdio: { stdin: "pipe", stdout: "pipe", stderr: "pipe" },
      processGroup: true,
    });
    this.#child = child;
    if (this.pid === null) return Promise.reject(new Error("The server could not be started"));
    this.#exited = child.exited;
    const stdoutEnded = this.#readMessages(child.stdout);
    this.#gone = Promise.all([child.exited, stdoutEnded, discard(child.stderr)]);
    void stdoutEnded.then(() => this.#lost());
    void child.exited.then(async () => {
      // Messages written just before the exit may still be in the pipe: let them arrive first.
      await settlesWithin(stdoutEnded, EXIT_FLUSH_MS, (ms, callback) => this.#runtime.setTimer(ms, callback));
      this.#lost();
    });
    return Promise.resolve();
  }

  /** Writes one message as a line; writes go out one at a time, in order. */
  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (stdin === null || stdin === undefined || this.#stopping !== null) return Promise.reject(new Error("Not connected"));
    const bytes = encoder.encode(`${JSON.stringify(message)}\n`);
    const write = this.#writes.then(() => stdin.write(bytes));
    this.#writes = write.catch(() => {});
    return write;
  }

  /** Stops the server and its group (see the module comment); resolves once done or given up. Idempotent. */
  close(): Promise<void> {
    this.#stopping ??= this.#stop();
    this.#report();
    return this.#stopping;
  }

  /** Settles when the server process has exited (at once when it never started). */
  get exited(): Promise<unknown> {
    return this.#exited;
  }

  /** Settles when the server and its group are gone (or given up on), however it ended; null before it started. */
  get stopped(): Promise<void> | null {
    return this.#stopping;
  }

  async #readMessages(reader: ByteReader | null): Promise<void> {
    if (reader === null) return;
    const lines = new MessageLines(MAX_MESSAGE_BYTES);
    const sink = { line: (bytes: Uint8Array) => this.#deliver(bytes), oversized: () => this.#hooks.oversized() };
    try {
      for (let chunk = await reader.read(); chunk !== null; chunk = await reader.read()) lines.push(chunk, sink);
    } catch {
      // A broken pipe ends the output like EOF.
    }
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
    this.#stopping = this.#stop();
    this.#report();
  }

  #report(): void {
    if (this.#reported) return;
    this.#reported = true;
    this.onclose?.();
  }

  async #stop(): Promise<void> {
    const child = this.#child;
    if (child === null || this.pid === null) return;
    const setTimer = (ms: number, callback: () => void) => this.#runtime.setTimer(ms, callback);
    const gone = this.#gone;
    // Not awaited: ending a pipe the server stopped reading would wait for room that never comes.
    void child.stdin?.close().catch(() => {});
    if (!(await settlesWithin(gone, STDIN_GRACE_MS, setTimer))) {
      child.kill("SIGTERM");
      if (!(await settlesWithin(gone, TERM_GRACE_MS, setTimer))) {
        child.kill("SIGKILL");
        await settlesWithin(gone, KILL_WAIT_MS, setTimer);
        child.stdout?.close();
        child.stderr?.close();
      }
    }
    // Members that let go of the pipes but stayed in the group; when the group is empty this does nothing.
    child.kill("SIGKILL");
    // The server itself got SIGKILL (or exited already), so its exit comes: once this settles it is
    // reaped and gone from the process table. Grandchildren are reparented and reaped by init on its own time.
    await child.exited;
  }
}

/** Reads `reader` to its end, keeping nothing. */
async function discard(reader: ByteReader | null): Promise<void> {
  if (reader === null) return;
  try {
    while ((await reader.read()) !== null);
  } catch {
    // A broken pipe ends it like EOF.
  }
}
