/**
 * A stdio MCP server's process, over the runtime's subprocess contract, so
 * Node, Deno and the single executable start and stop servers alike. It
 * needs no SDK: startup spawns the servers with it before the MCP chunk
 * (the SDK) has loaded (`start.ts`), and the stdio transport
 * (`stdio-transport.ts`) takes it over once it has.
 *
 * The server runs in its own process group with the environment of
 * `server-env.ts`. Its stderr is read from the spawn on and discarded, so a
 * chatty server never blocks on a full pipe and nothing it writes reaches
 * the child's stdout or memory. Its stdout is read once a reader is
 * attached ({@link ServerProcess.attach}): newline-delimited messages of at
 * most {@link MAX_MESSAGE_BYTES} each.
 *
 * Stopping ({@link ServerProcess.stop}) is staged, to the whole group,
 * because servers started through `npx` or a shell leave grandchildren:
 * stdin is ended, and a server still running (or a group member still
 * holding its pipes) {@link STDIN_GRACE_MS} later gets SIGTERM, then SIGKILL
 * {@link TERM_GRACE_MS} after that; {@link KILL_WAIT_MS} after SIGKILL the
 * pipes are let go whatever holds them. A last SIGKILL to the group takes
 * members that left the pipes behind, and stopping ends once the server's
 * own exit is seen (it is then reaped).
 *
 * @module
 */

import type { ByteReader, Runtime, Subprocess } from "../host/runtime.ts";
import { settlesWithin } from "../util/async.ts";
import type { McpServerDefinition } from "./definition.ts";
import { MAX_MESSAGE_BYTES } from "./limits.ts";
import { MessageLines } from "./message-lines.ts";
import { serverEnvironment } from "./server-env.ts";

/** From ending a server's stdin to SIGTERM. */
export const STDIN_GRACE_MS = 500;
/** From SIGTERM to SIGKILL. */
export const TERM_GRACE_MS = 500;
/** From SIGKILL to letting go of pipes that something outside the group still holds. */
export const KILL_WAIT_MS = 500;
/** How long output written just before a server exited may still arrive before the exit is reported. */
const EXIT_FLUSH_MS = 100;

/** A stdio server's definition. */
export type StdioDefinition = Extract<McpServerDefinition, { transport: "stdio" }>;

/** Where an attached process's output goes. */
export interface ProcessSink {
  /** One complete message's bytes, without the LF. */
  line(bytes: Uint8Array): void;
  /** The server sent a message over {@link MAX_MESSAGE_BYTES}; it was skipped. */
  oversized(): void;
  /** The server exited or its output ended; may be called more than once. */
  lost(): void;
}

const IGNORED: ProcessSink = { line: () => {}, oversized: () => {}, lost: () => {} };

/** One spawned server process (or one that could not be started). */
export class ServerProcess {
  /** `runtime.monotonicNow()` right before the spawn: the server's startup bound runs from here. */
  readonly startedAt: number;
  readonly #runtime: Runtime;
  readonly #child: Subprocess | null;
  readonly #stderrDrained: Promise<void>;
  /** Settles once the server exited and both its pipes ended; null until attached. */
  #gone: Promise<unknown> | null = null;
  #writes: Promise<void> = Promise.resolve();
  #stopping: Promise<void> | null = null;

  private constructor(runtime: Runtime, child: Subprocess | null, startedAt: number) {
    this.#runtime = runtime;
    this.#child = child;
    this.startedAt = startedAt;
    this.#stderrDrained = this.pid === null ? Promise.resolve() : discard(child!.stderr);
  }

  /** Spawns `definition`'s server; never throws (a server that could not be started has no {@link pid}). */
  static spawn(runtime: Runtime, definition: StdioDefinition): ServerProcess {
    const startedAt = runtime.monotonicNow();
    let child: Subprocess | null;
    try {
      child = runtime.spawn(definition.command, {
        args: definition.args,
        cwd: definition.cwd,
        env: serverEnvironment(runtime.envAll(), definition.env),
        stdio: { stdin: "pipe", stdout: "pipe", stderr: "pipe" },
        processGroup: true,
      });
    } catch {
      // Runtimes that know at once (Deno's NotFound) throw; Node reports no pid.
      child = null;
    }
    return new ServerProcess(runtime, child, startedAt);
  }

  /** The server's process id (its group's id), or null when it could not be started. */
  get pid(): number | null {
    const pid = this.#child?.pid;
    return pid === undefined || pid <= 0 ? null : pid;
  }

  /** Settles when the server process has exited (at once when it never started). */
  get exited(): Promise<unknown> {
    return this.pid === null ? Promise.resolve() : this.#child!.exited;
  }

  /** Settles when the server and its group are gone (or given up on); null before {@link stop}. */
  get stopping(): Promise<void> | null {
    return this.#stopping;
  }

  /**
   * Starts reading the server's output into `sink`, and reports through
   * `sink.lost` when the server exits or its output ends. Only the first
   * call attaches; a server that could not be started has nothing to read.
   */
  attach(sink: ProcessSink): void {
    const child = this.#child;
    if (this.#gone !== null || child === null || this.pid === null) return;
    const stdoutEnded = this.#readMessages(child.stdout, sink);
    this.#gone = Promise.all([child.exited, stdoutEnded, this.#stderrDrained]);
    void stdoutEnded.then(() => sink.lost());
    void child.exited.then(async () => {
      // Messages written just before the exit may still be in the pipe: let them arrive first.
      await settlesWithin(stdoutEnded, EXIT_FLUSH_MS, (ms, callback) => this.#runtime.setTimer(ms, callback));
      sink.lost();
    });
  }

  /** Writes `bytes` to the server's stdin; writes go out one at a time, in order. Rejects once stopping. */
  write(bytes: Uint8Array): Promise<void> {
    const stdin = this.#child?.stdin;
    if (stdin === null || stdin === undefined || this.#stopping !== null) return Promise.reject(new Error("Not connected"));
    const write = this.#writes.then(() => stdin.write(bytes));
    this.#writes = write.catch(() => {});
    return write;
  }

  /** Stops the server and its group (see the module comment); resolves once done or given up. Idempotent. */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #readMessages(reader: ByteReader | null, sink: ProcessSink): Promise<void> {
    if (reader === null) return;
    const lines = new MessageLines(MAX_MESSAGE_BYTES);
    try {
      for (let chunk = await reader.read(); chunk !== null; chunk = await reader.read()) lines.push(chunk, sink);
    } catch {
      // A broken pipe ends the output like EOF.
    }
  }

  async #stop(): Promise<void> {
    const child = this.#child;
    if (child === null || this.pid === null) return;
    // A server stopped before anything attached (startup cancelled while the MCP chunk loaded):
    // its output is read only to see it end.
    this.attach(IGNORED);
    const setTimer = (ms: number, callback: () => void) => this.#runtime.setTimer(ms, callback);
    const gone = this.#gone!;
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
