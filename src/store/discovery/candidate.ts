/**
 * Examines one primary history for a listing, through the same safe held-file
 * read and the same all-recorded-cwd rule as `session.open`: listed (with its
 * entry), excluded (another workspace, or a recorded cwd that is not
 * absolute), omitted (unsafe, unreadable or malformed), or a failure of the
 * whole listing (a vanished file, a bound, cancellation). Nothing is written,
 * no lease is touched, and the records are let go as soon as the entry's
 * fields are derived.
 *
 * @module
 */

import { ErrorCode } from "../../protocol/errors.ts";
import { type FileInfo, isRuntimeError, type Runtime } from "../../host/runtime.ts";
import { CWD_UNVERIFIED, recordedCwd } from "../attachment.ts";
import type { Cooperation } from "../cooperative-slices.ts";
import { type HeldFile, holdFile, isPrivateFile } from "../held-file.ts";
import { type Prepared, readAhead, ReadBuffer, releaseLater } from "../read-buffers.ts";
import { readSessionFile } from "../session-file.ts";
import type { ScanBudget } from "./budget.ts";
import { fingerprintOf, UNREADABLE } from "./fingerprint.ts";
import { displayTitle, storedTitle } from "./title.ts";

/** A session as `session.list` shows it. */
export type ListEntry = {
  readonly session_id: string;
  readonly title: string | null;
  readonly updated_at: string | null;
  // The wire word `busy` is also an error code, and codes are spelled only in the code table.
  readonly eligibility: "available" | "cwd_unverified" | typeof ErrorCode.busy;
  readonly notices: readonly string[];
};

/** What the examination of one candidate found. */
export type Examined =
  /** Listed: `fingerprint` names the file object, its permissions and content (`fingerprint.ts`). */
  | { readonly kind: "listed"; readonly entry: ListEntry; readonly fingerprint: Uint8Array }
  /** Not shown: another workspace (`excluded`), or unusable (`omitted`, which the listing's notice reports). */
  | { readonly kind: "excluded" | "omitted"; readonly fingerprint: Uint8Array }
  | { readonly kind: "failed"; readonly code: ExamineFailure };

/** Why a candidate ends the whole listing. */
export type ExamineFailure =
  | typeof ErrorCode.staleRevision
  | typeof ErrorCode.discoveryLimit
  | typeof ErrorCode.operationCancelled;

/** What examining needs from the listing. */
export interface ExamineContext {
  readonly runtime: Runtime;
  /** The child's canonical cwd. */
  readonly cwd: string;
  /** Secret values a title must not hold. */
  readonly secrets: readonly string[];
  /** The request's remaining read work. */
  readonly budget: ScanBudget;
  /** Aborted when the request is cancelled or its deadline passes (see `signal` of {@link examine}). */
  readonly cooperation: Required<Cooperation>;
  /** The read chunk the request's examinations share, one after another. */
  readonly buffer: ReadBuffer;
  /** `runtime` with `realpath` answering each recorded cwd once per request (null inside when it does not resolve). */
  readonly resolving: Runtime;
}

/** The context of one request's examinations, which run one after another; the read chunk is a new one unless given. */
export function examineContext(fields: Omit<ExamineContext, "buffer" | "resolving"> & { readonly buffer?: ReadBuffer }): ExamineContext {
  return { ...fields, buffer: fields.buffer ?? new ReadBuffer(), resolving: resolvingOnce(fields.runtime) };
}

/** One candidate: its id and file, and whether another child's lease file is present for it. */
export interface Candidate {
  readonly sessionId: string;
  readonly path: string;
  /** A lease file names the session and the session is not this child's attachment. */
  readonly busy: boolean;
  /** Its `lstat` and open, already under way (a listing starts the next file's while it reads this one). */
  readonly ahead?: Ahead;
}

/** A candidate's `lstat` and, when that shows a private file, its checked open and first read, started before its examination. */
export interface Ahead {
  readonly lstat: Promise<FileInfo>;
  /** Where the first read goes: not the buffer of an examination running meanwhile. */
  readonly buffer: ReadBuffer;
  /**
   * The file opened and maybe read: the first call starts the first read
   * under `maxBytes` (at most what the examination will be admitted), later
   * ones return the same. Refused without a handle when the `lstat` failed
   * or showed anything but a private file.
   */
  prepare(maxBytes: number): Promise<Prepared>;
  /** Whether the prepared file had settled by the last turn of the loop: awaiting it then gives the loop no turn. */
  settled(): boolean;
}

const NOT_HELD: HeldFile = { ok: false, code: ErrorCode.sessionInvalid };

/**
 * `path`'s `lstat` and open started now, for a {@link Candidate} examined
 * later (its first read starts at {@link Ahead.prepare}, when the bound it
 * may read under is closest to its own): a failure waits for its
 * examination, and one never examined is given to {@link releaseAhead}. Only
 * a private file is opened, as the safe reader would, so a FIFO never is.
 */
