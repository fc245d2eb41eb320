/**
 * Two things a listing's revision must not depend on: a lease heartbeat
 * (the spec: "lease renewal timestamps alone do not invalidate") and the
 * directory's content alone (the spec scopes every ephemeral identifier to
 * its child, so two windows over one `$MC_HOME` never accept each other's).
 *
 * @module
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { DirEntry } from "../src/host/runtime.ts";
import { listingFor, SESSIONS, writeSession } from "./support/listing.ts";

const never = new AbortController().signal;

/** A directory read meeting a heartbeat: the rename over the lease makes readdir return its name twice. */
class RenewedDuringRead extends MemoryFileSystem {
  renewing = false;
  override async readDir(path: string, maxEntries?: number): Promise<DirEntry[]> {
    const entries = await super.readDir(path, maxEntries);
    const lease = entries.find((entry) => entry.name.endsWith(".writer.lease"));
    return !this.renewing || lease === undefined ? entries : [...entries, lease];
  }
}

describe("session.list revisions", () => {
  it("session.list treats a lease name a heartbeat makes readdir repeat as no mutation", async () => {
    const fs = new RenewedDuringRead();
    const runtime = createMemoryRuntime({ fs });
    for (const id of ["a", "b"]) writeSession(runtime, id);
    runtime.fs.writeFile(`${SESSIONS}/a.writer.lease`, "{}", 0o600);
    const listing = await listingFor(runtime);
    const first = await listing.list({ limit: 1 }, never);
    assert.ok(first.ok);
    fs.renewing = true;
    const { revision, next_cursor: cursor } = first.result;
    const next = await listing.list({ revision, cursor, limit: 1 }, never);
    assert.ok(next.ok, `a heartbeat alone made the snapshot ${next.ok ? "" : next.code}`);
    assert.deepEqual(next.result.sessions.map((entry) => entry.session_id), ["b"]);
    const fresh = await listing.list({ limit: 1 }, never);
    assert.ok(fresh.ok, `a heartbeat alone failed a fresh listing with ${fresh.ok ? "" : fresh.code}`);
  });

  it("session.list answers another child's revision and cursor stale_revision over an identical directory", async () => {
    const children = await Promise.all([0, 1].map(async () => {
      const runtime = createMemoryRuntime();
      for (const id of ["a", "b"]) writeSession(runtime, id);
      return await listingFor(runtime);
    }));
    const first = await children[0]!.list({ limit: 1 }, never);
    const second = await children[1]!.list({ limit: 1 }, never);
    assert.ok(first.ok && second.ok);
    assert.notEqual(first.result.revision, second.result.revision, "two children issued the same revision");
    const { revision, next_cursor: cursor } = first.result;
    assert.deepEqual(await children[1]!.list({ revision, cursor, limit: 1 }, never), { ok: false, code: "stale_revision" });
  });
});
