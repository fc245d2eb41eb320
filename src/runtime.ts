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

/** Something that can be released once; releasing twice is harmless. */
export interface Disposable {
  /** Releases the resource. */
  dispose(): void;
}

/**
 * Normalised failure codes raised by runtime adapters. The core maps these to
 * wire codes at its edge; they never reach the wire themselves.
 */
export const RuntimeErrorCode = {
  notFound: "not_found",
  exists: "exists",
  permission: "permission",
  notDirectory: "not_directory",
  isDirectory: "is_directory",
  notFile: "not_file",
  symlink: "symlink",
  tooLarge: "too_large",
  brokenPipe: "broken_pipe",
  closed: "closed",
  io: "io",
} as const;

/** One of {@link RuntimeErrorCode}'s values. */
export type RuntimeErrorCode = typeof RuntimeErrorCode[keyof typeof RuntimeErrorCode];

/** A platform failure, reduced to a code. The message never carries a path. */
export class RuntimeError extends Error {
  /** The normalised failure code. */
  readonly code: RuntimeErrorCode;

  /** Creates an error with `code`; `detail` is a fixed, path-free phrase. */
  constructor(code: RuntimeErrorCode, detail = "") {
    super(detail === "" ? `Runtime operation failed with ${code}` : `${detail} failed with ${code}`);
    this.name = "RuntimeError";
    this.code = code;
  }
}

/** Returns whether `error` is a {@link RuntimeError} carrying `code`. */
export function isRuntimeError(error: unknown, code?: RuntimeErrorCode): error is RuntimeError {
  return error instanceof RuntimeError && (code === undefined || error.code === code);
}

/**
 * What a standard stream is connected to. `socketpair` is an unnamed AF_UNIX
 * socket, as Node, Electron and libuv parents create for child stdio; `socket`
 * is any other socket.
 */
export type StdioKind = "fifo" | "socketpair" | "socket" | "tty" | "file" | "device" | "other";

/** A pull-based byte source: each read yields the next batch, or `null` at end of input. */
export interface ByteReader {
  /**
   * Resolves with at most {@link READ_BATCH_BYTES} bytes, or `null` at EOF.
   * The bytes stay valid until the next call, no longer: adapters may reuse
   * one buffer. Only one read may be outstanding. Rejects with a
   * {@link RuntimeError}.
   */
  read(): Promise<Uint8Array | null>;
  /** Stops reading and releases the handle; a pending read resolves `null`. */
  close(): void;
}

/** Largest batch a {@link ByteReader} yields. */
export const READ_BATCH_BYTES = 4096;

/** An asynchronous byte sink that never blocks the event loop. */
export interface ByteWriter {
  /**
   * Resolves once every byte has been handed to the operating system; rejects
   * with a {@link RuntimeError} (`broken_pipe`, `closed`, `io`) otherwise. The
   * caller issues one write at a time.
   */
  write(bytes: Uint8Array): Promise<void>;
}

/** What kind of filesystem object a path or handle names. */
export type FileKind = "file" | "directory" | "symlink" | "fifo" | "socket" | "device" | "other";

/** The stat fields the core relies on. */
export interface FileInfo {
  /** The kind of object. */
  readonly kind: FileKind;
  /** Size in bytes. */
  readonly size: number;
  /** Permission bits (`mode & 0o7777`). */
  readonly mode: number;
  /** Modification time, milliseconds since the epoch. */
  readonly mtimeMs: number;
  /** Device number; with `ino`, the object's identity. */
  readonly dev: number;
  /** Inode number. */
  readonly ino: number;
  /** Hard-link count. */
  readonly nlink: number;
}

/** One directory entry. */
export interface DirEntry {
  /** The entry's file name. */
  readonly name: string;
  /** Its kind, without following symlinks. */
  readonly kind: FileKind;
}

/** A file opened for reading. */
export interface ReadHandle {
  /** Stats the open handle (not the path), for identity checks after open. */
  stat(): Promise<FileInfo>;
  /** Reads up to `buffer.length` bytes at `position`; resolves with the count, 0 at end. */
  read(buffer: Uint8Array, position: number): Promise<number>;
  /** Closes the handle. */
  close(): Promise<void>;
}

/** A file opened for appending. */
export interface AppendHandle {
  /** Stats the open handle. */
  stat(): Promise<FileInfo>;
  /** Appends all of `bytes` with one write call where the platform allows it. */
  append(bytes: Uint8Array): Promise<void>;
  /** Truncates the file to `length` bytes. */
  truncate(length: number): Promise<void>;
  /** Flushes data and metadata to stable storage (fsync). */
  sync(): Promise<void>;
  /** Closes the handle. */
  close(): Promise<void>;
}

