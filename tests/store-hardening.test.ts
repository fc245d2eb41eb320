import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { RuntimeError } from "../src/host/runtime.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { configuredSecrets } from "../src/config/providers.ts";
import { isLeaseStale } from "../src/store/lease-file.ts";
import { Lease, leasePath } from "../src/store/leases.ts";
import { projectHistory, type ProjectionRecord } from "../src/store/projection.ts";
import { nestingDepth } from "../src/store/record-fields.ts";
import { parseRecordLine } from "../src/store/record-lines.ts";
import { encodeRecord, type SessionRecord } from "../src/store/records.ts";
import { utf8ByteCount } from "../src/util/utf8.ts";
import { initLine, line, type Run, startServer } from "./support/harness.ts";

const at = "2026-11-29T10:00:00.000Z";
const SESSIONS = "/home/user/.magi-code/sessions";

async function call(run: Run, id: string, method: string, params: Record<string, unknown> = {}) {
  const before = run.frames().length;
  run.runtime.input.push(line(id, method, params));
  const frames = await run.waitFrames(before + 1);
  return frames.find((frame) => frame.id === id)!;
}

describe("session store hardening", () => {
  it("a child whose writer lease was taken over as stale cannot reopen the session as its own", async () => {
    const run = startServer();
    const records: SessionRecord[] = [{ v: 1, type: "session", session_id: "s", at, created_at: at, cwd: "/work/project" }];
    run.runtime.fs.writeFile(`${SESSIONS}/s.jsonl`, records.map((r) => new TextDecoder().decode(encodeRecord(r)!)).join(""), 0o600);
    run.runtime.input.push(initLine("i", ["session.open"]));
    await run.waitFrames(1);
    assert.ok((await call(run, "o1", "session.open", { session_id: "s" })).result);
    // Another child on this host took the lease over (as it would after this child stalled past 60 s).
    const path = leasePath(SESSIONS, "s", "writer");
    await run.runtime.fs.unlink(path);
    run.runtime.livePids.add(5151);
    const rival = createMemoryRuntime({ pid: 5151, fs: run.runtime.fs, livePids: run.runtime.livePids });
    assert.equal((await Lease.acquire(rival, path, { instanceId: "rival" })).ok, true);
    assert.equal((await call(run, "o2", "session.open", { session_id: "s" })).error?.code, "session_busy");
    run.runtime.input.end();
    await run.exit;
  });

  it("a reopen whose lease check failed once keeps one owner: the old attachment's release leaves the new one's lease", async () => {
    /** Fails the next readFile of `failNext` once, as a transient read error would. */
    class FlakyReads extends MemoryFileSystem {
      failNext = "";
      override readFile(path: string, maxBytes: number): Promise<Uint8Array> {
        if (path !== this.failNext) return super.readFile(path, maxBytes);
        this.failNext = "";
        return Promise.reject(new RuntimeError("io", "readFile"));
      }
    }
    const fs = new FlakyReads();
    const run = startServer({ fs });
    const records: SessionRecord[] = [{ v: 1, type: "session", session_id: "s", at, created_at: at, cwd: "/work/project" }];
    fs.writeFile(`${SESSIONS}/s.jsonl`, records.map((r) => new TextDecoder().decode(encodeRecord(r)!)).join(""), 0o600);
    run.runtime.input.push(initLine("i", ["session.open"]));
    await run.waitFrames(1);
    assert.ok((await call(run, "o1", "session.open", { session_id: "s" })).result);
    const path = leasePath(SESSIONS, "s", "writer");
    fs.failNext = path;
    const retried = await call(run, "o2", "session.open", { session_id: "s" });
    // The failed read may refuse this reopen (a failed open keeps the previous attachment) or not.
    assert.ok(retried.result !== undefined || retried.error?.code === "session_busy", JSON.stringify(retried.error));
    assert.ok(fs.exists(path), "the attached session still holds its writer lease");
    assert.ok((await call(run, "o3", "session.open", { session_id: "s" })).result);
    assert.ok(fs.exists(path), "and still does after another reopen");
    run.runtime.livePids.add(5151);
    const rival = createMemoryRuntime({ pid: 5151, fs, livePids: run.runtime.livePids });
    assert.equal((await Lease.acquire(rival, path, { instanceId: "rival" })).ok, false, "so no other child can take it");
    run.runtime.input.end();
    await run.exit;
  });

  it("parseRecordLine() refuses a deeply nested line without building it, and nestingDepth() skips strings", () => {
    const deep = `{"v":1,"x":${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}}`;
    assert.deepEqual(parseRecordLine(deep, "s"), { ok: false });
    assert.equal(nestingDepth('{"text":"{[ not nested ]}","q":"\\"{"}', 16), 1);
    assert.equal(nestingDepth('{"a":{"b":1}}', 16), 2);
    assert.equal(nestingDepth('{"a":[1],"b":[[]]}', 16), 3);
    assert.equal(nestingDepth(deep, 16), 17, "counted no further than one past the limit");
  });

  it("projectHistory() refuses a message text over the snapshot bound before redacting it", () => {
    const huge = "word ".repeat(Math.ceil(LIMITS.history_snapshot_bytes / 5) + 1);
    const records: ProjectionRecord[] = [
      { type: "turn_started", turn_id: "t" } as ProjectionRecord,
      { type: "user_input", turn_id: "t", message_id: "u", text: huge } as ProjectionRecord,
      { type: "turn_finished", turn_id: "t", outcome: "completed" } as ProjectionRecord,
    ];
    assert.deepEqual(projectHistory(records, { torn: false, secrets: [] }), { ok: false, code: "history_limit" });
  });

  it("projectHistory() keeps activity and diagnostic summaries within 1,024 bytes after redaction", () => {
    const secret = "k9k9k9k9";
    const summary = `${secret} `.repeat(113).slice(0, 1_017);
    const records = [
      { type: "turn_started", turn_id: "t" },
      { type: "activity", turn_id: "t", activity_id: "a", kind: "tool", name: "shell", state: "completed", summary },
      { type: "diagnostic", turn_id: "t", code: "x", summary: "é".repeat(3_000) },
      { type: "turn_finished", turn_id: "t", outcome: "completed" },
    ] as ProjectionRecord[];
    const result = projectHistory(records, { torn: false, secrets: [secret] });
    assert.ok(result.ok);
    for (const entry of result.snapshot.entries) {
      assert.ok(utf8ByteCount(entry.text) <= LIMITS.summary_bytes, `${entry.kind}: ${utf8ByteCount(entry.text)} bytes`);
      assert.ok(!entry.text.includes(secret));
    }
  });

  it("isLeaseStale() treats a heartbeat far in the future like an old one", () => {
    const body = { v: 1, pid: 1, instance_id: "x", host: "elsewhere", acquired_at: at, heartbeat_at: "2099-01-01T00:00:00.000Z" };
    assert.equal(isLeaseStale({ state: "parsed", body } as never, Date.parse(at), () => true, "here"), true);
    const fresh = { ...body, heartbeat_at: at };
    assert.equal(isLeaseStale({ state: "parsed", body: fresh } as never, Date.parse(at) + 59_000, () => true, "here"), false);
  });

  it("configuredSecrets() also lists the trimmed key a provider would receive", () => {
    const secrets = configuredSecrets({ model: { provider: "anthropic" } }, (name) =>
      name === "ANTHROPIC_API_KEY" ? "  SECRETVALUE99 " : undefined, new Map());
    assert.ok(secrets.includes("SECRETVALUE99"));
  });
});
