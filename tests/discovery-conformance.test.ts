/**
 * Spec sentences of "Read-only session discovery" that the other discovery
 * tests left unproven, checked on `session.list` and `session.discover`
 * alike: the `discovery_unavailable` root and file-name rules, `busy` as
 * advisory presence of each lease kind, read-only listing, a changing
 * inventory during one scan, and a continuation's fingerprint (permissions,
 * attachment) with its sticky staleness.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryRuntime, type MemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { DirEntry, FileInfo, ReadHandle } from "../src/host/runtime.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { SessionDiscovery } from "../src/store/discovery/discovery.ts";
import { SessionListing } from "../src/store/discovery/listing.ts";
import { type DiscoverPage, discoverAll, discoverNext } from "./support/discover.ts";
import { CWD, SESSIONS, writeSession } from "./support/listing.ts";

const never = new AbortController().signal;
const HOME = "/home/user/.magi-code";

/** Both discovery operations over one runtime's sessions directory, answering code or entries. */
function both(runtime: MemoryRuntime, attached: () => string | null = () => null) {
  const context = { runtime, directory: SESSIONS, cwd: CWD, secrets: [], attached };
  const listing = new SessionListing(context);
  const discovery = new SessionDiscovery(context);
  return {
    listing,
    discovery,
    /** A fresh `session.list` page of 100: its entries and notices, or the error code. */
    async list(): Promise<{ code: string } | { sessions: Record<string, unknown>[]; notices: readonly string[] }> {
      const outcome = await listing.list({}, never);
      return outcome.ok ? { sessions: [...outcome.result.sessions], notices: outcome.result.notices } : { code: outcome.code };
    },
    /** A fresh `session.discover` pass's first page (the walk), or the error code. */
    async discover(): Promise<DiscoverPage | { code: string }> {
      return await discoverNext(discovery, null, 100);
    },
  };
}

describe("discovery_unavailable: an unsafe or unlistable root, an invalid or overlong primary name", () => {
  const roots: [string, (runtime: MemoryRuntime) => Promise<void> | void][] = [
    ["a symlink to a private directory", async (runtime) => {
      await runtime.fs.mkdir(`${HOME}/real-sessions`, 0o700);
      runtime.fs.symlink(`${HOME}/real-sessions`, SESSIONS);
    }],
    ["a regular file", (runtime) => runtime.fs.writeFile(SESSIONS, "", 0o600)],
    ["group-writable", (runtime) => runtime.fs.mkdir(SESSIONS, 0o770)],
    ["world-writable", (runtime) => runtime.fs.mkdir(SESSIONS, 0o702)],
    ["missing", (runtime) => runtime.fs.mkdir(HOME, 0o700)],
    ["not listable", async (runtime) => {
      await runtime.fs.mkdir(SESSIONS, 0o700);
      runtime.fs.faults.set(SESSIONS, "permission");
    }],
  ];
  for (const [name, arrange] of roots) {
    it(`a sessions root that is ${name} is discovery_unavailable for session.list and session.discover`, async () => {
      const runtime = createMemoryRuntime();
      await arrange(runtime);
      const discovery = both(runtime);
      assert.deepEqual(await discovery.list(), { code: "discovery_unavailable" });
      assert.deepEqual(await discovery.discover(), { code: "discovery_unavailable" });
    });
  }

  for (const name of ["bad name.jsonl", `${"x".repeat(65)}.jsonl`, ".jsonl", "dotted.id.jsonl", "caf\u00e9.jsonl"]) {
    it(`a primary file named ${JSON.stringify(name.length > 20 ? `${name.slice(0, 8)}…(${name.length} bytes)` : name)} is discovery_unavailable`, async () => {
      const runtime = createMemoryRuntime();
      await runtime.fs.mkdir(SESSIONS, 0o700);
      writeSession(runtime, "fine");
      runtime.fs.writeFile(`${SESSIONS}/${name}`, "", 0o600);
      const discovery = both(runtime);
      assert.deepEqual(await discovery.list(), { code: "discovery_unavailable" });
      assert.deepEqual(await discovery.discover(), { code: "discovery_unavailable" });
    });
  }

  it("a 64-byte stem is a session id, and names that are not primary histories are no reason to refuse", async () => {
    const runtime = createMemoryRuntime();
    await runtime.fs.mkdir(SESSIONS, 0o700);
    writeSession(runtime, "y".repeat(64));
    for (const name of ["bad name.json", "notes.txt", "x.JSONL", `${"x".repeat(65)}.writer.lease`, "jsonl"]) runtime.fs.writeFile(`${SESSIONS}/${name}`, "", 0o600);
    const discovery = both(runtime);
    const listed = await discovery.list();
    assert.ok("sessions" in listed, JSON.stringify(listed));
    assert.deepEqual(listed.sessions.map((entry) => entry.session_id), ["y".repeat(64)]);
    const walked = await discovery.discover();
    assert.ok(!("code" in walked), JSON.stringify(walked));
    assert.deepEqual(walked.sessions.map((entry) => entry.session_id), ["y".repeat(64)]);
  });
});

