/**
 * One page of a `session.discover` pass: the next `limit` candidates of the
 * window the phase's last walk kept (`walk.ts`; a page walks first when the
 * pass holds no window, or has examined every id of it), each examined in
 * ascending order exactly as `session.list` examines it (`candidate.ts`),
 * under the page's own `discover_*` bounds.
 * The page stops early, holding fewer entries, when what is left of its read
 * work would not admit a whole per-file budget, when its cooperative
 * deadline passed, or when the next entry would not fit the serialized
 * page; it always examines its first candidate, so a pass always moves on.
 * A history over the per-file bound is omitted with its own notice instead
 * of failing the page.
 *
 * @module
 */

import { ErrorCode } from "../../protocol/errors.ts";
import { isRuntimeError, type FileSystem } from "../../host/runtime.ts";
import { lengthPrefixed } from "../../util/digest.ts";
import { joinPath } from "../../util/paths.ts";
import { Slicer } from "../cooperative-slices.ts";
import { type LeaseKind, leasePath } from "../leases.ts";
import { ReadBuffer } from "../read-buffers.ts";
import { YIELD_BYTES } from "../session-file.ts";
import { DISCOVER_BOUNDS, ScanBudget } from "./budget.ts";
import { examine, examineContext } from "./candidate.ts";
import { OVER_LIMIT } from "./fingerprint.ts";
import { type DiscoverEntry, PageEntries } from "./page-entries.ts";
import type { ScanContext } from "./scan.ts";
import { walkDirectory, type WalkFailure } from "./walk.ts";
import { CandidateWindow, type HeldWindow } from "./window.ts";

/** Where a page starts and what it may hold. */
export interface PageStart {
  /** The last id the phase handed out, or null at its start. */
  readonly after: string | null;
  /** Most candidates examined (the request's `limit`). */
  readonly limit: number;
  /** Whether entries are provisional (the walk phase). */
  readonly provisional: boolean;
  /** The pass's digest so far, which each page chains the candidates it examined into. */
  readonly chain: string;
  /** The window the phase's last walk kept, from its next unexamined id; null: the page walks first. */
  readonly window: WindowAt | null;
}

/** A held window and where in it the next id to examine starts. */
export interface WindowAt {
  readonly held: HeldWindow;
  /** The index of that id in `held`. */
  readonly next: number;
}

/**
 * What one discovery's pages reuse, one page after another (the child's
 * one session worker runs them): the walk's window, the page's entries and
 * the read chunk. Byte arrays made per page, or per walk, outlived
 * young-generation collections often enough to be promoted, and then held
 * their memory until a full collection, which a pass may never trigger.
 */
export interface PageBuffers {
  /** Restarted by each walk; what it holds serves the pass until the next walk. */
  readonly window: CandidateWindow;
  /** Sized for the serialized entries a page may hold, commas included. */
  readonly entries: PageEntries;
  /** The read chunk of every examination, one after another. */
  readonly read: ReadBuffer;
}

/** The memory bound of one walk: the most ids and lease names its window held, and its largest batch. */
export interface Retained {
  readonly candidates: number;
  readonly leases: number;
  readonly batch: number;
}

/**
 * Candidate ids one walk keeps: a page examines at most 100, so a walk
 * serves 160 pages or more, and a pass over N sessions iterates about
 * 2·N²/16,000 directory entries instead of 2·N²/limit. A multiple of the
 * largest limit, so pages of 100 never end short at a window's end. Its
 * ids cost about 1 MiB of byte arrays outside the JS heap at most
 * (`window.ts`; the lease names among them, at most 48,000, are still
 * strings), and every walk it saves matters on Deno, whose directory
 * reader leaves ~75 bytes per entry in V8's old generation until a full
 * collection (bench/README.md): 4,000 ids meant three walks per phase at
 * 10,000 sessions, 16,000 one.
 */
export const WINDOW_IDS = 16_000;

/** What a page examined. */
export interface PageOutcome {
  readonly ok: true;
  readonly entries: readonly DiscoverEntry[];
  /** The last id examined (`after` when the page examined none, which happens only when none was left). */
  readonly position: string | null;
  /** Whether every candidate after `after` was examined: the phase is over. */
  readonly exhausted: boolean;
  /** Whether a history was omitted as unsafe, unreadable or malformed; as over the per-file bound. */
  readonly omitted: boolean;
  readonly omittedLimit: boolean;
  readonly chain: string;
  /** The window for the phase's next page; null once its ids are all examined (the next page walks). */
  readonly window: WindowAt | null;
  /** The bound of this page's walk; null when it walked none. */
  readonly retained: Retained | null;
}

/** Directory entries iterated between two pauses at most. */
const WALK_SLICE = 4_096;
/** Histories examined between two pauses at most (as `session.list`). */
const YIELD_FILES = 64;
const LEASE_KINDS: readonly LeaseKind[] = ["writer", "active", "append"];

