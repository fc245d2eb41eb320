/**
 * Safe, bounded reading of one primary session history
 * (`docs/storage.md#bounded-reads` and `#torn-tails`).
 *
 * The file is checked before a byte of it is read: a symlink, a FIFO or any
 * other non-file, a group- or world-writable file, or a file swapped between
 * `lstat` and open is `session_invalid`. Reading then stops at the first byte
 * or line over the bounds, and every complete line must be a valid record of
 * this session; only a final fragment without LF may be broken (torn).
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { type FileInfo, type FileSystem, isRuntimeError, type ReadHandle } from "../runtime.ts";
import { sha256Hex } from "../util/digest.ts";
import { parseRecordLine, type SessionRecord } from "./records.ts";

/** Bytes requested per read call. */
export const READ_CHUNK_BYTES = 1_048_576;
/** Bytes processed between two calls to `yieldEvery` (and abort checks). */
export const YIELD_BYTES = 4 * 1_048_576;
/** Lines parsed between two calls to `yieldEvery` (and abort checks). */
export const YIELD_LINES = 5_000;

const LF = 0x0a;

/** Bounds and cooperation hooks for {@link readSessionFile}. */
export interface ReadSessionOptions {
  /** Most bytes the file may hold, torn tail included (`stored_history_bytes`). */
  readonly maxBytes: number;
  /** Most LF-terminated lines the file may hold (`stored_history_lines`); a torn fragment is not a line. */
  readonly maxLines: number;
  /** Aborting it ends the read with `operation_cancelled` at the next yield point. */
  readonly signal: AbortSignal;
  /** Awaited every ~4 MiB or ~5,000 lines so a long read never starves the protocol loop. */
  readonly yieldEvery?: () => Promise<void>;
}

/** The identity and length of the file a snapshot was read from. */
export interface FileIdentity {
  /** Device number. */
  readonly dev: number;
  /** Inode number. */
  readonly ino: number;
  /** Bytes read, torn tail included: the file's length when it was read. */
  readonly size: number;
}

/** A successfully read history. */
export interface SessionFileSnapshot {
  readonly ok: true;
  /** The records of every complete line, in order; the first, if any, is a `session` record. */
  readonly records: SessionRecord[];
  /** Bytes up to and including the last LF. */
  readonly intactLength: number;
  /** Whether bytes without a final LF follow the intact prefix. */
  readonly torn: boolean;
  /** Which file, and how long, for revisions and staleness checks. */
  readonly identity: FileIdentity;
  /** Lowercase hex SHA-256 of the intact bytes. */
  readonly digest: string;
}

/** Why a history could not be read. */
export type ReadSessionFailureCode =
  | typeof ErrorCode.sessionMissing
  | typeof ErrorCode.sessionInvalid
  | typeof ErrorCode.historyLimit
  | typeof ErrorCode.operationCancelled;

/** The outcome of {@link readSessionFile}. */
export type ReadSessionResult = SessionFileSnapshot | { readonly ok: false; readonly code: ReadSessionFailureCode };

/** Whether `info` may hold a history we write to: a regular file nobody else can write. */
export function isPrivateFile(info: FileInfo): boolean {
  return info.kind === "file" && (info.mode & 0o022) === 0;
}

/** Whether `a` and `b` describe the same filesystem object. */
export function sameObject(a: FileInfo, b: FileInfo): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

const failed = (code: ReadSessionFailureCode) => ({ ok: false, code }) as const;

/**
 * Reads the history at `path` for session `sessionId` within `options`' bounds.
 * Never throws for anything the file holds; platform failures other than a
 * missing file read as `session_invalid`, the only code that says "this file
 * cannot be used" without revealing why.
 */
