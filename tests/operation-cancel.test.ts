import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { DirEntry, DirReader, FileInfo, ReadHandle } from "../src/host/runtime.ts";
import type { ErrorCode } from "../src/protocol/errors.ts";
import type { OutputValue } from "../src/protocol/frames.ts";
import { OperationCanceller } from "../src/operations/cancel/operation-cancel.ts";
import { SessionWorker } from "../src/operations/sessions/session-worker.ts";
import { SessionDiscovery } from "../src/store/discovery/discovery.ts";
import { SessionListing } from "../src/store/discovery/listing.ts";
import { SessionStore } from "../src/store/sessions.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { frameFor, line, type Run, startServer, unlessBusy } from "./support/harness.ts";
import { eventually } from "./support/hang-guard.ts";
import { CWD, SESSIONS, writeSession } from "./support/listing.ts";


async function started(capabilities: string[]): Promise<Run> {
  const run = startServer();
  writeSession(run.runtime, "first");
  writeSession(run.runtime, "second");
  run.runtime.input.push(line("init", "initialize", { required_capabilities: capabilities }));
  assert.ok((await frameFor(run, "init")).result);
  return run;
}

const BASE = ["session.list", "session.open", "session.create", "status"];

describe("operation.cancel over the protocol", () => {
  it("is advertised but unsupported_capability unless negotiated, after params and phase checks", async () => {
    const early = startServer();
    early.runtime.input.push(line("c0", "operation.cancel", { id: "x" }));
    assert.equal((await frameFor(early, "c0")).error?.code, "not_initialized");
    early.runtime.input.end();
    await early.exit;
    const run = await started(BASE);
    run.runtime.input.push(line("c1", "operation.cancel", { id: "x" }) + line("c2", "operation.cancel", { id: "bad id" }) + line("c3", "operation.cancel", {}));
    assert.equal((await frameFor(run, "c1")).error?.code, "unsupported_capability");
    assert.equal((await frameFor(run, "c2")).error?.code, "invalid_params");
    assert.equal((await frameFor(run, "c3")).error?.code, "invalid_params");
    run.runtime.input.end();
    await run.exit;
  });

  it("cancels a running listing: operation_cancelled first, then cancellation_requested; a finished one is stale_operation", async () => {
    const run = await started([...BASE, "operation.cancel"]);
    run.runtime.input.push(line("l1", "session.list") + line("c1", "operation.cancel", { id: "l1" }));
    const cancelled = await frameFor(run, "l1");
    const result = await frameFor(run, "c1");
    assert.equal(cancelled.error?.code, "operation_cancelled");
    assert.deepEqual(result.result, { cancellation_requested: true });
    assert.ok(cancelled.seq < result.seq);
    run.runtime.input.push(line("l2", "session.list"));
    assert.ok((await frameFor(run, "l2")).result);
    run.runtime.input.push(line("c2", "operation.cancel", { id: "l2" }) + line("c3", "operation.cancel", { id: "never-sent" }) + line("c4", "operation.cancel", { id: "c4" }));
    for (const id of ["c2", "c3", "c4"]) assert.equal((await frameFor(run, id)).error?.code, "stale_operation", id);
    run.runtime.input.end();
    await run.exit;
  });

  it("a cancelled open leaves the attachment and releases its lease; session.create is not cancellable", async () => {
    const run = await started([...BASE, "operation.cancel"]);
    // Ended however the test ends: the attached session's lease heartbeat would keep the file's process alive after a failure.
    try {
      run.runtime.input.push(line("o1", "session.open", { session_id: "first" }));
      assert.ok((await frameFor(run, "o1")).result);
      run.runtime.input.push(line("o2", "session.open", { session_id: "second" }) + line("c1", "operation.cancel", { id: "o2" }) + line("s1", "status"));
      assert.equal((await frameFor(run, "o2")).error?.code, "operation_cancelled");
      assert.equal((await frameFor(run, "s1")).result!.session_id, "first");
      // Busy while the cancelled open is still letting go of the store.
      const retry = await unlessBusy((n) => {
        run.runtime.input.push(line(`o3-${n}`, "session.open", { session_id: "first" }));
        return frameFor(run, `o3-${n}`);
      }, "the cancelled open to stop");
      assert.ok(retry.result, `reopening the attached session works once the cancelled open stopped: ${retry.error?.code}`);
      assert.equal(run.runtime.fs.exists(`${SESSIONS}/second.writer.lease`), false);
      run.runtime.input.push(line("n1", "session.create") + line("c2", "operation.cancel", { id: "n1" }));
      assert.equal((await frameFor(run, "c2")).error?.code, "stale_operation");
      assert.ok((await frameFor(run, "n1")).result);
    } finally {
      run.runtime.input.end();
    }
    await run.exit;
  });
});

