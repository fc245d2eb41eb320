/**
 * The Node.js filesystem adapter of the magi-code {@link FileSystem}
 * contract, and the mapping of Node errors to {@link RuntimeError} codes that
 * the rest of the Node runtime shares. Opens use `O_NOFOLLOW` (a final
 * symlink is refused by the kernel) and `O_NONBLOCK` (a FIFO planted at a
 * path cannot hang the open).
 *
 * @module
 */

import * as fs from "node:fs";
import * as fsp from "node:fs/promises";
import { dirname } from "node:path";
import {
  type AppendHandle,
  type DirEntry,
  type DirReader,
  type FileInfo,
  type FileKind,
  type FileSystem,
  type ReadHandle,
  RuntimeError,
  type RuntimeErrorCode,
} from "../src/host/runtime.ts";

const ERRNO_CODES: Record<string, RuntimeErrorCode> = {
  ENOENT: "not_found",
  EEXIST: "exists",
  EACCES: "permission",
  EPERM: "permission",
  ENOTDIR: "not_directory",
  EISDIR: "is_directory",
  ELOOP: "symlink",
  EPIPE: "broken_pipe",
  ECONNRESET: "broken_pipe",
  ERR_STREAM_DESTROYED: "closed",
  ERR_STREAM_WRITE_AFTER_END: "closed",
};

/** Maps a Node error to a {@link RuntimeError}; the message never carries a path. */
export function normalizeError(error: unknown, operation: string): RuntimeError {
  if (error instanceof RuntimeError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  return new RuntimeError(typeof code === "string" ? ERRNO_CODES[code] ?? "io" : "io", operation);
}

async function guard<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw normalizeError(error, operation);
  }
}

function fileKind(stats: fs.Stats | fs.Dirent): FileKind {
  if (stats.isFile()) return "file";
  if (stats.isDirectory()) return "directory";
  if (stats.isSymbolicLink()) return "symlink";
  if (stats.isFIFO()) return "fifo";
  if (stats.isSocket()) return "socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "device";
  return "other";
}

function fileInfo(stats: fs.Stats): FileInfo {
  return {
    kind: fileKind(stats),
    size: stats.size,
    mode: stats.mode & 0o7777,
    mtimeMs: stats.mtimeMs,
    dev: stats.dev,
    ino: stats.ino,
    nlink: stats.nlink,
  };
}

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_WRONLY, O_APPEND, O_CREAT } = fs.constants;

/** Opens a regular file for reading, with what its handle's stat said. */
async function openRegular(path: string): Promise<{ handle: fsp.FileHandle; stats: fs.Stats }> {
  // O_NONBLOCK so a FIFO planted at `path` cannot hang the open; O_NOFOLLOW refuses a final symlink.
  const handle = await fsp.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  const stats = await handle.stat();
  if (!stats.isFile()) {
    await handle.close();
    throw new RuntimeError("not_file", "open");
  }
  return { handle, stats };
}

/** A callback-form `fs` call as a promise. */
function settle<T>(start: (done: (error: NodeJS.ErrnoException | null, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => start((error, value) => error === null ? resolve(value) : reject(error)));
}

/**
 * A read handle over a bare descriptor and the callback forms of `fs`: a
 * listing opens, describes, reads and closes hundreds of histories, and a
 * `FileHandle` costs a promise-wrapped request and its own bookkeeping per
 * call. Once closed the descriptor is never used again, so a number the
 * kernel has reused for another file cannot be read or closed by mistake.
 */
async function openReadHandle(path: string): Promise<ReadHandle> {
  // O_NONBLOCK so a FIFO planted at `path` cannot hang the open; O_NOFOLLOW refuses a final symlink.
  const fd = await settle<number>((done) => fs.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, done));
  let closed = false;
  const open = (operation: string): number => {
    if (closed) throw new RuntimeError("closed", operation);
    return fd;
  };
  const close = (): Promise<void> => {
    if (closed) return Promise.resolve();
    closed = true;
    return settle<void>((done) => fs.close(fd, (error) => done(error ?? null, undefined)));
  };
  const stat = async (): Promise<FileInfo> => fileInfo(await settle<fs.Stats>((done) => fs.fstat(open("fstat"), done)));
  let info: FileInfo;
  try {
    info = await stat();
    if (info.kind !== "file") throw new RuntimeError("not_file", "open");
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
  return {
    info,
    stat: () => guard("fstat", stat),
    read: (buffer, position) =>
      guard("read", () => settle<number>((done) => fs.read(open("read"), buffer, 0, buffer.length, position, done))),
    close: () => guard("close", close),
  };
}

/**
 * `mkdir -p` with a bounded walk up the path. Node's own `recursive: true`
 * retries for ever where mkdir keeps failing with ENOENT under an existing
 * parent (pseudo filesystems such as /proc), spinning a core.
 */
async function mkdirParents(path: string, mode: number, depth: number): Promise<void> {
  try {
    await fsp.mkdir(path, { mode });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "EEXIST" && (await fsp.stat(path)).isDirectory()) return;
    const parent = dirname(path);
    if (code !== "ENOENT" || parent === path || depth >= 256) throw error;
    await mkdirParents(parent, mode, depth + 1);
    try {
      await fsp.mkdir(path, { mode });
    } catch (retry) {
      if ((retry as { code?: unknown }).code !== "EEXIST" || !(await fsp.stat(path)).isDirectory()) throw retry;
    }
  }
}