describe("busy is advisory presence of another writer, active or append lease file", () => {
  it("each lease kind makes its session busy, a busy legacy session keeps cwd_unverified, this child's own attachment is available", async () => {
    const runtime = createMemoryRuntime();
    await runtime.fs.mkdir(SESSIONS, 0o700);
    for (const id of ["a-writer", "b-active", "c-append", "d-free", "e-mine"]) writeSession(runtime, id);
    writeSession(runtime, "f-legacy", { cwd: null });
    for (const [id, kind] of [["a-writer", "writer"], ["b-active", "active"], ["c-append", "append"], ["f-legacy", "writer"], ["e-mine", "writer"]]) {
      runtime.fs.writeFile(`${SESSIONS}/${id}.${kind}.lease`, "{}", 0o600);
    }
    const expected = [
      ["a-writer", "busy", []],
      ["b-active", "busy", []],
      ["c-append", "busy", []],
      ["d-free", "available", []],
      ["e-mine", "available", []],
      ["f-legacy", "busy", ["cwd_unverified"]],
    ];
    const discovery = both(runtime, () => "e-mine");
    const listed = await discovery.list();
    assert.ok("sessions" in listed);
    assert.deepEqual(listed.sessions.map((entry) => [entry.session_id, entry.eligibility, entry.notices]), expected);
    const pages = await discoverAll(discovery.discovery, 100);
    const verified = pages.at(-1)!.sessions;
    assert.deepEqual(verified.map((entry) => [entry.session_id, entry.eligibility, entry.notices]), expected);
  });

  it("a stale lease (dead holder, ancient heartbeat) reads busy and is neither removed nor rewritten", async () => {
    const runtime = createMemoryRuntime();
    await runtime.fs.mkdir(SESSIONS, 0o700);
    writeSession(runtime, "old");
    const lease = JSON.stringify({ v: 1, pid: 999_999, instance_id: "gone", host: null, acquired_at: "2000-01-01T00:00:00.000Z", heartbeat_at: "2000-01-01T00:00:00.000Z" });
    runtime.fs.writeFile(`${SESSIONS}/old.writer.lease`, lease, 0o600);
    const before = await tree(runtime, HOME);
    const discovery = both(runtime);
    const listed = await discovery.list();
    assert.ok("sessions" in listed);
    assert.deepEqual(listed.sessions.map((entry) => entry.eligibility), ["busy"]);
    await discoverAll(discovery.discovery, 1);
    assert.deepEqual(await tree(runtime, HOME), before, "nothing under MC_HOME changed");
  });
});

/** Every node under `root`: its kind, mode, inode, mtime and bytes, by path. */
async function tree(runtime: MemoryRuntime, root: string): Promise<Record<string, string>> {
  const nodes: Record<string, string> = {};
  const visit = async (path: string) => {
    const info = await runtime.fs.lstat(path);
    const bytes = runtime.fs.contents(path);
    nodes[path] = `${info.kind}:${info.mode}:${info.ino}:${info.mtimeMs}:${bytes === undefined ? "" : new TextDecoder().decode(bytes)}`;
    if (info.kind === "directory") for (const { name } of await runtime.fs.readDir(path)) await visit(`${path}/${name}`);
  };
  await visit(root);
  return nodes;
}

