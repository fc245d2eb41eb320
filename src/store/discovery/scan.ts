/**
 * One bounded scan of the sessions directory for `session.list`: an
 * inventory pass, every primary history examined in ascending id order, and
 * a second inventory pass that must agree with the first (a history that
 * appeared, vanished or gained or lost a lease file meanwhile is
 * `stale_revision`). The scan ends with a fingerprint of everything a page
 * depends on (each file's identity, permissions and content, lease presence,
 * the attachment), so a continuation can rescan and tell whether anything
 * changed. Any bound exceeded is `discovery_limit`: there is no partial
 * result.
 *
 * @module
 */

import { ErrorCode } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type { Runtime } from "../../host/runtime.ts";
import { lengthPrefixed } from "../../util/digest.ts";
import { joinPath } from "../../util/paths.ts";
import { Slicer } from "../cooperative-slices.ts";
import { ReadBuffer } from "../read-buffers.ts";
import { YIELD_BYTES } from "../session-file.ts";
import { ScanBudget } from "./budget.ts";
import { type Ahead, examine, examineContext, type ExamineFailure, type ListEntry, releaseAhead, startAhead } from "./candidate.ts";
import { takeInventory } from "./inventory.ts";

/** Where and for whom a scan looks. */
export interface ScanContext {
  readonly runtime: Runtime;
  /** `$MC_HOME/sessions`, canonical. */
  readonly directory: string;
  /** The child's canonical cwd. */
  readonly cwd: string;
  /** Secret values a title must not hold. */
  readonly secrets: readonly string[];
  /** The session this child has attached (its own leases do not make it busy), or null. */
  attached(): string | null;
}

/** Why a scan produced nothing. */
export type ScanFailure = ExamineFailure | typeof ErrorCode.discoveryUnavailable;

/** The outcome of {@link scanSessions}. */
export type ScanResult =
  | {
    readonly ok: true;
    /** Listed sessions, ascending id order; at most `discovery_sessions`. */
    readonly entries: readonly ListEntry[];
    /** Whether any history was omitted as unsafe, unreadable or malformed. */
    readonly omitted: boolean;
    /** Lowercase hex SHA-256 naming everything the entries were derived from. */
    readonly fingerprint: string;
  }
  | { readonly ok: false; readonly code: ScanFailure };

/** Histories whose lstat and open run ahead of the one examined (the next one's first read, too). */
const READ_AHEAD = 3;

/** Histories examined between two pauses at most, however fast the clock says the work went. */
const YIELD_FILES = 64;

/** Scans once; `signal` cancels it (`operation_cancelled`) at the next check between or inside files. */
export async function scanSessions(context: ScanContext, signal: AbortSignal): Promise<ScanResult> {
  const { runtime } = context;
  const now = () => runtime.monotonicNow();
  const budget = new ScanBudget(now);
  // One signal stops the reads for both reasons; which one it was is told apart by `signal`.
  const stop = new AbortController();
  const forward = () => stop.abort();
  signal.addEventListener("abort", forward);
  const cooperation = {
    signal: stop.signal,
    now,
    // A timer, not a microtask: only a macrotask lets the loop read and answer `status` in between.
    yieldEvery: async () => {
      await new Promise<void>((resolve) => runtime.setTimer(0, resolve));
      if (budget.expired()) stop.abort();
    },
  };
  const aheads: Ahead[] = [];
  const interrupted = (): ScanFailure | null =>
    signal.aborted ? ErrorCode.operationCancelled : stop.signal.aborted || budget.expired() ? ErrorCode.discoveryLimit : null;
  try {
    const first = await takeInventory(runtime.fs, context.directory);
    if (!first.ok) return first;
    const { sessions, leased, key } = first.inventory;
    const attached = context.attached();
    const examining = examineContext({ runtime, cwd: context.cwd, secrets: context.secrets, budget, cooperation });
    const slicer = new Slicer(cooperation, { count: YIELD_FILES, bytes: YIELD_BYTES });
    const parts: (string | Uint8Array)[] = ["magi-code.listing.v1", attached ?? "", key];
    const entries: ListEntry[] = [];
    let omitted = false;
    const pathOf = (sessionId: string) => joinPath(context.directory, `${sessionId}.jsonl`);
    // Two buffers: the next history is read ahead into one while this one is parsed from the other.
    const buffers = [examining.buffer, new ReadBuffer()] as const;
    const startFor = (index: number): Ahead => startAhead(runtime, pathOf(sessions[index]!), buffers[index % 2]!);
    for (let index = 0; index < Math.min(READ_AHEAD, sessions.length); index++) aheads.push(startFor(index));
    for (const [index, sessionId] of sessions.entries()) {
      const before = interrupted();
      if (before !== null) return { ok: false, code: before };
      // Each loop turn moves every history ahead one step (lstat, open, fstat): its examination need not wait for them.
      const current = aheads.shift()!;
      const waits = !current.settled();
      if (index + READ_AHEAD < sessions.length) aheads.push(startFor(index + READ_AHEAD));
      // The next history's first read runs while this one is parsed, under the least bound it can be admitted after it.
      aheads[0]?.prepare(budget.afterNext());
      const examined = await examine(examining, {
        sessionId,
        path: pathOf(sessionId),
        busy: leased.has(sessionId) && sessionId !== attached,
        ahead: current,
      });
      if (examined.kind === "failed") return { ok: false, code: interrupted() ?? examined.code };
      parts.push(sessionId, examined.kind, examined.fingerprint);
      if (examined.kind === "omitted") omitted = true;
      if (examined.kind === "listed" && entries.push(examined.entry) > LIMITS.discovery_sessions) {
        return { ok: false, code: ErrorCode.discoveryLimit };
      }
      // Waiting for a history's platform I/O is a turn of the loop like a pause; one already read ahead gave none.
      if (waits) slicer.turned();
      if (slicer.tick(1) && await slicer.pause()) return { ok: false, code: interrupted() ?? ErrorCode.operationCancelled };
    }
    const second = await takeInventory(runtime.fs, context.directory);
    if (!second.ok) return second;
    if (second.inventory.key !== key) return { ok: false, code: ErrorCode.staleRevision };
    const after = interrupted();
    if (after !== null) return { ok: false, code: after };
    // The runtime's incremental hash is synchronous: the scan's last step needs no extra turn of the loop.
    const hash = runtime.createSha256();
    hash.update(lengthPrefixed(parts));
    return { ok: true, entries, omitted, fingerprint: hash.digest() };
  } finally {
    // A scan that ended early leaves the next histories open.
    for (const ahead of aheads) releaseAhead(ahead);
    signal.removeEventListener("abort", forward);
  }
}