export function startAhead(runtime: Runtime, path: string, buffer: ReadBuffer): Ahead {
  const lstat = runtime.fs.lstat(path);
  const held = lstat.then((info) => isPrivateFile(info) ? holdFile(runtime.fs, path, info) : NOT_HELD, () => NOT_HELD);
  let prepared: Promise<Prepared> | null = null;
  let settled = false;
  const prepare = (maxBytes: number): Promise<Prepared> => {
    if (prepared === null) {
      prepared = readAhead(held, buffer, maxBytes);
      void prepared.then(() => settled = true);
    }
    return prepared;
  };
  return { lstat, buffer, prepare, settled: () => settled };
}

/** Closes what {@link startAhead} opened for a candidate that will not be examined. */
export function releaseAhead(ahead: Ahead): void {
  releaseLater(ahead.prepare(0)); // a zero bound reads nothing ahead
}

/**
 * Examines `candidate`, charging the request's budget what its read took
 * (`budget.ts`), whatever the outcome. A read that stopped on the
 * cooperation signal is reported `operation_cancelled`; the caller tells a
 * cancelled request from an expired deadline.
 */
export async function examine(context: ExamineContext, candidate: Candidate): Promise<Examined> {
  const { runtime, budget } = context;
  let info: FileInfo;
  try {
    info = await (candidate.ahead?.lstat ?? runtime.fs.lstat(candidate.path));
  } catch (error) {
    // Listed a moment ago: a file that is gone now is a changing inventory; any other failure is unreadable.
    if (isRuntimeError(error, "not_found")) return { kind: "failed", code: ErrorCode.staleRevision };
    return { kind: "omitted", fingerprint: UNREADABLE };
  }
  // Refused on the lstat alone, as the safe reader would: never opened, so nothing is charged.
  if (!isPrivateFile(info)) return { kind: "omitted", fingerprint: fingerprintOf(info, null) };
  const admitted = budget.admit();
  // What the reader says it took, refused or not; a platform failure midway leaves no trustworthy count, so the whole admission.
  const charged = { bytes: admitted.maxBytes, lines: admitted.maxLines };
  const { signal, now, yieldEvery } = context.cooperation;
  // Named fields, not spreads: V8's object spread here left ~1.5 KiB per history that outlived young-generation collections.
  let latest: string | null = null;
  const read = await readSessionFile(runtime.fs, candidate.path, candidate.sessionId, {
    signal,
    now,
    yieldEvery,
    maxBytes: admitted.maxBytes,
    maxLines: admitted.maxLines,
    lstat: info,
    ...candidate.ahead && { prepared: candidate.ahead.prepare(admitted.maxBytes) },
    buffer: candidate.ahead?.buffer ?? context.buffer,
    closeBehind: true,
    createSha256: () => runtime.createSha256(),
    // Never more than admitted: the byte or line past a bound is how the reader sees it passed.
    consumed: (bytes, lines) => {
      charged.bytes = Math.min(bytes, admitted.maxBytes);
      charged.lines = Math.min(lines, admitted.maxLines);
    },
    // The entry needs only the greatest `at` (the stored form compares in time order as text), the cwds and the titles.
    retain: (record) => {
      if (latest === null || record.at > latest) latest = record.at;
      return record.type === "session" || record.type === "session_title" || record.type === "compaction";
    },
  });
  budget.charge(charged.bytes, charged.lines);
  if (!read.ok) {
    switch (read.code) {
      case ErrorCode.sessionMissing:
        return { kind: "failed", code: ErrorCode.staleRevision };
      case ErrorCode.historyLimit:
        return { kind: "failed", code: ErrorCode.discoveryLimit };
      case ErrorCode.operationCancelled:
        return { kind: "failed", code: ErrorCode.operationCancelled };
      default:
        return { kind: "omitted", fingerprint: fingerprintOf(info, null) };
    }
  }
  const fingerprint = fingerprintOf(info, { size: read.identity.size, digest: read.digest });
  const cwd = await recordedCwd({ runtime: context.resolving, cwd: context.cwd }, read.records);
  if (!cwd.ok) return { kind: "excluded", fingerprint };
  const unverified = cwd.notices.includes(CWD_UNVERIFIED);
  const entry: ListEntry = {
    session_id: candidate.sessionId,
    title: displayTitle(storedTitle(read.records), context.secrets),
    updated_at: latest,
    eligibility: candidate.busy ? ErrorCode.busy : unverified ? "cwd_unverified" : "available",
    notices: cwd.notices,
  };
  return { kind: "listed", entry, fingerprint };
}

/** `runtime` with `realpath` answered once per path: a listing's histories mostly record the same cwd. */
function resolvingOnce(runtime: Runtime): Runtime {
  const canonical = new Map<string, Promise<string | null>>();
  const realpath = (path: string): Promise<string> => {
    let resolved = canonical.get(path);
    if (resolved === undefined) canonical.set(path, resolved = runtime.fs.realpath(path).catch(() => null));
    return resolved.then((value) => value ?? Promise.reject(new Error("unresolved")));
  };
  return Object.create(runtime, { fs: { value: Object.create(runtime.fs, { realpath: { value: realpath } }) } }) as Runtime;
}
