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
import { LIMITS } from "../protocol/limits.ts";
import type { Runtime } from "../runtime.ts";
import { lengthPrefixed, sha256Hex } from "../util/digest.ts";
import { joinPath } from "../util/paths.ts";
import { uuid7 } from "../util/uuid7.ts";
import { Lease, leasePath } from "./leases.ts";
import { pageHistory, revisionId } from "./pages.ts";
import { type HistorySnapshot, projectHistoryAsync } from "./projection.ts";
import { type ConversationRecord, isConversationRecord } from "./conversation-records.ts";
import type { SessionRecord } from "./records.ts";
import { TurnJournal } from "./turn-journal.ts";
import { type FileIdentity, readSessionFile } from "./session-file.ts";
import type { Cooperation } from "./slices.ts";

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
}

/** Notice when a durable session's history records no cwd, so its workspace is unverified. */
export const CWD_UNVERIFIED = "cwd_unverified";

interface Attachment {
  readonly sessionId: string;
  readonly durable: boolean;
  readonly lease: Lease | null;
  readonly snapshot: HistorySnapshot;
  readonly revision: string;
  /** File identity, length and mtime the snapshot was read from; null for a lazy handle. */
  readonly file: FileIdentity | null;
  /** End of the last complete line when read (appends continue there); null for a lazy handle. */
  readonly intactLength: number | null;
  /** The records a next turn replays to the provider. */
  readonly conversation: readonly ConversationRecord[];
  /** Set for good once the file changed under the snapshot. */
  stale: boolean;
}

/** Where sessions live and who this child is. */
export interface StoreContext {
  /** The runtime. */
  readonly runtime: Runtime;
  /** Canonical storage root (`MC_HOME`). */
  readonly home: string;
  /** Canonical working directory of the child. */
  readonly cwd: string;
  /** This child's instance id, written into leases. */
  readonly instanceId: string;
  /** Secret values to redact from projections. */
  readonly secrets: readonly string[];
}

const EMPTY_SNAPSHOT: HistorySnapshot = Object.freeze({ entries: Object.freeze([]), complete: true });

/** Owns the attachment; callers serialise operations (one session worker). */
export class SessionStore {
  readonly #context: StoreContext;
  readonly #directory: string;
  #attachment: Attachment | null = null;
  #generation = 0;

  /** Creates a store over `context.home/sessions`. */
  constructor(context: StoreContext) {
    this.#context = context;
    this.#directory = joinPath(context.home, "sessions");
  }

  /** The attached session id, or null. */
  get sessionId(): string | null {
    return this.#attachment?.sessionId ?? null;
  }

  /** `session.create`: attaches a new lazy handle with no file and no placeholder history. */
  async create(): Promise<StoreResult> {
    const runtime = this.#context.runtime;
    const sessionId = uuid7(runtime.wallNow(), runtime.randomUUID());
    const revision = revisionId({ digest: "0".repeat(64), generation: ++this.#generation });
    await this.#replace({
      sessionId,
      durable: false,
      lease: null,
      snapshot: EMPTY_SNAPSHOT,
      revision,
      file: null,
      intactLength: null,
      conversation: [],
      stale: false,
    });
    return { ok: true, result: { session_id: sessionId, durable: false, revision, notices: [] } };
  }

  /** `session.open`: exact id only; a failure leaves the previous attachment intact. */
  async open(sessionId: string, signal: AbortSignal): Promise<StoreResult> {
    const current = this.#attachment;
    if (current !== null && current.sessionId === sessionId && !current.durable) {
      const revision = revisionId({ digest: "0".repeat(64), generation: ++this.#generation });
      this.#attachment = { ...current, revision, stale: false };
      return { ok: true, result: { session_id: sessionId, durable: false, revision, notices: [] } };
    }
    const runtime = this.#context.runtime;
    // Reuse our lease only while it is still ours: after a long stall another child may have
    // taken it over as stale, and reopening must then contend like any other open.
    const held = current !== null && current.sessionId === sessionId ? current.lease : null;
    const reuse = held !== null && held.state === "held" && (await held.verify()).ok ? held : null;
    let lease = reuse;
    if (lease === null) {
      const acquired = await Lease.acquire(runtime, leasePath(this.#directory, sessionId, "writer"), {
        instanceId: this.#context.instanceId,
      });
      if (!acquired.ok) return { ok: false, code: acquired.code };
      lease = acquired.lease;
      // Without renewals another child would judge the lease stale after 60 s; release stops them.
      lease.startHeartbeat();
    }
    const fail = async (code: ErrorCode): Promise<StoreResult> => {
      if (lease !== reuse) await lease!.release();
      return { ok: false, code };
    };

    const loaded = await this.#load(sessionId, signal, true);
    if (!loaded.ok) return await fail(loaded.code);
    await this.#replace({ ...loaded.attachment, lease });
    return {
      ok: true,
      result: { session_id: sessionId, durable: true, revision: loaded.attachment.revision, notices: loaded.notices },
    };
  }

  /** `history.page` over the attachment's snapshot; a changed file makes the revision stale for good. */
  async page(sessionId: string, revision: string, cursor: string | null): Promise<StoreResult> {
    const attachment = this.#attachment;
    if (attachment === null) return { ok: false, code: ErrorCode.sessionMissing };
    if (attachment.sessionId !== sessionId) return { ok: false, code: ErrorCode.staleSession };
    if (attachment.revision !== revision) return { ok: false, code: ErrorCode.staleRevision };
    if (!attachment.stale && attachment.file !== null) attachment.stale = await this.#changed(attachment);
    if (attachment.stale) return { ok: false, code: ErrorCode.staleRevision };
    const page = pageHistory(attachment.snapshot, sessionId, revision, cursor);
    return page.ok ? { ok: true, result: page.result } : { ok: false, code: page.code };
  }

  /** Why a turn cannot start on `sessionId` now (`session_missing`, `stale_session`), or null. */
  turnRefusal(sessionId: string): ErrorCode | null {
    const attachment = this.#attachment;
    if (attachment === null) return ErrorCode.sessionMissing;
    return attachment.sessionId === sessionId ? null : ErrorCode.staleSession;
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
    });
    const messages = attachment.snapshot.entries.reduce((count, entry) => count + (entry.last_part ? 1 : 0), 0);
    return { journal, conversation: attachment.conversation, inputMessageId: `m${messages.toString(36)}` };
  }

