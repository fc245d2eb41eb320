/**
 * The child's session attachment: `session.create` (a lazy handle), exact
 * `session.open` and `history.page` over one bounded, revisioned snapshot.
 * One attachment at a time; a failed open leaves the previous one intact, and
 * the previous one's writer lease is released only once the new one holds its
 * own. Layout and formats: `docs/storage.md`.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import type { OutputValue } from "../protocol/frames.ts";
import type { MethodResult } from "../protocol/results.ts";
import type { Runtime } from "../host/runtime.ts";
import { lengthPrefixed, sha256Hex } from "../util/digest.ts";
import { joinPath } from "../util/paths.ts";
import { uuid7 } from "../util/uuid7.ts";
import { type Attachment, type AttachmentContext, extendAttachment, loadAttachment, revisionDigest } from "./attachment.ts";
import type { ConversationRecord } from "./conversation-records.ts";
import type { SessionPreferencesRecord } from "./records.ts";
import { Lease, leasePath } from "./leases.ts";
import { pageHistory, revisionId } from "./pages.ts";
import { EMPTY_HISTORY, type HistorySnapshot } from "./history-snapshot.ts";
import { TurnJournal } from "./turn-journal.ts";
import { NO_METADATA, type SessionMetadata } from "./session-metadata.ts";
import { afterUnprojected } from "./unprojected-append.ts";

/** A result as data: the wire result object, or a wire code. */
export type StoreResult<T extends OutputValue = OutputValue> =
  | { readonly ok: true; readonly result: T }
  | { readonly ok: false; readonly code: ErrorCode };

/** What {@link SessionStore.beginTurn} hands the turn. */
export interface TurnStart {
  /** The turn's leases and appender. */
  readonly journal: TurnJournal;
  /** The session's conversation so far, for the provider. */
  readonly conversation: readonly ConversationRecord[];
  /** The projected message id the input will have. */
  readonly inputMessageId: string;
  /** The session's token totals and title presence before the turn. */
  readonly metadata: SessionMetadata;
}

/** Where sessions live and who this child is. */
export interface StoreContext {
  readonly runtime: Runtime;
  /** Canonical storage root (`MC_HOME`). */
  readonly home: string;
  /** Canonical working directory of the child. */
  readonly cwd: string;
  /** This child's instance id, written into leases. */
  readonly instanceId: string;
  /** Secret values to redact from projections. */
  readonly secrets: readonly string[];
  /** Whether pages attach saved tool cards (the client negotiated `tool.cards`); default false. */
  readonly cards?: boolean;
}

/** Owns the attachment; callers serialise operations (one session worker). */
export class SessionStore {
  readonly #context: StoreContext;
  readonly #directory: string;
  readonly #attachmentContext: AttachmentContext;
  #attachment: Attachment | null = null;
  #generation = 0;

