/**
 * The one contract between the magi-code core and its host runtime.
 *
 * Everything under `src/` reaches pipes, the filesystem, subprocesses, clocks,
 * randomness, the environment and process exit only through a {@link Runtime}
 * handed to it. `runtime/node.ts` and `runtime/deno.ts` implement it (and are the
 * entry points); `runtime/memory.ts` implements it in memory for tests. Adapters
 * normalise platform errors into {@link RuntimeError} codes so the core never
 * inspects `errno` strings.
 *
 * @module
 */

import type { Disposable } from "./errors.ts";
import type { FileSystem } from "./fs.ts";
import type { LoopbackHandler, LoopbackListener } from "./loopback.ts";
import type { SpawnOptions, Subprocess } from "./process.ts";
import type { ByteReader, ByteWriter, StdioKind } from "./streams.ts";

export * from "./errors.ts";
export type * from "./fs.ts";
export type * from "./loopback.ts";
export type * from "./process.ts";
export * from "./streams.ts";

/**
 * An incremental SHA-256: bytes are fed in order as they are read, so a
 * digest of a large file never needs the whole file in one buffer (WebCrypto
 * has no incremental form, and copies its input on the calling thread).
 */
export interface Sha256 {
  /** Hashes `bytes` next; they are consumed before this returns, so the buffer may be reused. */
  update(bytes: Uint8Array): void;
  /** The lowercase hex digest of every byte fed so far; call it once, after the last update. */
  digest(): string;
}

/** What {@link Runtime.fetch} sends: the subset of `RequestInit` the core uses. */
export interface HttpRequestInit {
  /** `POST` for provider turns, `GET` for a catalog refresh's model list; MCP HTTP servers also get `DELETE` (ending a session). */
  readonly method: "POST" | "GET" | "DELETE";
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body, sent as UTF-8; absent for `GET`. */
  readonly body?: string;
  /** Aborts the request and its response body. */
  readonly signal: AbortSignal;
  /** Redirects are failures: a provider call never follows one. */
  readonly redirect: "error";
}

/** What {@link Runtime.fetch} answers: the subset of `Response` the core reads (a `Response` is one). */
export interface HttpResponse {
  readonly status: number;
  /** Whether the status is 2xx. */
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };
  /** The body stream; cancelling it closes the connection's response. */
  readonly body: ReadableStream<Uint8Array> | null;
}

/** The host runtime as the core sees it. */
export interface Runtime {
  /** `"node"`, `"deno"` or `"memory"`: for diagnostics and benches only. */
  readonly name: string;
  /** Command-line arguments after the program (and script) name. */
  readonly args: readonly string[];
  readonly stdin: ByteReader;
  /** Standard output: protocol bytes only. */
  readonly stdout: ByteWriter;
  /** Standard error: launch errors only, never during serving. */
  readonly stderr: ByteWriter;
  /** What standard input (0) or output (1) is connected to: the launch check of `serve --stdio`. */
  stdioKind(fd: 0 | 1): Promise<StdioKind>;
  readonly fs: FileSystem;
  /**
   * How to start this same program again with other arguments: the command,
   * and the arguments that come before magi-code's own (the script under
   * Node, `run` and the entry module under Deno, none in a single
   * executable). Absent where the runtime cannot start itself (the memory
   * runtime). The Code Mode sandbox host is started this way.
   */
  readonly self?: { readonly command: string; readonly args: readonly string[] };
  /** Starts `command` as a subprocess; rejects with `not_found` if it cannot be started. */
  spawn(command: string, options: SpawnOptions): Subprocess;
  /** A fresh random (version 4) UUID. */
  randomUUID(): string;
  /** Starts an incremental SHA-256. */
  createSha256(): Sha256;
  /** Runs `callback` once after `ms` milliseconds unless disposed first. */
  setTimer(ms: number, callback: () => void): Disposable;
  /** Monotonic milliseconds, for deadlines. */
  monotonicNow(): number;
  /** Wall-clock milliseconds since the epoch, for timestamps. */
  wallNow(): number;
  env(name: string): string | undefined;
  /** A copy of the whole environment, for subprocesses. */
  envAll(): Record<string, string>;
  /** The process's current working directory (absolute). */
  cwd(): string;
  readonly pid: number;
  /**
   * True if a process with `pid` exists on this host: `kill(pid, 0)` succeeds
   * or fails with EPERM (it exists but belongs to someone else); false on
   * ESRCH and for anything that is not a positive integer, since 0 and
   * negative numbers name process groups. Sends no signal. A zombie counts
   * as alive until it is reaped. When the check itself is unavailable the
   * answer is true: lease takeover must err towards waiting.
   */
  isProcessAlive(pid: number): boolean;
  /**
   * This host's name, as written into leases so other children can tell
   * whether a lease's pid is checkable here; null when it cannot be read.
   */
  hostname(): string | null;
  /** `"linux"`, `"darwin"`, `"windows"` or another platform name. */
  readonly platform: string;
  /**
   * One HTTP request (provider calls). Deno's and the memory runtime's are
   * the Web `fetch`; Node's goes through `node:http`, because loading Node
   * 20's `fetch` (undici) costs a first turn about 50 ms and 19 MiB.
   * Rejects when the request cannot be sent, is aborted, or is redirected.
   */
  fetch(url: string, init: HttpRequestInit): Promise<HttpResponse>;
  /**
   * Listens on 127.0.0.1 at a port the system picks and answers each request
   * with `handler`: only `magi-code mcp login` uses it (the OAuth redirect).
   * Rejects when the listener cannot be opened.
   */
  listenLoopback(handler: LoopbackHandler): Promise<LoopbackListener>;
  /** Ends the process with `code`, abandoning pending I/O. */
  exit(code: number): never;
}
