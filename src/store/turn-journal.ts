/**
 * The durable side of one turn: the leases it holds and the appender its
 * records go through (`docs/storage.md#leases`, `#appends-and-durability`).
 *
 * A lazy session (`session.create`) has no file yet: its first append
 * creates the file exclusively with the `session` record in front (stamped
 * no later than the records behind it), after the writer lease was taken,
 * which is what makes the session durable. The
 * `active` lease marks the turn for other children and discovery from before
 * the first append until {@link TurnJournal.close}.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import type { FileInfo, Runtime } from "../host/runtime.ts";
import { type AppenderOpenResult, type AppendResult, SessionAppender } from "./appender.ts";
import { Lease, leasePath } from "./leases.ts";
import type { SessionRecord } from "./records.ts";
import type { FileIdentity } from "./session-file.ts";

/** Where the journal writes and for whom. */
export interface JournalTarget {
  readonly runtime: Runtime;
  /** `MC_HOME/sessions`. */
  readonly directory: string;
  /** The session's primary history path. */
  readonly path: string;
  readonly sessionId: string;
  /** This child's instance id, written into leases. */
  readonly instanceId: string;
  /** The canonical cwd recorded in a new file's `session` record. */
  readonly cwd: string;
  /**
   * For a durable session, the intact length of the snapshot the attachment
   * holds: an appender refuses a file that changed since. `null` for a lazy
   * session, whose file the first append creates.
   */
  readonly intactLength: number | null;
  /** For a durable session, the snapshot's complete lines, for the stored-history line bound; null when lazy. */
  readonly lines: number | null;
  /** For a durable session, the file state the snapshot was read from (or extended to); null when lazy. */
  readonly file: FileIdentity | null;
  /** For a durable session, the attachment's writer lease, checked before every append. */
  readonly writerLease: Lease | null;
}

/** Why the input could not be made durable: `content_limit` when the session file is full. */
export type JournalFailure = typeof ErrorCode.persistenceFailed | typeof ErrorCode.sessionBusy | typeof ErrorCode.contentLimit;

/** What a journal durably wrote, for extending the attachment's snapshot without rereading the file. */
export interface JournalWrites {
  /** Every record acknowledged durable, in file order (a new file's `session` record first). */
  readonly records: readonly SessionRecord[];
  /** The file they went to. */
  readonly identity: FileInfo;
  /** The file's intact length after the last of them. */
  readonly intactLength: number;
}

/** Owns one turn's leases and appender; create it per turn and always close it. */
export class TurnJournal {
  readonly #target: JournalTarget;
  #active: Lease | null = null;
  #writer: Lease | null = null;
  #appender: SessionAppender | null = null;
  readonly #written: SessionRecord[] = [];

  /** Creates the journal; nothing is touched until {@link appendInput}. */
  constructor(target: JournalTarget) {
    this.#target = target;
  }

  /** The writer lease this journal took for a lazy session, handed to the attachment once durable. */
  get newWriterLease(): Lease | null {
    return this.#writer;
  }

  /**
   * Takes the active lease (and, for a lazy session, the writer lease), then
   * durably appends the turn's opening `records`, creating the file when the
   * session is lazy. Nothing is acknowledged unless this returns `ok`.
   */
  async appendInput(records: readonly SessionRecord[]): Promise<{ ok: true } | { ok: false; code: JournalFailure }> {
    const target = this.#target;
    const { runtime } = target;
    // After a long stall another child may have taken the lease over as stale; appending then
    // would make two writers.
    if (target.writerLease !== null && !(await target.writerLease.verify()).ok) {
      return { ok: false, code: ErrorCode.persistenceFailed };
    }
    if (target.intactLength === null) {
      const writer = await Lease.acquire(runtime, leasePath(target.directory, target.sessionId, "writer"), {
        instanceId: target.instanceId,
      });
      if (!writer.ok) return { ok: false, code: writer.code };
      this.#writer = writer.lease;
      writer.lease.startHeartbeat();
    }
    const active = await Lease.acquire(runtime, leasePath(target.directory, target.sessionId, "active"), {
      instanceId: target.instanceId,
    });
    if (!active.ok) return { ok: false, code: active.code };
    this.#active = active.lease;
    active.lease.startHeartbeat();

    let session: SessionRecord | null = null;
    let opened: AppenderOpenResult;
    if (target.intactLength === null) {
      session = sessionRecord(target, runtime.wallNow(), records);
      opened = await SessionAppender.open(runtime.fs, target.path, target.sessionId, { create: true, firstRecords: [session, ...records] });
    } else {
      opened = await SessionAppender.open(runtime.fs, target.path, target.sessionId, {
        create: false,
        expectedIntactLength: target.intactLength,
        ...(target.lines === null ? {} : { lines: target.lines }),
        ...(target.file === null ? {} : { expectedFile: target.file }),
      });
    }
    if (!opened.ok) return { ok: false, code: ErrorCode.persistenceFailed };
    this.#appender = opened.appender;
    if (session !== null) {
      this.#written.push(session, ...records);
      return { ok: true };
    }
    // An existing file without one complete line (empty, or torn inside its first record) is
    // durable but has no `session` record yet; this first turn writes it, as a create would.
    const opening = opened.appender.intactLength === 0 ? [sessionRecord(target, runtime.wallNow(), records), ...records] : records;
    return await this.append(opening);
  }

  /**
   * Durably appends `records` (one write, one fsync); fails once the input
   * never became durable, and whenever the writer lease is no longer ours
   * (taken over after a stall, or found lost by a heartbeat): ownership is
   * checked before every append group, so a lost lease stops the writes.
   */
  async append(records: readonly SessionRecord[]): Promise<AppendResult> {
    const owner = this.#target.writerLease ?? this.#writer;
    if (this.#appender === null || owner === null || !(await owner.verify()).ok) return { ok: false, code: ErrorCode.persistenceFailed };
    const appended = await this.#appender.appendAll(records);
    if (appended.ok) this.#written.push(...records);
    return appended;
  }

  /** What this journal durably wrote, or null before the input append succeeded. */
  get writes(): JournalWrites | null {
    const appender = this.#appender;
    if (appender === null || this.#written.length === 0) return null;
    return { records: this.#written, identity: appender.identity, intactLength: appender.intactLength };
  }

  /**
   * Closes the appender and releases the active lease. A writer lease taken
   * for a lazy session is released too when `keepWriter` is false (the
   * session never became durable, or its attachment was replaced).
   */
  async close(keepWriter: boolean): Promise<void> {
    await this.#appender?.close();
    this.#appender = null;
    await this.#active?.release();
    this.#active = null;
    if (!keepWriter) {
      await this.#writer?.release();
      this.#writer = null;
    }
  }
}

/**
 * The `session` record written in front of `after`, stamped no later than
 * any of them: the caller stamped those before this append took its leases,
 * and a file's timestamps ascend in file order. (Record timestamps all have
 * `toISOString`'s fixed width, so they compare as strings.)
 */
function sessionRecord(target: JournalTarget, nowMs: number, after: readonly SessionRecord[]): SessionRecord {
  let at = new Date(nowMs).toISOString();
  for (const record of after) if (record.at < at) at = record.at;
  return { v: 1, type: "session", session_id: target.sessionId, at, cwd: target.cwd, created_at: at };
}
