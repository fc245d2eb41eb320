/**
 * The Node.js implementation of the magi-code {@link Runtime} contract.
 *
 * stdin is read through a `net.Socket` over fd 0 with a single reused
 * 4,096-byte buffer (`onread`), paused between reads, so the backend never
 * buffers more than one batch, and resumed on the next turn of the event
 * loop, so stdout is written between batches. stdout goes through `process.stdout.write`,
 * which on pipes is libuv's non-blocking stream write: a stalled reader never
 * blocks the event loop, so deadlines keep firing, and `writableLength` says
 * synchronously what the OS has not taken yet.
 *
 * @module
 */

import type * as ChildProcess from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import type * as Os from "node:os";
import { isatty, ReadStream } from "node:tty";
import {
  type ByteReader,
  type ByteWriter,
  type Disposable,
  READ_BATCH_BYTES,
  type Runtime,
  type RuntimeError,
  type SpawnOptions,
  type StdioKind,
  type Subprocess,
} from "../src/host/runtime.ts";
import { classifySocket, socketInode } from "../src/util/stdio-kind.ts";
import { nodeBuiltin } from "./node-builtin.ts";
import { createSha256, randomUUID } from "./node-crypto.ts";
import { nodeFileSystem, normalizeError } from "./node-fs.ts";
import { nodeFetch } from "./node-http.ts";

// Re-exported so callers keep one import path for the whole Node adapter.
export { nodeFileSystem, normalizeError };

/** A pull reader over a readable stream: one chunk handed out at a time, the stream paused meanwhile. */
function streamReader(stream: NodeJS.ReadableStream & { destroy(): void }): ByteReader {
  let ended = false;
  let failed: RuntimeError | null = null;
  const queue: Uint8Array[] = [];
  let waiter: { resolve(value: Uint8Array | null): void; reject(error: unknown): void } | null = null;
  const settle = () => {
    if (waiter === null) return;
    const current = waiter;
    if (queue.length > 0) {
      waiter = null;
      current.resolve(queue.shift()!);
    } else if (failed !== null) {
      waiter = null;
      current.reject(failed);
    } else if (ended) {
      waiter = null;
      current.resolve(null);
    }
  };
  stream.on("data", (chunk: Uint8Array) => {
    for (let offset = 0; offset < chunk.length; offset += READ_BATCH_BYTES) {
      queue.push(chunk.subarray(offset, offset + READ_BATCH_BYTES));
    }
    stream.pause();
    settle();
  });
  stream.on("end", () => {
    ended = true;
    settle();
  });
  stream.on("error", (error) => {
    failed = normalizeError(error, "read");
    settle();
  });
  stream.pause();
  return {
    read: () =>
      new Promise((resolve, reject) => {
        waiter = { resolve, reject };
        settle();
        if (waiter !== null && !ended && failed === null) stream.resume();
      }),
    close: () => {
      ended = true;
      stream.destroy();
      settle();
    },
  };
}

/** Reads fd 0 in 4,096-byte batches into one reused buffer. */
function stdinReader(): ByteReader {
  const buffer = Buffer.alloc(READ_BATCH_BYTES);
  let socket: net.Socket | null = null;
  let ended = false;
  let failure: RuntimeError | null = null;
  let waiter: { resolve(value: Uint8Array | null): void; reject(error: unknown): void } | null = null;
  const finish = (value: Uint8Array | null, error?: unknown) => {
    const current = waiter;
    waiter = null;
    if (current === null) return;
    if (error === undefined) current.resolve(value);
    else current.reject(error);
  };
  const open = (): net.Socket => {
    const onread = {
      buffer,
      callback: (bytes: number) => {
        finish(buffer.subarray(0, bytes));
        return false;
      },
    };
    // `onread` is accepted by the constructor since Node 12 but missing from @types/node's constructor options.
    // net.Socket refuses a terminal's fd; `magi-code mcp approve` reads its answer from one (serving never does).
    const terminal = isatty(0);
    const created = terminal
      ? new ReadStream(0, { onread } as net.SocketConstructorOpts)
      : new net.Socket({ fd: 0, readable: true, writable: false, onread } as net.SocketConstructorOpts);
    // A terminal stream starts paused; the socket over a pipe starts reading on its own.
    if (terminal) created.resume();
    created.on("end", () => {
      ended = true;
      finish(null);
    });
    created.on("error", (error) => {
      failure = normalizeError(error, "read");
      finish(null, failure);
    });
    return created;
  };
  const resume = () => {
    if (waiter !== null && !ended) socket?.resume();
  };
  return {
    read: () =>
      new Promise((resolve, reject) => {
        if (failure !== null) return reject(failure);
        if (ended) return resolve(null);
        waiter = { resolve, reject };
        if (socket === null) socket = open();
        // Resumed on the next turn of the event loop, not at once: the previous batch is handled (and this
        // read called) from inside libuv's read callback, which goes on reading, up to 32 batches, while
        // reading is on, before the loop retries stdout. A client pipelining thousands of requests would
        // get hundreds of KB of answers queued per turn, with the pipe taking 64 KiB of them.
        else setImmediate(resume);
      }),
    close: () => {
      ended = true;
      socket?.destroy();
      finish(null);
    },
  };
}

