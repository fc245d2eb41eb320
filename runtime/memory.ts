/**
 * An in-memory {@link Runtime} for tests and fuzzing: scripted stdin chunks,
 * captured (and stallable or breakable) stdout, an in-memory filesystem and an
 * optional manual clock. Like the MCP SDK's in-memory transport, it is a real
 * implementation of the contract, not a mock of the core.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { type Disposable, type Runtime, RuntimeError, type Sha256, type StdioKind, type Subprocess } from "../src/host/runtime.ts";
import { MemoryFileSystem } from "./memory-fs.ts";
import { MemoryInput, MemoryOutput } from "./memory-stdio.ts";

// Re-exported so tests keep one import path for the whole memory runtime.
export { MemoryInput, MemoryOutput };

/** Where a {@link ManualClock}'s wall time starts: a fixed instant, so stored timestamps are reproducible. */
export const MANUAL_WALL_START_MS = Date.UTC(2025, 0, 1);

/** A clock whose timers fire only when the test advances it. */
export class ManualClock {
  #now = 0;
  #timers: { at: number; seq: number; callback: () => void }[] = [];
  #seq = 0;
  readonly #wallStartMs: number;

  /** Creates a clock at monotonic 0 and wall time `wallStartMs`. */
  constructor(wallStartMs = MANUAL_WALL_START_MS) {
    this.#wallStartMs = wallStartMs;
  }

  /** Current monotonic time in milliseconds. */
  now(): number {
    return this.#now;
  }

  /** Wall-clock milliseconds since the epoch, moving only with {@link advance}. */
  wallNow(): number {
    return this.#wallStartMs + this.#now;
  }

  /** The same as {@link now}, so a clock can stand in wherever the runtime's clock is expected. */
  monotonicNow(): number {
    return this.#now;
  }

