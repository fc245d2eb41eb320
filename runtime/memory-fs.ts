/**
 * An in-memory POSIX-like filesystem implementing the {@link FileSystem}
 * contract, for tests that must not touch the disk. It models regular files,
 * directories, symlinks and FIFOs with identities and modes, and raises the
 * same {@link RuntimeError} codes as the real adapters.
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
import { dirname, joinPath, normalizePath } from "../src/util/paths.ts";

type Node =
  | { kind: "file"; ino: number; mode: number; data: Uint8Array; mtimeMs: number }
  | { kind: "directory"; ino: number; mode: number; mtimeMs: number }
  | { kind: "symlink"; ino: number; mode: number; target: string; mtimeMs: number }
  | { kind: "fifo"; ino: number; mode: number; mtimeMs: number };

const MAX_LINKS = 40;

/** Options of {@link MemoryFileSystem}. */
export interface MemoryFileSystemOptions {
  /** Wall-clock milliseconds stamped as mtime on creates and writes (default: always 0). */
  readonly now?: () => number;
}

/** A {@link FileSystem} held in memory, with helpers to arrange fixtures. */
export class MemoryFileSystem implements FileSystem {
  readonly #nodes = new Map<string, Node>([["/", { kind: "directory", ino: 1, mode: 0o755, mtimeMs: 0 }]]);
  #nextIno = 2;
  readonly #now: () => number;
  /** Paths whose operations fail with the given code, to simulate I/O faults. */
  readonly faults = new Map<string, RuntimeErrorCode>();
  /**
   * Bytes that `createExclusive` and `append` may still write, or null for
   * no limit: a full disk. A write that does not fit stores the prefix that
   * does and rejects with `io`, as a kernel's short write followed by
   * ENOSPC reaches the disk adapters. Nothing frees space; a test raises it.
   */
  freeBytes: number | null = null;

  /** Creates an empty filesystem holding only `/`. */
  constructor(options: MemoryFileSystemOptions = {}) {
    this.#now = options.now ?? (() => 0);
  }

  /** Writes a regular file, creating parent directories. */
  writeFile(path: string, data: Uint8Array | string, mode = 0o644): void {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    this.#ensureDirectory(dirname(path));
    this.#nodes.set(normalizePath(path), { kind: "file", ino: this.#nextIno++, mode, data: bytes, mtimeMs: this.#now() });
  }

  /** Creates a symlink at `path` pointing to `target`. */
  symlink(target: string, path: string): void {
    this.#ensureDirectory(dirname(path));
    this.#nodes.set(normalizePath(path), { kind: "symlink", ino: this.#nextIno++, mode: 0o777, target, mtimeMs: this.#now() });
  }

  /** Creates a FIFO at `path`. */
  mkfifo(path: string): void {
    this.#ensureDirectory(dirname(path));
    this.#nodes.set(normalizePath(path), { kind: "fifo", ino: this.#nextIno++, mode: 0o644, mtimeMs: this.#now() });
  }

  /** Returns a file's bytes, or `undefined`. */
  contents(path: string): Uint8Array | undefined {
    const node = this.#nodes.get(normalizePath(path));
    return node?.kind === "file" ? node.data : undefined;
  }

  /** Whether anything exists at `path` (without following symlinks). */
  exists(path: string): boolean {
    return this.#nodes.has(normalizePath(path));
  }

