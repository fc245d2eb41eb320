/**
 * The session attachment's state and the two ways a durable one is made:
 * read from its file (`session.open`, or after a turn whose writes cannot be
 * trusted to be the file's only change), or extended in place by what a
 * turn's journal wrote. Both produce the same snapshot for the same bytes;
 * the extension just skips reading, hashing and projecting the old part
 * (never past a rewind, which changes what came before it).
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { LIMITS } from "../protocol/limits.ts";
import type { FileInfo, Runtime, Sha256 } from "../host/runtime.ts";
import { lengthPrefixed } from "../util/digest.ts";
import { type ConversationRecord, foldConversation } from "./conversation-records.ts";
import type { Lease } from "./leases.ts";
import { revisionId } from "./pages.ts";
import type { HistorySnapshot } from "./history-snapshot.ts";
import { projectHistory } from "./projection.ts";
import { projectWithinBudget } from "./projection-window.ts";
import { encodeRecord, type SessionPreferencesRecord, type SessionRecord } from "./records.ts";
import { type FileIdentity, readSessionFile, sameObject } from "./session-file.ts";
import { applyRewinds, holdsRewind } from "./rewind-fold.ts";
import type { Cooperation } from "./cooperative-slices.ts";
import type { JournalWrites } from "./turn-journal.ts";
import { foldMetadata, type SessionMetadata } from "./session-metadata.ts";

/** Notice when a durable session's history records no cwd, so its workspace is unverified. */
export const CWD_UNVERIFIED = "cwd_unverified";

/** The attached session as the store holds it. */
export interface Attachment {
  readonly sessionId: string;
  /** Whether the session has a file. */
  readonly durable: boolean;
  /** The writer lease, once held. */
  readonly lease: Lease | null;
  /**
   * The projection `history.page` serves, or null when the history's
   * projection exceeds the snapshot budget: the session still opens and
   * takes turns, and every page of it is `history_limit`.
   */
  readonly snapshot: HistorySnapshot | null;
  /** The snapshot's revision. */
  readonly revision: string;
  /** File identity, length and mtime the snapshot was read from; null for a lazy handle. */
  readonly file: FileIdentity | null;
  /** End of the last complete line when read (appends continue there); null for a lazy handle. */
  readonly intactLength: number | null;
  /** Complete lines up to `intactLength` (skipped records included), for the stored-history line bound; null for a lazy handle. */
  readonly lines: number | null;
  /** The records a next turn replays to the provider. */
  readonly conversation: readonly ConversationRecord[];
  /** The last `session_preferences` record, which `session.open` restores the selection from; null if none. */
  readonly preferences: SessionPreferencesRecord | null;
  /** Token totals and title presence, folded from the stored records. */
  readonly metadata: SessionMetadata;
  /** Set for good once the file changed under the snapshot. */
  stale: boolean;
}

/** What loading and extending need from the store. */
export interface AttachmentContext {
  readonly runtime: Runtime;
  /** This child's instance id: the spec scopes every revision to its child. */
  readonly instanceId: string;
  /** The child's canonical cwd, which every recorded cwd must equal. */
  readonly cwd: string;
  /** Secret values to redact from projections. */
  readonly secrets: readonly string[];
  /** Issues the next attachment generation (revisions of one child never repeat). */
  nextGeneration(): number;
}

/** A loaded attachment, without its lease, and the open notices. */
export type LoadResult = { ok: true; attachment: Attachment; notices: string[] } | { ok: false; code: ErrorCode };

/** Reads, checks (the cwd, when `checkCwd`) and projects the session file at `path`. */
export async function loadAttachment(
  context: AttachmentContext,
  path: string,
  sessionId: string,
  signal: AbortSignal,
  checkCwd: boolean,
): Promise<LoadResult> {
  const runtime = context.runtime;
  // A timer, not a microtask: only a macrotask lets the loop read and answer `status` in between.
  const cooperation = {
    signal,
    now: () => runtime.monotonicNow(),
    yieldEvery: () => new Promise<void>((resolve) => runtime.setTimer(0, () => resolve())),
  } satisfies Cooperation;
  const read = await readSessionFile(runtime.fs, path, sessionId, {
    ...cooperation,
    maxBytes: LIMITS.stored_history_bytes,
    maxLines: LIMITS.stored_history_lines,
    createSha256: () => runtime.createSha256(),
  });
  if (!read.ok) return read;
  const scope = checkCwd ? await recordedCwd(context, read.records) : { ok: true as const, notices: [] };
  if (!scope.ok) return scope;
  if (signal.aborted) return { ok: false, code: ErrorCode.operationCancelled };
  // Over the snapshot budget (history_limit, its only failure) the session stays usable; its pages are not,
  // unless a compaction lets the projection start later (projection-window.ts).
  // What rewinds removed is neither shown nor replayed (rewind-fold.ts); token totals stay those spent.
  const standing = applyRewinds(read.records);
  const projected = await projectWithinBudget(standing, { torn: read.torn, secrets: context.secrets }, cooperation);
  if (!projected.ok && projected.code !== ErrorCode.historyLimit) return projected;
  const attachment: Attachment = {
    sessionId,
    durable: true,
    lease: null,
    snapshot: projected.ok ? projected.snapshot : null,
    revision: revisionId({ digest: revisionDigest(runtime.createSha256(), { instanceId: context.instanceId, sessionId }, "read", read.digest), generation: context.nextGeneration() }),
    file: read.identity,
    intactLength: read.intactLength,
    lines: read.lines,
    conversation: foldConversation([], standing),
    preferences: lastPreferences(standing) ?? null,
    metadata: foldMetadata(read.records),
    stale: false,
  };
  return { ok: true, attachment, notices: scope.notices };
}

