import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryRuntime, ManualClock, type MemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { type FileSystem, type ReadHandle, RuntimeError } from "../src/host/runtime.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { SessionListing } from "../src/store/discovery/listing.ts";
import { CWD, listingFor, SESSIONS, sizedText, storedRecords, storedText, writeSession } from "./support/listing.ts";
import { driven, SlowStorage } from "./support/slow-storage.ts";

const never = new AbortController().signal;
const MiB = 1_048_576;

async function listed(runtime: MemoryRuntime, limit = 100): Promise<{ code: string } | { count: number; complete: boolean; bytes: number }> {
  const outcome = await (await listingFor(runtime)).list({ limit }, never);
  if (!outcome.ok) return { code: outcome.code };
  const page = outcome.result;
  return { count: page.sessions.length, complete: page.complete, bytes: new TextEncoder().encode(JSON.stringify(page)).length };
}

/** The ids a fresh listing shows and its notices, or its error code. */
async function listedIds(runtime: MemoryRuntime): Promise<{ code: string } | { ids: string[]; notices: string[] }> {
  const outcome = await (await listingFor(runtime)).list({}, never);
  return outcome.ok ? { ids: outcome.result.sessions.map((entry) => entry.session_id), notices: [...outcome.result.notices] } : { code: outcome.code };
}

/** A file system on which `closed*` histories cannot be opened and every read of a `failing*` one fails. */
class Unreliable extends MemoryFileSystem {
  override async openRead(path: string): Promise<ReadHandle> {
    if (path.includes("/closed")) throw new RuntimeError("permission", "open");
    const handle = await super.openRead(path);
    if (!path.includes("/failing")) return handle;
    return { ...handle, read: () => Promise.reject(new RuntimeError("io", "read")) };
  }
}

const id = (n: number) => `s${String(n).padStart(4, "0")}`;

/** A listing over `runtime` whose reads are watched: how far into each history they asked, and handles opened and closed. */
async function spiedReads(runtime: MemoryRuntime) {
  const furthest = new Map<string, number>();
  let opened = 0;
  let closed = 0;
  const openRead: FileSystem["openRead"] = async (path) => {
    const handle = await runtime.fs.openRead(path);
    opened++;
    const name = path.slice(SESSIONS.length + 1, -".jsonl".length);
    return {
      info: handle.info,
      stat: () => handle.stat(),
      close: () => (closed++, handle.close()),
      read: (buffer, position) => {
        furthest.set(name, Math.max(furthest.get(name) ?? 0, position + buffer.length));
        return handle.read(buffer, position);
      },
    };
  };
  // The memory file system keeps private state: every other call goes to it, bound.
  const fs = new Proxy(runtime.fs, {
    get: (target, key, receiver) => key === "openRead" ? openRead : Reflect.get(target, key, receiver)?.bind?.(target),
  });
  await runtime.fs.mkdir(SESSIONS, 0o700);
  const spied = Object.create(runtime, { fs: { value: fs } }) as MemoryRuntime;
  const listing = new SessionListing({ runtime: spied, directory: SESSIONS, cwd: CWD, secrets: [], attached: () => null });
  return { listing, furthest, opened: () => opened, closed: () => closed };
}

