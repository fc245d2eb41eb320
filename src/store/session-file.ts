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
 * The file is streamed: lines are parsed and hashed a chunk at a time, so a
 * 64 MiB history is never one buffer, and the work pauses in short slices so
 * the protocol loop keeps answering meanwhile.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { type FileInfo, type FileSystem, isRuntimeError, type ReadHandle, type Sha256 } from "../host/runtime.ts";
import { holdFile } from "./held-file.ts";
import { type FirstRead, firstAsked, PendingLine, type Prepared, type ReadBuffer, releaseLater, unread } from "./read-buffers.ts";
import { type ReadRecord, recordOfLine } from "./record-lines.ts";
import type { SessionRecord } from "./records.ts";
import { type Cooperation, Slicer } from "./cooperative-slices.ts";

/**
 * Bytes parsed between two pauses at most, however fast the clock says the
 * work went. The reader used to make two passes yielding every 4 MiB each;
 * one streaming pass every 2 MiB keeps that density.
 */
export const YIELD_BYTES = 2 * 1_048_576;
/** Lines parsed between two pauses at most, however fast the clock says the work went. */
export const YIELD_LINES = 5_000;

const LF = 0x0a;

/** Bounds and cooperation hooks for {@link readSessionFile}. */
export interface ReadSessionOptions extends Cooperation {
  /** Most bytes the file may hold, torn tail included (`stored_history_bytes`). */
  readonly maxBytes: number;
  /** Most LF-terminated lines the file may hold (`stored_history_lines`); a torn fragment is not a line. */
  readonly maxLines: number;
  /** Aborting it ends the read with `operation_cancelled` at the next pause. */
  readonly signal: AbortSignal;
  /** Starts the SHA-256 of the intact bytes, fed while reading (`Runtime.createSha256`). */
  readonly createSha256: () => Sha256;
  /**
   * Awaited after ~8 ms of work by `now`, and at least every
   * {@link YIELD_BYTES} or {@link YIELD_LINES}, so a long read never starves
   * the protocol loop.
   */
  readonly yieldEvery?: () => Promise<void>;
  /**
   * The caller's own `lstat` of `path`, just taken (a listing examines it
   * first): used instead of a second one. The file is still refused unless
   * private, and the opened handle must be the same object.
   */
  readonly lstat?: FileInfo;
  /** The file already opened, checked and maybe read into by `readAhead` of `read-buffers.ts` (a listing prepares the next history early); `lstat` is then unused. */
  readonly prepared?: Promise<Prepared>;
  /** A buffer shared by reads made one after another (a listing's hundreds of small files), instead of one each. */
  readonly buffer?: ReadBuffer;
  /**
   * Sees every valid record as it is parsed and says whether to keep it: a
   * listing needs a few of a history's records, and records let go at once
   * never survive into the old generation. By default every one is kept.
   * It also sees each skipped record (type null: an ignorable one this
   * version does not understand), which is never kept, whatever it answers.
   */
  readonly retain?: (record: ReadRecord) => boolean;
  /** The handle's close is not awaited (its failure is ignored either way): a listing's next file need not wait for it. */
  readonly closeBehind?: boolean;
  /**
   * Told, once the read ends, how many bytes and LF-terminated lines it took
   * from the file, refused or not (none when the file failed to open, or
   * was refused on its size): a listing charges a refused history what it
   * cost. Not told when a platform call failed midway, as what it took is
   * then unknown.
   */
  readonly consumed?: (bytes: number, lines: number) => void;
}

/** The identity and length of the file a snapshot was read from. */
export interface FileIdentity {
  /** Device number. */
  readonly dev: number;
  /** Inode number. */
  readonly ino: number;
  /** Bytes read, torn tail included: the file's length when it was read. */
  readonly size: number;
  /** Modification time when the read began: a rewrite in place that keeps the length still moves it. */
  readonly mtimeMs: number;
}

/** A successfully read history. */
export interface SessionFileSnapshot {
  readonly ok: true;
  /**
   * The records of every complete line in order (those `retain` kept, if
   * given), skipped ones left out; the first line's is a `session` record.
   */
  readonly records: SessionRecord[];
  /** Complete lines read, each one a valid record, skipped ones included: what the line bound counts. */
  readonly lines: number;
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

// Re-exported: the appender and the attachment check files by the same rules, and tests bound reads by the chunk.
export { isPrivateFile, sameObject } from "./held-file.ts";
export { READ_CHUNK_BYTES } from "./read-buffers.ts";

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
  if (options.signal.aborted) {
    if (options.prepared !== undefined) releaseLater(options.prepared);
    return failed(ErrorCode.operationCancelled);
  }
  const { held: opened, first } = await (options.prepared ?? holdFile(fs, path, options.lstat).then(unread));
  if (!opened.ok) {
    options.consumed?.(0, 0);
    return opened;
  }
  const { handle, info } = opened;
  try {
    if (info.size > options.maxBytes) {
      options.consumed?.(0, 0);
      return failed(ErrorCode.historyLimit);
    }
    const read = await readLines(handle, info.size, sessionId, options, first);
    options.consumed?.(read.length, read.lines);
    if (!read.ok) return failed(read.code);
    return {
      ok: true,
      records: read.records,
      lines: read.lines,
      intactLength: read.intactLength,
      torn: read.intactLength < read.length,
      identity: { dev: info.dev, ino: info.ino, size: read.length, mtimeMs: info.mtimeMs },
      digest: read.digest,
    };
  } catch (error) {
    if (isRuntimeError(error)) return failed(ErrorCode.sessionInvalid);
    throw error;
  } finally {
    const closed = handle.close().catch(() => {});
    if (options.closeBehind !== true) await closed;
  }
}

