/**
 * The Deno implementation of the magi-code {@link Runtime} contract.
 *
 * stdin is read with `Deno.stdin.read` into one reused 4,096-byte buffer;
 * stdout is written with the asynchronous `Deno.stdout.write`, looping over
 * partial writes, so a stalled reader never blocks the event loop. Deno has no
 * `O_NOFOLLOW`, so opens check the path with `lstat` first and compare the
 * opened handle's identity afterwards.
 *
 * @module
 */

import {
  type AppendHandle,
  type ByteReader,
  type ByteWriter,
  type DirEntry,
  type FileInfo,
  type FileKind,
  type FileSystem,
  READ_BATCH_BYTES,
  type ReadHandle,
  type Runtime,
  RuntimeError,
  type RuntimeErrorCode,
  type SpawnOptions,
  type StdioKind,
  type Subprocess,
} from "../src/runtime.ts";
import { classifySocket, socketInode } from "../src/util/stdio-kind.ts";

const ERROR_CODES: [new (...args: never[]) => Error, RuntimeErrorCode][] = [
  [Deno.errors.NotFound, "not_found"],
  [Deno.errors.AlreadyExists, "exists"],
  [Deno.errors.PermissionDenied, "permission"],
  [Deno.errors.NotCapable, "permission"],
  [Deno.errors.NotADirectory, "not_directory"],
  [Deno.errors.IsADirectory, "is_directory"],
  [Deno.errors.FilesystemLoop, "symlink"],
  [Deno.errors.BrokenPipe, "broken_pipe"],
  [Deno.errors.ConnectionReset, "broken_pipe"],
  [Deno.errors.BadResource, "closed"],
];

/** Maps a Deno error to a {@link RuntimeError}; the message never carries a path. */
export function normalizeError(error: unknown, operation: string): RuntimeError {
  if (error instanceof RuntimeError) return error;
  for (const [type, code] of ERROR_CODES) if (error instanceof type) return new RuntimeError(code, operation);
  return new RuntimeError("io", operation);
}

async function guard<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw normalizeError(error, operation);
  }
}

function fileKind(info: Deno.FileInfo | Deno.DirEntry): FileKind {
  if (info.isFile) return "file";
  if (info.isDirectory) return "directory";
  if (info.isSymlink) return "symlink";
  if ("isFifo" in info) {
    if (info.isFifo) return "fifo";
    if (info.isSocket) return "socket";
    if (info.isCharDevice || info.isBlockDevice) return "device";
  }
  return "other";
}

function fileInfo(info: Deno.FileInfo): FileInfo {
  return {
    kind: fileKind(info),
    size: info.size,
    mode: (info.mode ?? 0) & 0o7777,
    mtimeMs: info.mtime?.getTime() ?? 0,
    dev: info.dev,
    ino: info.ino ?? 0,
    nlink: info.nlink ?? 1,
  };
}

/** Opens a regular file without following a final symlink: lstat, open, then compare identity. */
async function openChecked(path: string, options: Deno.OpenOptions, mayCreate: boolean): Promise<Deno.FsFile> {
  let before: Deno.FileInfo | null = null;
  try {
    before = await Deno.lstat(path);
  } catch (error) {
    if (!(mayCreate && error instanceof Deno.errors.NotFound)) throw error;
  }
  if (before !== null && before.isSymlink) throw new RuntimeError("symlink", "open");
  if (before !== null && !before.isFile) throw new RuntimeError("not_file", "open");
  const file = await Deno.open(path, options);
  const after = await file.stat();
  const swapped = before !== null && (after.dev !== before.dev || after.ino !== before.ino);
  if (swapped || !after.isFile) {
    file.close();
    throw new RuntimeError(swapped ? "symlink" : "not_file", "open");
  }
  return file;
}

async function readAt(file: Deno.FsFile, buffer: Uint8Array, position: number): Promise<number> {
  await file.seek(position, Deno.SeekMode.Start);
  return (await file.read(buffer)) ?? 0;
}

