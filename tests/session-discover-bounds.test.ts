/**
 * Every `session.discover` bound at and around its value: the limit, the
 * serialized page, the directory iterations of a page (`discovery_limit`, no
 * partial page), the per-file bounds (the history is omitted with
 * `sessions_omitted_limit`, the page goes on), the per-page read work and
 * the 2,000 ms page deadline on a manual clock (the page stops early and the
 * next one picks up where it stopped).
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as v from "valibot";
import { createMemoryRuntime, ManualClock } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { DirEntry, DirReader } from "../src/host/runtime.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { METHODS } from "../src/protocol/methods.ts";
import { discoverAll, discoverNext, type DiscoverPage } from "./support/discover.ts";
import { discoveryFor, SESSIONS, sizedText, writeSession } from "./support/listing.ts";
import { driven, SlowStorage } from "./support/slow-storage.ts";

const MiB = 1_048_576;
const id = (n: number) => `s${String(n).padStart(4, "0")}`;
const ids = (page: DiscoverPage | { code: string }) => "code" in page ? page.code : page.sessions.map((entry) => entry.session_id);

/** A sessions directory that lists `extra` sidecar names after its real entries, without storing them. */
class VastDirectory extends MemoryFileSystem {
  constructor(public extra: number) {
    super();
  }
  override async openDir(path: string): Promise<DirReader> {
    const reader = await super.openDir(path);
    let listed = 0;
    return {
      read: async (max) => {
        const batch = await reader.read(max);
        if (batch.length > 0 || path !== SESSIONS) return batch;
        const size = Math.min(max, this.extra - listed);
        const extra: DirEntry[] = Array.from({ length: size }, (_, n) => ({ name: `x${listed + n}.meta.json`, kind: "file" }));
        listed += size;
        return extra;
      },
      close: () => reader.close(),
    };
  }
}

