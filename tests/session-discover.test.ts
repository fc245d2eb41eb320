/**
 * `session.discover` over a memory runtime's real sessions directory: a pass
 * over 10,000 sessions completes after paging with truthful provisional
 * flags, a pass memory bounded by its window (`WINDOW_IDS` ids and their
 * lease names, or a smaller window's) and one directory batch, and one
 * directory walk per window of ids;
 * later validation reports what it excludes; mutation after a walk makes
 * the pass stale for good; entries are exactly `session.list`'s, lease
 * presence included.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { DirReader } from "../src/host/runtime.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { WINDOW_IDS } from "../src/store/discovery/discover-page.ts";
import { DIRECTORY_BATCH } from "../src/store/discovery/walk.ts";
import { LEASE_FACTOR } from "../src/store/discovery/window.ts";
import { discoverAll, discoverNext, type DiscoverPage, reconcile } from "./support/discover.ts";
import { discoveryFor, listingFor, SESSIONS, writeSession } from "./support/listing.ts";

const id = (n: number) => `s${String(n).padStart(5, "0")}`;
const bytes = (page: DiscoverPage) => new TextEncoder().encode(JSON.stringify(page)).length;

/** A memory filesystem that counts the directory walks started. */
class CountedWalks extends MemoryFileSystem {
  walks = 0;
  override openDir(path: string): Promise<DirReader> {
    this.walks++;
    return super.openDir(path);
  }
}

/** Pages a pass over `count` sessions with limit 100 and checks every page; returns the retained bound and the walks. */
async function bigPass(count: number, windowIds?: number) {
  const fs = new CountedWalks();
  const runtime = createMemoryRuntime({ fs });
  for (let n = 0; n < count; n++) writeSession(runtime, id(n));
  const discovery = await discoveryFor(runtime, undefined, windowIds);
  const pages = await discoverAll(discovery, 100);
  const all = Array.from({ length: count }, (_, n) => id(n));
  const walk = pages.filter((page) => page.phase === "walk");
  const verify = pages.filter((page) => page.phase === "verify");
  assert.deepEqual(pages.map((page) => page.phase), [...walk.map(() => "walk"), ...verify.map(() => "verify")], "the walk, then the verify walk");
  assert.deepEqual(walk.flatMap((page) => page.sessions.map((entry) => entry.session_id)), all);
  assert.deepEqual(verify.flatMap((page) => page.sessions.map((entry) => entry.session_id)), all);
  assert.ok(walk.every((page) => page.sessions.every((entry) => entry.provisional)), "walk entries are provisional");
  assert.ok(verify.every((page) => page.sessions.every((entry) => !entry.provisional)), "verified entries are not");
  assert.deepEqual(pages.map((page) => page.complete), pages.map((_, index) => index === pages.length - 1), "complete only at the end");
  assert.deepEqual(pages.map((page) => page.next_cursor === null), pages.map((page) => page.complete));
  assert.ok(walk.every((page) => page.verified_after === null && page.verified_through === null));
  verify.forEach((page, index) => {
    assert.equal(page.verified_after, index === 0 ? null : verify[index - 1]!.verified_through, "verify ranges are contiguous");
    assert.equal(page.verified_through, page.complete ? null : page.sessions.at(-1)!.session_id);
  });
  assert.ok(pages.every((page) => bytes(page) <= LIMITS.discover_page_bytes && page.revision === pages[0]!.revision));
  assert.equal(pages.length, 2 * Math.ceil(count / 100));
  return { retained: discovery.retained, walks: fs.walks };
}

describe("session.discover over many sessions", () => {
  it(`10,000 sessions: complete after paging, provisional flags truthful, a pass holds at most ${WINDOW_IDS.toLocaleString("en-US")} ids and one batch`, async () => {
    const small = await bigPass(1_000);
    const large = await bigPass(10_000);
    assert.ok(WINDOW_IDS >= 10_000, "the bench's 10,000 sessions fit one window");
    assert.deepEqual(large.retained, { candidates: 10_000, leases: 0, batch: DIRECTORY_BATCH });
    assert.deepEqual(small.retained, { candidates: 1_000, leases: 0, batch: DIRECTORY_BATCH });
    // One walk per phase, not one per page.
    assert.deepEqual([small.walks, large.walks], [2, 2]);
  });

  it("10,000 sessions through windows of 900 ids: a pass holds at most 900 ids, and each phase walks once per window", async () => {
    const windowed = await bigPass(10_000, 900);
    assert.deepEqual(windowed.retained, { candidates: 900, leases: 0, batch: DIRECTORY_BATCH }, "the bound the design sets");
    assert.equal(windowed.walks, 2 * Math.ceil(10_000 / 900));
  });
});