/** A memory filesystem whose metadata calls resolve when the fast-check scheduler says so. */
class ScheduledStorage extends MemoryFileSystem {
  constructor(readonly scheduler: fc.Scheduler) {
    super();
  }
  /** Settles as `call` did, once scheduled; a rejection (a lease file that is absent) is held, not left unhandled. */
  #later<T>(call: Promise<T>, label: string): Promise<T> {
    const held = call.then((value) => ({ value }), (error: unknown) => ({ error }));
    return this.scheduler.schedule(held, label).then((outcome) => "error" in outcome ? Promise.reject(outcome.error) : outcome.value);
  }
  override lstat(path: string): Promise<FileInfo> {
    return this.#later(super.lstat(path), "lstat");
  }
  override readDir(path: string): Promise<DirEntry[]> {
    return this.#later(super.readDir(path), "readDir");
  }
  override openRead(path: string): Promise<ReadHandle> {
    return this.#later(super.openRead(path), "openRead");
  }
  override async openDir(path: string): Promise<DirReader> {
    const reader = await this.#later(super.openDir(path), "openDir");
    return { read: (max) => this.#later(reader.read(max), "readDir batch"), close: () => reader.close() };
  }
}

/** Rounds {@link settle} releases at most: a run settles within a handful, a worker that never frees in none. */
const SETTLE_ROUNDS = 1_000;

