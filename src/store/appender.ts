/**
 * The only writer of a primary session history (`docs/storage.md#appends-and-durability`).
 *
 * A record is durable once its one `append` (the complete line, LF included)
 * and the following `sync` both succeeded. Before the first append a torn
 * tail left by a crash is cut off, so every append starts on a fresh line and
 * a fragment is never glued to a later record. The appender does not take
 * leases; its caller holds the writer lease around it.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { LIMITS } from "../protocol/limits.ts";
import { type AppendHandle, type FileInfo, type FileSystem, isRuntimeError } from "../host/runtime.ts";
import { concatBytes } from "../util/bytes.ts";
import { dirname } from "../util/paths.ts";
import { encodeRecord, type SessionRecord } from "./records.ts";
import { type FileIdentity, isPrivateFile, sameObject } from "./session-file.ts";

/** How {@link SessionAppender.open} finds or makes the file. */
export type AppenderOpenOptions =
  | {
    /** The file must exist. */
    readonly create: false;
    /**
     * The `intactLength` of the snapshot the caller read. When given, the file
     * must still end its last complete line there; otherwise the file changed
     * since the snapshot and nothing is truncated or appended.
     */
    readonly expectedIntactLength?: number;
    /**
     * The identity, length and modification time the caller's snapshot was
     * read from. When given, a file that is another object, or was rewritten
     * since (another length or mtime), is refused before anything is cut or
     * appended.
     */
    readonly expectedFile?: FileIdentity;
  }
  | {
    /** The file must not exist: it is created exclusively holding `firstRecords`. */
    readonly create: true;
    /** The `session` record and the first real record(s), written by one write and one fsync. */
    readonly firstRecords: readonly SessionRecord[];
  };

/** Why an appender could not be opened. */
export type AppenderOpenFailureCode =
  | typeof ErrorCode.sessionMissing
  | typeof ErrorCode.sessionInvalid
  | typeof ErrorCode.historyLimit
  | typeof ErrorCode.persistenceFailed;

/** The outcome of {@link SessionAppender.open}. */
export type AppenderOpenResult =
  | { readonly ok: true; readonly appender: SessionAppender }
  | { readonly ok: false; readonly code: AppenderOpenFailureCode };

/** The outcome of {@link SessionAppender.appendAll}. */
export type AppendResult = { readonly ok: true } | { readonly ok: false; readonly code: typeof ErrorCode.persistenceFailed };

const LF = 0x0a;
// The last line is usually short, so the first look back is small; later ones are large.
const FIRST_SCAN_BYTES = 4_096;
const SCAN_BYTES = 1_048_576;
const FILE_MODE = 0o600;

const failed = (code: AppenderOpenFailureCode) => ({ ok: false, code }) as const;
const PERSISTENCE_FAILED: AppendResult = Object.freeze({ ok: false, code: ErrorCode.persistenceFailed });

/** Appends records of one session to its primary history, one durable line at a time. */
export class SessionAppender {
  readonly #fs: FileSystem;
  readonly #path: string;
  readonly #sessionId: string;
  readonly #handle: AppendHandle;
  readonly #identity: FileInfo;
  #length: number;
  #usable = true;
  #closed = false;

  private constructor(fs: FileSystem, path: string, sessionId: string, handle: AppendHandle, identity: FileInfo, length: number) {
    this.#fs = fs;
    this.#path = path;
    this.#sessionId = sessionId;
    this.#handle = handle;
    this.#identity = identity;
    this.#length = length;
  }

