import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryRuntime, ManualClock } from "../runtime/memory.ts";
import { Lease, leasePath } from "../src/store/leases.ts";
import { encodeRecord, type SessionRecord } from "../src/store/records.ts";
import { initLine, line, type Run, startServer } from "./support/harness.ts";

const decoder = new TextDecoder();
const CWD = "/work/project";
const SESSIONS = "/home/user/.magi-code/sessions";
const at = "2026-11-29T10:00:00.000Z";
const ALL = ["session.create", "session.open", "history.page", "status", "shutdown"];

function sessionFile(records: SessionRecord[]): string {
  return records.map((record) => decoder.decode(encodeRecord(record)!)).join("");
}

/** A stored conversation; `cwd: null` writes a legacy session record without one. */
function conversation(id: string, cwd: string | null = CWD, turns = 1): SessionRecord[] {
  const records: SessionRecord[] = [
    { v: 1, type: "session", session_id: id, at, created_at: at, ...(cwd === null ? {} : { cwd }) } as SessionRecord,
  ];
  for (let t = 0; t < turns; t++) {
    const turn = `t${t}`;
    records.push(
      { v: 1, type: "turn_started", session_id: id, at, turn_id: turn, run_id: `run${t}` },
      { v: 1, type: "user_input", session_id: id, at, turn_id: turn, message_id: `u${t}`, text: `question ${t} ✓` },
      { v: 1, type: "assistant_message", session_id: id, at, turn_id: turn, message_id: `a${t}`, text: `answer ${t} 🚀`, partial: false },
      { v: 1, type: "turn_finished", session_id: id, at, turn_id: turn, outcome: "completed", error_code: null },
    );
  }
  return records;
}

async function ready(run: Run): Promise<void> {
  run.runtime.input.push(initLine("init", ALL));
  const [frame] = await run.waitFrames(1);
  assert.ok(frame!.result, "initialize succeeded");
}

/** Sends one request and waits for its response. */
async function call(run: Run, id: string, method: string, params: Record<string, unknown> = {}) {
  const before = run.frames().length;
  run.runtime.input.push(line(id, method, params));
  const frames = await run.waitFrames(before + 1);
  const response = frames.find((frame) => frame.id === id);
  assert.ok(response, `a response to ${id}`);
  return response;
}