  /** A fresh revision naming the history right after a turn's input append; never pageable (history is busy meanwhile). */
  async inputRevision(turnId: string): Promise<string> {
    const digest = await sha256Hex(lengthPrefixed(["magi-code.input.v1", this.#attachment?.revision ?? "", turnId]));
    return revisionId({ digest, generation: ++this.#generation });
  }

  /**
   * Ends a turn: closes its journal and, when its input became durable,
   * re-reads the file for a fresh snapshot and revision. A session made
   * durable by this turn keeps the journal's writer lease. Returns the new
   * revision, or null when the history could not be read back (the client
   * must reopen to page it).
   */
  async completeTurn(journal: TurnJournal, durable: boolean): Promise<string | null> {
    const attachment = this.#attachment;
    await journal.close(durable && attachment !== null);
    if (attachment === null || !durable) return null;
    const lease = attachment.lease ?? journal.newWriterLease;
    const loaded = await this.#load(attachment.sessionId, new AbortController().signal, false);
    if (!loaded.ok) {
      this.#attachment = { ...attachment, durable: true, lease, stale: true };
      return null;
    }
    this.#attachment = { ...loaded.attachment, lease };
    return loaded.attachment.revision;
  }

  /** Releases the attachment's leases; called at teardown. */
  async close(): Promise<void> {
    const attachment = this.#attachment;
    this.#attachment = null;
    await attachment?.lease?.release();
  }

  /** Reads, checks and projects the session file into an attachment (without its lease). */
  async #load(
    sessionId: string,
    signal: AbortSignal,
    checkCwd: boolean,
  ): Promise<{ ok: true; attachment: Attachment; notices: string[] } | { ok: false; code: ErrorCode }> {
    const runtime = this.#context.runtime;
    // A timer, not a microtask: only a macrotask lets the loop read and answer `status` in between.
    const cooperation = {
      signal,
      now: () => runtime.monotonicNow(),
      yieldEvery: () => new Promise<void>((resolve) => runtime.setTimer(0, () => resolve())),
    } satisfies Cooperation;
    const read = await readSessionFile(runtime.fs, this.#sessionPath(sessionId), sessionId, {
      ...cooperation,
      maxBytes: LIMITS.stored_history_bytes,
      maxLines: LIMITS.stored_history_lines,
      createSha256: () => runtime.createSha256(),
    });
    if (!read.ok) return read;
    const scope = checkCwd ? await this.#checkCwd(read.records) : { ok: true as const, notices: [] };
    if (!scope.ok) return scope;
    if (signal.aborted) return { ok: false, code: ErrorCode.operationCancelled };
    const projected = await projectHistoryAsync(read.records, { torn: read.torn, secrets: this.#context.secrets }, cooperation);
    if (!projected.ok) return projected;
    const attachment: Attachment = {
      sessionId,
      durable: true,
      lease: null,
      snapshot: projected.snapshot,
      revision: revisionId({ digest: read.digest, generation: ++this.#generation }),
      file: read.identity,
      intactLength: read.intactLength,
      conversation: read.records.filter(isConversationRecord),
      stale: false,
    };
    return { ok: true, attachment, notices: scope.notices };
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

  /** Every recorded cwd must be absolute and canonicalise to the child's cwd; none recorded is a notice. */
  async #checkCwd(
    records: readonly SessionRecord[],
  ): Promise<{ ok: true; notices: string[] } | { ok: false; code: ErrorCode }> {
    const recorded = records.flatMap((record) => record.type === "session" && record.cwd !== undefined ? [record.cwd] : []);
    if (recorded.length === 0) return { ok: true, notices: [CWD_UNVERIFIED] };
    for (const cwd of new Set(recorded)) {
      if (!cwd.startsWith("/")) return { ok: false, code: ErrorCode.cwdMismatch };
      const canonical = await this.#context.runtime.fs.realpath(cwd).catch(() => null);
      if (canonical !== this.#context.cwd) return { ok: false, code: ErrorCode.cwdMismatch };
    }
    return { ok: true, notices: [] };
  }
}
