/**
 * Model-based test of `session.list` against a model of the sessions
 * directory: histories and lease files are created, modified, deleted,
 * leased, unleased and renewed between pages. Every page agrees with the
 * model as it was when the snapshot was taken, or the snapshot is stale
 * because the directory differs from it since; once stale it stays stale, and a lease
 * renewal alone never makes it stale.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { createMemoryRuntime, type MemoryRuntime } from "../runtime/memory.ts";
import type { SessionListing } from "../src/store/discovery/listing.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { listingFor, SESSIONS, writeSession } from "./support/listing.ts";

type Kind = "here" | "other" | "legacy" | "malformed" | "shared";
type Stored = { kind: Kind; title: string | null; turns: number; generation: number };
type Expected = { session_id: string; title: string | null; eligibility: string; notices: string[] };
type Snapshot = { revision: string; cursor: string | null; expected: Expected[]; offset: number; notices: string[]; state: string; stale: boolean };

interface Model {
  sessions: Map<string, Stored>;
  leases: Set<string>;
  snapshot: Snapshot | null;
  /** Files written so far: every write makes a new file identity. */
  writes: number;
}

interface Real {
  runtime: MemoryRuntime;
  listing: SessionListing;
}

const never = new AbortController().signal;

/** Continuations that paged and ones that were stale, over all runs. */
const seen = { continued: 0, stale: 0 };

function write(real: Real, id: string, stored: Stored): void {
  const path = `${SESSIONS}/${id}.jsonl`;
  if (stored.kind === "malformed") return real.runtime.fs.writeFile(path, `{"broken":${stored.turns}\n`, 0o600);
  const cwd = stored.kind === "other" ? "/other/workspace" : stored.kind === "legacy" ? null : undefined;
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, stored.turns)).toISOString();
  writeSession(real.runtime, id, { ...(cwd === undefined ? {} : { cwd }), ...(stored.title === null ? {} : { title: stored.title }), at }, stored.kind === "shared" ? 0o666 : 0o600);
}

function expected(model: Model): { entries: Expected[]; notices: string[] } {
  const entries: Expected[] = [];
  let omitted = false;
  for (const id of [...model.sessions.keys()].sort()) {
    const stored = model.sessions.get(id)!;
    if (stored.kind === "malformed" || stored.kind === "shared") omitted = true;
    if (stored.kind !== "here" && stored.kind !== "legacy") continue;
    const notices = stored.kind === "legacy" ? ["cwd_unverified"] : [];
    const eligibility = model.leases.has(id) ? "busy" : stored.kind === "legacy" ? "cwd_unverified" : "available";
    entries.push({ session_id: id, title: stored.title, eligibility, notices });
  }
  return { entries, notices: omitted ? ["sessions_omitted_invalid"] : [] };
}

type Page = { revision: string; sessions: (Expected & { updated_at: string | null })[]; next_cursor: string | null; complete: boolean; notices: string[] };

function checkPage(page: Page, snapshot: Snapshot, limit: number): void {
  const want = snapshot.expected.slice(snapshot.offset, snapshot.offset + limit);
  assert.deepEqual(page.sessions.map(({ updated_at: _, ...entry }) => entry), want);
  assert.equal(page.revision, snapshot.revision);
  assert.deepEqual(page.notices, snapshot.notices);
  const end = snapshot.offset + want.length;
  assert.equal(page.complete, end === snapshot.expected.length);
  assert.equal(page.next_cursor === null, end === snapshot.expected.length);
  snapshot.offset = end;
  snapshot.cursor = page.next_cursor;
}

/**
 * What a continuation's fingerprint can see: which histories exist with
 * which identity (every write is a new one), and which leases are present.
 * A change undone before the next page (a file created and deleted again,
 * a lease taken and released) leaves nothing to compare, so it is not stale.
 */
function directoryState(model: Model): string {
  const sessions = [...model.sessions].map(([id, stored]) => [id, stored.generation]).sort();
  return JSON.stringify([sessions, [...model.leases].sort()]);
}

class Put implements fc.AsyncCommand<Model, Real> {
  constructor(readonly id: string, readonly kind: Kind, readonly title: string | null) {}
  check = () => true;
  run(model: Model, real: Real): Promise<void> {
    const stored = { kind: this.kind, title: this.title, turns: (model.sessions.get(this.id)?.turns ?? 0) + 1, generation: ++model.writes };
    model.sessions.set(this.id, stored);
    write(real, this.id, stored);
    return Promise.resolve();
  }
  toString = () => `put(${this.id}, ${this.kind}, ${this.title})`;
}