/** A memory filesystem that runs `beforeLstat(path)` ahead of each `lstat`, and reports `modes` overrides. */
class Hooked extends MemoryFileSystem {
  beforeLstat: (path: string) => void = () => {};
  beforeReadDir: (call: number) => void = () => {};
  #readDirs = 0;
  override readDir(path: string, maxEntries?: number): Promise<DirEntry[]> {
    this.beforeReadDir(++this.#readDirs);
    return super.readDir(path, maxEntries);
  }
  readonly modes = new Map<string, number>();
  #mode(path: string, info: FileInfo): FileInfo {
    const mode = this.modes.get(path);
    return mode === undefined ? info : { ...info, mode };
  }
  override async lstat(path: string): Promise<FileInfo> {
    this.beforeLstat(path);
    return this.#mode(path, await super.lstat(path));
  }
  override async openRead(path: string): Promise<ReadHandle> {
    const handle = await super.openRead(path);
    return { ...handle, info: this.#mode(path, handle.info), stat: async () => this.#mode(path, await handle.stat()) };
  }
}

describe("a changing inventory during one session.list scan is stale_revision", () => {
  const changes: [string, (runtime: MemoryRuntime, fs: Hooked) => Promise<void> | void][] = [
    ["a history vanishes before its read", (_runtime, fs) => fs.unlink(`${SESSIONS}/b.jsonl`)],
    ["a history appears", (runtime) => writeSession(runtime, "d")],
    ["a lease file appears", (runtime) => runtime.fs.writeFile(`${SESSIONS}/c.writer.lease`, "{}", 0o600)],
  ];
  for (const [name, change] of changes) {
    it(`${name}: a fresh listing is stale_revision and leaves no snapshot`, async () => {
      const fs = new Hooked();
      const runtime = createMemoryRuntime({ fs });
      await fs.mkdir(SESSIONS, 0o700);
      for (const id of ["a", "b", "c"]) writeSession(runtime, id);
      const discovery = both(runtime);
      const first = await discovery.listing.list({ limit: 1 }, never);
      assert.ok(first.ok);
      let armed = true;
      fs.beforeLstat = (path) => {
        if (!armed || !path.endsWith("/b.jsonl")) return;
        armed = false;
        void change(runtime, fs);
      };
      assert.deepEqual(await discovery.list(), { code: "stale_revision" });
      const { revision, next_cursor: cursor } = first.result;
      assert.deepEqual(await discovery.listing.list({ revision, cursor, limit: 1 }, never), { ok: false, code: "stale_revision" }, "the fresh request replaced the old snapshot");
    });
  }
});

describe("a session.list continuation compares permissions and the attachment, and stale stays stale", () => {
  it("a mode change alone (still private) makes the snapshot stale, and undoing it does not revive it", async () => {
    const fs = new Hooked();
    const runtime = createMemoryRuntime({ fs });
    await fs.mkdir(SESSIONS, 0o700);
    for (const id of ["a", "b"]) writeSession(runtime, id);
    const { listing } = both(runtime);
    const first = await listing.list({ limit: 1 }, never);
    assert.ok(first.ok);
    const { revision, next_cursor: cursor } = first.result;
    fs.modes.set(`${SESSIONS}/a.jsonl`, 0o400);
    assert.deepEqual(await listing.list({ revision, cursor, limit: 1 }, never), { ok: false, code: "stale_revision" });
    fs.modes.clear();
    assert.deepEqual(await listing.list({ revision, cursor, limit: 1 }, never), { ok: false, code: "stale_revision" });
  });

  it("a change of this child's attachment makes the snapshot stale, and undoing it does not revive it", async () => {
    const runtime = createMemoryRuntime();
    await runtime.fs.mkdir(SESSIONS, 0o700);
    for (const id of ["a", "b"]) writeSession(runtime, id);
    let attached: string | null = null;
    const { listing } = both(runtime, () => attached);
    const first = await listing.list({ limit: 1 }, never);
    assert.ok(first.ok);
    const { revision, next_cursor: cursor } = first.result;
    attached = "b";
    assert.deepEqual(await listing.list({ revision, cursor, limit: 1 }, never), { ok: false, code: "stale_revision" });
    attached = null;
    assert.deepEqual(await listing.list({ revision, cursor, limit: 1 }, never), { ok: false, code: "stale_revision" });
  });
});

describe("both inventory passes enforce discovery_directory_entries", () => {
  it("a directory that grows past the bound between the passes is discovery_limit", async () => {
    const fs = new Hooked();
    const runtime = createMemoryRuntime({ fs });
    await fs.mkdir(SESSIONS, 0o700);
    writeSession(runtime, "only");
    for (let n = 1; n < LIMITS.discovery_directory_entries; n++) runtime.fs.writeFile(`${SESSIONS}/side${n}.meta.json`, "{}", 0o600);
    fs.beforeReadDir = (call) => {
      if (call === 2) runtime.fs.writeFile(`${SESSIONS}/one-more.tmp`, "", 0o600);
    };
    assert.deepEqual(await both(runtime).list(), { code: "discovery_limit" });
  });
});
