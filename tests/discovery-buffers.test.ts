/**
 * The byte-array buffers a `session.discover` pass keeps off the JS heap:
 * `CandidateWindow` against a model (the sorted set of the smallest ids
 * after the position), reused across walks exactly as a fresh window, and
 * `PageEntries` against the serialized page (round trip, bytes counted as
 * the wire counts them, the bound at and around its value), and the
 * examined history's fingerprint bytes (equal exactly when what they record is).
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { SESSION_ID_PATTERN } from "../src/protocol/identity.ts";
import { fingerprintOf, OVER_LIMIT, UNREADABLE } from "../src/store/discovery/fingerprint.ts";
import { type DiscoverEntry, PageEntries } from "../src/store/discovery/page-entries.ts";
import type { FileInfo } from "../src/host/runtime.ts";
import { CandidateWindow, type HeldWindow, type Offered } from "../src/store/discovery/window.ts";
import { utf8ByteCount } from "../src/util/utf8.ts";

/** Session ids over a small alphabet, so prefixes, ties and duplicates are common; lengths up to the 64-character maximum. */
const sessionId = fc.oneof(
  fc.stringMatching(/^[ab_-]{1,4}$/),
  fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/),
  fc.constantFrom("a".repeat(64), "-", "z".repeat(63) + "_"),
);

/** What the window answers, computed the plain way: a sorted array of strings. */
class ModelWindow {
  readonly ids: string[] = [];
  beyond = false;
  constructor(readonly after: string | null, readonly capacity: number) {}
  offer(id: string): Offered {
    if (this.after !== null && id <= this.after) return "passed";
    if (this.ids.includes(id)) return "duplicate";
    if (this.ids.length === this.capacity) {
      this.beyond = true;
      if (id > this.ids[this.ids.length - 1]!) return "passed";
      this.ids.pop();
    }
    this.ids.push(id);
    this.ids.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return "kept";
  }
}

const idsOf = (held: HeldWindow) => Array.from({ length: held.count }, (_, index) => held.id(index));

describe("CandidateWindow", () => {
  it("offer() and held() agree with a sorted-set model for every sequence of ids, position and capacity", () => {
    fc.assert(
      fc.property(fc.array(sessionId, { maxLength: 60 }), fc.option(sessionId), fc.integer({ min: 1, max: 9 }), (ids, after, capacity) => {
        const window = new CandidateWindow(capacity);
        window.restart(after);
        const model = new ModelWindow(after, capacity);
        for (const id of ids) assert.equal(window.offer(id), model.offer(id), id);
        const held = window.held();
        assert.deepEqual(idsOf(held), model.ids);
        assert.equal(held.beyond, model.beyond);
        assert.equal(window.peak.candidates <= capacity, true);
      }),
      { numRuns: 500 },
    );
  });

  it("restart() makes a used window answer exactly as a fresh one", () => {
    fc.assert(
      fc.property(fc.array(sessionId, { maxLength: 40 }), fc.array(sessionId, { maxLength: 40 }), fc.option(sessionId), (first, second, after) => {
        const used = new CandidateWindow(5);
        used.restart(null);
        for (const id of first) used.offer(id);
        used.offerLease(first[0] ?? "a");
        used.restart(after);
        const fresh = new CandidateWindow(5);
        fresh.restart(after);
        for (const id of second) assert.equal(used.offer(id), fresh.offer(id));
        const [a, b] = [used.held(), fresh.held()];
        assert.deepEqual(idsOf(a), idsOf(b));
        assert.deepEqual([a.beyond, [...a.leased!]], [b.beyond, [...b.leased!]]);
        assert.deepEqual(used.peak, fresh.peak);
      }),
    );
  });

  it("a held window's id() throws once a later walk restarted the window", () => {
    const window = new CandidateWindow(4);
    window.restart(null);
    window.offer("b");
    const held = window.held();
    assert.equal(held.id(0), "b");
    window.restart(null);
    window.offer("a");
    assert.throws(() => held.id(0), /restarted/);
    assert.equal(window.held().id(0), "a");
  });

  it("held() returns 64-character ids whole and in ASCII order, '-' < '0' < 'A' < '_' < 'a'", () => {
    const window = new CandidateWindow(8);
    window.restart(null);
    const ids = ["a".repeat(64), "_", "A".repeat(64), "0", "-", "a".repeat(63)];
    for (const id of ids) assert.equal(window.offer(id), "kept");
    assert.ok(ids.every((id) => SESSION_ID_PATTERN.test(id)));
    assert.deepEqual(idsOf(window.held()), ["-", "0", "A".repeat(64), "_", "a".repeat(63), "a".repeat(64)]);
  });
});

