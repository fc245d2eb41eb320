import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { DirEntry, FileInfo, ReadHandle } from "../src/host/runtime.ts";
import type { ErrorCode } from "../src/protocol/errors.ts";
import type { OutputValue } from "../src/protocol/frames.ts";
import { OperationCanceller } from "../src/operations/cancel/operation-cancel.ts";
import { SessionWorker } from "../src/operations/sessions/session-worker.ts";
import { SessionListing } from "../src/store/discovery/listing.ts";
import { SessionStore } from "../src/store/sessions.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { line, type Run, startServer } from "./support/harness.ts";
import { CWD, SESSIONS, writeSession } from "./support/listing.ts";

async function answer(run: Run, id: string) {
  for (;;) {
    const found = run.frames().find((frame) => frame.id === id);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

async function started(capabilities: string[]): Promise<Run> {
  const run = startServer();
  writeSession(run.runtime, "first");
  writeSession(run.runtime, "second");
  run.runtime.input.push(line("init", "initialize", { required_capabilities: capabilities }));
  assert.ok((await answer(run, "init")).result);
  return run;
}

const BASE = ["session.list", "session.open", "session.create", "status"];

describe("operation.cancel over the protocol", () => {
  it("is advertised but unsupported_capability unless negotiated, after params and phase checks", async () => {
    const early = startServer();
    early.runtime.input.push(line("c0", "operation.cancel", { id: "x" }));
    assert.equal((await answer(early, "c0")).error?.code, "not_initialized");
    early.runtime.input.end();
    await early.exit;
    const run = await started(BASE);
    run.runtime.input.push(line("c1", "operation.cancel", { id: "x" }) + line("c2", "operation.cancel", { id: "bad id" }) + line("c3", "operation.cancel", {}));
    assert.equal((await answer(run, "c1")).error?.code, "unsupported_capability");
    assert.equal((await answer(run, "c2")).error?.code, "invalid_params");
    assert.equal((await answer(run, "c3")).error?.code, "invalid_params");
    run.runtime.input.end();
    await run.exit;
  });

  it("cancels a running listing: operation_cancelled first, then cancellation_requested; a finished one is stale_operation", async () => {
    const run = await started([...BASE, "operation.cancel"]);
    run.runtime.input.push(line("l1", "session.list") + line("c1", "operation.cancel", { id: "l1" }));
    const cancelled = await answer(run, "l1");
    const result = await answer(run, "c1");
    assert.equal(cancelled.error?.code, "operation_cancelled");
    assert.deepEqual(result.result, { cancellation_requested: true });
    assert.ok(cancelled.seq < result.seq);
    run.runtime.input.push(line("l2", "session.list"));
    assert.ok((await answer(run, "l2")).result);
    run.runtime.input.push(line("c2", "operation.cancel", { id: "l2" }) + line("c3", "operation.cancel", { id: "never-sent" }) + line("c4", "operation.cancel", { id: "c4" }));
    for (const id of ["c2", "c3", "c4"]) assert.equal((await answer(run, id)).error?.code, "stale_operation", id);
    run.runtime.input.end();
    await run.exit;
  });

  it("a cancelled open leaves the attachment and releases its lease; session.create is not cancellable", async () => {
    const run = await started([...BASE, "operation.cancel"]);
    run.runtime.input.push(line("o1", "session.open", { session_id: "first" }));
    assert.ok((await answer(run, "o1")).result);
    run.runtime.input.push(line("o2", "session.open", { session_id: "second" }) + line("c1", "operation.cancel", { id: "o2" }) + line("s1", "status"));
    assert.equal((await answer(run, "o2")).error?.code, "operation_cancelled");
    assert.equal((await answer(run, "s1")).result!.session_id, "first");
    let retry;
    for (let n = 0; ; n++) {
      run.runtime.input.push(line(`o3-${n}`, "session.open", { session_id: "first" }));
      retry = await answer(run, `o3-${n}`);
      if (retry.error?.code !== "busy") break; // the cancelled open is still letting go of the store
    }
    assert.ok(retry.result, "reopening the attached session works once the cancelled open stopped");
    assert.equal(run.runtime.fs.exists(`${SESSIONS}/second.writer.lease`), false);
    run.runtime.input.push(line("n1", "session.create") + line("c2", "operation.cancel", { id: "n1" }));
    assert.equal((await answer(run, "c2")).error?.code, "stale_operation");
    assert.ok((await answer(run, "n1")).result);
    run.runtime.input.end();
    await run.exit;
  });
});

/** A memory filesystem whose metadata calls resolve when the fast-check scheduler says so. */
class ScheduledStorage extends MemoryFileSystem {
  constructor(readonly scheduler: fc.Scheduler) {
    super();
  }
  override lstat(path: string): Promise<FileInfo> {
    return this.scheduler.schedule(super.lstat(path), "lstat");
  }
  override readDir(path: string): Promise<DirEntry[]> {
    return this.scheduler.schedule(super.readDir(path), "readDir");
  }
  override openRead(path: string): Promise<ReadHandle> {
    return this.scheduler.schedule(super.openRead(path), "openRead");
  }
}

/** Releases scheduled calls until `done()`: a task may schedule more after real asynchronous work (hashing, timers). */
async function settle(s: fc.Scheduler, done: () => boolean): Promise<void> {
  while (!done()) {
    await s.waitAll();
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

describe("operation.cancel racing completion", () => {
  it("every request is answered exactly once: its result or operation_cancelled, and the cancel agrees", async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.constantFrom("session.list", "session.open", "history.page"), fc.nat({ max: 60 }), async (s, method, delay) => {
        const runtime = createMemoryRuntime({ fs: new ScheduledStorage(s) });
        writeSession(runtime, "first");
        writeSession(runtime, "second");
        const answers = new Map<string, (OutputValue | ErrorCode)[]>();
        const note = (id: string, value: OutputValue | ErrorCode) => answers.set(id, [...answers.get(id) ?? [], value]);
        const replies = { result: (id: string, result: OutputValue) => note(id, result), error: (id: string, code: ErrorCode) => note(id, code) };
        const home = "/home/user/.magi-code";
        const store = new SessionStore({ runtime, home, cwd: CWD, instanceId: "me", secrets: [] });
        const listing = new SessionListing({ runtime, directory: SESSIONS, cwd: CWD, secrets: [], attached: () => store.sessionId });
        const worker = new SessionWorker(store, listing, replies, () => false);
        const canceller = new OperationCanceller([worker], replies);
        let revision = "";
        if (method === "history.page") {
          worker.open("setup", { session_id: "first" });
          await settle(s, () => answers.has("setup") && !worker.busy);
          revision = ((answers.get("setup")![0] as { revision: string }).revision);
        }
        if (method === "session.list") worker.list("op", {});
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
      }),
      { numRuns: fuzzRuns(150) },
    );
    // Both orders happened for every method, or the property proved less than it says.
    assert.equal(seen.size, 6, [...seen].join(", "));
  });
});