class Delete implements fc.AsyncCommand<Model, Real> {
  constructor(readonly id: string) {}
  check = (model: Readonly<Model>) => model.sessions.has(this.id);
  async run(model: Model, real: Real): Promise<void> {
    model.sessions.delete(this.id);
    await real.runtime.fs.unlink(`${SESSIONS}/${this.id}.jsonl`);
  }
  toString = () => `delete(${this.id})`;
}

class Lease implements fc.AsyncCommand<Model, Real> {
  constructor(readonly id: string, readonly on: boolean) {}
  check = (model: Readonly<Model>) => model.leases.has(this.id) !== this.on;
  async run(model: Model, real: Real): Promise<void> {
    const path = `${SESSIONS}/${this.id}.writer.lease`;
    if (this.on) real.runtime.fs.writeFile(path, "{}", 0o600);
    else await real.runtime.fs.unlink(path);
    if (this.on) model.leases.add(this.id);
    else model.leases.delete(this.id);
  }
  toString = () => `${this.on ? "lease" : "unlease"}(${this.id})`;
}

class Renew implements fc.AsyncCommand<Model, Real> {
  constructor(readonly id: string) {}
  check = (model: Readonly<Model>) => model.leases.has(this.id);
  async run(_model: Model, real: Real): Promise<void> {
    // A heartbeat: a temporary file renamed over the lease. Not a change the listing may report.
    const path = `${SESSIONS}/${this.id}.writer.lease`;
    real.runtime.fs.writeFile(`${path}.me.tmp`, `{"heartbeat":${real.runtime.wallNow()}}`, 0o600);
    await real.runtime.fs.rename(`${path}.me.tmp`, path);
  }
  toString = () => `renew(${this.id})`;
}

class Fresh implements fc.AsyncCommand<Model, Real> {
  constructor(readonly limit: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const outcome = await real.listing.list({ limit: this.limit }, never);
    assert.ok(outcome.ok, `fresh listing: ${!outcome.ok && outcome.code}`);
    const page = outcome.result as Page;
    const want = expected(model);
    const snapshot: Snapshot = { revision: page.revision, cursor: null, expected: want.entries, offset: 0, notices: want.notices, state: directoryState(model), stale: false };
    checkPage(page, snapshot, this.limit);
    model.snapshot = snapshot;
  }
  toString = () => `fresh(${this.limit})`;
}

class Next implements fc.AsyncCommand<Model, Real> {
  constructor(readonly limit: number) {}
  check = (model: Readonly<Model>) => model.snapshot !== null && model.snapshot.cursor !== null;
  async run(model: Model, real: Real): Promise<void> {
    const snapshot = model.snapshot!;
    const outcome = await real.listing.list({ revision: snapshot.revision, cursor: snapshot.cursor, limit: this.limit }, never);
    if (snapshot.state !== directoryState(model) || snapshot.stale) {
      seen.stale++;
      assert.deepEqual(outcome, { ok: false, code: "stale_revision" }, "a change since the snapshot, or an earlier stale answer");
      snapshot.stale = true;
      return;
    }
    assert.ok(outcome.ok, `continuation: ${!outcome.ok && outcome.code}`);
    seen.continued++;
    checkPage(outcome.result as Page, snapshot, this.limit);
  }
  toString = () => `next(${this.limit})`;
}

const ids = fc.constantFrom("a", "B", "c-1", "c_2", "z");
const put = fc.tuple(ids, fc.constantFrom<Kind>("here", "here", "legacy", "other", "malformed", "shared"), fc.option(fc.constantFrom("Parser work", "Release 1.2"), { nil: null }))
  .map(([id, kind, title]) => new Put(id, kind, title));
// Puts and short pages weigh more, so snapshots often have a next page to continue to.
const commands = [
  put,
  put,
  put,
  ids.map((id) => new Delete(id)),
  fc.tuple(ids, fc.boolean()).map(([id, on]) => new Lease(id, on)),
  ids.map((id) => new Renew(id)),
  fc.integer({ min: 1, max: 2 }).map((limit) => new Fresh(limit)),
  fc.integer({ min: 1, max: 3 }).map((limit) => new Next(limit)),
  fc.integer({ min: 1, max: 3 }).map((limit) => new Next(limit)),
];

describe("session.list against a model of the sessions directory", () => {
  it("every page agrees with the model, or the snapshot is stale, and stale stays stale", async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40, size: "max" }), async (cmds) => {
        const runtime = createMemoryRuntime();
        const real = { runtime, listing: await listingFor(runtime) };
        await fc.asyncModelRun(() => ({ model: { sessions: new Map<string, Stored>(), leases: new Set<string>(), snapshot: null, writes: 0 } as Model, real }), cmds);
      }),
      { numRuns: fuzzRuns(200) },
    );
    // Both kinds of continuation happened, or the property proved less than it says.
    assert.ok(seen.continued > 0 && seen.stale > 0, JSON.stringify(seen));
  });
});