describe("session.list bounds, at and around each value", () => {
  it(`lists ${LIMITS.discovery_sessions} sessions; one more listed is discovery_limit, excluded ones do not count`, async () => {
    const runtime = createMemoryRuntime();
    for (let n = 0; n < LIMITS.discovery_sessions; n++) writeSession(runtime, id(n));
    for (let n = 0; n < 10; n++) writeSession(runtime, `other${n}`, { cwd: "/somewhere/else" });
    const first = await listed(runtime, 1) as { count: number; complete: boolean };
    assert.deepEqual([first.count, first.complete], [1, false]);
    writeSession(runtime, id(LIMITS.discovery_sessions));
    assert.deepEqual(await listed(runtime), { code: "discovery_limit" });
  });

  it(`counts every directory entry against ${LIMITS.discovery_directory_entries}, sidecars and leases included`, async () => {
    const runtime = createMemoryRuntime();
    writeSession(runtime, "only");
    for (let n = 1; n < LIMITS.discovery_directory_entries; n++) runtime.fs.writeFile(`${SESSIONS}/${id(n)}.meta.json`, "{}", 0o600);
    assert.equal((await listed(runtime) as { count: number }).count, 1);
    runtime.fs.writeFile(`${SESSIONS}/only.writer.lease`, "{}", 0o600);
    assert.deepEqual(await listed(runtime), { code: "discovery_limit" });
  });

  it("one history may hold 8 MiB and 10,000 lines; a byte or a line more is discovery_limit", async () => {
    for (
      const [bytes, lines, expected] of [
        [8 * MiB, 2, "ok"],
        [8 * MiB + 1, 2, "discovery_limit"],
        [1_200_000, LIMITS.discovery_session_lines, "ok"],
        [1_200_000, LIMITS.discovery_session_lines + 1, "discovery_limit"],
      ] as const
    ) {
      const runtime = createMemoryRuntime();
      runtime.fs.writeFile(`${SESSIONS}/big.jsonl`, sizedText("big", bytes, lines), 0o600);
      const outcome = await listed(runtime);
      assert.equal("code" in outcome ? outcome.code : "ok", expected, `${bytes} bytes, ${lines} lines`);
    }
  });

  it("a request reads at most 64 MiB and 100,000 lines in total; a byte or a line more is discovery_limit", async () => {
    const bytes = createMemoryRuntime();
    for (let n = 0; n < 8; n++) bytes.fs.writeFile(`${SESSIONS}/${id(n)}.jsonl`, sizedText(id(n), 8 * MiB, 2), 0o600);
    assert.equal((await listed(bytes) as { count: number }).count, 8);
    bytes.fs.writeFile(`${SESSIONS}/${id(9)}.jsonl`, "x", 0o600); // one torn byte
    assert.deepEqual(await listed(bytes), { code: "discovery_limit" });

    const lines = createMemoryRuntime();
    for (let n = 0; n < 10; n++) lines.fs.writeFile(`${SESSIONS}/${id(n)}.jsonl`, sizedText(id(n), 1_200_000, 10_000), 0o600);
    assert.equal((await listed(lines) as { count: number }).count, 10);
    lines.fs.writeFile(`${SESSIONS}/${id(10)}.jsonl`, sizedText(id(10), 300, 2), 0o600);
    assert.deepEqual(await listed(lines), { code: "discovery_limit" });
  });

  for (const bad of [8, 9, 64, 4_000]) {
    it(`${bad} tiny malformed histories and one valid: the valid one is listed, with sessions_omitted_invalid`, async () => {
      const runtime = createMemoryRuntime();
      for (let n = 0; n < bad; n++) runtime.fs.writeFile(`${SESSIONS}/bad${n}.jsonl`, n % 2 === 0 ? "x\n" : "{broken\n", 0o600);
      writeSession(runtime, "good");
      assert.deepEqual(await listedIds(runtime), { ids: ["good"], notices: ["sessions_omitted_invalid"] });
    });
  }

  it("a malformed history is charged every byte it holds, read to its end: at and around 64 MiB in total", async () => {
    const good = storedText(storedRecords("zz-good"));
    for (const [extra, expected] of [[0, "ok"], [1, "discovery_limit"]] as const) {
      const runtime = createMemoryRuntime();
      for (let n = 0; n < 7; n++) runtime.fs.writeFile(`${SESSIONS}/${id(n)}.jsonl`, sizedText(id(n), 8 * MiB, 2), 0o600);
      // A bad first line, then 8 MiB less good's bytes: good is admitted exactly its own size, or one byte less.
      runtime.fs.writeFile(`${SESSIONS}/${id(7)}.jsonl`, `x\n${sizedText(id(7), 8 * MiB - good.length - 2 + extra, 2)}`, 0o600);
      runtime.fs.writeFile(`${SESSIONS}/zz-good.jsonl`, good, 0o600);
      const outcome = await listedIds(runtime);
      assert.equal("code" in outcome ? outcome.code : outcome.ids.length, expected === "ok" ? 8 : expected, `${extra} over`);
    }
  });

  it("a malformed history is charged every line it holds, read to its end: at and around 100,000 lines in total", async () => {
    for (const [extra, expected] of [[0, "ok"], [1, "discovery_limit"]] as const) {
      const runtime = createMemoryRuntime();
      // Nine bad histories of 10,000 lines, then 10,000 less good's lines: good is admitted exactly its own lines, or one less.
      const lines = storedRecords("zz-good").length;
      for (let n = 0; n < 10; n++) runtime.fs.writeFile(`${SESSIONS}/bad${n}.jsonl`, "x\n".repeat(n < 9 ? 10_000 : 10_000 - lines + extra), 0o600);
      writeSession(runtime, "zz-good");
      const outcome = await listedIds(runtime);
      assert.deepEqual("code" in outcome ? outcome.code : outcome.ids, expected === "ok" ? ["zz-good"] : expected, `${extra} over`);
    }
  });

  it("a history that cannot be opened costs nothing, nor one refused on its lstat; one whose read fails is charged its whole admission", async () => {
    const runtime = createMemoryRuntime({ fs: new Unreliable() });
    for (let n = 0; n < 50; n++) runtime.fs.writeFile(`${SESSIONS}/closed${n}.jsonl`, storedText(storedRecords(`closed${n}`)), 0o600);
    for (let n = 0; n < 50; n++) runtime.fs.writeFile(`${SESSIONS}/open${n}.jsonl`, "{}\n", 0o666);
    for (let n = 0; n < 7; n++) runtime.fs.writeFile(`${SESSIONS}/failing${n}.jsonl`, storedText(storedRecords(`failing${n}`)), 0o600);
    writeSession(runtime, "good");
    assert.deepEqual(await listedIds(runtime), { ids: ["good"], notices: ["sessions_omitted_invalid"] }, "7 × 8 MiB charged leaves 8 MiB");
    runtime.fs.writeFile(`${SESSIONS}/failing7.jsonl`, storedText(storedRecords("failing7")), 0o600);
    assert.deepEqual(await listedIds(runtime), { code: "discovery_limit" }, "8 × 8 MiB charged leaves nothing for good.jsonl");
  });

  it("histories read ahead never ask for more than their own admission and one byte", async () => {
    const runtime = createMemoryRuntime();
    const sizes = new Map<string, number>();
    const store = (name: string, text: string) => {
      runtime.fs.writeFile(`${SESSIONS}/${name}.jsonl`, text, 0o600);
      sizes.set(name, text.length);
    };
    for (let n = 0; n < 6; n++) store(id(n), sizedText(id(n), 8 * MiB, 2));
    store(id(6), `x\n${sizedText(id(6), 8 * MiB - 2, 2)}`); // malformed, charged the 8 MiB it holds
    store(id(7), sizedText(id(7), 8 * MiB - 1_000, 2));
    store(id(8), sizedText(id(8), 500, 2)); // admitted the last 1,000 bytes
    const spy = await spiedReads(runtime);
    const outcome = await spy.listing.list({}, never);
    assert.equal(outcome.ok && outcome.result.sessions.length, 8, JSON.stringify(outcome).slice(0, 200));
    let left = LIMITS.discovery_scan_bytes;
    for (const [name, size] of sizes) {
      const admitted = Math.min(LIMITS.discovery_session_bytes, left);
      assert.ok((spy.furthest.get(name) ?? 0) <= admitted + 1, `${name} read to ${spy.furthest.get(name)} of ${admitted} admitted`);
      left -= size;
    }
  });

  it("a listing that ends early closes the histories it opened ahead", async () => {
    const runtime = createMemoryRuntime();
    for (let n = 0; n < 10; n++) writeSession(runtime, id(n));
    runtime.fs.writeFile(`${SESSIONS}/${id(3)}.jsonl`, sizedText(id(3), 8 * MiB + 1, 2), 0o600);
    const spy = await spiedReads(runtime);
    assert.deepEqual(await spy.listing.list({}, never), { ok: false, code: "discovery_limit" });
    // Closes behind and releases run after the answer: give them a few turns.
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
    assert.ok(spy.opened() > 4, `${spy.opened()} opened`);
    assert.equal(spy.closed(), spy.opened());
  });

  it(`pages fit ${LIMITS.discovery_page_bytes} serialized bytes, holding fewer than the limit when titles are long`, async () => {
    const runtime = createMemoryRuntime();
    for (let n = 0; n < 120; n++) writeSession(runtime, `${"x".repeat(59)}${String(n).padStart(5, "0")}`, { title: "\"😀".repeat(25), cwd: null });
    const page = await listed(runtime) as { count: number; bytes: number; complete: boolean };
    assert.ok(page.count < 100 && page.count > 0, `${page.count} entries`);
    assert.ok(page.bytes <= LIMITS.discovery_page_bytes, `${page.bytes} bytes`);
    assert.equal(page.complete, false);
  });
});

describe("session.list deadline", () => {
  for (const [files, expected] of [[4, "ok"], [5, "discovery_limit"]] as const) {
    it(`${files} opens of 500 ms: ${files * 500} ms elapsed is ${expected}`, async () => {
      const clock = new ManualClock();
      const runtime = createMemoryRuntime({ clock, fs: new SlowStorage(clock, 500) });
      for (let n = 0; n < files; n++) writeSession(runtime, id(n));
      const outcome = await driven(clock, listed(runtime));
      assert.equal("code" in outcome ? outcome.code : "ok", expected);
    });
  }
});
