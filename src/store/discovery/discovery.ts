/**
 * `session.discover` (negotiated; `docs/features/local-agent-extensions.md`):
 * bounded incremental discovery without `session.list`'s global candidate
 * ceiling. A pass holds no snapshot, only state bounded by constants: its
 * revision, the phase, the walk position (the last id handed out), the one
 * cursor it accepts next, the digest chained over every candidate examined,
 * whether it went stale, and the window of its last walk (at most 16,000
 * candidate ids and the lease names among them), which serves the pages
 * after it until they have examined every id; then the next page walks the
 * directory afresh (`discover-page.ts`).
 *
 * The walk phase yields entries as they are validated, `provisional: true`.
 * When the walk has passed the last candidate the verify phase walks the
 * whole id range again and yields every eligible entry with
 * `provisional: false`; each verify page covers (`verified_after`,
 * `verified_through`] (null: the start, the end), so a provisional entry
 * of that range the page does not repeat was excluded by the later
 * validation, reported by the range instead of silently dropped.
 * `complete` is true only on the verify page that examined the last
 * candidate. A candidate that vanished after the walk that kept it, or a
 * name listed twice, makes the pass stale for good.
 *
 * @module
 */

import { ErrorCode } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { utf8ByteCount } from "../../util/utf8.ts";
import type { StoreResult } from "../sessions.ts";
import { discoverPage, type PageBuffers, pageBuffers, type Retained, WINDOW_IDS, type WindowAt } from "./discover-page.ts";
import type { DiscoverEntry } from "./page-entries.ts";
import { type ListRequest, SESSIONS_OMITTED_INVALID } from "./listing.ts";
import type { ScanContext } from "./scan.ts";

/** The page notice when a history over the per-file bound was left out (never which one). */
export const SESSIONS_OMITTED_LIMIT = "sessions_omitted_limit";

type Phase = "walk" | "verify";

/** A `session.discover` page as it goes on the wire. */
type DiscoverPage = {
  readonly revision: string;
  readonly sessions: readonly DiscoverEntry[];
  readonly next_cursor: string | null;
  readonly complete: boolean;
  readonly phase: Phase;
  readonly verified_after: string | null;
  readonly verified_through: string | null;
  readonly notices: readonly string[];
};

/** The constant-size state of the child's one pass. */
interface Pass {
  readonly revision: string;
  phase: Phase;
  /** The last id handed out in this phase, null at its start. */
  position: string | null;
  /** The only cursor a continuation may name; null once complete. */
  cursor: string | null;
  chain: string;
  pages: number;
  /** The window of the phase's last walk, from its next id; null when the next page walks. */
  window: WindowAt | null;
  /** Set for good once a page saw a mutation. */
  stale: boolean;
}

const DEFAULT_LIMIT = 100;
const LONGEST = "x".repeat(LIMITS.identifier_bytes);
/** The serialized page without entries at its largest: what the entries leave room for. */
const FRAME_BYTES = utf8ByteCount(JSON.stringify({
  revision: LONGEST,
  sessions: [],
  next_cursor: LONGEST,
  complete: false,
  phase: "verify",
  verified_after: LONGEST,
  verified_through: LONGEST,
  notices: [SESSIONS_OMITTED_INVALID, SESSIONS_OMITTED_LIMIT],
}));

/** The child's `session.discover` pass; callers serialise requests (the one session worker). */
export class SessionDiscovery {
  readonly #context: ScanContext;
  readonly #windowIds: number;
  // Made by the first page, not at start-up: most children never negotiate session.discover.
  #buffers: PageBuffers | null = null;
  #pass: Pass | null = null;
  #generation = 0;
  #retained: Retained = { candidates: 0, leases: 0, batch: 0 };

  /**
   * Creates the discovery of `context.directory` for this child, whose
   * walks keep `windowIds` candidate ids each ({@link WINDOW_IDS} unless a
   * test crosses windows over a small directory).
   */
  constructor(context: ScanContext, windowIds: number = WINDOW_IDS) {
    this.#context = context;
    this.#windowIds = windowIds;
  }

  /**
   * The most candidate ids and lease names that any walk's window held, and
   * directory entries of one batch, since the child started: what keeps a
   * pass's memory independent of the directory's size.
   */
  get retained(): Retained {
    return this.#retained;
  }

  /** Answers one `session.discover` request; `signal` cancels its page. */
  async discover(request: ListRequest, signal: AbortSignal): Promise<StoreResult> {
    const limit = request.limit ?? DEFAULT_LIMIT;
    const revision = request.revision ?? null;
    const cursor = request.cursor ?? null;
    if (revision === null || cursor === null) {
      // A fresh request ends the previous pass whatever its own outcome.
      this.#pass = null;
      const fresh = `d${(++this.#generation).toString(36)}-${this.#context.runtime.randomUUID().replaceAll("-", "")}`;
      const pass: Pass = { revision: fresh, phase: "walk", position: null, cursor: null, chain: fresh, pages: 0, window: null, stale: false };
      const outcome = await this.#page(pass, limit, signal);
      if (outcome.ok) this.#pass = pass;
      return outcome;
    }
    const pass = this.#pass;
    if (pass === null || pass.revision !== revision || pass.stale || pass.cursor !== cursor) {
      return { ok: false, code: ErrorCode.staleRevision };
    }
    return await this.#page(pass, limit, signal);
  }

  /** Runs the next page of `pass`, which moves on only when the page succeeds. */
  async #page(pass: Pass, limit: number, signal: AbortSignal): Promise<StoreResult> {
    const provisional = pass.phase === "walk";
    const page = await discoverPage(this.#context, {
      after: pass.position,
      limit,
      provisional,
      chain: pass.chain,
      window: pass.window,
    }, this.#buffers ??= pageBuffers(LIMITS.discover_page_bytes - FRAME_BYTES, this.#windowIds), signal);
    if (!page.ok) {
      if (page.code === ErrorCode.staleRevision) pass.stale = true;
      return page;
    }
    const walked = page.retained;
    if (walked !== null) {
      const was = this.#retained;
      this.#retained = {
        candidates: Math.max(was.candidates, walked.candidates),
        leases: Math.max(was.leases, walked.leases),
        batch: Math.max(was.batch, walked.batch),
      };
    }
    const verifiedAfter = pass.position;
    const complete = !provisional && page.exhausted;
    pass.chain = page.chain;
    pass.pages++;
    pass.window = page.window;
    if (page.exhausted) {
      pass.phase = "verify";
      pass.position = null;
    } else pass.position = page.position;
    pass.cursor = complete ? null : `${pass.pages.toString(36)}-${page.chain.slice(0, 48)}`;
    const result: DiscoverPage = {
      revision: pass.revision,
      sessions: page.entries,
      next_cursor: pass.cursor,
      complete,
      phase: provisional ? "walk" : "verify",
      verified_after: provisional ? null : verifiedAfter,
      verified_through: provisional || complete ? null : page.position,
      notices: [...page.omitted ? [SESSIONS_OMITTED_INVALID] : [], ...page.omittedLimit ? [SESSIONS_OMITTED_LIMIT] : []],
    };
    return { ok: true, result };
  }
}