  /** Creates a store over `context.home/sessions`. */
  constructor(context: StoreContext) {
    this.#context = context;
    this.#directory = joinPath(context.home, "sessions");
    this.#attachmentContext = {
      runtime: context.runtime,
      instanceId: context.instanceId,
      cwd: context.cwd,
      secrets: context.secrets,
      nextGeneration: () => ++this.#generation,
    };
  }

  /** The attached session id, or null. */
  get sessionId(): string | null {
    return this.#attachment?.sessionId ?? null;
  }

  /** The attached session's token totals and title presence; null without an attachment. */
  get metadata(): SessionMetadata | null {
    return this.#attachment?.metadata ?? null;
  }

  /** The attached session's last saved selection, or null. */
  get preferences(): SessionPreferencesRecord | null {
    return this.#attachment?.preferences ?? null;
  }

  /**
   * Whether the attachment's current revision can be paged: false without
   * an attachment, once its file changed underneath, and when its projection
   * exceeds the snapshot budget (every page of it is `history_limit`).
   */
  get #pageable(): boolean {
    const attachment = this.#attachment;
    return attachment !== null && !attachment.stale && attachment.snapshot !== null;
  }

  /** `session.create`: attaches a new lazy handle with no file and no placeholder history. */
  async create(): Promise<StoreResult<MethodResult<"session.create">>> {
    const runtime = this.#context.runtime;
    const sessionId = uuid7(runtime.wallNow(), runtime.randomUUID());
    const revision = revisionId({ digest: revisionDigest(runtime.createSha256(), { instanceId: this.#context.instanceId, sessionId }, "lazy"), generation: ++this.#generation });
    await this.#replace({
      ...{ sessionId, durable: false, lease: null, snapshot: EMPTY_HISTORY, revision, file: null, intactLength: null },
      ...{ lines: null, conversation: [], preferences: null, metadata: NO_METADATA, stale: false },
    });
    return { ok: true, result: { session_id: sessionId, durable: false, revision, notices: [] } };
  }

  /**
   * `session.open`: exact id only; a failure leaves the previous attachment
   * intact. `commit` is called once nothing can stop the open any more, just
   * before the attachment is replaced (releasing the previous lease follows).
   */
  async open(sessionId: string, signal: AbortSignal, commit: () => void = () => {}): Promise<StoreResult<MethodResult<"session.open">>> {
    const current = this.#attachment;
    if (current !== null && current.sessionId === sessionId && !current.durable) {
      const revision = revisionId({ digest: revisionDigest(this.#context.runtime.createSha256(), { instanceId: this.#context.instanceId, sessionId }, "lazy"), generation: ++this.#generation });
      this.#attachment = { ...current, revision, stale: false };
      return { ok: true, result: { session_id: sessionId, durable: false, revision, notices: [] } };
    }
    const runtime = this.#context.runtime;
    // The lease object stays ours only while its file still names us: acquiring returns the very
    // object the attachment holds then, and contends like any other open once it was taken over.
    const held = current !== null && current.sessionId === sessionId ? current.lease : null;
    const acquired = await Lease.acquire(runtime, leasePath(this.#directory, sessionId, "writer"), {
      instanceId: this.#context.instanceId,
    });
    // Ownership that cannot be written (a full disk) is refused like ownership held elsewhere:
    // `persistence_failed` is not a session operation's code, and the file itself is fine.
    if (!acquired.ok) return { ok: false, code: ErrorCode.sessionBusy };
    const lease = acquired.lease;
    // Without renewals another child would judge the lease stale after 60 s; release stops them.
    if (lease !== held) lease.startHeartbeat();
    const fail = async (code: ErrorCode): Promise<StoreResult<never>> => {
      if (lease !== held) await lease.release();
      return { ok: false, code };
    };

    const loaded = await loadAttachment(this.#attachmentContext, this.#sessionPath(sessionId), sessionId, signal, true);
    if (!loaded.ok) return await fail(loaded.code);
    // A cancelled open was answered already: it must leave the attachment as it was.
    if (signal.aborted) return await fail(ErrorCode.operationCancelled);
    commit();
    await this.#replace({ ...loaded.attachment, lease });
    return {
      ok: true,
      result: { session_id: sessionId, durable: true, revision: loaded.attachment.revision, notices: loaded.notices },
    };
  }

  /** `history.page` over the attachment's snapshot; a changed file makes the revision stale for good. */
  async page(sessionId: string, revision: string, cursor: string | null): Promise<StoreResult<MethodResult<"history.page">>> {
    const at = await this.snapshotAt(sessionId, revision);
    if (!at.ok) return at;
    const page = pageHistory(at.snapshot, sessionId, revision, cursor, this.#context.cards ?? false);
    return page.ok ? { ok: true, result: page.result } : { ok: false, code: page.code };
  }

  /**
   * The attached session's snapshot at `revision` and its file's path, or
   * `history.page`'s refusal in its order: another revision, or a file that
   * changed under it, is `stale_revision`; over the budget `history_limit`.
   */
  async snapshotAt(sessionId: string, revision: string): Promise<{ ok: true; snapshot: HistorySnapshot; path: string } | { ok: false; code: ErrorCode }> {
    const attachment = this.#attachment;
    if (attachment === null) return { ok: false, code: ErrorCode.sessionMissing };
    if (attachment.sessionId !== sessionId) return { ok: false, code: ErrorCode.staleSession };
    if (attachment.revision !== revision) return { ok: false, code: ErrorCode.staleRevision };
    if (!attachment.stale && attachment.file !== null) attachment.stale = await this.#changed(attachment);
    if (attachment.stale) return { ok: false, code: ErrorCode.staleRevision };
    // Over the snapshot budget: the spec's answer, never a fake complete page.
    if (attachment.snapshot === null) return { ok: false, code: ErrorCode.historyLimit };
    return { ok: true, snapshot: attachment.snapshot, path: this.#sessionPath(sessionId) };
  }

  /**
   * Why a turn cannot start on `sessionId` now, or null: no attachment is
   * `session_missing`; another session, or this one when its history changed
   * underneath or could not be read back after a turn, is `stale_session`
   * (the client reopens it, which decides what the file now holds).
   */
  turnRefusal(sessionId: string): ErrorCode | null {
    const attachment = this.#attachment;
    if (attachment === null) return ErrorCode.sessionMissing;
    return attachment.sessionId === sessionId && !attachment.stale ? null : ErrorCode.staleSession;
  }

  /**
   * Starts the durable side of a turn on the attached session, which
   * {@link turnRefusal} accepted. Returns the journal, what the turn replays,
   * and the input's projected message id (`m` + its ordinal: every earlier
   * message keeps its place, so the new input is the next one).
   */
  beginTurn(): TurnStart {
    const attachment = this.#attachment!;
    const journal = new TurnJournal({
      runtime: this.#context.runtime,
      directory: this.#directory,
      path: this.#sessionPath(attachment.sessionId),
      sessionId: attachment.sessionId,
      instanceId: this.#context.instanceId,
      cwd: this.#context.cwd,
      intactLength: attachment.durable ? attachment.intactLength : null,
      lines: attachment.durable ? attachment.lines : null,
      file: attachment.durable ? attachment.file : null,
      writerLease: attachment.durable ? attachment.lease : null,
    });
    const snapshot = attachment.snapshot;
    // Over the snapshot budget no page is ever served, so the id names no entry anyone can see.
    const ordinal = snapshot === null ? 0 : snapshot.messages - (snapshot.tailNotice ? 1 : 0);
    return { journal, conversation: attachment.conversation, inputMessageId: `m${ordinal.toString(36)}`, metadata: attachment.metadata };
  }

  /**
   * Ends an append, outside a turn, of records that project nothing (a
   * `session_title`: `beginTurn`, then the journal's `appendInput`); the
   * attachment keeps its revision (`unprojected-append.ts`).
   */
  async completeUnprojected(journal: TurnJournal): Promise<void> {
    const attachment = this.#attachment;
    if (attachment !== null) this.#attachment = await afterUnprojected(this.#context.runtime, this.#sessionPath(attachment.sessionId), attachment, journal.writes);
    await journal.close(true);
  }

  /** A fresh revision naming the history right after a turn's input append; never pageable (history is busy meanwhile). */
  async inputRevision(turnId: string): Promise<string> {
    const digest = await sha256Hex(lengthPrefixed(["magi-code.input.v1", this.#attachment?.revision ?? "", turnId]));
    return revisionId({ digest, generation: ++this.#generation });
  }

  /**
   * Ends a turn: closes its journal and, when its input became durable,
   * gives the attachment a fresh snapshot and revision. When the file holds
   * exactly what the snapshot was read from plus what the journal wrote, the
   * snapshot is extended by projecting just those records (a turn then costs
   * the same in a long session as in a short one); otherwise the file is
   * read again. A session made durable by this turn keeps the journal's
   * writer lease. Returns the new revision when it can be paged, else null
   * (`history_unavailable`): the history could not be read back (the client
   * must reopen), or its projection exceeds the snapshot budget, where every
   * page would be `history_limit`. `selection.set` and a turn's
   * `run.finished` both take this answer, so they never disagree.
   */
  async completeTurn(journal: TurnJournal, durable: boolean): Promise<string | null> {
    const attachment = this.#attachment;
    const writes = journal.writes;
    await journal.close(durable && attachment !== null);
    if (attachment === null || !durable) return null;
    const lease = attachment.lease ?? journal.newWriterLease;
    const extended = writes === null ? null : await extendAttachment(this.#attachmentContext, this.#sessionPath(attachment.sessionId), attachment, writes);
    if (extended !== null) {
      this.#attachment = { ...extended, lease };
    } else {
      const loaded = await loadAttachment(this.#attachmentContext, this.#sessionPath(attachment.sessionId), attachment.sessionId, new AbortController().signal, false);
      this.#attachment = loaded.ok ? { ...loaded.attachment, lease } : { ...attachment, durable: true, lease, stale: true };
    }
    return this.#pageable ? this.#attachment.revision : null;
  }

  /** Releases the attachment's leases; called at teardown. */
  async close(): Promise<void> {
    const attachment = this.#attachment;
    this.#attachment = null;
    await attachment?.lease?.release();
  }

  #sessionPath(sessionId: string): string {
    return joinPath(this.#directory, `${sessionId}.jsonl`);
  }

  async #replace(next: Attachment): Promise<void> {
    const previous = this.#attachment;
    this.#attachment = next;
    if (previous !== null && previous.lease !== null && previous.lease !== next.lease) await previous.lease.release();
  }

  // The mtime catches a rewrite in place that keeps the length, which dev, ino and size alone would miss.
  async #changed(attachment: Attachment): Promise<boolean> {
    try {
      const info = await this.#context.runtime.fs.lstat(this.#sessionPath(attachment.sessionId));
      const file = attachment.file!;
      return info.kind !== "file" || info.dev !== file.dev || info.ino !== file.ino || info.size !== file.size ||
        info.mtimeMs !== file.mtimeMs;
    } catch {
      return true;
    }
  }
}
