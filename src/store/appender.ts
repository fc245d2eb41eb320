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
import { createFile, FILE_MODE, intactLength, sameState } from "./history-file-ops.ts";

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
    /**
     * Complete lines up to the intact length (the snapshot's record count),
     * which the stored-history line bound is checked against; a caller
     * that omits it has only the byte bound enforced.
     */
    readonly lines?: number;
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

/**
 * The outcome of {@link SessionAppender.appendAll}: `content_limit` when the
 * records would take the file past the stored-history read bound (nothing
 * was written, and the appender stays usable).
 */
export type AppendResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: typeof ErrorCode.persistenceFailed | typeof ErrorCode.contentLimit };

/**
 * Bytes and lines under the stored-history read bound that only an append
 * closing a turn (one holding `turn_finished`) may use: a turn refused for
 * a full file can still record why (a diagnostic), its usage and its end,
 * so the file never ends in an open turn and never exceeds what
 * `session.open` reads.
 */
export const CLOSING_RESERVE_BYTES = 16_384;
/** See {@link CLOSING_RESERVE_BYTES}: a diagnostic, `usage` and `turn_finished`. */
export const CLOSING_RESERVE_LINES = 3;


const failed = (code: AppenderOpenFailureCode) => ({ ok: false, code }) as const;
const PERSISTENCE_FAILED: AppendResult = Object.freeze({ ok: false, code: ErrorCode.persistenceFailed });
const FULL: AppendResult = Object.freeze({ ok: false, code: ErrorCode.contentLimit });

/** Appends records of one session to its primary history, one durable line at a time. */
export class SessionAppender {
  readonly #fs: FileSystem;
  readonly #path: string;
  readonly #sessionId: string;
  readonly #handle: AppendHandle;
  readonly #identity: FileInfo;
  #length: number;
  #lines: number;
  #usable = true;
  #closed = false;

  private constructor(fs: FileSystem, path: string, sessionId: string, handle: AppendHandle, identity: FileInfo, length: number, lines: number) {
    this.#fs = fs;
    this.#path = path;
    this.#sessionId = sessionId;
    this.#handle = handle;
    this.#identity = identity;
    this.#length = length;
    this.#lines = lines;
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
      if (created.ok) {
        return await SessionAppender.open(fs, path, sessionId, { create: false, expectedIntactLength: created.length, lines: options.firstRecords.length });
      }
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
    return { ok: true, appender: new SessionAppender(fs, path, sessionId, handle, opened.identity, opened.length, options.lines ?? 0) };
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
   * append at a time, as it does for every byte sink. Records that would
   * take the file past the stored-history bound, less the closing reserve
   * unless they close a turn, are refused with `content_limit` unwritten.
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
    const reserved = records.some((record) => record.type === "turn_finished") ? 0 : 1;
    if (
      this.#length + bytes.length > LIMITS.stored_history_bytes - reserved * CLOSING_RESERVE_BYTES ||
      this.#lines + lines.length > LIMITS.stored_history_lines - reserved * CLOSING_RESERVE_LINES
    ) return FULL;
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
    this.#lines += lines.length;
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
    const opened = handle.info;
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