describe("session.discover validation", () => {
  it("a verify page's range reports provisional entries later validation excluded; changed ones are repeated", async () => {
    const runtime = createMemoryRuntime();
    for (const name of ["a", "b", "c"]) writeSession(runtime, name);
    const discovery = await discoveryFor(runtime);
    const pages = await discoverAll(discovery, 1, async (page) => {
      if (page.phase === "walk" && page.next_cursor !== null && page.sessions[0]?.session_id === "c") {
        await runtime.fs.unlink(`${SESSIONS}/a.jsonl`);
        writeSession(runtime, "b", { cwd: "/another/workspace" });
        writeSession(runtime, "c", { title: "Renamed" });
      }
    });
    const verify = pages.filter((page) => page.phase === "verify");
    assert.deepEqual(verify.map((page) => [page.verified_after, page.verified_through, page.sessions.map((entry) => entry.session_id)]), [
      [null, "b", []],
      ["b", null, ["c"]],
    ]);
    assert.deepEqual(reconcile(pages).map((entry) => [entry.session_id, entry.title, entry.provisional]), [["c", "Renamed", false]]);
  });

  it("entries are session.list's (busy, own attachment, cwd_unverified, other workspace, omitted notice), plus provisional", async () => {
    const runtime = createMemoryRuntime();
    writeSession(runtime, "held");
    writeSession(runtime, "mine");
    writeSession(runtime, "legacy", { cwd: null, title: "Old work" });
    writeSession(runtime, "elsewhere", { cwd: "/somewhere/else" });
    runtime.fs.writeFile(`${SESSIONS}/broken.jsonl`, "{oops\n", 0o600);
    for (const name of ["held.writer.lease", "mine.writer.lease", "held.meta.json"]) runtime.fs.writeFile(`${SESSIONS}/${name}`, "{}", 0o600);
    const attached = () => "mine";
    const listed = await (await listingFor(runtime, attached)).list({}, new AbortController().signal);
    assert.ok(listed.ok);
    const pages = await discoverAll(await discoveryFor(runtime, attached), 2);
    const strip = (page: DiscoverPage) => page.sessions.map(({ provisional: _, ...entry }) => entry);
    const expected = listed.result.sessions;
    for (const phase of ["walk", "verify"]) assert.deepEqual(pages.filter((page) => page.phase === phase).flatMap(strip), expected, phase);
    const noticed = pages.filter((page) => page.notices.length > 0);
    assert.deepEqual(noticed.map((page) => [page.phase, page.notices]), [["walk", ["sessions_omitted_invalid"]], ["verify", ["sessions_omitted_invalid"]]]);
  });
});

/** A memory filesystem that does something to the directory as one listing of it ends or after its first batch. */
class ChangingStorage extends MemoryFileSystem {
  change: { when: "end" | "first batch"; act: () => Promise<void> } | null = null;
  override async openDir(path: string): Promise<DirReader> {
    const reader = await super.openDir(path);
    let batches = 0;
    return {
      read: async (max) => {
        const batch = await reader.read(max);
        const change = this.change;
        if (change !== null && (change.when === "end" ? batch.length === 0 : ++batches === 1)) {
          this.change = null;
          await change.act();
        }
        return batch;
      },
      close: () => reader.close(),
    };
  }
}

describe("session.discover lease presence", () => {
  it(`busy comes from the walk's lease names; past ${LEASE_FACTOR} × the window's ids of them it is looked up per candidate, still truthful`, async () => {
    const windowIds = 500;
    for (const orphans of [0, LEASE_FACTOR * windowIds]) {
      const runtime = createMemoryRuntime();
      for (const name of ["a", "b", "c"]) writeSession(runtime, name);
      runtime.fs.writeFile(`${SESSIONS}/b.append.lease`, "{}", 0o600);
      // Lease files of sessions without a history, inside the window's range.
      for (let n = 0; n < orphans; n++) runtime.fs.writeFile(`${SESSIONS}/o${n}.writer.lease`, "{}", 0o600);
      const discovery = await discoveryFor(runtime, undefined, windowIds);
      const pages = await discoverAll(discovery, 2);
      const eligibility = (phase: string) => pages.filter((page) => page.phase === phase).flatMap((page) => page.sessions.map((entry) => [entry.session_id, entry.eligibility]));
      const expected = [["a", "available"], ["b", "busy"], ["c", "available"]];
      assert.deepEqual([eligibility("walk"), eligibility("verify")], [expected, expected], `${orphans} orphan leases`);
      assert.ok(discovery.retained.leases <= LEASE_FACTOR * windowIds, `${discovery.retained.leases} lease names held`);
    }
  });
});