/** The filesystem operations the core needs; every path is absolute. */
export interface FileSystem {
  /** Stats `path` without following a final symlink. */
  lstat(path: string): Promise<FileInfo>;
  /** Stats `path`, following symlinks. */
  stat(path: string): Promise<FileInfo>;
  /** Resolves `path` to its canonical form. */
  realpath(path: string): Promise<string>;
  /** Lists `path`, without `.` and `..`, in platform order. */
  readDir(path: string): Promise<DirEntry[]>;
  /** Creates `path` and missing parents with `mode`; an existing directory is success. */
  mkdir(path: string, mode: number): Promise<void>;
  /**
   * Reads a whole regular file of at most `maxBytes` bytes; rejects with
   * `too_large` beyond that, `symlink` if `path` is a symlink and `not_file`
   * if it is not a regular file. Adapters check with `lstat` before opening
   * (Node also opens with `O_NONBLOCK`), so a FIFO at `path` is refused
   * without blocking; on Deno, which has no `O_NONBLOCK`, a FIFO swapped in
   * between that check and the open can still block the read.
   */
  readFile(path: string, maxBytes: number): Promise<Uint8Array>;
  /** Opens a regular file for reading, refusing a final symlink (`symlink`) and non-files (`not_file`). */
  openRead(path: string): Promise<ReadHandle>;
  /** Creates `path` exclusively with `mode`, writes `bytes`, syncs and closes; `exists` if present. */
  createExclusive(path: string, bytes: Uint8Array, mode: number): Promise<void>;
  /** Fsyncs the directory `path`, so a file created in it keeps its entry after a power loss. */
  syncDirectory(path: string): Promise<void>;
  /** Opens `path` for appending, refusing a final symlink; `create` allows a new file with `mode`. */
  openAppend(path: string, options: { create: boolean; mode: number }): Promise<AppendHandle>;
  /** Atomically renames `from` to `to`. */
  rename(from: string, to: string): Promise<void>;
  /** Removes a file. */
  unlink(path: string): Promise<void>;
}

/** How a subprocess's stdio is wired. */
export type StdioMode = "pipe" | "null" | "inherit-stderr";

/** Options for {@link Runtime.spawn}. */
export interface SpawnOptions {
  /** Arguments after the command. */
  readonly args: readonly string[];
  /** Working directory (absolute). */
  readonly cwd: string;
  /** The complete environment of the child. */
  readonly env: Readonly<Record<string, string>>;
  /** Whether the child gets piped stdin/stdout/stderr or none. */
  readonly stdio: { stdin: "pipe" | "null"; stdout: "pipe" | "null"; stderr: "pipe" | "null" };
  /** Starts the child in its own process group so the whole group can be signalled. */
  readonly processGroup: boolean;
}

/** How a subprocess ended. */
export interface ExitStatus {
  /** Exit code, or `null` when killed by a signal. */
  readonly code: number | null;
  /** Terminating signal name, or `null`. */
  readonly signal: string | null;
}

/** A running subprocess. */
export interface Subprocess {
  /** The child's process id. */
  readonly pid: number;
  /** Its stdin, when piped; `close()` sends EOF. */
  readonly stdin: (ByteWriter & { close(): Promise<void> }) | null;
  /** Its stdout, when piped. */
  readonly stdout: ByteReader | null;
  /** Its stderr, when piped. */
  readonly stderr: ByteReader | null;
  /** Sends `signal` to the child, or to its group when spawned with `processGroup`. */
  kill(signal: "SIGTERM" | "SIGKILL" | "SIGINT"): void;
  /** Resolves when the child has exited. */
  readonly exited: Promise<ExitStatus>;
}

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
  /** HTTP method. */
  readonly method: "POST";
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body, sent as UTF-8. */
  readonly body: string;
  /** Aborts the request and its response body. */
  readonly signal: AbortSignal;
  /** Redirects are failures: a provider call never follows one. */
  readonly redirect: "error";
}

/** What {@link Runtime.fetch} answers: the subset of `Response` the core reads (a `Response` is one). */
export interface HttpResponse {
  /** Status code. */
  readonly status: number;
  /** Whether the status is 2xx. */
  readonly ok: boolean;
  /** Response headers. */
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
  /** Standard input. */
  readonly stdin: ByteReader;
  /** Standard output: protocol bytes only. */
  readonly stdout: ByteWriter;
  /** Standard error: launch errors only, never during serving. */
  readonly stderr: ByteWriter;
  /** What the standard stream with descriptor 0, 1 or 2 is connected to. */
  stdioKind(fd: 0 | 1 | 2): Promise<StdioKind>;
  /** The filesystem. */
  readonly fs: FileSystem;
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
  /** Reads one environment variable. */
  env(name: string): string | undefined;
  /** A copy of the whole environment, for subprocesses. */
  envAll(): Record<string, string>;
  /** The process's current working directory (absolute). */
  cwd(): string;
  /** The process id. */
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
  /** Ends the process with `code`, abandoning pending I/O. */
  exit(code: number): never;
}