/** Entries libuv fetches per `readdir` call: a listing never holds more than this plus the caller's batch. */
const DIR_BUFFER = 64;

/** A streaming listing over `fs.Dir`, which reads the directory a buffer at a time. */
async function openDirReader(path: string): Promise<DirReader> {
  const dir = await fsp.opendir(path, { bufferSize: DIR_BUFFER });
  let closed = false;
  return {
    read: (max) =>
      guard("readdir", async () => {
        const batch: DirEntry[] = [];
        while (!closed && batch.length < Math.max(1, max)) {
          const entry = await dir.read();
          if (entry === null) break;
          batch.push({ name: entry.name, kind: fileKind(entry) });
        }
        return batch;
      }),
    close: () =>
      guard("closedir", async () => {
        if (closed) return;
        closed = true;
        await dir.close();
      }),
  };
}

/**
 * Writes all of `bytes` at the handle's position (the end, for `O_APPEND`).
 * Node resolves a write the kernel cut short (a full disk, a file-size
 * limit) with the smaller count and no error, so each short write is
 * followed by another for the rest; the kernel then reports why it stopped.
 * A write that makes no progress at all is an `io` failure, never a loop.
 */
async function writeAll(handle: fsp.FileHandle, bytes: Uint8Array): Promise<void> {
  for (let written = 0; written < bytes.length;) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, null);
    if (bytesWritten <= 0) throw new RuntimeError("io", "write");
    written += bytesWritten;
  }
}

/** The Node filesystem adapter. */
export const nodeFileSystem: FileSystem = {
  lstat: (path) => guard("lstat", async () => fileInfo(await fsp.lstat(path))),
  stat: (path) => guard("stat", async () => fileInfo(await fsp.stat(path))),
  realpath: (path) => guard("realpath", () => fsp.realpath(path)),
  readDir: (path, maxEntries) =>
    guard("readdir", async () => {
      if (maxEntries === undefined) {
        const entries = await fsp.readdir(path, { withFileTypes: true });
        return entries.map((entry): DirEntry => ({ name: entry.name, kind: fileKind(entry) }));
      }
      // Iterated, so at most one batch past the bound is ever read; breaking out closes the directory.
      const entries: DirEntry[] = [];
      for await (const entry of await fsp.opendir(path)) {
        entries.push({ name: entry.name, kind: fileKind(entry) });
        if (entries.length > maxEntries) break;
      }
      return entries;
    }),
  openDir: (path) => guard("opendir", () => openDirReader(path)),
  mkdir: (path, mode) => guard("mkdir", () => mkdirParents(path, mode, 0)),
  readFile: (path, maxBytes) =>
    guard("readFile", async () => {
      const { handle, stats } = await openRegular(path);
      try {
        const buffer = new Uint8Array(Math.min(stats.size, maxBytes) + 1);
        let length = 0;
        for (;;) {
          if (length === buffer.length) throw new RuntimeError("too_large", "readFile");
          const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
          if (bytesRead === 0) break;
          length += bytesRead;
        }
        return buffer.subarray(0, length);
      } finally {
        await handle.close();
      }
    }),
  openRead: (path) => guard("open", () => openReadHandle(path)),
  createExclusive: (path, bytes, mode) =>
    guard("create", async () => {
      const handle = await fsp.open(path, "wx", mode);
      try {
        await writeAll(handle, bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
    }),
  syncDirectory: (path) =>
    guard("fsync", async () => {
      const handle = await fsp.open(path, "r");
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    }),
  openAppend: (path, options) =>
    guard("open", async (): Promise<AppendHandle> => {
      const flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | (options.create ? O_CREAT : 0);
      const handle = await fsp.open(path, flags, options.mode);
      const opened = await handle.stat();
      if (!opened.isFile()) {
        await handle.close();
        throw new RuntimeError("not_file", "open");
      }
      return {
        info: fileInfo(opened),
        stat: () => guard("fstat", async () => fileInfo(await handle.stat())),
        append: (bytes) => guard("append", () => writeAll(handle, bytes)),
        truncate: (length) => guard("truncate", () => handle.truncate(length)),
        sync: () => guard("fsync", () => handle.sync()),
        close: () => guard("close", () => handle.close()),
      };
    }),
  link: (existing, to) => guard("link", () => fsp.link(existing, to)),
  rename: (from, to) => guard("rename", () => fsp.rename(from, to)),
  unlink: (path) => guard("unlink", () => fsp.unlink(path)),
  removeDirectory: (path) => guard("rmdir", () => fsp.rmdir(path)),
};