/**
 * A writer over a Node writable. For stdout on a pipe or socketpair that is
 * a `net.Socket` on libuv: `write()` first tries the descriptor (non-blocking)
 * at once, and when the OS takes the bytes whole the stream's
 * `writableLength` is back to 0 before `write()` returns, although the
 * callback waits for the next tick; what the OS refused libuv keeps and
 * writes as the pipe drains, counted in `writableLength` until it is out. So
 * `writableLength` is exactly what {@link ByteWriter.heldBytes} asks for, at
 * no cost. (`fs.writeSync` on fd 1 would have to handle EAGAIN itself, and
 * would block the event loop whenever the descriptor is in blocking mode.)
 */
function stdoutWriter(stream: NodeJS.WritableStream & { readonly writableLength: number }): ByteWriter {
  // Without a listener an EPIPE 'error' event would crash the process; the write callback reports it.
  stream.on("error", () => {});
  return {
    write: (bytes) =>
      new Promise((resolve, reject) => {
        stream.write(bytes, (error) => error ? reject(normalizeError(error, "write")) : resolve());
      }),
    heldBytes: () => stream.writableLength,
  };
}

/** Reads one `/proc/net` table, or "" when it cannot be read. */
function readProcTable(name: string): string {
  try {
    return fs.readFileSync(`/proc/net/${name}`, "utf8");
  } catch {
    return "";
  }
}

function stdioKind(fd: 0 | 1): StdioKind {
  let stats: fs.Stats;
  try {
    stats = fs.fstatSync(fd);
  } catch {
    return "other";
  }
  if (stats.isFIFO()) return "fifo";
  if (stats.isFile()) return "file";
  if (stats.isCharacterDevice()) return isatty(fd) ? "tty" : "device";
  if (stats.isBlockDevice()) return "device";
  if (!stats.isSocket()) return "other";
  if (process.platform !== "linux") return "socketpair";
  try {
    const inode = socketInode(fs.readlinkSync(`/proc/self/fd/${fd}`));
    return inode === null ? "socket" : classifySocket(readProcTable, inode);
  } catch {
    return "socket";
  }
}

function spawn(command: string, options: SpawnOptions): Subprocess {
  const child = nodeBuiltin<typeof ChildProcess>("node:child_process").spawn(command, [...options.args], {
    cwd: options.cwd,
    env: { ...options.env },
    stdio: [options.stdio.stdin === "pipe" ? "pipe" : "ignore", options.stdio.stdout === "pipe" ? "pipe" : "ignore", options.stdio.stderr === "pipe" ? "pipe" : "ignore"],
    detached: options.processGroup,
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.once("error", () => resolve({ code: null, signal: null }));
    child.once("close", (code, signal) => resolve({ code, signal }));
  });
  const stdin = child.stdin;
  return {
    pid: child.pid ?? -1,
    stdin: stdin === null ? null : {
      ...stdoutWriter(stdin),
      close: () => new Promise<void>((resolve) => stdin.end(resolve)),
    },
    stdout: child.stdout === null ? null : streamReader(child.stdout),
    stderr: child.stderr === null ? null : streamReader(child.stderr),
    kill: (signal) => {
      try {
        if (options.processGroup && child.pid !== undefined) process.kill(-child.pid, signal);
        else child.kill(signal);
      } catch {
        // Already gone: killing an exited process is not a failure.
      }
    },
    exited,
  };
}

/** Largest pid a `pid_t` holds; Node throws (not ESRCH) beyond it, which would read as alive. */
const MAX_PID = 0x7fff_ffff;

function isProcessAlive(pid: number): boolean {
  // 0 and negative pids address process groups, so they never name one process.
  if (!Number.isInteger(pid) || pid <= 0 || pid > MAX_PID) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM means the process exists under another user; anything but ESRCH is inconclusive, so alive.
    return (error as { code?: unknown } | null)?.code !== "ESRCH";
  }
}

function hostname(): string | null {
  try {
    return nodeBuiltin<typeof Os>("node:os").hostname() || null; // An empty name identifies nothing.
  } catch {
    return null;
  }
}

/** Creates the Node runtime for this process. */
export function createNodeRuntime(): Runtime {
  return {
    name: "node",
    args: process.argv.slice(2),
    stdin: stdinReader(),
    stdout: stdoutWriter(process.stdout),
    stderr: stdoutWriter(process.stderr),
    stdioKind: (fd) => Promise.resolve(stdioKind(fd)),
    fs: nodeFileSystem,
    // A single executable sees its own path as the script too (argv[1]); it takes no script argument.
    self: { command: process.execPath, args: process.argv[1] === undefined || process.argv[1] === process.execPath ? [] : [process.argv[1]] },
    spawn,
    randomUUID,
    createSha256,
    setTimer: (ms, callback): Disposable => {
      const handle = setTimeout(callback, ms);
      return { dispose: () => clearTimeout(handle) };
    },
    monotonicNow: () => performance.now(),
    wallNow: () => Date.now(),
    env: (name) => process.env[name],
    envAll: () => {
      const env: Record<string, string> = {};
      for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
      return env;
    },
    cwd: () => process.cwd(),
    pid: process.pid,
    isProcessAlive,
    hostname,
    fetch: nodeFetch,
    // Loaded on first use: only `mcp login` listens, so a child never loads it.
    listenLoopback: async (handler) => (await import("./node-loopback.ts")).nodeListenLoopback(handler),
    platform: process.platform === "win32" ? "windows" : process.platform,
    exit: (code) => process.exit(code),
  };
}