describe("sessions over the protocol", () => {
  it("initialize advertises the session operations", async () => {
    const run = startServer();
    run.runtime.input.push(initLine("init", ALL));
    const [frame] = await run.waitFrames(1);
    assert.deepEqual(frame!.result!.capabilities, ["approval.answer", "history.page", "initialize", "model.catalog", "model.catalog.status", "model.refresh", "operation.cancel", "selection.set", "session.create", "session.discover", "session.list", "session.open", "shutdown", "status", "turn.cancel", "turn.start"]);
    run.runtime.input.end();
    await run.exit;
  });

  it("session operations before initialize answer not_initialized", async () => {
    const run = startServer();
    const create = await call(run, "c1", "session.create");
    assert.equal(create.error?.code, "not_initialized");
    run.runtime.input.end();
    await run.exit;
  });

  it("session.create attaches a lazy handle without writing, and same-child open reopens it", async () => {
    const run = startServer();
    await ready(run);
    const created = await call(run, "c1", "session.create");
    const { session_id, durable, revision, notices } = created.result as Record<string, unknown>;
    assert.match(session_id as string, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepEqual([durable, notices], [false, []]);
    assert.equal(run.runtime.fs.exists(`${SESSIONS}/${session_id}.jsonl`), false);
    const status = await call(run, "s1", "status");
    assert.equal(status.result!.session_id, session_id);
    const page = await call(run, "h1", "history.page", { session_id, revision, cursor: null });
    assert.deepEqual(page.result, { session_id, revision, entries: [], next_cursor: null, complete: true });
    const reopened = await call(run, "o1", "session.open", { session_id });
    assert.equal(reopened.result!.durable, false);
    assert.notEqual(reopened.result!.revision, revision);
    run.runtime.input.end();
    await run.exit;
  });

  it("session.open of a stored session pages its projection and holds the writer lease until exit", async () => {
    const run = startServer();
    const id = "session-a";
    run.runtime.fs.writeFile(`${SESSIONS}/${id}.jsonl`, sessionFile(conversation(id, CWD, 2)), 0o600);
    await ready(run);
    const opened = await call(run, "o1", "session.open", { session_id: id });
    assert.equal(opened.result!.durable, true);
    assert.deepEqual(opened.result!.notices, []);
    assert.ok(run.runtime.fs.exists(`${SESSIONS}/${id}.writer.lease`));
    const page = await call(run, "h1", "history.page", { session_id: id, revision: opened.result!.revision });
    const entries = page.result!.entries as { kind: string; text: string }[];
    assert.deepEqual(entries.map((e) => [e.kind, e.text]), [
      ["user", "question 0 ✓"],
      ["assistant", "answer 0 🚀"],
      ["user", "question 1 ✓"],
      ["assistant", "answer 1 🚀"],
    ]);
    assert.equal(page.result!.complete, true);
    run.runtime.input.end();
    assert.equal(await run.exit, 0);
    assert.equal(run.runtime.fs.exists(`${SESSIONS}/${id}.writer.lease`), false, "the lease is released at teardown");
  });

  it("session.open answers session_missing, invalid_params, cwd_mismatch and a cwd_unverified notice", async () => {
    const run = startServer();
    run.runtime.fs.writeFile(`${SESSIONS}/elsewhere.jsonl`, sessionFile(conversation("elsewhere", "/other/dir")), 0o600);
    run.runtime.fs.writeFile(`${SESSIONS}/legacy.jsonl`, sessionFile(conversation("legacy", null)), 0o600);
    await ready(run);
    assert.equal((await call(run, "o1", "session.open", { session_id: "nope" })).error?.code, "session_missing");
    assert.equal((await call(run, "o2", "session.open", { session_id: "../etc" })).error?.code, "invalid_params");
    assert.equal((await call(run, "o3", "session.open", { session_id: "elsewhere" })).error?.code, "cwd_mismatch");
    assert.equal(run.runtime.fs.exists(`${SESSIONS}/elsewhere.writer.lease`), false, "a failed open releases its lease");
    const legacy = await call(run, "o4", "session.open", { session_id: "legacy" });
    assert.deepEqual(legacy.result!.notices, ["cwd_unverified"]);
    run.runtime.input.end();
    await run.exit;
  });

  it("an empty recorded cwd is not checked (the spec checks every nonempty one): alone it is cwd_unverified", async () => {
    const run = startServer();
    const blank = (id: string) => `${JSON.stringify({ v: 1, type: "session", session_id: id, at, cwd: "", created_at: at })}\n`;
    run.runtime.fs.writeFile(`${SESSIONS}/blank.jsonl`, blank("blank"), 0o600);
    await ready(run);
    const opened = await call(run, "o1", "session.open", { session_id: "blank" });
    assert.deepEqual([opened.result?.durable, opened.result?.notices], [true, ["cwd_unverified"]], JSON.stringify(opened.error));
    run.runtime.input.end();
    await run.exit;
  });

  it("a failed open leaves the previous attachment intact", async () => {
    const run = startServer();
    run.runtime.fs.writeFile(`${SESSIONS}/good.jsonl`, sessionFile(conversation("good")), 0o600);
    run.runtime.fs.writeFile(`${SESSIONS}/bad.jsonl`, "{not json}\n", 0o600);
    await ready(run);
    const good = await call(run, "o1", "session.open", { session_id: "good" });
    assert.equal((await call(run, "o2", "session.open", { session_id: "bad" })).error?.code, "session_invalid");
    assert.equal((await call(run, "s1", "status")).result!.session_id, "good");
    const page = await call(run, "h1", "history.page", { session_id: "good", revision: good.result!.revision });
    assert.equal((page.result!.entries as unknown[]).length, 2);
    run.runtime.input.end();
    await run.exit;
  });

  it("history.page answers session_missing, stale_session and stale_revision", async () => {
    const run = startServer();
    run.runtime.fs.writeFile(`${SESSIONS}/s.jsonl`, sessionFile(conversation("s")), 0o600);
    await ready(run);
    assert.equal((await call(run, "h0", "history.page", { session_id: "s", revision: "r1-00" })).error?.code, "session_missing");
    const opened = await call(run, "o1", "session.open", { session_id: "s" });
    const revision = opened.result!.revision;
    assert.equal((await call(run, "h1", "history.page", { session_id: "other", revision })).error?.code, "stale_session");
    assert.equal((await call(run, "h2", "history.page", { session_id: "s", revision: "r9-abc" })).error?.code, "stale_revision");
    assert.equal((await call(run, "h3", "history.page", { session_id: "s", revision, cursor: "p1.garbage" })).error?.code, "stale_revision");
    run.runtime.input.end();
    await run.exit;
  });

  it("a change to the file between pages makes the revision stale for good, even once restored", async () => {
    const run = startServer();
    const original = sessionFile(conversation("m", CWD, 1));
    run.runtime.fs.writeFile(`${SESSIONS}/m.jsonl`, original, 0o600);
    await ready(run);
    const opened = await call(run, "o1", "session.open", { session_id: "m" });
    const revision = opened.result!.revision;
    assert.ok((await call(run, "h1", "history.page", { session_id: "m", revision })).result);
    const appended = original + sessionFile([{ v: 1, type: "diagnostic", session_id: "m", at, code: "x", summary: "y" }]);
    run.runtime.fs.writeFile(`${SESSIONS}/m.jsonl`, appended, 0o600);
    assert.equal((await call(run, "h2", "history.page", { session_id: "m", revision })).error?.code, "stale_revision");
    run.runtime.fs.writeFile(`${SESSIONS}/m.jsonl`, original, 0o600);
    assert.equal((await call(run, "h3", "history.page", { session_id: "m", revision })).error?.code, "stale_revision");
    run.runtime.input.end();
    await run.exit;
  });

  it("a same-length rewrite in place with a later mtime makes the revision stale, though dev, ino and size match", async () => {
    const clock = new ManualClock();
    const run = startServer({ clock });
    const original = sessionFile(conversation("w", CWD, 1));
    const path = `${SESSIONS}/w.jsonl`;
    run.runtime.fs.writeFile(path, original, 0o600);
    await ready(run);
    const opened = await call(run, "o1", "session.open", { session_id: "w" });
    const revision = opened.result!.revision;
    assert.ok((await call(run, "h1", "history.page", { session_id: "w", revision })).result);
    const before = await run.runtime.fs.lstat(path);
    // Same length, different bytes, written through the same inode a second later.
    const rewritten = original.replace("question 0", "question 9");
    assert.equal(rewritten.length, original.length);
    clock.advance(1_000);
    const handle = await run.runtime.fs.openAppend(path, { create: false, mode: 0o600 });
    await handle.truncate(0);
    await handle.append(new TextEncoder().encode(rewritten));
    await handle.close();
    const after = await run.runtime.fs.lstat(path);
    assert.deepEqual([after.dev, after.ino, after.size], [before.dev, before.ino, before.size]);
    assert.ok(after.mtimeMs > before.mtimeMs);
    assert.equal((await call(run, "h2", "history.page", { session_id: "w", revision })).error?.code, "stale_revision");
    run.runtime.input.end();
    clock.advance(10_000);
    await run.exit;
  });

  it("a second session operation while one runs answers busy, and shutdown cancels the running one", async () => {
    const run = startServer();
    const big = conversation("big", CWD, 400);
    run.runtime.fs.writeFile(`${SESSIONS}/big.jsonl`, sessionFile(big), 0o600);
    await ready(run);
    run.runtime.input.push(
      line("o1", "session.open", { session_id: "big" }) + line("o2", "session.open", { session_id: "big" }) +
        line("x1", "shutdown"),
    );
    assert.equal(await run.exit, 0);
    const outcome = (id: string) => {
      const frame = run.frames().find((f) => f.id === id)!;
      return frame.error?.code ?? "ok";
    };
    assert.equal(outcome("o2"), "busy");
    assert.equal(outcome("x1"), "ok");
    assert.equal(outcome("o1"), "operation_cancelled");
    assert.equal(run.runtime.fs.exists(`${SESSIONS}/big.writer.lease`), false);
  });

  it("the writer lease stays held past the 60 s stale bound because the child renews it", async () => {
    const clock = new ManualClock();
    const livePids = new Set([4242, 5151]);
    const run = startServer({ clock, livePids });
    run.runtime.fs.writeFile(`${SESSIONS}/held.jsonl`, sessionFile(conversation("held")), 0o600);
    await ready(run);
    assert.ok((await call(run, "o1", "session.open", { session_id: "held" })).result);
    const rival = createMemoryRuntime({ clock, livePids, pid: 5151, fs: run.runtime.fs });
    for (let step = 0; step < 10; step++) {
      clock.advance(15_000);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const attempt = await Lease.acquire(rival, leasePath(SESSIONS, "held", "writer"), { instanceId: "rival" });
    assert.deepEqual(attempt, { ok: false, code: "session_busy" });
    run.runtime.input.end();
    clock.advance(10_000);
    await run.exit;
  });
});