/**
 * `attachment` with `writes` projected onto its snapshot, or null when that
 * might differ from reading the file at `path` afresh: the snapshot is
 * incomplete (a torn tail the appender has since cut would change it) or
 * stale, or the file is not exactly the snapshot's bytes plus the journal's.
 * The revision's digest then names the previous revision, the new length and
 * the hash of the appended bytes rather than hashing the whole file.
 */
export async function extendAttachment(
  context: AttachmentContext,
  path: string,
  attachment: Attachment,
  writes: JournalWrites,
): Promise<Attachment | null> {
  const snapshot = attachment.snapshot;
  if (attachment.stale || snapshot === null || !snapshot.complete || holdsRewind(writes.records)) return null;
  const before = attachment.durable ? attachment.intactLength : 0;
  if (before === null || (attachment.file !== null && attachment.file.size !== before)) return null;
  let info: FileInfo;
  try {
    info = await context.runtime.fs.lstat(path);
  } catch {
    return null;
  }
  if (!sameObject(info, writes.identity) || info.size !== writes.intactLength) return null;
  if (attachment.file !== null && (attachment.file.dev !== info.dev || attachment.file.ino !== info.ino)) return null;
  const projected = projectHistory(writes.records, { torn: false, secrets: context.secrets, after: snapshot });
  if (!projected.ok) return null;
  const added = projected.snapshot;
  const appended = context.runtime.createSha256();
  for (const record of writes.records) {
    const line = encodeRecord(record);
    if (line === null) return null;
    appended.update(line);
  }
  const digest = revisionDigest(context.runtime.createSha256(), { instanceId: context.instanceId, sessionId: attachment.sessionId }, "extended", attachment.revision, String(info.size), appended.digest());
  return {
    sessionId: attachment.sessionId,
    durable: true,
    lease: attachment.lease,
    snapshot: { ...added, entries: [...snapshot.entries, ...added.entries], userTurns: new Map([...snapshot.userTurns, ...added.userTurns]) },
    revision: revisionId({ digest, generation: context.nextGeneration() }),
    file: { dev: info.dev, ino: info.ino, size: info.size, mtimeMs: info.mtimeMs },
    intactLength: writes.intactLength,
    lines: (attachment.lines ?? 0) + writes.records.length,
    conversation: foldConversation(attachment.conversation, writes.records),
    preferences: lastPreferences(writes.records) ?? attachment.preferences,
    metadata: foldMetadata(writes.records, attachment.metadata),
    stale: false,
  };
}

/**
 * The digest part of a revision: the child's instance id, the session id,
 * how the snapshot was made (`lazy`, `read`, `extended`) and what names its
 * content, hashed together, so two sessions never share a revision even
 * when their files are alike (two empty files, or two equally long first
 * turns), and two children never issue each other's revisions of one file.
 */
export function revisionDigest(
  hash: Sha256,
  scope: { readonly instanceId: string; readonly sessionId: string },
  made: "lazy" | "read" | "extended",
  ...content: string[]
): string {
  // The runtime's hash, not Web Crypto: it answers at once, with no extra trip through the event loop.
  hash.update(lengthPrefixed(["magi-code.revision.v3", scope.instanceId, scope.sessionId, made, ...content]));
  return hash.digest();
}

/** The last `session_preferences` of `records`, if any. */
function lastPreferences(records: readonly SessionRecord[]): SessionPreferencesRecord | undefined {
  return records.findLast((record): record is SessionPreferencesRecord => record.type === "session_preferences");
}

/**
 * Every nonempty recorded cwd must be absolute and canonicalise to the
 * child's cwd; none recorded (absent or empty) is a notice. Session listing
 * applies the same rule, so a listed session is one `session.open` would not
 * refuse for its workspace.
 */
export async function recordedCwd(
  context: Pick<AttachmentContext, "runtime" | "cwd">,
  records: readonly SessionRecord[],
): Promise<{ ok: true; notices: string[] } | { ok: false; code: ErrorCode }> {
  const recorded = records.flatMap((record) => record.type === "session" && record.cwd !== undefined && record.cwd !== "" ? [record.cwd] : []);
  if (recorded.length === 0) return { ok: true, notices: [CWD_UNVERIFIED] };
  for (const cwd of new Set(recorded)) {
    if (!cwd.startsWith("/")) return { ok: false, code: ErrorCode.cwdMismatch };
    const canonical = await context.runtime.fs.realpath(cwd).catch(() => null);
    if (canonical !== context.cwd) return { ok: false, code: ErrorCode.cwdMismatch };
  }
  return { ok: true, notices: [] };
}