/** The Deno filesystem adapter. */
export const denoFileSystem: FileSystem = {
  lstat: (path) => guard("lstat", async () => fileInfo(await Deno.lstat(path))),
  stat: (path) => guard("stat", async () => fileInfo(await Deno.stat(path))),
  realpath: (path) => guard("realpath", () => Deno.realPath(path)),
  readDir: (path) =>
    guard("readdir", async () => {
      const entries: DirEntry[] = [];
      for await (const entry of Deno.readDir(path)) entries.push({ name: entry.name, kind: fileKind(entry) });
      return entries;
    }),
  mkdir: (path, mode) => guard("mkdir", () => Deno.mkdir(path, { recursive: true, mode })),
  readFile: (path, maxBytes) =>
    guard("readFile", async () => {
      const file = await openChecked(path, { read: true }, false);
      try {
        const buffer = new Uint8Array(Math.min((await file.stat()).size, maxBytes) + 1);
        let length = 0;
        for (;;) {
          if (length === buffer.length) throw new RuntimeError("too_large", "readFile");
          const read = await file.read(buffer.subarray(length));
          if (read === null || read === 0) break;
          length += read;
        }
        return buffer.subarray(0, length);
      } finally {
        file.close();
      }
    }),
  openRead: (path) =>
    guard("open", async (): Promise<ReadHandle> => {
      const file = await openChecked(path, { read: true }, false);
      return {
        stat: () => guard("fstat", async () => fileInfo(await file.stat())),
        read: (buffer, position) => guard("read", () => readAt(file, buffer, position)),
        close: () => guard("close", () => Promise.resolve(file.close())),
      };
    }),
  createExclusive: (path, bytes, mode) =>
    guard("create", async () => {
      const file = await Deno.open(path, { write: true, createNew: true, mode });
      try {
        let written = 0;
        while (written < bytes.length) written += await file.write(bytes.subarray(written));
        await file.sync();
      } finally {
        file.close();
      }
    }),
  openAppend: (path, options) =>
    guard("open", async (): Promise<AppendHandle> => {
      const file = await openChecked(path, { append: true, create: options.create, mode: options.mode }, options.create);
      return {
        stat: () => guard("fstat", async () => fileInfo(await file.stat())),
        append: (bytes) =>
          guard("append", async () => {
            let written = 0;
            while (written < bytes.length) written += await file.write(bytes.subarray(written));
          }),
        truncate: (length) => guard("truncate", () => file.truncate(length)),
        sync: () => guard("fsync", () => file.sync()),
        close: () => guard("close", () => Promise.resolve(file.close())),
      };
    }),
  rename: (from, to) => guard("rename", () => Deno.rename(from, to)),
  unlink: (path) => guard("unlink", () => Deno.remove(path)),
};

function stdinReader(): ByteReader {
  const buffer = new Uint8Array(READ_BATCH_BYTES);
  let closed = false;
  return {
    read: async () => {
      if (closed) return null;
      try {
        const count = await Deno.stdin.read(buffer);
        return count === null || closed ? null : buffer.subarray(0, count);
      } catch (error) {
        if (closed) return null;
        throw normalizeError(error, "read");
      }
    },
    close: () => {
      closed = true;
    },
  };
}

function writerOf(sink: { write(bytes: Uint8Array): Promise<number> }): ByteWriter {
  return {
    write: async (bytes) => {
      try {
        let written = 0;
        while (written < bytes.length) written += await sink.write(bytes.subarray(written));
      } catch (error) {
        throw normalizeError(error, "write");
      }
    },
  };
}

/** Reads one `/proc/net` table, or "" when it cannot be read. */
function readProcTable(name: string): string {
  try {
    return Deno.readTextFileSync(`/proc/net/${name}`);
  } catch {
    return "";
  }
}

function stdioKind(fd: 0 | 1 | 2): StdioKind {
  let info: Deno.FileInfo;
  try {
    // `/dev/fd/N` stats the object behind the descriptor on Linux and macOS alike.
    info = Deno.statSync(`/dev/fd/${fd}`);
  } catch {
    return "other";
  }
  if (info.isFifo) return "fifo";
  if (info.isFile) return "file";
  if (info.isCharDevice) return isTerminal(fd) ? "tty" : "device";
  if (info.isBlockDevice) return "device";
  if (!info.isSocket) return "other";
  if (Deno.build.os !== "linux") return "socketpair";
  try {
    const inode = socketInode(Deno.readLinkSync(`/proc/self/fd/${fd}`));
    return inode === null ? "socket" : classifySocket(readProcTable, inode);
  } catch {
    return "socket";
  }
}

function isTerminal(fd: 0 | 1 | 2): boolean {
  return [Deno.stdin, Deno.stdout, Deno.stderr][fd]!.isTerminal();
}

