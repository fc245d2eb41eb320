import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { CWD, listingFor, SESSIONS, storedRecords, storedText, writeSession } from "./support/listing.ts";
import { line, type Run, startServer } from "./support/harness.ts";

const ALL = ["session.list", "session.create", "session.open", "status", "shutdown"];

async function ready(run: Run): Promise<void> {
  assert.ok((await call(run, "init", "initialize", { required_capabilities: ALL })).result, "initialize succeeded");
}

async function call(run: Run, id: string, method: string, params: Record<string, unknown> = {}) {
  const before = run.frames().length;
  run.runtime.input.push(line(id, method, params));
  for (;;) {
    const frames = await run.waitFrames(before + 1);
    const response = frames.find((frame) => frame.id === id);
    if (response) return response;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

type Page = { revision: string; sessions: Record<string, unknown>[]; next_cursor: string | null; complete: boolean; notices: string[] };
const ok = (result: { ok: boolean; result?: unknown; code?: string }): Page => {
  assert.ok(result.ok, `listing failed: ${result.code}`);
  return result.result as Page;
};
const never = new AbortController().signal;

describe("session.list over the protocol", () => {
  it("is advertised, gated like the other session operations, and strict about its params", async () => {
    const run = startServer();
    assert.equal((await call(run, "early", "session.list")).error?.code, "not_initialized");
    await ready(run);
    for (
      const [id, params] of [
        ["p1", { revision: "r" }],
        ["p2", { cursor: "p1.x" }],
        ["p3", { revision: null, cursor: "c" }],
        ["p4", { limit: 0 }],
        ["p5", { limit: 101 }],
        ["p6", { limit: 1.5 }],
        ["p7", { limit: "1" }],
        ["p8", { extra: true }],
        ["p9", { revision: "x".repeat(65), cursor: "c" }],
        ["p10", { revision: "bad id", cursor: "c" }],
      ] as const
    ) {
      assert.equal((await call(run, id, "session.list", params)).error?.code, "invalid_params", JSON.stringify(params));
    }
    const empty = await call(run, "l1", "session.list", { revision: null, cursor: null, limit: 100 });
    assert.deepEqual({ ...empty.result, revision: "…" }, { revision: "…", sessions: [], next_cursor: null, complete: true, notices: [] });
    assert.match(empty.result!.revision as string, /^[A-Za-z0-9._-]{1,64}$/);
    run.runtime.input.end();
    await run.exit;
  });

  it("lists in ascending id order, pages with limit 1, and continues only on its own revision and cursor", async () => {
    const run = startServer();
    for (const id of ["b", "C", "a-1", "a_0", "Z9"]) writeSession(run.runtime, id);
    await ready(run);
    const seen: string[] = [];
    let page = (await call(run, "l0", "session.list", { limit: 1 })).result as Page;
    const revision = page.revision;
    for (let n = 1; ; n++) {
      assert.equal(page.sessions.length, 1);
      seen.push(page.sessions[0]!.session_id as string);
      assert.equal(page.revision, revision);
      if (page.next_cursor === null) break;
      assert.equal(page.complete, false);
      page = (await call(run, `l${n}`, "session.list", { revision, cursor: page.next_cursor, limit: 1 })).result as Page;
    }
    assert.equal(page.complete, true);
    assert.deepEqual(seen, ["C", "Z9", "a-1", "a_0", "b"]);
    const first = (await call(run, "again", "session.list", { limit: 2 })).result as Page;
    assert.notEqual(first.revision, revision, "a fresh listing is a new snapshot");
    assert.equal((await call(run, "old", "session.list", { revision, cursor: first.next_cursor })).error?.code, "stale_revision");
    assert.equal((await call(run, "forged", "session.list", { revision: first.revision, cursor: "p1.00000000000000" })).error?.code, "stale_revision");
    const next = await call(run, "next", "session.list", { revision: first.revision, cursor: first.next_cursor, limit: 100 });
    assert.deepEqual((next.result as Page).sessions.map((entry) => entry.session_id), ["a-1", "a_0", "b"]);
    run.runtime.input.end();
    await run.exit;
  });

  it("a second session operation while a listing runs is busy, and the attached session is available to its own child", async () => {
    const run = startServer();
    writeSession(run.runtime, "mine");
    writeSession(run.runtime, "theirs");
    run.runtime.fs.writeFile(`${SESSIONS}/theirs.active.lease`, "not even json", 0o600);
    await ready(run);
    assert.ok((await call(run, "o", "session.open", { session_id: "mine" })).result);
    run.runtime.input.push(line("l1", "session.list") + line("l2", "session.list") + line("s", "status"));
    const frames = await run.waitFrames(run.frames().length + 3);
    const byId = (id: string) => frames.find((frame) => frame.id === id)!;
    assert.equal(byId("l2").error?.code, "busy");
    assert.ok(byId("s").result);
    const listed = (await (async () => {
      for (;;) {
        const found = run.frames().find((frame) => frame.id === "l1");
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    })()).result as Page;
    assert.deepEqual(listed.sessions.map((entry) => [entry.session_id, entry.eligibility]), [["mine", "available"], ["theirs", "busy"]]);
    run.runtime.input.end();
    await run.exit;
  });
});

describe("session.list entries", () => {
  it("applies the all-recorded-cwd rule of session.open: other workspaces and relative cwds excluded, legacy unverified", async () => {
    const runtime = createMemoryRuntime();
    writeSession(runtime, "here");
    writeSession(runtime, "elsewhere", { cwd: "/other/workspace" });
    writeSession(runtime, "relative", { cwd: "work/project" });
    writeSession(runtime, "legacy", { cwd: null });
    runtime.fs.symlink(CWD, "/work/alias");
    writeSession(runtime, "aliased", { cwd: "/work/alias" });
    const page = ok(await (await listingFor(runtime)).list({}, never));
    assert.deepEqual(page.sessions.map((entry) => [entry.session_id, entry.eligibility, entry.notices]), [
      ["aliased", "available", []],
      ["here", "available", []],
      ["legacy", "cwd_unverified", ["cwd_unverified"]],
    ]);
    assert.deepEqual(page.notices, [], "an excluded session is not an invalid one");
  });

  it("omits unsafe, unreadable and malformed histories with one notice, and never lists subagent, archive or lease files", async () => {
    const runtime = createMemoryRuntime();
    writeSession(runtime, "good");
    writeSession(runtime, "shared", {}, 0o666);
    runtime.fs.symlink(`${SESSIONS}/good.jsonl`, `${SESSIONS}/link.jsonl`);
    runtime.fs.mkfifo(`${SESSIONS}/pipe.jsonl`);
    runtime.fs.writeFile(`${SESSIONS}/broken.jsonl`, "{not json}\n", 0o600);
    runtime.fs.writeFile(`${SESSIONS}/foreign.jsonl`, storedText(storedRecords("someone-else")), 0o600);
    runtime.fs.writeFile(`${SESSIONS}/good.jsonl.bak`, "junk", 0o600);
    runtime.fs.writeFile(`${SESSIONS}/subagents/child.jsonl`, storedText(storedRecords("child")), 0o600);
    runtime.fs.writeFile(`${SESSIONS}/archive/old.jsonl`, storedText(storedRecords("old")), 0o600);
    runtime.fs.writeFile(`${SESSIONS}/good.meta.json`, "{}", 0o600);
    runtime.fs.writeFile(`${SESSIONS}/good.writer.lease.abc.tmp`, "{}", 0o600);
    const page = ok(await (await listingFor(runtime)).list({}, never));
    assert.deepEqual(page.sessions.map((entry) => entry.session_id), ["good"]);
    assert.deepEqual(page.notices, ["sessions_omitted_invalid"]);
  });

  it("updated_at is the greatest durable timestamp; an empty history has none", async () => {
    const runtime = createMemoryRuntime();
    writeSession(runtime, "s", { at: "2026-03-01T10:00:00.000Z", lastAt: "2026-03-02T11:30:00.250Z" });
    const backwards = storedRecords("t", { at: "2026-05-05T00:00:00.000Z", lastAt: "2026-01-01T00:00:00.000Z" });
    runtime.fs.writeFile(`${SESSIONS}/t.jsonl`, storedText(backwards), 0o600);
    runtime.fs.writeFile(`${SESSIONS}/u.jsonl`, "", 0o600);
    const page = ok(await (await listingFor(runtime)).list({}, never));
    assert.deepEqual(page.sessions.map((entry) => [entry.session_id, entry.updated_at, entry.eligibility]), [
      ["s", "2026-03-02T11:30:00.250Z", "available"],
      ["t", "2026-05-05T00:00:00.000Z", "available"],
      ["u", null, "cwd_unverified"],
    ]);
  });

  it("titles come only from title metadata: sanitized, cut to 50 characters, null when unsafe or over 256 bytes", async () => {
    const runtime = createMemoryRuntime();
    const secret = "sk-live-0123456789abcdef";
    const cases: [string, string | undefined, string | null][] = [
      ["a-none", undefined, null],
      ["b-plain", "Refactor the parser", "Refactor the parser"],
      ["c-folded", "  Two\n\tlines\u0007 here  ", "Two lines here"],
      ["d-long", "é".repeat(60), `${"é".repeat(49)}…`],
      ["e-256", "x".repeat(256), `${"x".repeat(49)}…`],
      ["f-257", "x".repeat(257), null],
      ["g-bytes", "€".repeat(86), null],
      ["h-secret", `deploy with ${secret}`, null],
      ["i-blank", " \n ", null],
      ["j-surrogate", "bad \ud800 title", null],
    ];
    for (const [id, title] of cases) writeSession(runtime, id, { ...(title === undefined ? {} : { title }), prompt: "A prompt is never a title" });
    const compacted = [...storedRecords("k-compaction"), { v: 1, type: "compaction", session_id: "k-compaction", at: "2026-01-02T00:00:00.000Z", turn_id: "t0", summary: "s", title: "From compaction" }] as const;
    runtime.fs.writeFile(`${SESSIONS}/k-compaction.jsonl`, storedText([...compacted]), 0o600);
    const page = ok(await (await listingFor(runtime, () => null, [secret])).list({}, never));
    assert.deepEqual(page.sessions.map((entry) => entry.title), [...cases.map(([, , expected]) => expected), "From compaction"]);
  });
});
