/**
 * `session.list`: one discovery snapshot per child, paged by opaque cursors.
 * A fresh listing (null revision and cursor) scans and replaces the previous
 * snapshot, whatever its outcome; a continuation names the snapshot's
 * revision and a cursor it issued, rescans, and pages only when the rescan's
 * fingerprint equals the snapshot's. Any difference, or a changing inventory
 * during the rescan, makes the snapshot stale for good: every later
 * continuation is `stale_revision` until a fresh listing. The attachment and
 * the history snapshot are never touched.
 *
 * @module
 */

import { ErrorCode } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { utf8ByteCount } from "../../util/utf8.ts";
import { cursorFor, offsetOf } from "../pages.ts";
import type { MethodResult } from "../../protocol/results.ts";
import type { StoreResult } from "../sessions.ts";
import type { ListEntry } from "./candidate.ts";
import { type ScanContext, scanSessions } from "./scan.ts";

/** The top-level notice when a history was left out as unsafe, unreadable or malformed (never which one). */
export const SESSIONS_OMITTED_INVALID = "sessions_omitted_invalid";

/** What a `session.list` request asks for, defaults applied by the caller or here. */
export interface ListRequest {
  readonly revision?: string | null | undefined;
  readonly cursor?: string | null | undefined;
  readonly limit?: number | undefined;
}

interface ListingSnapshot {
  readonly revision: string;
  readonly entries: readonly ListEntry[];
  readonly notices: readonly string[];
  readonly fingerprint: string;
  /** Set for good once a rescan saw a change. */
  stale: boolean;
}

/** The result of one page, as it goes on the wire. */
type ListPage = {
  readonly revision: string;
  readonly sessions: readonly ListEntry[];
  readonly next_cursor: string | null;
  readonly complete: boolean;
  readonly notices: readonly string[];
};

const DEFAULT_LIMIT = 100;

const bytesOf = (value: unknown): number => utf8ByteCount(JSON.stringify(value));

/** The child's discovery snapshot; callers serialise requests (the one session worker). */
export class SessionListing {
  readonly #context: ScanContext;
  #snapshot: ListingSnapshot | null = null;
  #generation = 0;

  /** Creates the listing of `context.directory` for this child. */
  constructor(context: ScanContext) {
    this.#context = context;
  }

  /** Answers one `session.list` request; `signal` cancels its scan. */
  async list(request: ListRequest, signal: AbortSignal): Promise<StoreResult<MethodResult<"session.list">>> {
    const limit = request.limit ?? DEFAULT_LIMIT;
    const revision = request.revision ?? null;
    const cursor = request.cursor ?? null;
    if (revision === null || cursor === null) return await this.#fresh(limit, signal);
    const snapshot = this.#snapshot;
    if (snapshot === null || snapshot.revision !== revision || snapshot.stale) return { ok: false, code: ErrorCode.staleRevision };
    const start = offsetOf(cursor, revision, snapshot.entries.length);
    if (start === null) return { ok: false, code: ErrorCode.staleRevision };
    const scan = await scanSessions(this.#context, signal);
    if (!scan.ok) {
      // A cancelled continuation leaves the snapshot as it was (its answer is already operation_cancelled).
      if (scan.code === ErrorCode.staleRevision && !signal.aborted) snapshot.stale = true;
      return scan;
    }
    if (scan.fingerprint !== snapshot.fingerprint) {
      snapshot.stale = true;
      return { ok: false, code: ErrorCode.staleRevision };
    }
    return { ok: true, result: page(snapshot, start, limit) };
  }

  async #fresh(limit: number, signal: AbortSignal): Promise<StoreResult<MethodResult<"session.list">>> {
    this.#snapshot = null;
    const scan = await scanSessions(this.#context, signal);
    if (!scan.ok) return scan;
    const snapshot: ListingSnapshot = {
      // Random, not the fingerprint: two children listing one directory must not accept each other's revisions.
      revision: `l${(++this.#generation).toString(36)}-${this.#context.runtime.randomUUID().replaceAll("-", "")}`,
      entries: scan.entries,
      notices: scan.omitted ? [SESSIONS_OMITTED_INVALID] : [],
      fingerprint: scan.fingerprint,
      stale: false,
    };
    this.#snapshot = snapshot;
    return { ok: true, result: page(snapshot, 0, limit) };
  }
}

/**
 * The page of `snapshot` from `start`: at most `limit` entries and at most
 * `discovery_page_bytes` serialized, filled greedily in id order. An entry
 * is a few hundred bytes at most (an id, a 50-character title, a
 * timestamp), so a page always holds at least one while entries remain.
 */
function page(snapshot: ListingSnapshot, start: number, limit: number): ListPage {
  const entries = snapshot.entries;
  const frame = (end: number): ListPage => ({
    revision: snapshot.revision,
    sessions: [],
    next_cursor: end < entries.length ? cursorFor(snapshot.revision, end) : null,
    complete: end >= entries.length,
    notices: snapshot.notices,
  });
  let end = start;
  let entryBytes = 0;
  while (end < entries.length && end - start < limit) {
    const next = entryBytes + (end > start ? 1 : 0) + bytesOf(entries[end]);
    if (bytesOf(frame(end + 1)) + next > LIMITS.discovery_page_bytes) break;
    entryBytes = next;
    end++;
  }
  return { ...frame(end), sessions: entries.slice(start, end) };
}