describe("session.discover mutation and cursors", () => {
  it("a candidate that vanishes between the walk and its read, in the walk's page or a later one, makes the pass stale for good", async () => {
    const fs = new ChangingStorage();
    const runtime = createMemoryRuntime({ fs });
    for (const name of ["a", "b"]) writeSession(runtime, name);
    fs.change = { when: "end", act: () => fs.unlink(`${SESSIONS}/a.jsonl`) };
    assert.deepEqual(await discoverNext(await discoveryFor(runtime), null, 1), { code: "stale_revision" }, "in the walk's own page");
    writeSession(runtime, "a");
    const discovery = await discoveryFor(runtime);
    const first = await discoverNext(discovery, null, 1) as DiscoverPage;
    // b is in the window the first page's walk kept: the second page reads it without walking again.
    await fs.unlink(`${SESSIONS}/b.jsonl`);
    assert.deepEqual(await discoverNext(discovery, first, 1), { code: "stale_revision" });
    writeSession(runtime, "b");
    assert.deepEqual(await discoverNext(discovery, first, 1), { code: "stale_revision" }, "stale stays stale");
    assert.equal((await discoverAll(discovery, 1)).at(-1)!.complete, true, "a fresh pass works");
  });

  it("a name listed twice while the directory is read makes the page stale_revision", async () => {
    const fs = new ChangingStorage();
    const runtime = createMemoryRuntime({ fs });
    for (const name of ["a", "b"]) writeSession(runtime, name);
    // Enough other names that the listing is still under way after its first batch.
    for (let n = 0; n < DIRECTORY_BATCH; n++) runtime.fs.writeFile(`${SESSIONS}/${id(n)}.meta.json`, "{}", 0o600);
    const discovery = await discoveryFor(runtime);
    // Renamed over itself, the name moves to the end of the listing that already passed it.
    fs.change = { when: "first batch", act: () => fs.rename(`${SESSIONS}/a.jsonl`, `${SESSIONS}/a.jsonl`) };
    assert.deepEqual(await discoverNext(discovery, null, 5), { code: "stale_revision" });
  });

  it("only the latest cursor continues; a fresh pass ends the previous one; a cancelled page leaves the pass as it was", async () => {
    const runtime = createMemoryRuntime();
    for (const name of ["a", "b", "c"]) writeSession(runtime, name);
    const discovery = await discoveryFor(runtime);
    const first = await discoverNext(discovery, null, 1) as DiscoverPage;
    const cancelled = new AbortController();
    cancelled.abort();
    assert.deepEqual(await discoverNext(discovery, first, 1, cancelled.signal), { code: "operation_cancelled" });
    const second = await discoverNext(discovery, first, 1) as DiscoverPage;
    assert.deepEqual(second.sessions.map((entry) => entry.session_id), ["b"]);
    assert.deepEqual(await discoverNext(discovery, first, 1), { code: "stale_revision" }, "an older cursor");
    assert.deepEqual(await discoverNext(discovery, { ...second, revision: first.revision.replace(/^d1/, "d9") }, 1), { code: "stale_revision" });
    const again = await discoverNext(discovery, null, 1) as DiscoverPage;
    assert.notEqual(again.revision, first.revision);
    assert.deepEqual(await discoverNext(discovery, second, 1), { code: "stale_revision" }, "the previous pass ended");
  });

  it("an empty directory: an empty walk page, then an empty complete verify page", async () => {
    const pages = await discoverAll(await discoveryFor(createMemoryRuntime()), 100);
    assert.deepEqual(pages.map((page) => [page.phase, page.sessions.length, page.complete, page.verified_after, page.verified_through]), [
      ["walk", 0, false, null, null],
      ["verify", 0, true, null, null],
    ]);
  });
});