  /**
   * Opens the history of `sessionId` at `path` for appending, refusing what
   * the reader refuses (symlinks, non-files, group/world-writable files, a
   * file swapped during open), and repairs a torn tail: truncate to the last
   * complete line, then fsync, before anything is appended.
   */
  static async open(fs: FileSystem, path: string, sessionId: string, options: AppenderOpenOptions): Promise<AppenderOpenResult> {
    if (options.create) {
      const created = await createFile(fs, path, sessionId, options.firstRecords);
      if (created.ok) return await SessionAppender.open(fs, path, sessionId, { create: false, expectedIntactLength: created.length });
      return created.exists ? await adopt(fs, path, sessionId, options.firstRecords) : created;
    }
    let before: FileInfo;
    try {
      before = await fs.lstat(path);
    } catch (error) {
      return failed(isRuntimeError(error, "not_found") ? ErrorCode.sessionMissing : ErrorCode.persistenceFailed);
    }
    if (!isPrivateFile(before)) return failed(ErrorCode.sessionInvalid);
    let handle: AppendHandle;
    try {
      handle = await fs.openAppend(path, { create: false, mode: FILE_MODE });
    } catch (error) {
      if (isRuntimeError(error, "not_found")) return failed(ErrorCode.sessionMissing);
      return failed(isRuntimeError(error, "symlink") || isRuntimeError(error, "not_file") ? ErrorCode.sessionInvalid : ErrorCode.persistenceFailed);
    }
    if (options.expectedFile !== undefined && !sameState(before, options.expectedFile)) {
      await handle.close().catch(() => {});
      return failed(ErrorCode.persistenceFailed);
    }
    const opened = await prepare(fs, path, handle, before, options.expectedIntactLength);
    if (!opened.ok) {
      await handle.close().catch(() => {});
      return opened;
    }
    return { ok: true, appender: new SessionAppender(fs, path, sessionId, handle, opened.identity, opened.length) };
  }

  /** Bytes known to be in the file, all complete lines: the length after the last durable append. */
  get intactLength(): number {
    return this.#length;
  }

  /** The file object (device and inode) every append checks it still writes to. */
  get identity(): FileInfo {
    return this.#identity;
  }

