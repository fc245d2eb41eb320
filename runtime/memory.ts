/**
 * An in-memory {@link Runtime} for tests and fuzzing: scripted stdin chunks,
 * captured (and stallable or breakable) stdout, an in-memory filesystem and an
 * optional manual clock. Like the MCP SDK's in-memory transport, it is a real
 * implementation of the contract, not a mock of the core.
 *
 * @module
 */

import {
  type ByteReader,
  type ByteWriter,
  type Disposable,
  READ_BATCH_BYTES,
  type Runtime,
  RuntimeError,
  type StdioKind,
  type Subprocess,
} from "../src/runtime.ts";
import { MemoryFileSystem } from "./memory-fs.ts";

/** Scripted standard input: each pushed chunk is delivered as its own read (split at 4,096 bytes). */
export class MemoryInput implements ByteReader {
  readonly #chunks: Uint8Array[] = [];
  #ended = false;
  #failed = false;
  #closed = false;
  #waiter: ((value: Uint8Array | null | Error) => void) | null = null;
  /** How many reads have been issued. */
  reads = 0;

  /** Queues bytes (a string is UTF-8 encoded). */
  push(data: Uint8Array | string): void {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    for (let offset = 0; offset < bytes.length; offset += READ_BATCH_BYTES) {
      this.#chunks.push(bytes.slice(offset, offset + READ_BATCH_BYTES));
    }
    this.#wake();
  }

  /** Signals end of input after the queued chunks. */
  end(): void {
    this.#ended = true;
    this.#wake();
  }

  /** Makes the next read fail with an I/O error. */
  fail(): void {
    this.#failed = true;
    this.#wake();
  }

  /** Whether the reader was closed by the server. */
  get closed(): boolean {
    return this.#closed;
  }

  read(): Promise<Uint8Array | null> {
    this.reads++;
    return new Promise((resolve, reject) => {
      this.#waiter = (value) => value instanceof Error ? reject(value) : resolve(value);
      this.#wake();
    });
  }

  close(): void {
    this.#closed = true;
    this.#wake();
  }

  #wake(): void {
    const waiter = this.#waiter;
    if (waiter === null) return;
    let value: Uint8Array | null | Error;
    if (this.#closed) value = null;
    else if (this.#failed) value = new RuntimeError("io", "read");
    else if (this.#chunks.length > 0) value = this.#chunks.shift()!;
    else if (this.#ended) value = null;
    else return;
    this.#waiter = null;
    waiter(value);
  }
}

/** Captured standard output that can stall (a client not reading) or break (a closed pipe). */
export class MemoryOutput implements ByteWriter {
  readonly #parts: Uint8Array[] = [];
  #stalled = false;
  #broken = false;
  #held: { bytes: Uint8Array; resolve(): void; reject(error: unknown): void }[] = [];
  /** Called after each completed write. */
  onWrite: (() => void) | null = null;

  write(bytes: Uint8Array): Promise<void> {
    if (this.#broken) return Promise.reject(new RuntimeError("broken_pipe", "write"));
    return new Promise((resolve, reject) => {
      this.#held.push({ bytes: bytes.slice(), resolve, reject });
      if (!this.#stalled) queueMicrotask(() => this.#flush());
    });
  }

  /** Stops completing writes until {@link resume}. */
  stall(): void {
    this.#stalled = true;
  }

  /** Completes held writes and keeps writing. */
  resume(): void {
    this.#stalled = false;
    this.#flush();
  }

  /** Fails every held and future write with `broken_pipe`. */
  break(): void {
    this.#broken = true;
    for (const held of this.#held.splice(0)) held.reject(new RuntimeError("broken_pipe", "write"));
  }

  /** Everything written so far, decoded. */
  text(): string {
    const decoder = new TextDecoder();
    return this.#parts.map((part) => decoder.decode(part, { stream: true })).join("") + decoder.decode();
  }

  /** Every complete line written so far, parsed as JSON. */
  frames(): Record<string, unknown>[] {
    return this.text().split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
  }

  #flush(): void {
    while (!this.#stalled && !this.#broken && this.#held.length > 0) {
      const held = this.#held.shift()!;
      this.#parts.push(held.bytes);
      held.resolve();
      this.onWrite?.();
    }
  }
}

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
  /** What {@link Runtime.hostname} answers (default `"memory"`). */
  readonly hostname?: string | null;
  /** A filesystem to share with other runtimes (default: a fresh one). */
  readonly fs?: MemoryFileSystem;
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
    spawn: (): Subprocess => {
      throw new RuntimeError("not_found", "spawn");
    },
    randomUUID: () => {
      const n = (++uuidCounter).toString(16).padStart(12, "0");
      return `00000000-0000-4000-8000-${n}`;
    },
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
    isProcessAlive: (candidate) => livePids.has(candidate),
    hostname: () => hostname,
    platform: "linux",
    exit: (code) => {
      throw new MemoryExit(code);
    },
  };
}