function readerOf(stream: ReadableStream<Uint8Array>): ByteReader {
  const reader = stream.getReader();
  let pending: Uint8Array | null = null;
  return {
    read: async () => {
      if (pending === null) {
        const next = await reader.read().catch((error) => {
          throw normalizeError(error, "read");
        });
        if (next.done) return null;
        pending = next.value;
      }
      const batch: Uint8Array = pending.subarray(0, READ_BATCH_BYTES);
      pending = pending.length > READ_BATCH_BYTES ? pending.subarray(READ_BATCH_BYTES) : null;
      return batch;
    },
    close: () => void reader.cancel().catch(() => {}),
  };
}

function spawn(command: string, options: SpawnOptions): Subprocess {
  const child = new Deno.Command(command, {
    args: [...options.args],
    cwd: options.cwd,
    env: { ...options.env },
    clearEnv: true,
    stdin: options.stdio.stdin === "pipe" ? "piped" : "null",
    stdout: options.stdio.stdout === "pipe" ? "piped" : "null",
    stderr: options.stdio.stderr === "pipe" ? "piped" : "null",
    detached: options.processGroup,
  }).spawn();
  const stdinWriter = options.stdio.stdin === "pipe" ? child.stdin.getWriter() : null;
  return {
    pid: child.pid,
    stdin: stdinWriter === null ? null : {
      write: (bytes) => stdinWriter.write(bytes).catch((error) => Promise.reject(normalizeError(error, "write"))),
      close: () => stdinWriter.close().catch(() => {}),
    },
    stdout: options.stdio.stdout === "pipe" ? readerOf(child.stdout) : null,
    stderr: options.stdio.stderr === "pipe" ? readerOf(child.stderr) : null,
    kill: (signal) => {
      try {
        if (options.processGroup) Deno.kill(-child.pid, signal);
        else child.kill(signal);
      } catch {
        // Already gone: killing an exited process is not a failure.
      }
    },
    exited: child.status.then((status) => ({ code: status.signal === null ? status.code : null, signal: status.signal })),
  };
}

/** Largest pid a `pid_t` holds. */
const MAX_PID = 0x7fff_ffff;

/**
 * `Deno.kill(pid, 0)`: Deno 2.9 types `signo` as `Signal | number` and
 * documents 0 as the existence test; it issues a bare `kill(pid, 0)` (no
 * signal is delivered) and maps ESRCH to `NotFound`. Stating `/proc/<pid>`
 * would be Linux-only and would report every pid dead where `/proc` is not
 * mounted, which is the dangerous direction for leases.
 */
function isProcessAlive(pid: number): boolean {
  // 0 and negative pids address process groups, so they never name one process.
  if (!Number.isInteger(pid) || pid <= 0 || pid > MAX_PID) return false;
  try {
    Deno.kill(pid, 0);
    return true;
  } catch (error) {
    // PermissionDenied (EPERM) means it exists; NotCapable (no --allow-run) or an older Deno rejecting
    // signal 0 is inconclusive, and inconclusive must read as alive so a live lease is never taken over.
    return !(error instanceof Deno.errors.NotFound);
  }
}

function hostname(): string | null {
  try {
    const name = Deno.hostname();
    return name === "" ? null : name;
  } catch {
    return null; // No --allow-sys: leases then fall back to heartbeat age alone.
  }
}

/** Creates the Deno runtime for this process. */
export function createDenoRuntime(): Runtime {
  return {
    name: "deno",
    args: [...Deno.args],
    stdin: stdinReader(),
    stdout: writerOf(Deno.stdout),
    stderr: writerOf(Deno.stderr),
    stdioKind: (fd) => Promise.resolve(stdioKind(fd)),
    fs: denoFileSystem,
    spawn,
    randomUUID: () => crypto.randomUUID(),
    setTimer: (ms, callback) => {
      const handle = setTimeout(callback, ms);
      return { dispose: () => clearTimeout(handle) };
    },
    monotonicNow: () => performance.now(),
    wallNow: () => Date.now(),
    env: (name) => Deno.env.get(name),
    envAll: () => Deno.env.toObject(),
    cwd: () => Deno.cwd(),
    pid: Deno.pid,
    isProcessAlive,
    hostname,
    platform: Deno.build.os,
    exit: (code) => Deno.exit(code),
  };
}
