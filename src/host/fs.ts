/**
 * The filesystem part of the runtime contract: only the operations the core
 * needs, each with the refusal behaviour (symlinks, non-files, size) that
 * session storage and the tools rely on.
 *
 * @module
 */

/** What kind of filesystem object a path or handle names. */
export type FileKind = "file" | "directory" | "symlink" | "fifo" | "socket" | "device" | "other";

/** The stat fields the core relies on. */
export interface FileInfo {
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

/**
 * A directory being listed a batch at a time, so a caller walking a large
 * directory holds one batch of entries, not the whole listing. Entries come
 * in platform order; an entry added or removed while the listing runs may
 * or may not appear (POSIX `readdir`), and a rename during it can list a
 * name twice.
 */
export interface DirReader {
  /** Up to `max` (at least 1) further entries, without `.` and `..`; an empty array once the listing is over. */
  read(max: number): Promise<DirEntry[]>;
  /** Releases the listing; idempotent, and safe after the end. */
  close(): Promise<void>;
}

/** A file opened for reading. */
export interface ReadHandle {
  /** What the handle's own stat said when it was opened: the identity check right after an open needs no further call. */
  readonly info: FileInfo;
  /** Stats the open handle (not the path), for identity checks after open. */
  stat(): Promise<FileInfo>;
  /** Reads up to `buffer.length` bytes at `position`; resolves with the count, 0 at end. */
  read(buffer: Uint8Array, position: number): Promise<number>;
  close(): Promise<void>;
}

/** A file opened for appending. */
export interface AppendHandle {
  /** What the handle's own stat said when it was opened, as {@link ReadHandle.info}. */
  readonly info: FileInfo;
  stat(): Promise<FileInfo>;
  /**
   * Appends all of `bytes`, with one write call where the platform allows
   * it. A write the platform cuts short is continued until every byte is
   * written, or rejects (a full disk): resolving always means all of them.
   * After a rejection the file may end in a prefix of `bytes`.
   */
  append(bytes: Uint8Array): Promise<void>;
  /** Truncates the file to `length` bytes. */
  truncate(length: number): Promise<void>;
  /** Flushes data and metadata to stable storage (fsync). */
  sync(): Promise<void>;
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
  /**
   * Lists `path`, without `.` and `..`, in platform order. With `maxEntries`,
   * iteration stops after `maxEntries + 1` entries (one past the bound, so
   * the caller sees the overflow): a huge directory is never read whole.
   */
  readDir(path: string, maxEntries?: number): Promise<DirEntry[]>;
  /** Opens `path` (following symlinks) for listing in batches; rejects as {@link readDir} would. */
  openDir(path: string): Promise<DirReader>;
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
  /**
   * Creates `path` exclusively with `mode`, writes all of `bytes` (as
   * `append` does, never reporting a short write as success), syncs and
   * closes; `exists` if present. After any other rejection the file may
   * exist holding a prefix of `bytes`.
   */
  createExclusive(path: string, bytes: Uint8Array, mode: number): Promise<void>;
  /** Fsyncs the directory `path`, so a file created in it keeps its entry after a power loss. */
  syncDirectory(path: string): Promise<void>;
  /** Opens `path` for appending, refusing a final symlink; `create` allows a new file with `mode`. */
  openAppend(path: string, options: { create: boolean; mode: number }): Promise<AppendHandle>;
  /**
   * Makes `to` a second name (a hard link) of the file `existing`, never
   * replacing anything: `exists` if `to` is present. With a temporary file
   * this publishes a whole file at `to` atomically and exclusively.
   */
  link(existing: string, to: string): Promise<void>;
  /** Atomically renames `from` to `to`. */
  rename(from: string, to: string): Promise<void>;
  /** Removes a file. */
  unlink(path: string): Promise<void>;
  /** Removes an empty directory; a non-empty one is refused. */
  removeDirectory(path: string): Promise<void>;
}