const entry = (title: string | null, session_id = "s1"): DiscoverEntry => ({
  session_id,
  title,
  updated_at: "2026-12-01T00:00:00.000Z",
  eligibility: "available",
  notices: [],
  provisional: true,
});
const serialized = (entries: readonly DiscoverEntry[]) => utf8ByteCount(entries.map((one) => JSON.stringify(one)).join(","));

describe("PageEntries", () => {
  it("entries() returns what add() accepted, and accepts exactly while the comma-joined JSON fits the limit", () => {
    const title = fc.option(fc.oneof(fc.string({ unit: "grapheme", maxLength: 60 }), fc.string({ unit: "binary", maxLength: 60 })));
    fc.assert(
      fc.property(fc.array(title, { maxLength: 30 }), fc.integer({ min: 0, max: 3_000 }), (titles, limit) => {
        const page = new PageEntries(limit);
        const accepted: DiscoverEntry[] = [];
        for (const [n, one] of titles.entries()) {
          const next = entry(one, `s${n}`);
          const fits = serialized([...accepted, next]) <= limit;
          assert.equal(page.add(next), fits);
          if (fits) accepted.push(next);
        }
        assert.equal(page.count, accepted.length);
        assert.deepEqual(page.entries(), accepted);
      }),
      { numRuns: 300 },
    );
  });

  it("add() takes an entry of exactly the limit's bytes and refuses one a byte longer, commas counted", () => {
    const first = entry("ü".repeat(10));
    const second = entry("🚀");
    const exact = serialized([first, second]);
    for (const [limit, expected] of [[exact, true], [exact - 1, false]] as const) {
      const page = new PageEntries(limit);
      assert.equal(page.add(first), true);
      assert.equal(page.add(second), expected);
      assert.deepEqual(page.entries(), expected ? [first, second] : [first]);
    }
  });

  it("clear() empties it for the next page, which may use the whole limit again", () => {
    const one = entry("x".repeat(40));
    const page = new PageEntries(serialized([one]));
    assert.equal(page.add(one), true);
    assert.equal(page.add(one), false);
    page.clear();
    assert.deepEqual(page.entries(), []);
    assert.equal(page.add(one), true);
    assert.deepEqual(page.entries(), [one]);
  });
});

describe("fingerprintOf", () => {
  const info = fc.record({
    kind: fc.constantFrom("file", "directory", "symlink", "fifo", "socket", "device", "other"),
    dev: fc.nat(),
    ino: fc.maxSafeNat(),
    mode: fc.nat(0o7777),
    size: fc.maxSafeNat(),
    mtimeMs: fc.oneof(fc.nat(), fc.double({ min: 0, max: 4e12, noNaN: true })),
    nlink: fc.nat(),
  }) as fc.Arbitrary<FileInfo>;
  const read = fc.option(fc.record({ size: fc.maxSafeNat(), digest: fc.stringMatching(/^[0-9a-f]{64}$/) }));
  const recorded = (one: FileInfo, bytes: { size: number; digest: string } | null) => [one.kind, one.dev, one.ino, one.mode, one.size, one.mtimeMs, bytes?.size, bytes?.digest];

  it("fingerprintOf() gives equal bytes exactly for equal recorded fields (nlink is not one), and never a marker's", () => {
    fc.assert(
      fc.property(info, read, info, read, (a, readA, b, readB) => {
        const [x, y] = [fingerprintOf(a, readA), fingerprintOf(b, readB)];
        assert.equal(Buffer.compare(x, y) === 0, JSON.stringify(recorded(a, readA)) === JSON.stringify(recorded(b, readB)));
        assert.equal(Buffer.compare(fingerprintOf(a, readA), x), 0, "the same fields again");
        for (const marker of [UNREADABLE, OVER_LIMIT]) assert.notEqual(Buffer.compare(x, marker), 0);
      }),
      { numRuns: 500 },
    );
  });

  it("fingerprintOf() tells one millisecond of mtime, one byte of size and one digest character apart", () => {
    const base: FileInfo = { kind: "file", dev: 1, ino: 2, mode: 0o600, size: 4_096, mtimeMs: 1_764_547_200_000.5, nlink: 1 };
    const digest = "0".repeat(64);
    const seen = new Set([
      fingerprintOf(base, { size: 4_096, digest }),
      fingerprintOf({ ...base, mtimeMs: base.mtimeMs + 1 }, { size: 4_096, digest }),
      fingerprintOf({ ...base, size: 4_097 }, { size: 4_096, digest }),
      fingerprintOf(base, { size: 4_097, digest }),
      fingerprintOf(base, { size: 4_096, digest: `1${"0".repeat(63)}` }),
      fingerprintOf(base, null),
    ].map((bytes) => Buffer.from(bytes).toString("hex")));
    assert.equal(seen.size, 6);
  });
});