  /**
   * Appends `records` as one write of their complete lines and one fsync:
   * all are durable, or (on failure) none is acknowledged. A crash in
   * between leaves a prefix of whole lines plus at most one torn fragment,
   * which readers handle like any torn append. After a failed write or sync
   * the file may end in a fragment, so the appender refuses every later
   * append: reopening it repairs the tail first. The caller issues one
   * append at a time, as it does for every byte sink.
   */
  async appendAll(records: readonly SessionRecord[]): Promise<AppendResult> {
    if (!this.#usable || records.length === 0) return PERSISTENCE_FAILED;
    const lines: Uint8Array[] = [];
    for (const [index, record] of records.entries()) {
      // `session` opens a history and nothing else may: the reader would refuse the file for good.
      if (record.session_id !== this.#sessionId || (record.type === "session") !== (this.#length === 0 && index === 0)) {
        return PERSISTENCE_FAILED;
      }
      const line = encodeRecord(record);
      if (line === null) return PERSISTENCE_FAILED;
      lines.push(line);
    }
    const bytes = concatBytes(lines);
    try {
      // A replaced or removed file would take acknowledged records with it.
      const current = await this.#fs.lstat(this.#path);
      if (!sameObject(current, this.#identity)) return PERSISTENCE_FAILED;
    } catch {
      return PERSISTENCE_FAILED;
    }
    try {
      await this.#handle.append(bytes);
      await this.#handle.sync();
    } catch {
      this.#usable = false;
      return PERSISTENCE_FAILED;
    }
    this.#length += bytes.length;
    return { ok: true };
  }

  /** Closes the file; later appends fail with `persistence_failed`. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#usable = false;
    await this.#handle.close().catch(() => {});
  }
}

/**
 * Creates the file exclusively (mode 0600) with `records`, which the runtime
 * writes in one write and fsyncs, then fsyncs the directory, so the file and
 * its entry are both durable before anything is acknowledged. `exists` says
 * the file was already there.
 */
async function createFile(
  fs: FileSystem,
  path: string,
  sessionId: string,
  records: readonly SessionRecord[],
): Promise<{ ok: true; length: number } | { ok: false; code: AppenderOpenFailureCode; exists?: true }> {
  const lines: Uint8Array[] = [];
  for (const [index, record] of records.entries()) {
    if (record.session_id !== sessionId || (record.type === "session") !== (index === 0)) return failed(ErrorCode.persistenceFailed);
    const line = encodeRecord(record);
    if (line === null) return failed(ErrorCode.persistenceFailed);
    lines.push(line);
  }
  if (lines.length === 0) return failed(ErrorCode.persistenceFailed);
  const bytes = concatBytes(lines);
  try {
    await fs.createExclusive(path, bytes, FILE_MODE);
    // Until the directory is synced, a power loss could drop the new entry with its synced bytes.
    await fs.syncDirectory(dirname(path));
  } catch (error) {
    return isRuntimeError(error, "exists") ? { ...failed(ErrorCode.persistenceFailed), exists: true } : failed(ErrorCode.persistenceFailed);
  }
  return { ok: true, length: bytes.length };
}

/**
 * Takes over a file a first create left behind without one complete line
 * (the create's write failed on a full disk, or the child died inside it):
 * the caller holds the writer lease, so nobody else made it. Its fragment is
 * cut and `records` appended as the create would have written them; a file
 * holding any complete line is refused, because it is someone's history.
 */
async function adopt(fs: FileSystem, path: string, sessionId: string, records: readonly SessionRecord[]): Promise<AppenderOpenResult> {
  const opened = await SessionAppender.open(fs, path, sessionId, { create: false, expectedIntactLength: 0 });
  if (!opened.ok) return failed(ErrorCode.persistenceFailed);
  const written = await opened.appender.appendAll(records);
  const synced = written.ok && await fs.syncDirectory(dirname(path)).then(() => true, () => false);
  if (synced) return opened;
  await opened.appender.close();
  return failed(ErrorCode.persistenceFailed);
}

/** Checks the opened handle and cuts a torn tail; returns the identity and the intact length. */
async function prepare(
  fs: FileSystem,
  path: string,
  handle: AppendHandle,
  before: FileInfo,
  expected: number | undefined,
): Promise<{ ok: true; identity: FileInfo; length: number } | { ok: false; code: AppenderOpenFailureCode }> {
  try {
    const opened = await handle.stat();
    if (!isPrivateFile(opened) || !sameObject(before, opened)) return failed(ErrorCode.sessionInvalid);
    if (opened.size > LIMITS.stored_history_bytes) return failed(ErrorCode.historyLimit);
    const intact = opened.size === 0 ? 0 : await intactLength(fs, path, opened);
    if (intact === null || (expected !== undefined && intact !== expected)) return failed(ErrorCode.persistenceFailed);
    if (intact < opened.size) {
      await handle.truncate(intact);
      await handle.sync();
    }
    return { ok: true, identity: opened, length: intact };
  } catch {
    return failed(ErrorCode.persistenceFailed);
  }
}

/**
 * Finds the end of the last complete line by reading backwards from the end
 * of the file through a second, read-only handle on the same object. Returns
 * null if that handle names another object.
 */
async function intactLength(fs: FileSystem, path: string, file: FileInfo): Promise<number | null> {
  const reader = await fs.openRead(path);
  try {
    if (!sameObject(await reader.stat(), file)) return null;
    let end = file.size;
    let window = FIRST_SCAN_BYTES;
    while (end > 0) {
      const start = Math.max(0, end - window);
      const buffer = new Uint8Array(end - start);
      let filled = 0;
      while (filled < buffer.length) {
        const count = await reader.read(buffer.subarray(filled), start + filled);
        if (count === 0) return null; // shrank under us
        filled += count;
      }
      const last = buffer.lastIndexOf(LF);
      if (last !== -1) return start + last + 1;
      end = start;
      window = SCAN_BYTES;
    }
    return 0;
  } finally {
    await reader.close().catch(() => {});
  }
}

/** Whether `info` is the same object, length and modification time as `expected`. */
function sameState(info: FileInfo, expected: FileIdentity): boolean {
  return info.dev === expected.dev && info.ino === expected.ino && info.size === expected.size && info.mtimeMs === expected.mtimeMs;
}
