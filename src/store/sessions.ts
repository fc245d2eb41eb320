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
import { joinPath } from "../util/paths.ts";
import { uuid7 } from "../util/uuid7.ts";
import { Lease, leasePath } from "./leases.ts";
import { pageHistory, revisionId } from "./pages.ts";
import { type HistorySnapshot, projectHistoryAsync } from "./projection.ts";
import type { SessionRecord } from "./records.ts";
import { type FileIdentity, readSessionFile } from "./session-file.ts";
import type { Cooperation } from "./slices.ts";

/** A result as data: the wire result object, or a wire code. */
export type StoreResult<T extends OutputValue = OutputValue> =
  | { readonly ok: true; readonly result: T }
  | { readonly ok: false; readonly code: ErrorCode };

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
    await this.#replace({ sessionId, durable: false, lease: null, snapshot: EMPTY_SNAPSHOT, revision, file: null, stale: false });
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
    if (!read.ok) return await fail(read.code);
    const scope = await this.#checkCwd(read.records);
    if (!scope.ok) return await fail(scope.code);
    if (signal.aborted) return await fail(ErrorCode.operationCancelled);
    const projected = await projectHistoryAsync(read.records, { torn: read.torn, secrets: this.#context.secrets }, cooperation);
    if (!projected.ok) return await fail(projected.code);

    const revision = revisionId({ digest: read.digest, generation: ++this.#generation });
    await this.#replace({
      sessionId,
      durable: true,
      lease,
      snapshot: projected.snapshot,
      revision,
      file: read.identity,
      stale: false,
    });
    return { ok: true, result: { session_id: sessionId, durable: true, revision, notices: scope.notices } };
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
