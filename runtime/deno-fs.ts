/**
 * The Deno filesystem adapter of the magi-code {@link FileSystem} contract,
 * and the mapping of Deno errors to {@link RuntimeError} codes that the rest
 * of the Deno runtime shares. Deno has no `O_NOFOLLOW`, so opens check the
 * path with `lstat` first and compare the opened handle's identity afterwards.
 *
 * @module
 */

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

/**
 * Opens a regular file without following a final symlink: lstat, open, then
 * compare identity; answers the file and its stat. The `lstat` is its own,
 * taken right before the open: with no `O_NONBLOCK` on Deno, an older one
 * would widen the moment in which a FIFO swapped in blocks the open.
 */
async function openChecked(
  path: string,
  options: Deno.OpenOptions,
  mayCreate: boolean,
): Promise<{ readonly file: Deno.FsFile; readonly info: FileInfo }> {
  let before: FileInfo | null = null;
  try {
    before = fileInfo(await Deno.lstat(path));
  } catch (error) {
    if (!(mayCreate && error instanceof Deno.errors.NotFound)) throw error;
  }
  if (before !== null && before.kind === "symlink") throw new RuntimeError("symlink", "open");
  if (before !== null && before.kind !== "file") throw new RuntimeError("not_file", "open");
  const file = await Deno.open(path, options);
  const info = fileInfo(await file.stat());
  const swapped = before !== null && (info.dev !== before.dev || info.ino !== before.ino);
  if (swapped || info.kind !== "file") {
    file.close();
    throw new RuntimeError(swapped ? "symlink" : "not_file", "open");
  }
  return { file, info };
}

/**
 * Writes all of `bytes` at the file's position (the end, in append mode):
 * a write the kernel cut short is followed by another for the rest, and
 * one that makes no progress is an `io` failure rather than an endless loop.
 */
async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  for (let written = 0; written < bytes.length;) {
    const count = await file.write(bytes.subarray(written));
    if (count <= 0) throw new RuntimeError("io", "write");
    written += count;
  }
}

/**
 * A listing over `Deno.readDir`'s iterator, handed out in batches. Since
 * Deno 2.9 (denoland/deno#35130) the iterator reads the open directory one
 * entry per step, as Node's `fs.Dir` does a buffer at a time, so neither the
 * runtime nor the core holds more than one batch. The first entry is fetched
 * at open, so a missing or unlistable directory rejects there.
 */
async function openDirReader(path: string): Promise<DirReader> {
  const iterator = Deno.readDir(path)[Symbol.asyncIterator]();
  // One entry of lookahead: what the next read starts with.
  let pending: IteratorResult<Deno.DirEntry> = await iterator.next();
  return {
    read: (max) =>
      guard("readdir", async () => {
        const batch: DirEntry[] = [];
        while (!pending.done && batch.length < Math.max(1, max)) {
          batch.push({ name: pending.value.name, kind: fileKind(pending.value) });
          pending = await iterator.next();
        }
        return batch;
      }),
    close: () =>
      guard("closedir", async () => {
        pending = { done: true, value: undefined };
        await iterator.return?.();
      }),
  };
}

/** The Deno filesystem adapter. */
export const denoFileSystem: FileSystem = {
  // Without guard's async wrapper: a listing calls it for every history, and every promise and frame it saves is one less to outlive a scavenge.
  lstat: (path) => Deno.lstat(path).then(fileInfo, (error) => Promise.reject(normalizeError(error, "lstat"))),
  stat: (path) => guard("stat", async () => fileInfo(await Deno.stat(path))),
  realpath: (path) => guard("realpath", () => Deno.realPath(path)),
  readDir: (path, maxEntries) =>
    guard("readdir", async () => {
      const entries: DirEntry[] = [];
      for await (const entry of Deno.readDir(path)) {
        entries.push({ name: entry.name, kind: fileKind(entry) });
        if (maxEntries !== undefined && entries.length > maxEntries) break;
      }
      return entries;
    }),
  openDir: (path) => guard("opendir", () => openDirReader(path)),
  mkdir: (path, mode) => guard("mkdir", () => Deno.mkdir(path, { recursive: true, mode })),
  readFile: (path, maxBytes) =>
    guard("readFile", async () => {
      const { file, info } = await openChecked(path, { read: true }, false);
      try {
        const buffer = new Uint8Array(Math.min(info.size, maxBytes) + 1);
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
      const { file, info } = await openChecked(path, { read: true }, false);
      // Where the file's offset is: a read that continues where the last one ended needs no seek first.
      let offset: number | null = 0;
      const read = async (buffer: Uint8Array, position: number): Promise<number> => {
        const there = offset === position;
        offset = null; // unknown until this read succeeds
        if (!there) await file.seek(position, Deno.SeekMode.Start);
        const count = (await file.read(buffer)) ?? 0;
        offset = position + count;
        return count;
      };
      return {
        info,
        stat: () => guard("fstat", async () => fileInfo(await file.stat())),
        read: (buffer, position) => read(buffer, position).catch((error) => Promise.reject(normalizeError(error, "read"))),
        close: () => {
          try {
            file.close();
            return Promise.resolve();
          } catch (error) {
            return Promise.reject(normalizeError(error, "close"));
          }
        },
      };
    }),
  createExclusive: (path, bytes, mode) =>
    guard("create", async () => {
      const file = await Deno.open(path, { write: true, createNew: true, mode });
      try {
        await writeAll(file, bytes);
        await file.sync();
      } finally {
        file.close();
      }
    }),
  syncDirectory: (path) =>
    guard("fsync", async () => {
      const directory = await Deno.open(path, { read: true });
      try {
        await directory.sync();
      } finally {
        directory.close();
      }
    }),
  openAppend: (path, options) =>
    guard("open", async (): Promise<AppendHandle> => {
      const { file, info } = await openChecked(path, { append: true, create: options.create, mode: options.mode }, options.create);
      return {
        info,
        stat: () => guard("fstat", async () => fileInfo(await file.stat())),
        append: (bytes) => guard("append", () => writeAll(file, bytes)),
        truncate: (length) => guard("truncate", () => file.truncate(length)),
        sync: () => guard("fsync", () => file.sync()),
        close: () => guard("close", () => Promise.resolve(file.close())),
      };
    }),
  link: (existing, to) => guard("link", () => Deno.link(existing, to)),
  rename: (from, to) => guard("rename", () => Deno.rename(from, to)),
  unlink: (path) => guard("unlink", () => Deno.remove(path)),
  // Deno has no rmdir: Deno.remove without `recursive` refuses a non-empty directory but unlinks a file or
  // symlink as readily, so anything else is refused first (something swapped in between the two calls is not).
  removeDirectory: (path) =>
    guard("rmdir", async () => {
      if (!(await Deno.lstat(path)).isDirectory) throw new Deno.errors.NotADirectory("rmdir");
      await Deno.remove(path);
    }),
};