  #fault(path: string, operation: string): void {
    const code = this.faults.get(normalizePath(path));
    if (code !== undefined) throw new RuntimeError(code, operation);
  }

  #ensureDirectory(path: string): void {
    const normal = normalizePath(path);
    if (this.#nodes.has(normal)) return;
    this.#ensureDirectory(dirname(normal));
    this.#nodes.set(normal, { kind: "directory", ino: this.#nextIno++, mode: 0o755, mtimeMs: this.#now() });
  }

  /** Resolves every symlink in `path`; `followLast` decides the final component. */
  #resolve(path: string, followLast: boolean, operation: string): string {
    let pending = normalizePath(path).split("/").filter((part) => part !== "");
    let current = "/";
    let links = 0;
    while (pending.length > 0) {
      const [part, ...rest] = pending;
      const next = joinPath(current, part!);
      const node = this.#nodes.get(next);
      if (node === undefined) throw new RuntimeError("not_found", operation);
      if (node.kind === "symlink" && (rest.length > 0 || followLast)) {
        if (++links > MAX_LINKS) throw new RuntimeError("symlink", operation);
        const target = node.target.startsWith("/") ? node.target : joinPath(current, node.target);
        pending = [...normalizePath(target).split("/").filter((p) => p !== ""), ...rest];
        current = "/";
        continue;
      }
      if (rest.length > 0 && node.kind !== "directory") throw new RuntimeError("not_directory", operation);
      current = next;
      pending = rest;
    }
    return current;
  }

  #info(path: string): FileInfo {
    const node = this.#nodes.get(path)!;
    const size = node.kind === "file" ? node.data.length : node.kind === "symlink" ? node.target.length : 0;
    return { kind: node.kind as FileKind, size, mode: node.mode, mtimeMs: node.mtimeMs, dev: 1, ino: node.ino, nlink: 1 };
  }

  #regular(path: string, operation: string): string {
    const resolved = this.#resolve(path, false, operation);
    const node = this.#nodes.get(resolved)!;
    if (node.kind === "symlink") throw new RuntimeError("symlink", operation);
    if (node.kind !== "file") throw new RuntimeError(node.kind === "directory" ? "is_directory" : "not_file", operation);
    return resolved;
  }

  lstat(path: string): Promise<FileInfo> {
    return this.#run("lstat", path, () => this.#info(this.#resolve(path, false, "lstat")));
  }

  stat(path: string): Promise<FileInfo> {
    return this.#run("stat", path, () => this.#info(this.#resolve(path, true, "stat")));
  }

  realpath(path: string): Promise<string> {
    return this.#run("realpath", path, () => this.#resolve(path, true, "realpath"));
  }

  readDir(path: string, maxEntries?: number): Promise<DirEntry[]> {
    return this.#run("readdir", path, () =>
      [...this.#nodes.keys()].flatMap(this.#childOf(path)).slice(0, maxEntries === undefined ? undefined : maxEntries + 1));
  }

  /**
   * Lists lazily over the live node table, as `readdir` walks a directory: a name removed before the walk
   * reaches it is not listed, one added meanwhile is, one renamed over after it was listed is listed again.
   */
  openDir(path: string): Promise<DirReader> {
    return this.#run("opendir", path, () => {
      const child = this.#childOf(path);
      const keys = this.#nodes.keys();
      let done = false;
      return {
        read: (max: number) =>
          this.#run("readdir", path, () => {
            const batch: DirEntry[] = [];
            while (!done && batch.length < Math.max(1, max)) {
              const next = keys.next();
              if (next.done === true) done = true;
              else batch.push(...child(next.value));
            }
            return batch;
          }),
        close: () => Promise.resolve(void (done = true)),
      };
    });
  }

  /** For directory `path` (which must resolve to one): a node key's entry if it names a direct child that still exists, else none. */
  #childOf(path: string): (key: string) => DirEntry[] {
    const directory = this.#resolve(path, true, "readdir");
    if (this.#nodes.get(directory)!.kind !== "directory") throw new RuntimeError("not_directory", "readdir");
    const prefix = directory === "/" ? "/" : `${directory}/`;
    return (key) => {
      const node = this.#nodes.get(key);
      if (node === undefined || key.length <= prefix.length || !key.startsWith(prefix) || key.includes("/", prefix.length)) return [];
      return [{ name: key.slice(prefix.length), kind: node.kind as FileKind }];
    };
  }

  mkdir(path: string, mode: number): Promise<void> {
    return this.#run("mkdir", path, () => this.#mkdirSync(normalizePath(path), mode));
  }

  #mkdirSync(normal: string, mode: number, isParent = false): void {
    if (this.#nodes.has(normal)) {
      if (this.#info(this.#resolve(normal, true, "mkdir")).kind === "directory") return;
      throw new RuntimeError(isParent ? "not_directory" : "exists", "mkdir");
    }
    const parent = dirname(normal);
    if (parent !== normal) this.#mkdirSync(parent, mode, true);
    const resolvedParent = this.#resolve(parent, true, "mkdir");
    if (this.#nodes.get(resolvedParent)!.kind !== "directory") throw new RuntimeError("not_directory", "mkdir");
    this.#nodes.set(normal, { kind: "directory", ino: this.#nextIno++, mode, mtimeMs: this.#now() });
  }

  readFile(path: string, maxBytes: number): Promise<Uint8Array> {
    return this.#run("readFile", path, () => {
      const node = this.#nodes.get(this.#regular(path, "readFile")) as { data: Uint8Array };
      if (node.data.length > maxBytes) throw new RuntimeError("too_large", "readFile");
      return node.data.slice();
    });
  }

  openRead(path: string): Promise<ReadHandle> {
    return this.#run("open", path, () => {
      const resolved = this.#regular(path, "open");
      const node = this.#nodes.get(resolved) as { data: Uint8Array };
      return {
        info: this.#info(resolved),
        stat: () => Promise.resolve(this.#info(resolved)),
        read: (buffer: Uint8Array, position: number) => {
          const slice = node.data.subarray(position, position + buffer.length);
          buffer.set(slice);
          return Promise.resolve(slice.length);
        },
        close: () => Promise.resolve(),
      };
    });
  }

  createExclusive(path: string, bytes: Uint8Array, mode: number): Promise<void> {
    return this.#run("create", path, () => {
      if (this.#nodes.has(normalizePath(path))) throw new RuntimeError("exists", "create");
      this.#resolve(dirname(path), true, "create");
      const fitting = this.#fitting(bytes);
      this.writeFile(path, fitting.slice(), mode);
      if (fitting.length < bytes.length) throw new RuntimeError("io", "create");
    });
  }

  /** Memory has nothing to flush; a missing path or a non-directory fails as a disk would. */
  syncDirectory(path: string): Promise<void> {
    return this.#run("fsync", path, () => {
      const node = this.#nodes.get(this.#resolve(path, true, "fsync"));
      if (node?.kind !== "directory") throw new RuntimeError("not_directory", "fsync");
    });
  }

  openAppend(path: string, options: { create: boolean; mode: number }): Promise<AppendHandle> {
    return this.#run("open", path, () => {
      if (!this.#nodes.has(normalizePath(path))) {
        if (!options.create) throw new RuntimeError("not_found", "open");
        this.writeFile(path, new Uint8Array(0), options.mode);
      }
      const resolved = this.#regular(path, "open");
      const node = this.#nodes.get(resolved) as { data: Uint8Array; mtimeMs: number };
      return {
        info: this.#info(resolved),
        stat: () => Promise.resolve(this.#info(resolved)),
        append: (bytes: Uint8Array) =>
          this.#run("append", path, () => {
            const fitting = this.#fitting(bytes);
            const grown = new Uint8Array(node.data.length + fitting.length);
            grown.set(node.data);
            grown.set(fitting, node.data.length);
            node.data = grown;
            node.mtimeMs = this.#now();
            if (fitting.length < bytes.length) throw new RuntimeError("io", "append");
          }),
        truncate: (length: number) => {
          node.data = node.data.slice(0, length);
          node.mtimeMs = this.#now();
          return Promise.resolve();
        },
        sync: () => this.#run("fsync", path, () => undefined),
        close: () => Promise.resolve(),
      };
    });
  }

  /** Both names share one node, so they see the same bytes, as hard links do. */
  link(existing: string, to: string): Promise<void> {
    return this.#run("link", existing, () => {
      this.#fault(to, "link");
      const node = this.#nodes.get(this.#regular(existing, "link"));
      if (this.#nodes.has(normalizePath(to))) throw new RuntimeError("exists", "link");
      this.#resolve(dirname(to), true, "link");
      this.#nodes.set(normalizePath(to), node!);
    });
  }

  rename(from: string, to: string): Promise<void> {
    return this.#run("rename", from, () => {
      const source = normalizePath(from);
      const node = this.#nodes.get(source);
      if (node === undefined) throw new RuntimeError("not_found", "rename");
      this.#resolve(dirname(to), true, "rename");
      this.#nodes.delete(source);
      this.#nodes.set(normalizePath(to), node);
    });
  }

  unlink(path: string): Promise<void> {
    return this.#run("unlink", path, () => {
      const normal = normalizePath(path);
      const node = this.#nodes.get(normal);
      if (node === undefined) throw new RuntimeError("not_found", "unlink");
      if (node.kind === "directory") throw new RuntimeError("is_directory", "unlink");
      this.#nodes.delete(normal);
    });
  }

  removeDirectory(path: string): Promise<void> {
    return this.#run("rmdir", path, () => {
      const normal = normalizePath(path);
      const node = this.#nodes.get(normal);
      if (node === undefined) throw new RuntimeError("not_found", "rmdir");
      if (node.kind !== "directory") throw new RuntimeError("not_directory", "rmdir");
      if ([...this.#nodes.keys()].some((key) => key.startsWith(`${normal}/`))) throw new RuntimeError("io", "rmdir");
      this.#nodes.delete(normal);
    });
  }

  /** The prefix of `bytes` that fits in {@link freeBytes}, which it uses up. */
  #fitting(bytes: Uint8Array): Uint8Array {
    if (this.freeBytes === null) return bytes;
    const fitting = bytes.subarray(0, Math.min(bytes.length, this.freeBytes));
    this.freeBytes -= fitting.length;
    return fitting;
  }

  /** Runs `body` as one asynchronous operation, after any injected fault for `path`. */
  #run<T>(operation: string, path: string, body: () => T): Promise<T> {
    try {
      this.#fault(path, operation);
      return Promise.resolve(body());
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