describe("session.discover bounds, at and around each value", () => {
  it(`limit is 1 to ${LIMITS.discover_page_entries}, with session.list's revision and cursor rules`, () => {
    const ok = (params: unknown) => v.safeParse(METHODS["session.discover"], params).success;
    assert.deepEqual([ok({ limit: 1 }), ok({ limit: 100 }), ok({ limit: 0 }), ok({ limit: 101 }), ok({ limit: 1.5 })], [true, true, false, false, false]);
    assert.deepEqual([ok({}), ok({ revision: "r", cursor: "c" }), ok({ revision: "r" }), ok({ cursor: "c", revision: null }), ok({ extra: 1 })], [true, true, false, false, false]);
  });

  it(`pages fit ${LIMITS.discover_page_bytes} serialized bytes, holding fewer than the limit when titles are long`, async () => {
    const runtime = createMemoryRuntime();
    for (let n = 0; n < 120; n++) writeSession(runtime, `${"x".repeat(59)}${String(n).padStart(5, "0")}`, { title: "\"😀".repeat(25), cwd: null });
    const pages = await discoverAll(await discoveryFor(runtime), 100);
    const first = pages[0]!;
    assert.ok(first.sessions.length > 0 && first.sessions.length < 100, `${first.sessions.length} entries`);
    assert.ok(pages.every((page) => new TextEncoder().encode(JSON.stringify(page)).length <= LIMITS.discover_page_bytes));
    assert.equal(pages.filter((page) => page.phase === "verify").flatMap((page) => page.sessions).length, 120);
  });

  it(`a page may iterate ${LIMITS.discover_directory_entries} directory entries; one more is discovery_limit, no partial page`, async () => {
    const fs = new VastDirectory(LIMITS.discover_directory_entries - 1);
    const runtime = createMemoryRuntime({ fs });
    writeSession(runtime, "only");
    const discovery = await discoveryFor(runtime);
    assert.deepEqual(ids(await discoverNext(discovery, null, 100)), ["only"]);
    fs.extra++;
    assert.deepEqual(await discoverNext(discovery, null, 100), { code: "discovery_limit" });
  });

  it("one history may hold 8 MiB and 10,000 lines; over either it is omitted with sessions_omitted_limit and the page goes on", async () => {
    for (
      const [bytes, lines, listed] of [
        [8 * MiB, 2, true],
        [8 * MiB + 1, 2, false],
        [1_200_000, LIMITS.discover_session_lines, true],
        [1_200_000, LIMITS.discover_session_lines + 1, false],
      ] as const
    ) {
      const runtime = createMemoryRuntime();
      runtime.fs.writeFile(`${SESSIONS}/big.jsonl`, sizedText("big", bytes, lines), 0o600);
      writeSession(runtime, "small");
      const page = await discoverNext(await discoveryFor(runtime), null, 100) as DiscoverPage;
      assert.deepEqual([ids(page), page.notices], listed ? [["big", "small"], []] : [["small"], ["sessions_omitted_limit"]], `${bytes} bytes, ${lines} lines`);
    }
  });

  it("a page reads at most 64 MiB and 100,000 lines; the next history waits for the next page", async () => {
    const bytes = createMemoryRuntime();
    for (let n = 0; n < 9; n++) bytes.fs.writeFile(`${SESSIONS}/${id(n)}.jsonl`, sizedText(id(n), 8 * MiB, 2), 0o600);
    const byBytes = await discoveryFor(bytes);
    const first = await discoverNext(byBytes, null, 100) as DiscoverPage;
    assert.equal(first.sessions.length, 8, "8 × 8 MiB is the page's whole read work");
    assert.deepEqual(ids(await discoverNext(byBytes, first, 100)), [id(8)]);

    const lines = createMemoryRuntime();
    for (let n = 0; n < 11; n++) lines.fs.writeFile(`${SESSIONS}/${id(n)}.jsonl`, sizedText(id(n), 1_200_000, 10_000), 0o600);
    const byLines = await discoveryFor(lines);
    const page = await discoverNext(byLines, null, 100) as DiscoverPage;
    assert.equal(page.sessions.length, 10, "10 × 10,000 lines");
    assert.deepEqual(ids(await discoverNext(byLines, page, 100)), [id(10)]);
  });

  it("tiny malformed histories are charged what they hold: eight and one valid fit one page", async () => {
    const runtime = createMemoryRuntime();
    for (let n = 0; n < 8; n++) runtime.fs.writeFile(`${SESSIONS}/${id(n)}.jsonl`, "x\n", 0o600);
    writeSession(runtime, "zz-good");
    const first = await discoverNext(await discoveryFor(runtime), null, 100) as DiscoverPage;
    assert.deepEqual([ids(first), first.notices], [["zz-good"], ["sessions_omitted_invalid"]]);
  });

  it("a history over the per-file bound is charged what was read of it: nothing when its size alone refuses it", async () => {
    const runtime = createMemoryRuntime();
    // One buffer shared by every file: the memory file system keeps what it is given.
    const over = new TextEncoder().encode(sizedText("big", 8 * MiB + 1, 2));
    for (let n = 0; n < 9; n++) runtime.fs.writeFile(`${SESSIONS}/${id(n)}.jsonl`, over, 0o600);
    writeSession(runtime, "zz-good");
    const first = await discoverNext(await discoveryFor(runtime), null, 100) as DiscoverPage;
    assert.deepEqual([ids(first), first.notices], [["zz-good"], ["sessions_omitted_limit"]]);
  });
});

describe("session.discover page deadline", () => {
  // Checked before each candidate but the first: 5 opens of 400 ms end at 2,000 ms, not past it, so the sixth still runs.
  for (const [ms, pageSizes] of [[400, [6]], [500, [5, 1]], [3_000, [1, 1, 1, 1, 1, 1]]] as const) {
    it(`opens of ${ms} ms: walk pages of ${pageSizes.join(", ")} (the first candidate of a page is always examined)`, async () => {
      const clock = new ManualClock();
      const runtime = createMemoryRuntime({ clock, fs: new SlowStorage(clock, ms) });
      for (let n = 0; n < 6; n++) writeSession(runtime, id(n));
      const discovery = await discoveryFor(runtime);
      const pages = await driven(clock, discoverAll(discovery, 100));
      assert.deepEqual(pages.filter((page) => page.phase === "walk").map((page) => page.sessions.length), [...pageSizes]);
      assert.deepEqual(pages.filter((page) => page.phase === "verify").flatMap((page) => page.sessions.map((entry) => entry.session_id)), Array.from({ length: 6 }, (_, n) => id(n)));
    });
  }
});