export async function readSessionFile(
  fs: FileSystem,
  path: string,
  sessionId: string,
  options: ReadSessionOptions,
): Promise<ReadSessionResult> {
  if (options.signal.aborted) return failed(ErrorCode.operationCancelled);
  let before: FileInfo;
  try {
    before = await fs.lstat(path);
  } catch (error) {
    return failed(isRuntimeError(error, "not_found") ? ErrorCode.sessionMissing : ErrorCode.sessionInvalid);
  }
  // Decided on the lstat alone, so a FIFO is never opened and cannot block us.
  if (!isPrivateFile(before)) return failed(ErrorCode.sessionInvalid);
  let handle: ReadHandle;
  try {
    handle = await fs.openRead(path);
  } catch (error) {
    return failed(isRuntimeError(error, "not_found") ? ErrorCode.sessionMissing : ErrorCode.sessionInvalid);
  }
  try {
    const opened = await handle.stat();
    if (!isPrivateFile(opened) || !sameObject(before, opened)) return failed(ErrorCode.sessionInvalid);
    if (opened.size > options.maxBytes) return failed(ErrorCode.historyLimit);
    const bytes = await readBounded(handle, opened.size, options);
    if (!(bytes instanceof Uint8Array)) return bytes;
    const parsed = await parseLines(bytes, sessionId, options);
    if (!parsed.ok) return parsed;
    const intact = bytes.subarray(0, parsed.intactLength);
    return {
      ok: true,
      records: parsed.records,
      intactLength: parsed.intactLength,
      torn: parsed.intactLength < bytes.length,
      identity: { dev: opened.dev, ino: opened.ino, size: bytes.length },
      digest: await sha256Hex(intact),
    };
  } catch (error) {
    if (isRuntimeError(error)) return failed(ErrorCode.sessionInvalid);
    throw error;
  } finally {
    await handle.close().catch(() => {});
  }
}

/** Awaits the caller's yield, then reports whether the read was cancelled meanwhile. */
async function pause(options: ReadSessionOptions): Promise<boolean> {
  await options.yieldEvery?.();
  return options.signal.aborted;
}

/**
 * Reads to EOF into one buffer sized from `fstat`, growing only if the file
 * grows while we read. The buffer holds at most `maxBytes + 1` bytes: the
 * extra byte is how "over the bound" is seen without reading further.
 */
async function readBounded(
  handle: ReadHandle,
  size: number,
  options: ReadSessionOptions,
): Promise<Uint8Array | { ok: false; code: ReadSessionFailureCode }> {
  const capacity = options.maxBytes + 1;
  let buffer = new Uint8Array(Math.min(capacity, size + 1));
  let length = 0;
  let lines = 0;
  let sinceYield = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length >= capacity) return failed(ErrorCode.historyLimit);
      const grown = new Uint8Array(Math.min(capacity, Math.max(buffer.length * 2, length + READ_CHUNK_BYTES)));
      grown.set(buffer);
      buffer = grown;
    }
    const count = await handle.read(buffer.subarray(length, Math.min(buffer.length, length + READ_CHUNK_BYTES)), length);
    if (count === 0) break;
    const fresh = buffer.subarray(length, length + count);
    for (let at = fresh.indexOf(LF); at !== -1; at = fresh.indexOf(LF, at + 1)) {
      if (++lines > options.maxLines) return failed(ErrorCode.historyLimit);
    }
    length += count;
    if (length > options.maxBytes) return failed(ErrorCode.historyLimit);
    sinceYield += count;
    if (sinceYield >= YIELD_BYTES) {
      sinceYield = 0;
      if (await pause(options)) return failed(ErrorCode.operationCancelled);
    }
  }
  return buffer.subarray(0, length);
}

type ParsedLines =
  | { readonly ok: true; readonly records: SessionRecord[]; readonly intactLength: number }
  | { readonly ok: false; readonly code: ReadSessionFailureCode };

/**
 * Decodes and parses every LF-terminated line. Lines are cut on the LF byte
 * before decoding: 0x0A never occurs inside a multi-byte UTF-8 sequence, so
 * each line decodes on its own, a fatal decoder pins invalid UTF-8 to its
 * line, and the torn fragment after the last LF is never decoded at all.
 */
async function parseLines(bytes: Uint8Array, sessionId: string, options: ReadSessionOptions): Promise<ParsedLines> {
  // ignoreBOM keeps a BOM in the text, where JSON.parse refuses it: we never write one.
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const records: SessionRecord[] = [];
  let start = 0;
  let linesSinceYield = 0;
  let bytesSinceYield = 0;
  for (let end = bytes.indexOf(LF); end !== -1; end = bytes.indexOf(LF, start)) {
    let line: string;
    try {
      line = decoder.decode(bytes.subarray(start, end));
    } catch {
      return failed(ErrorCode.sessionInvalid);
    }
    const parsed = parseRecordLine(line, sessionId);
    // `session` opens the file and nothing else may: a second one would be a splice of two histories.
    if (!parsed.ok || (parsed.record.type === "session") !== (records.length === 0)) {
      return failed(ErrorCode.sessionInvalid);
    }
    records.push(parsed.record);
    bytesSinceYield += end + 1 - start;
    start = end + 1;
    if (++linesSinceYield >= YIELD_LINES || bytesSinceYield >= YIELD_BYTES) {
      linesSinceYield = 0;
      bytesSinceYield = 0;
      if (await pause(options)) return failed(ErrorCode.operationCancelled);
    }
  }
  return { ok: true, records, intactLength: start };
}