type ReadLines =
  | {
    readonly ok: true;
    readonly records: SessionRecord[];
    readonly lines: number;
    readonly intactLength: number;
    readonly length: number;
    readonly digest: string;
  }
  // Bytes and lines read until it stopped, for `consumed`.
  | { readonly ok: false; readonly code: ReadSessionFailureCode; readonly length: number; readonly lines: number };

/**
 * Reads to EOF a chunk at a time, parsing and hashing each LF-terminated line
 * as it completes. No read goes past `maxBytes + 1` bytes in total: the extra
 * byte is how "over the bound" is seen without reading further.
 *
 * Lines are cut on the LF byte before decoding: 0x0A never occurs inside a
 * multi-byte UTF-8 sequence, so each line decodes on its own, a fatal decoder
 * pins invalid UTF-8 to its line, and the torn fragment after the last LF is
 * never decoded at all.
 *
 * A bad line does not end the read: the bounds are still counted to EOF, so
 * a file both corrupt and too large is `history_limit`, as when the whole file
 * was read before any line was parsed, and a refused file's cost is known.
 */
async function readLines(
  handle: ReadHandle,
  size: number,
  sessionId: string,
  options: ReadSessionOptions,
  first: FirstRead | null,
): Promise<ReadLines> {
  // ignoreBOM keeps a BOM in the text, where JSON.parse refuses it: we never write one.
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const hash = options.createSha256();
  const slicer = new Slicer(options, { count: YIELD_LINES, bytes: YIELD_BYTES });
  const chunkBytes = firstAsked(size, options.maxBytes);
  const chunk = options.buffer?.take(chunkBytes) ?? new Uint8Array(chunkBytes);
  const pending = new PendingLine(options.maxBytes + 1);
  const retain = options.retain;
  let records: SessionRecord[] = [];
  let invalid = false;
  let length = 0;
  let lines = 0;
  let intactLength = 0;
  for (;;) {
    const asked = Math.min(chunk.length, options.maxBytes + 1 - length);
    const count = length === 0 && first?.asked === asked && first.buffer === options.buffer
      ? first.count
      : await handle.read(chunk.subarray(0, asked), length);
    if (count === 0) break;
    const offset = length;
    length += count;
    if (length > options.maxBytes) return { ok: false, code: ErrorCode.historyLimit, length, lines };
    const data = chunk.subarray(0, count);
    let start = 0;
    for (let end = data.indexOf(LF); end !== -1; end = data.indexOf(LF, start)) {
      if (++lines > options.maxLines) return { ok: false, code: ErrorCode.historyLimit, length, lines };
      if (!invalid) {
        let line: Uint8Array = data.subarray(start, end);
        if (pending.length > 0) {
          // The line began in an earlier chunk: its first bytes are hashed now, ahead of this chunk's.
          hash.update(pending.view());
          pending.append(line);
          line = pending.view();
        }
        const record = parseLine(decoder, line, sessionId, lines === 1);
        if (record === null) {
          invalid = true;
          records = []; // Nothing of a refused file is returned: let it go now.
        } else if (record.type === null) retain?.(record);
        else if (retain === undefined || retain(record)) records.push(record);
      }
      pending.clear();
      const lineBytes = offset + end + 1 - intactLength; // the whole line, however many chunks it spans
      intactLength += lineBytes;
      start = end + 1;
      if (slicer.tick(1, lineBytes) && await slicer.pause()) return { ok: false, code: ErrorCode.operationCancelled, length, lines };
    }
    if (!invalid) {
      hash.update(data.subarray(0, start));
      pending.append(data.subarray(start));
    }
    // A regular file's read returns fewer bytes than asked only at its end: no further read to see 0.
    if (count < asked) break;
  }
  if (invalid) return { ok: false, code: ErrorCode.sessionInvalid, length, lines };
  return { ok: true, records, lines, intactLength, length, digest: hash.digest() };
}

/** Decodes and parses one line; null when it is not a valid record in its place. */
function parseLine(decoder: { decode(bytes: Uint8Array): string }, bytes: Uint8Array, sessionId: string, first: boolean): ReadRecord | null {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return null;
  }
  const record = recordOfLine(text, sessionId);
  // `session` opens the file and nothing else may: a second one would be a splice of two histories. Nor may a
  // skipped record (type null) come first: no reader passes over the record naming the history's workspace.
  return record === null || (record.type === "session") !== first ? null : record;
}