/** Releases scheduled calls until `done()`: a task may schedule more after real asynchronous work (hashing, timers). */
async function settle(s: fc.Scheduler, done: () => boolean): Promise<void> {
  for (let round = 0; !done(); round++) {
    if (round === SETTLE_ROUNDS) throw new Error(`Not settled after ${SETTLE_ROUNDS} rounds of scheduled calls`);
    await s.waitAll();
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

describe("operation.cancel racing completion", () => {
  it("every request is answered exactly once: its result or operation_cancelled, and the cancel agrees", async () => {
    const seen = new Set<string>();
    const race = (methods: fc.Arbitrary<string>) =>
      fc.asyncProperty(fc.scheduler(), methods, fc.oneof(fc.constant(0), fc.nat({ max: 60 })), async (s, method, delay) => {
        const runtime = createMemoryRuntime({ fs: new ScheduledStorage(s) });
        writeSession(runtime, "first");
        writeSession(runtime, "second");
        const answers = new Map<string, (OutputValue | ErrorCode)[]>();
        const note = (id: string, value: OutputValue | ErrorCode) => answers.set(id, [...answers.get(id) ?? [], value]);
        const replies = { result: (id: string, result: OutputValue) => note(id, result), error: (id: string, code: ErrorCode) => note(id, code) };
        const home = "/home/user/.magi-code";
        const store = new SessionStore({ runtime, home, cwd: CWD, instanceId: "me", secrets: [] });
        const scan = { runtime, directory: SESSIONS, cwd: CWD, secrets: [], attached: () => store.sessionId };
        const [listing, discovery] = [new SessionListing(scan), new SessionDiscovery(scan)];
        const worker = new SessionWorker(store, { listing, discovery }, replies, () => false);
        const canceller = new OperationCanceller([worker], replies);
        let revision = "";
        if (method === "history.page") {
          worker.open("setup", { session_id: "first" });
          await settle(s, () => answers.has("setup") && !worker.busy);
          revision = ((answers.get("setup")![0] as { revision: string }).revision);
        }
        if (method === "session.list") worker.list("op", {});
        else if (method === "session.discover") worker.discover("op", {});
        else if (method === "session.open") worker.open("op", { session_id: "second" });
        else worker.page("op", { session_id: "first", revision, cursor: null });
        // The client's cancel is another actor: it arrives after `delay` of its own scheduled steps.
        const cancel = (async () => {
          for (let step = 0; step <= delay; step++) await s.schedule(Promise.resolve(), `cancel step ${step}`);
          canceller.cancel("cancel", { id: "op" });
        })();
        let closed = false;
        void cancel.then(() => worker.close()).then(() => (closed = true));
        await settle(s, () => closed);
        const [outcome, ...extra] = answers.get("op") ?? [];
        const [verdict, ...extraCancel] = answers.get("cancel") ?? [];
        assert.deepEqual([extra, extraCancel], [[], []], "one answer each");
        const cancelled = outcome === "operation_cancelled";
        seen.add(`${method} ${cancelled ? "cancelled" : "completed"}`);
        assert.equal(cancelled, typeof verdict === "object", "the cancel succeeded exactly when the operation was cancelled");
        if (!cancelled) {
          assert.equal(typeof outcome, "object", `the operation completed: ${String(outcome)}`);
          assert.equal(verdict, "stale_operation");
        }
        if (method === "session.open") assert.equal(store.sessionId, null, "closed");
      });
    const methods = ["session.list", "session.discover", "session.open", "history.page"];
    await fc.assert(race(fc.constantFrom(...methods)), { numRuns: fuzzRuns(150) });
    // Both orders must happen for every method, or the property proved less than it says. Which
    // order a run takes is the scheduler's random choice, so a method still missing one gets more
    // runs of its own (each one checking the same property) before the test gives up.
    for (const method of methods) {
      for (let round = 0; round < 8 && !(seen.has(`${method} cancelled`) && seen.has(`${method} completed`)); round++) {
        await fc.assert(race(fc.constant(method)), { numRuns: 50 });
      }
    }
    assert.equal(seen.size, 8, [...seen].join(", "));
  });
});

/** A memory filesystem that runs `before(call)` ahead of each directory listing, numbered from 1. */
class HookedListing extends MemoryFileSystem {
  calls = 0;
  before: (call: number) => void = () => {};
  override readDir(path: string, maxEntries?: number): Promise<DirEntry[]> {
    this.before(++this.calls);
    return super.readDir(path, maxEntries);
  }
}

describe("operation.cancel of a session.list continuation", () => {
  it("leaves the discovery snapshot as it was, even when the cancelled rescan saw the inventory change", async () => {
    const fs = new HookedListing();
    const runtime = createMemoryRuntime({ fs });
    writeSession(runtime, "first");
    writeSession(runtime, "second");
    await fs.mkdir(SESSIONS, 0o700);
    const listing = new SessionListing({ runtime, directory: SESSIONS, cwd: CWD, secrets: [], attached: () => null });
    const fresh = await listing.list({ limit: 1 }, new AbortController().signal);
    assert.ok(fresh.ok);
    const { revision, next_cursor: cursor } = fresh.result as { revision: string; next_cursor: string };
    // The continuation's second inventory pass: another process adds a history and, meanwhile, the client's cancel lands.
    const cancel = new AbortController();
    fs.before = (call) => {
      if (call !== 4) return;
      writeSession(runtime, "third");
      cancel.abort();
    };
    await listing.list({ revision, cursor, limit: 1 }, cancel.signal); // answered operation_cancelled by the worker
    await fs.unlink(`${SESSIONS}/third.jsonl`);
    const again = await listing.list({ revision, cursor, limit: 1 }, new AbortController().signal);
    assert.ok(again.ok, `the snapshot is as it was: ${again.ok ? "" : again.code}`);
    assert.deepEqual(again.result.sessions.map((entry) => entry.session_id), ["second"]);
  });
});

/** A memory filesystem that runs `beforeUnlink(path)` ahead of each unlink. */
class HookedUnlink extends MemoryFileSystem {
  beforeUnlink: (path: string) => void = () => {};
  override unlink(path: string): Promise<void> {
    this.beforeUnlink(path);
    return super.unlink(path);
  }
}

describe("operation.cancel of a session.open that already replaced the attachment", () => {
  it("is stale_operation while the open releases the previous lease: the open's answer is its result", async () => {
    const fs = new HookedUnlink();
    const runtime = createMemoryRuntime({ fs });
    writeSession(runtime, "first");
    writeSession(runtime, "second");
    const answers = new Map<string, OutputValue | ErrorCode>();
    const replies = { result: (id: string, result: OutputValue) => answers.set(id, result), error: (id: string, code: ErrorCode) => answers.set(id, code) };
    const store = new SessionStore({ runtime, home: "/home/user/.magi-code", cwd: CWD, instanceId: "me", secrets: [] });
    const scan = { runtime, directory: SESSIONS, cwd: CWD, secrets: [], attached: () => store.sessionId };
    const worker = new SessionWorker(store, { listing: new SessionListing(scan), discovery: new SessionDiscovery(scan) }, replies, () => false);
    const canceller = new OperationCanceller([worker], replies);
    const idle = () => eventually(() => !worker.busy, "the session worker to be idle", { intervalMs: 0 });
    let attached: string | null = null;
    try {
      worker.open("o1", { session_id: "first" });
      await idle();
      assert.equal(typeof answers.get("o1"), "object");
      // The client's cancel lands while the open, past its last check, lets go of the previous session's lease.
      fs.beforeUnlink = (path) => {
        if (path.endsWith("/first.writer.lease")) canceller.cancel("c1", { id: "o2" });
      };
      worker.open("o2", { session_id: "second" });
      await idle();
      attached = store.sessionId;
    } finally {
      await worker.close(); // stops the lease heartbeats, also after a failed wait
    }
    assert.equal(attached, "second", "the open went through");
    assert.equal(answers.get("c1"), "stale_operation");
    assert.equal((answers.get("o2") as { session_id?: string }).session_id, "second", "a client told operation_cancelled would believe it is still on first");
  });
});

/** A memory filesystem whose unlinks first wait for `beforeUnlink(path)`. */
class HeldUnlink extends MemoryFileSystem {
  beforeUnlink: (path: string) => Promise<void> = () => Promise.resolve();
  override async unlink(path: string): Promise<void> {
    await this.beforeUnlink(path);
    return await super.unlink(path);
  }
}

describe("operation.cancel over the protocol, racing an open's commit", () => {
  it("a cancel arriving while the open releases the previous lease is stale_operation, and the open succeeds", async () => {
    const fs = new HeldUnlink();
    const run = startServer({ fs });
    writeSession(run.runtime, "first");
    writeSession(run.runtime, "second");
    run.runtime.input.push(line("init", "initialize", { required_capabilities: [...BASE, "operation.cancel"] }));
    assert.ok((await frameFor(run, "init")).result);
    run.runtime.input.push(line("o1", "session.open", { session_id: "first" }));
    assert.ok((await frameFor(run, "o1")).result);
    // The release of first's lease is held until the client's cancel of the open has been answered.
    fs.beforeUnlink = async (path) => {
      if (!path.endsWith("/first.writer.lease")) return;
      fs.beforeUnlink = () => Promise.resolve();
      run.runtime.input.push(line("c1", "operation.cancel", { id: "o2" }));
      await frameFor(run, "c1");
    };
    run.runtime.input.push(line("o2", "session.open", { session_id: "second" }));
    const opened = await frameFor(run, "o2");
    assert.equal((await frameFor(run, "c1")).error?.code, "stale_operation");
    assert.equal((opened.result as { session_id?: string } | undefined)?.session_id, "second", `answered ${opened.error?.code}`);
    run.runtime.input.push(line("s1", "status"));
    assert.equal((await frameFor(run, "s1")).result!.session_id, "second");
    run.runtime.input.end();
    await run.exit;
  });
});