  /** Schedules `callback` `ms` from now. */
  setTimer(ms: number, callback: () => void): Disposable {
    const timer = { at: this.#now + ms, seq: this.#seq++, callback };
    this.#timers.push(timer);
    return { dispose: () => void (this.#timers = this.#timers.filter((t) => t !== timer)) };
  }

  /** Moves time forward by `ms`, firing due timers in order. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      const due = this.#timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = due.at;
      due.callback();
    }
    this.#now = target;
  }
}

/** Raised by {@link MemoryRuntime.exit}, since a test process must not end. */
export class MemoryExit extends Error {
  /** The requested exit code. */
  readonly code: number;
  /** Creates the signal for `code`. */
  constructor(code: number) {
    super(`Runtime exit with code ${code}`);
    this.code = code;
  }
}

/** Options of {@link createMemoryRuntime}. */
export interface MemoryRuntimeOptions {
  /** Command-line arguments (default `["serve", "--stdio"]`). */
  readonly args?: readonly string[];
  /** Environment (default `{ HOME: "/home/user" }`). */
  readonly env?: Readonly<Record<string, string>>;
  /** Working directory (default `/work/project`, created). */
  readonly cwd?: string;
  /** What fds 0, 1 and 2 are (default FIFOs). */
  readonly stdio?: readonly [StdioKind, StdioKind, StdioKind];
  /** A manual clock for timers, monotonic and wall time (and file mtimes); real time when omitted. */
  readonly clock?: ManualClock;
  /** The process id (default 4242). */
  readonly pid?: number;
  /**
   * The host's process table for {@link Runtime.isProcessAlive}; pass one set
   * to several runtimes to simulate children on one host (default: only `pid`).
   */
  readonly livePids?: Set<number>;
  /** The HTTP client (default: the global `fetch`; tests reach loopback servers with it). */
  readonly fetch?: Runtime["fetch"];
  /** The loopback listener (default: none, every attempt rejects as the contract allows). */
  readonly listenLoopback?: Runtime["listenLoopback"];
  /** What {@link Runtime.hostname} answers (default `"memory"`). */
  readonly hostname?: string | null;
  /** A filesystem to share with other runtimes (default: a fresh one). */
  readonly fs?: MemoryFileSystem;
  /**
   * A real runtime's subprocesses and process table, for tests of MCP
   * servers (default: nothing can start, and only {@link livePids} are alive).
   */
  readonly processes?: Pick<Runtime, "spawn" | "isProcessAlive">;
  /** How "this program" starts again, for tests of Code Mode's sandbox host (default: it cannot, and `code` is not offered). */
  readonly self?: NonNullable<Runtime["self"]>;
}

/** A {@link Runtime} with its in-memory parts exposed. */
export interface MemoryRuntime extends Runtime {
  /** Scripted stdin. */
  readonly input: MemoryInput;
  /** Captured stdout. */
  readonly output: MemoryOutput;
  /** Captured stderr. */
  readonly errors: MemoryOutput;
  /** The filesystem. */
  readonly fs: MemoryFileSystem;
  /** The live pids {@link Runtime.isProcessAlive} consults; tests delete one to "crash" a process. */
  readonly livePids: Set<number>;
}

let uuidCounter = 0;

/**
 * An incremental SHA-256 over `node:crypto`, which Node and Deno both
 * provide natively, so the memory runtime hashes exactly like the real ones.
 */
export function createSha256(): Sha256 {
  const hash = createHash("sha256");
  return {
    update: (bytes) => void hash.update(bytes),
    digest: () => hash.digest("hex"),
  };
}

/** Creates an in-memory runtime. */
export function createMemoryRuntime(options: MemoryRuntimeOptions = {}): MemoryRuntime {
  const clock = options.clock;
  const fs = options.fs ?? new MemoryFileSystem(clock === undefined ? {} : { now: () => clock.wallNow() });
  const cwd = options.cwd ?? "/work/project";
  void fs.mkdir(cwd, 0o755);
  const env: Record<string, string> = { HOME: "/home/user", ...options.env };
  const pid = options.pid ?? 4242;
  const livePids = options.livePids ?? new Set([pid]);
  const hostname = options.hostname === undefined ? "memory" : options.hostname;
  const stdio = options.stdio ?? ["fifo", "fifo", "fifo"];
  return {
    name: "memory",
    args: options.args ?? ["serve", "--stdio"],
    input: new MemoryInput(),
    output: new MemoryOutput(),
    errors: new MemoryOutput(),
    get stdin() {
      return this.input;
    },
    get stdout() {
      return this.output;
    },
    get stderr() {
      return this.errors;
    },
    stdioKind: (fd) => Promise.resolve(stdio[fd]),
    fs,
    livePids,
    ...(options.self === undefined ? {} : { self: options.self }),
    spawn: options.processes?.spawn ?? ((): Subprocess => {
      throw new RuntimeError("not_found", "spawn");
    }),
    randomUUID: () => {
      const n = (++uuidCounter).toString(16).padStart(12, "0");
      return `00000000-0000-4000-8000-${n}`;
    },
    createSha256,
    setTimer: (ms, callback) => {
      if (clock !== undefined) return clock.setTimer(ms, callback);
      const handle = setTimeout(callback, ms);
      return { dispose: () => clearTimeout(handle) };
    },
    monotonicNow: () => clock?.now() ?? performance.now(),
    wallNow: () => clock?.wallNow() ?? Date.now(),
    env: (name) => env[name],
    envAll: () => ({ ...env }),
    cwd: () => cwd,
    pid,
    isProcessAlive: (candidate) => livePids.has(candidate) || (options.processes?.isProcessAlive(candidate) ?? false),
    hostname: () => hostname,
    fetch: options.fetch ?? ((url, init) => globalThis.fetch(url, init)),
    listenLoopback: options.listenLoopback ?? (() => Promise.reject(new RuntimeError("io", "no loopback listener"))),
    platform: "linux",
    exit: (code) => {
      throw new MemoryExit(code);
    },
  };
}