/** The buffers of a discovery whose pages' entries may take `entryBytes` serialized and whose walks keep `windowIds` ids. */
export function pageBuffers(entryBytes: number, windowIds: number): PageBuffers {
  return { window: new CandidateWindow(windowIds), entries: new PageEntries(entryBytes), read: new ReadBuffer() };
}

/** Runs one page from `start` with `buffers`; `signal` cancels it (`operation_cancelled`) at its next check. */
export async function discoverPage(
  context: ScanContext,
  start: PageStart,
  buffers: PageBuffers,
  signal: AbortSignal,
): Promise<PageOutcome | { readonly ok: false; readonly code: WalkFailure }> {
  const { runtime } = context;
  const now = () => runtime.monotonicNow();
  const budget = new ScanBudget(now, DISCOVER_BOUNDS);
  const pause = () => new Promise<void>((resolve) => runtime.setTimer(0, resolve));
  // Stops a read on cancellation, or on the deadline once the page has its first candidate.
  const stop = new AbortController();
  const forward = () => stop.abort();
  signal.addEventListener("abort", forward);
  let examined = 0;
  const cooperation = {
    signal: stop.signal,
    now,
    yieldEvery: async () => {
      await pause();
      if (examined > 0 && budget.expired()) stop.abort();
    },
  };
  const cancelled = { ok: false, code: ErrorCode.operationCancelled } as const;
  try {
    if (signal.aborted) return cancelled;
    let at = start.window;
    let retained: Retained | null = null;
    if (at === null) {
      const walk = await walkDirectory(runtime.fs, context.directory, start.after, buffers.window, new Slicer({ signal, now, yieldEvery: pause }, {
        count: WALK_SLICE,
        bytes: Infinity,
      }));
      if (!walk.ok) return walk;
      at = { held: walk.window, next: 0 };
      retained = walk.peak;
    }
    const { held } = at;
    let next = at.next;
    const attached = context.attached();
    const examining = examineContext({ runtime, cwd: context.cwd, secrets: context.secrets, budget, cooperation, buffer: buffers.read });
    const slicer = new Slicer(cooperation, { count: YIELD_FILES, bytes: YIELD_BYTES });
    const { entries } = buffers;
    entries.clear();
    let position = start.after;
    // One hash per page, fed each examined candidate: the pass's chain moves on by a page, not by a candidate.
    const hash = runtime.createSha256();
    hash.update(lengthPrefixed([start.chain]));
    let omitted = false;
    let omittedLimit = false;
    while (examined < start.limit && next < held.count) {
      if (examined > 0 && (!budget.whole() || budget.expired())) break;
      const sessionId = held.id(next);
      const path = joinPath(context.directory, `${sessionId}.jsonl`);
      const busy = sessionId !== attached && (held.leased?.has(sessionId) ?? await leased(runtime.fs, context.directory, sessionId));
      const outcome = await examine(examining, { sessionId, path, busy });
      if (signal.aborted) return cancelled;
      let kind: string = outcome.kind;
      let fingerprint = OVER_LIMIT;
      if (outcome.kind === "failed") {
        // The deadline stopped this read: the candidate is the next page's first.
        if (stop.signal.aborted) break;
        // Over the per-file bound: `examine` charged what was read of it.
        if (outcome.code !== ErrorCode.discoveryLimit) return { ok: false, code: outcome.code };
        kind = "omitted_limit";
        omittedLimit = true;
      } else {
        fingerprint = outcome.fingerprint;
        if (outcome.kind === "omitted") omitted = true;
        if (outcome.kind === "listed") {
          // Named fields, not `...outcome.entry`: with the spread, twice as much outlived scavenges (bench/README.md).
          const { session_id, title, updated_at, eligibility, notices } = outcome.entry;
          if (!entries.add({ session_id, title, updated_at, eligibility, notices, provisional: start.provisional })) break;
        }
      }
      hash.update(lengthPrefixed([sessionId, kind, fingerprint]));
      position = sessionId;
      next++;
      examined++;
      if (slicer.tick(1) && await slicer.pause()) {
        if (signal.aborted) return cancelled;
        break;
      }
    }
    // A page ends at its window's end too: the next page walks (a page walks at most once).
    const exhausted = next === held.count && !held.beyond;
    const window = next < held.count ? { held, next } : null;
    const chain = examined > 0 ? hash.digest() : start.chain;
    return { ok: true, entries: entries.entries(), position, exhausted, omitted, omittedLimit, chain, window, retained };
  } finally {
    signal.removeEventListener("abort", forward);
  }
}

/**
 * Whether a `writer`, `active` or `append` lease file names `sessionId`:
 * the advisory presence `session.list` reads from its inventory, looked up
 * per candidate when the walk found more lease names than its window keeps
 * (lease files without a history). Anything
 * at a lease path but a clean `not_found` counts as present (busy is the
 * conservative answer).
 */
async function leased(fs: FileSystem, directory: string, sessionId: string): Promise<boolean> {
  for (const kind of LEASE_KINDS) {
    try {
      await fs.lstat(leasePath(directory, sessionId, kind));
      return true;
    } catch (error) {
      if (!isRuntimeError(error, "not_found")) return true;
    }
  }
  return false;
}
