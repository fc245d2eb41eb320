/**
 * Driving `session.discover` passes in tests: one page at a time or a whole
 * pass, and the client's side of the contract, which folds a pass's pages
 * into the entries it finally shows (verify pages replace the provisional
 * entries of their range).
 *
 * @module
 */

import assert from "node:assert/strict";
import type { SessionDiscovery } from "../../src/store/discovery/discovery.ts";

/** A `session.discover` entry on the wire. */
export type DiscoverEntry = {
  session_id: string;
  title: string | null;
  updated_at: string | null;
  eligibility: string;
  notices: string[];
  provisional: boolean;
};

/** A `session.discover` page on the wire. */
export type DiscoverPage = {
  revision: string;
  sessions: DiscoverEntry[];
  next_cursor: string | null;
  complete: boolean;
  phase: "walk" | "verify";
  verified_after: string | null;
  verified_through: string | null;
  notices: string[];
};

const never = new AbortController().signal;

/** The page after `previous` (a fresh pass when null), or the error code. */
export async function discoverNext(
  discovery: SessionDiscovery,
  previous: DiscoverPage | null,
  limit: number,
  signal: AbortSignal = never,
): Promise<DiscoverPage | { code: string }> {
  const request = previous === null ? { limit } : { revision: previous.revision, cursor: previous.next_cursor, limit };
  const outcome = await discovery.discover(request, signal);
  return outcome.ok ? outcome.result as DiscoverPage : { code: outcome.code };
}

/** Every page of a fresh pass, `between` run after each page but the last. */
export async function discoverAll(
  discovery: SessionDiscovery,
  limit: number,
  between: (page: DiscoverPage) => void | Promise<void> = () => {},
): Promise<DiscoverPage[]> {
  const pages: DiscoverPage[] = [];
  for (let page: DiscoverPage | null = null; page === null || !page.complete;) {
    const next = await discoverNext(discovery, page, limit);
    assert.ok(!("code" in next), `page ${pages.length}: ${"code" in next ? next.code : ""}`);
    pages.push(page = next);
    if (!page.complete) await between(page);
  }
  return pages;
}

/**
 * What a client shows after `pages`: walk entries as they come, each verify
 * page replacing every entry of its range (`verified_after`,
 * `verified_through`] with the entries it holds.
 */
export function reconcile(pages: readonly DiscoverPage[]): DiscoverEntry[] {
  let shown = new Map<string, DiscoverEntry>();
  for (const page of pages) {
    if (page.phase === "verify") {
      const after = page.verified_after;
      const through = page.verified_through;
      shown = new Map([...shown].filter(([id]) => !((after === null || id > after) && (through === null || id <= through))));
    }
    for (const entry of page.sessions) shown.set(entry.session_id, entry);
  }
  return [...shown.values()].sort((a, b) => (a.session_id < b.session_id ? -1 : 1));
}
