import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { createSha256 } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { nodeFileSystem } from "../runtime/node-runtime.ts";
import { ErrorCode } from "../src/protocol/errors.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { type FileSystem, RuntimeError } from "../src/host/runtime.ts";
import { SessionAppender } from "../src/store/appender.ts";
import { encodeRecord, type SessionRecord } from "../src/store/records.ts";
import { readSessionFile, type ReadSessionOptions, type ReadSessionResult } from "../src/store/session-file.ts";
import { sha256Hex } from "../src/util/digest.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { guarded } from "./support/hang-guard.ts";
import { buildSession, concatBytes, encodeAll, realisticTextArb, type TurnTexts } from "./support/records.ts";

const isDeno = "Deno" in globalThis;
// A computed specifier keeps tsc (which builds the Node side) away from the Deno-only adapter.
const denoAdapter = "../runtime/deno-runtime.ts";
const deno = isDeno ? await import(denoAdapter) as { denoFileSystem: FileSystem } : null;

const SID = "0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const PATH = `/home/.mc/sessions/${SID}.jsonl`;
const LF = 0x0a;

function options(overrides: Partial<ReadSessionOptions> = {}): ReadSessionOptions {
  return {
    maxBytes: LIMITS.stored_history_bytes,
    maxLines: LIMITS.stored_history_lines,
    signal: new AbortController().signal,
    createSha256,
    ...overrides,
  };
}

function read(fs: FileSystem, overrides: Partial<ReadSessionOptions> = {}, path = PATH): Promise<ReadSessionResult> {
  return readSessionFile(fs, path, SID, options(overrides));
}

const TURNS: TurnTexts[] = [
  { prompt: "List the files 📁", reply: 'Here: "a.ts"\n\t- b.ts 😀', summary: "read 2 files" },
  { prompt: "Explain ß and 𝄞", reply: "\u2028 línea\\n \u0000", summary: "ok" },
];

/** `memory` with some operations replaced; the rest stay bound to it (its private state needs the real `this`). */
function wrap(memory: MemoryFileSystem, overrides: Partial<FileSystem>): FileSystem {
  const methods = ["lstat", "stat", "realpath", "readDir", "mkdir", "readFile", "openRead", "createExclusive", "openAppend", "rename", "unlink"] as const;
  const bound = Object.fromEntries(methods.map((name) => [name, (memory[name] as (...args: never[]) => unknown).bind(memory)]));
  return { ...(bound as unknown as FileSystem), ...overrides };
}

function fileWith(bytes: Uint8Array | string, mode = 0o600): MemoryFileSystem {
  const fs = new MemoryFileSystem();
  fs.writeFile(PATH, bytes, mode);
  return fs;
}

const finished = (turn: string, seconds = 999): SessionRecord => ({
  v: 1,
  type: "turn_finished",
  session_id: SID,
  at: new Date(Date.UTC(2025, 0, 2) + seconds * 1000).toISOString(),
  turn_id: turn,
  outcome: "cancelled",
  error_code: null,
});

describe("readSessionFile() on the memory filesystem", () => {
  it("readSessionFile() reads a realistic session with its identity, intact length and digest", async () => {
    const records = buildSession(SID, TURNS);
    const bytes = encodeAll(records);
    const fs = fileWith(bytes);
    const result = await read(fs);
    assert.ok(result.ok);
    assert.deepEqual(result.records, records);
    assert.equal(result.intactLength, bytes.length);
    assert.equal(result.torn, false);
    const info = await fs.lstat(PATH);
    assert.deepEqual(result.identity, { dev: info.dev, ino: info.ino, size: bytes.length, mtimeMs: info.mtimeMs });
    assert.equal(result.digest, await sha256Hex(bytes));
  });

  it("readSessionFile() reports session_missing for a missing path and accepts an empty file", async () => {
    assert.deepEqual(await read(new MemoryFileSystem()), { ok: false, code: ErrorCode.sessionMissing });
    const empty = await read(fileWith(""));
    assert.ok(empty.ok);
    assert.deepEqual([empty.records, empty.intactLength, empty.torn], [[], 0, false]);
    assert.equal(empty.digest, await sha256Hex(new Uint8Array(0)));
  });

  it("readSessionFile() requires exactly one session record, first", async () => {
    const records = buildSession(SID, TURNS);
    assert.deepEqual(await read(fileWith(encodeAll(records.slice(1)))), { ok: false, code: ErrorCode.sessionInvalid });
    assert.deepEqual(await read(fileWith(encodeAll([...records, records[0]!]))), { ok: false, code: ErrorCode.sessionInvalid });
    assert.equal((await read(fileWith(encodeAll(records.slice(0, 1))))).ok, true);
  });

  it("readSessionFile() skips ignorable records it does not understand: lines and digest count them, retain sees their time, records leave them out", async () => {
    const records = buildSession(SID, TURNS);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: records.length }), { maxLength: 6 }), async (positions) => {
        const skipped = (index: number) => ({ v: 2, type: "tool_card", session_id: SID, at: `2030-01-0${1 + (index % 9)}T00:00:00.000Z`, ignorable: true, card: { rows: [[index]] } });
        const lines: (SessionRecord | ReturnType<typeof skipped>)[] = [...records];
        positions.forEach((position, index) => lines.splice(Math.min(position, lines.length), 0, skipped(index)));
        const bytes = concatBytes(lines.map((line) => `${JSON.stringify(line)}\n`));
        const seen: (string | null)[] = [];
        const result = await read(fileWith(bytes), { retain: (record) => (seen.push(record.type === null ? record.at : null), true) });
        assert.ok(result.ok);
        assert.deepEqual(result.records, records);
        assert.equal(result.lines, lines.length);
        assert.equal(result.intactLength, bytes.length);
        assert.equal(result.digest, await sha256Hex(bytes));
        assert.deepEqual(seen, lines.map((line) => line.v === 2 ? line.at : null));
      }),
      { numRuns: fuzzRuns(30) },
    );
    const first = concatBytes([`${JSON.stringify({ v: 2, type: "tool_card", session_id: SID, at: "2030-01-01T00:00:00.000Z", ignorable: true })}\n`, encodeAll(records)]);
    assert.deepEqual(await read(fileWith(first)), { ok: false, code: ErrorCode.sessionInvalid }, "the session record stays first");
  });

  it("readSessionFile() refuses a symlink, a FIFO, a directory and a group- or world-writable file", async () => {
    const bytes = encodeAll(buildSession(SID, TURNS));
    const fs = new MemoryFileSystem();
    fs.writeFile("/elsewhere/target.jsonl", bytes, 0o600);
    fs.symlink("/elsewhere/target.jsonl", PATH);
    assert.deepEqual(await read(fs), { ok: false, code: ErrorCode.sessionInvalid });
    const fifo = new MemoryFileSystem();
    fifo.mkfifo(PATH);
    assert.deepEqual(await read(fifo), { ok: false, code: ErrorCode.sessionInvalid });
    const directory = new MemoryFileSystem();
    await directory.mkdir(PATH, 0o700);
    assert.deepEqual(await read(directory), { ok: false, code: ErrorCode.sessionInvalid });
    for (const mode of [0o620, 0o602, 0o666, 0o622]) {
      assert.deepEqual(await read(fileWith(bytes, mode)), { ok: false, code: ErrorCode.sessionInvalid }, mode.toString(8));
    }
    for (const mode of [0o600, 0o644, 0o400]) assert.equal((await read(fileWith(bytes, mode))).ok, true, mode.toString(8));
  });

  it("readSessionFile() refuses a file swapped between lstat and open, and a failing platform call", async () => {
    const bytes = encodeAll(buildSession(SID, TURNS));
    const memory = fileWith(bytes);
    const swapping = wrap(memory, {
      lstat: async (path: string) => {
        const info = await memory.lstat(path);
        memory.writeFile(PATH, bytes, 0o600); // same bytes, new inode
        return info;
      },
    });
    assert.deepEqual(await read(swapping), { ok: false, code: ErrorCode.sessionInvalid });
    const faulty = fileWith(bytes);
    faulty.faults.set(PATH, "io");
    assert.deepEqual(await read(faulty), { ok: false, code: ErrorCode.sessionInvalid });
  });

  it("readSessionFile() reports a torn tail at every offset inside the last record, and the appender repairs it", async () => {
    const encoder = new TextEncoder();
    const turnArb = fc.record({ prompt: realisticTextArb, reply: realisticTextArb, summary: realisticTextArb });
    const garbageArb = fc.array(fc.uint8Array({ minLength: 1, maxLength: 24 }).map((bytes) => bytes.map((b) => (b === LF ? 0xff : b))), {
      minLength: 1,
      maxLength: 4,
    });
    await fc.assert(
      fc.asyncProperty(fc.array(turnArb, { minLength: 1, maxLength: 3 }), garbageArb, async (turns, garbage) => {
        const records = buildSession(SID, turns);
        const full = encodeAll(records);
        const lastStart = full.length - encodeRecord(records.at(-1)!)!.length;
        const prefix = records.slice(0, -1);
        for (let cut = lastStart; cut < full.length; cut++) {
          for (const tail of [new Uint8Array(0), garbage[cut % garbage.length]!]) {
            const fs = fileWith(concatBytes([full.subarray(0, cut), tail]));
            const result = await read(fs);
            assert.ok(result.ok, `offset ${cut}`);
            assert.deepEqual(result.records, prefix);
            assert.equal(result.intactLength, lastStart);
            assert.equal(result.torn, cut > lastStart || tail.length > 0);
            assert.equal(result.identity.size, cut + tail.length);
            assert.equal(result.digest, await sha256Hex(full.subarray(0, lastStart)));

            const opened = await SessionAppender.open(fs, PATH, SID, { create: false, expectedIntactLength: result.intactLength });
            assert.ok(opened.ok);
            const added = finished(`turn-${turns.length - 1}`);
            assert.deepEqual(await opened.appender.appendAll([added]), { ok: true });
            await opened.appender.close();
            const after = await read(fs);
            assert.ok(after.ok);
            assert.deepEqual(after.records, [...prefix, added]);
            assert.equal(after.torn, false);
            assert.deepEqual(fs.contents(PATH), concatBytes([full.subarray(0, lastStart), encoder.encode(`${JSON.stringify(added)}\n`)]));
          }
        }
        const whole = await read(fileWith(full));
        assert.ok(whole.ok && !whole.torn && whole.records.length === records.length);
      }),
      { numRuns: fuzzRuns(6, 200) },
    );
  });

  it("readSessionFile() refuses a bad line before the tail but reports the same line unterminated as torn", async () => {
    const records = buildSession(SID, TURNS);
    const good = records.map((record) => encodeRecord(record)!);
    const json = (fields: Record<string, unknown>) => `${JSON.stringify({ ...records[3], ...fields })}`;
    const bad: [string, Uint8Array | string][] = [
      ["mismatched session_id", json({ session_id: "another-session" })],
      ["unknown type", json({ type: "tool_output" })],
      ["wrong v", json({ v: 2 })],
      ["schema failure", json({ text: 42 })],
      ["extra field outside the name grammar", json({ Raw: "provider payload" })],
      ["ignorable session record", json({ v: 2, type: "session", ignorable: true })],
      ["ignorable record of another session", json({ v: 2, type: "tool_card", ignorable: true, session_id: "another-session" })],
      ["invalid JSON", "{not json"],
      ["empty line", ""],
      ["an array", "[]"],
      ["invalid UTF-8", new Uint8Array([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d])],
      ["encoded surrogate", concatBytes([json({ text: "x" }).slice(0, -3), new Uint8Array([0xed, 0xa0, 0x80]), '"}'])],
      ["BOM", `\ufeff${json({})}`],
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...bad), fc.integer({ min: 1, max: good.length - 1 }), async ([label, line], index) => {
        const middle = concatBytes([...good.slice(0, index), line, "\n", ...good.slice(index)]);
        assert.deepEqual(await read(fileWith(middle)), { ok: false, code: ErrorCode.sessionInvalid }, `${label} in the middle`);
        const last = concatBytes([...good.slice(0, index), line, "\n"]);
        assert.deepEqual(await read(fileWith(last)), { ok: false, code: ErrorCode.sessionInvalid }, `${label} as last line`);
        const torn = await read(fileWith(concatBytes([...good.slice(0, index), line])));
        assert.ok(torn.ok, `${label} as fragment`);
        assert.deepEqual([torn.records, torn.torn], [records.slice(0, index), typeof line === "string" ? line.length > 0 : true]);
      }),
      { numRuns: fuzzRuns(60) },
    );
  });

  it("readSessionFile() admits exactly maxLines lines and refuses maxLines + 1 with history_limit", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 40 }), fc.boolean(), async (maxLines, fragment) => {
        const records = [buildSession(SID, [])[0]!, ...Array.from({ length: maxLines }, (_, i) => finished(`t${i}`, i))];
        const bytes = encodeAll(records);
        const exact = concatBytes([encodeAll(records.slice(0, maxLines)), fragment ? "{\"v\":1" : ""]);
        const ok = await read(fileWith(exact), { maxLines });
        assert.ok(ok.ok);
        assert.equal(ok.records.length, maxLines);
        assert.equal(ok.torn, fragment);
        assert.deepEqual(await read(fileWith(bytes), { maxLines }), { ok: false, code: ErrorCode.historyLimit });
      }),
      { numRuns: fuzzRuns(30, 4) },
    );
  });

  it("readSessionFile() admits exactly maxBytes bytes and refuses maxBytes + 1 with history_limit", async () => {
    const bytes = encodeAll(buildSession(SID, TURNS));
    for (const extra of [0, 1, 7]) {
      const file = concatBytes([bytes, "x".repeat(extra)]);
      const ok = await read(fileWith(file), { maxBytes: file.length });
      assert.ok(ok.ok);
      assert.equal(ok.torn, extra > 0);
      assert.deepEqual(await read(fileWith(file), { maxBytes: file.length - 1 }), { ok: false, code: ErrorCode.historyLimit });
    }
  });

  it("readSessionFile() stops reading at the first byte over maxBytes even when fstat under-reports the size", async () => {
    const bytes = encodeAll(buildSession(SID, TURNS));
    const memory = fileWith(bytes);
    let served = 0;
    const lying = wrap(memory, {
      openRead: async (path: string) => {
        const handle = await memory.openRead(path);
        return {
          info: { ...handle.info, size: 0 },
          stat: async () => ({ ...(await handle.stat()), size: 0 }),
          read: async (buffer: Uint8Array, position: number) => {
            const count = await handle.read(buffer, position);
            served += count;
            return count;
          },
          close: () => handle.close(),
        };
      },
    });
    const maxBytes = 100;
    assert.deepEqual(await read(lying, { maxBytes }), { ok: false, code: ErrorCode.historyLimit });
    assert.ok(served <= maxBytes + 1, `read ${served} bytes`);
    served = 0;
    assert.equal((await read(lying)).ok, true);
    assert.equal(served, bytes.length);
  });

  it("readSessionFile() yields every few MiB and lines, and an aborted signal cancels it", async () => {
    const big = "é".repeat(600_000); // 1.2 MB per reply: five replies cross the 4 MiB yield point
    const records = buildSession(SID, Array.from({ length: 5 }, () => ({ prompt: "p", reply: big, summary: "" })));
    const many = [buildSession(SID, [])[0]!, ...Array.from({ length: 12_000 }, (_, i) => finished(`t${i}`, i))];
    for (const fixture of [records, many]) {
      let yields = 0;
      const fs = fileWith(encodeAll(fixture));
      const result = await read(fs, { yieldEvery: () => Promise.resolve(void yields++) });
      assert.ok(result.ok && result.records.length === fixture.length);
      assert.ok(yields >= 2, `${yields} yields`);
      const abort = new AbortController();
      assert.deepEqual(await read(fs, { signal: abort.signal, yieldEvery: () => Promise.resolve(abort.abort()) }), {
        ok: false,
        code: ErrorCode.operationCancelled,
      });
    }
    const aborted = new AbortController();
    aborted.abort();
    assert.deepEqual(await read(fileWith(encodeAll(records)), { signal: aborted.signal }), { ok: false, code: ErrorCode.operationCancelled });
  });
});

describe("SessionAppender on the memory filesystem", () => {
  const [session, prefs, started] = buildSession(SID, TURNS) as [SessionRecord, SessionRecord, SessionRecord];

  it("SessionAppender.open({ create: true }) writes the first records in one exclusive 0600 create", async () => {
    const fs = new MemoryFileSystem();
    await fs.mkdir("/home/.mc/sessions", 0o700);
    const created = await SessionAppender.open(fs, PATH, SID, { create: true, firstRecords: [session, prefs] });
    assert.ok(created.ok);
    assert.equal((await fs.lstat(PATH)).mode, 0o600);
    assert.deepEqual(fs.contents(PATH), encodeAll([session, prefs]));
    assert.deepEqual(await created.appender.appendAll([started]), { ok: true });
    assert.equal(created.appender.intactLength, encodeAll([session, prefs, started]).length);
    await created.appender.close();
    assert.deepEqual(await created.appender.appendAll([started]), { ok: false, code: ErrorCode.persistenceFailed });
    const again = await SessionAppender.open(fs, PATH, SID, { create: true, firstRecords: [session] });
    assert.deepEqual(again, { ok: false, code: ErrorCode.persistenceFailed });
    assert.deepEqual(fs.contents(PATH), encodeAll([session, prefs, started]));
    for (const firstRecords of [[], [prefs], [session, session], [{ ...session, session_id: "other" }]]) {
      const fresh = new MemoryFileSystem();
      assert.deepEqual(await SessionAppender.open(fresh, PATH, SID, { create: true, firstRecords }), { ok: false, code: ErrorCode.persistenceFailed });
      assert.equal(fresh.exists(PATH), false);
    }
  });

  it("SessionAppender.appendAll() issues exactly one append and one sync per call", async () => {
    const memory = fileWith(encodeAll([session]));
    const calls: string[] = [];
    const counting = wrap(memory, {
      openAppend: async (path: string, opts: { create: boolean; mode: number }) => {
        const handle = await memory.openAppend(path, opts);
        return {
          ...handle,
          append: (bytes: Uint8Array) => (calls.push(`append:${bytes.length}`), handle.append(bytes)),
          sync: () => (calls.push("sync"), handle.sync()),
          truncate: (length: number) => (calls.push("truncate"), handle.truncate(length)),
        };
      },
    });
    const opened = await SessionAppender.open(counting, PATH, SID, { create: false });
    assert.ok(opened.ok);
    assert.deepEqual(await opened.appender.appendAll([prefs]), { ok: true });
    assert.deepEqual(await opened.appender.appendAll([started]), { ok: true });
    assert.deepEqual(calls, [`append:${encodeRecord(prefs)!.length}`, "sync", `append:${encodeRecord(started)!.length}`, "sync"]);
  });

  it("SessionAppender refuses records that would make the file unreadable, without writing", async () => {
    const fs = fileWith(encodeAll([session]));
    const opened = await SessionAppender.open(fs, PATH, SID, { create: false });
    assert.ok(opened.ok);
    for (const record of [session, { ...prefs, session_id: "other-session" }, { ...prefs, at: "now" }, { ...prefs, effort: "huge" } as unknown as SessionRecord]) {
      assert.deepEqual(await opened.appender.appendAll([record]), { ok: false, code: ErrorCode.persistenceFailed });
    }
    assert.deepEqual(fs.contents(PATH), encodeAll([session]));
    assert.deepEqual(await opened.appender.appendAll([prefs]), { ok: true }, "refusals do not poison the appender");
    const empty = fileWith("");
    const onEmpty = await SessionAppender.open(empty, PATH, SID, { create: false, expectedIntactLength: 0 });
    assert.ok(onEmpty.ok);
    assert.deepEqual(await onEmpty.appender.appendAll([prefs]), { ok: false, code: ErrorCode.persistenceFailed });
    assert.deepEqual(await onEmpty.appender.appendAll([session]), { ok: true });
  });

  it("SessionAppender refuses every append after a failed write until it is reopened", async () => {
    const memory = fileWith(encodeAll([session]));
    let failNext = true;
    const partial = wrap(memory, {
      openAppend: async (path: string, opts: { create: boolean; mode: number }) => {
        const handle = await memory.openAppend(path, opts);
        return {
          ...handle,
          // A crash-like failure: half the line reaches the file, then the write fails.
          append: async (bytes: Uint8Array) => {
            if (!failNext) return handle.append(bytes);
            failNext = false;
            await handle.append(bytes.subarray(0, bytes.length >> 1));
            throw new RuntimeError("io", "append");
          },
        };
      },
    });
    const opened = await SessionAppender.open(partial, PATH, SID, { create: false });
    assert.ok(opened.ok);
    assert.deepEqual(await opened.appender.appendAll([prefs]), { ok: false, code: ErrorCode.persistenceFailed });
    assert.deepEqual(await opened.appender.appendAll([started]), { ok: false, code: ErrorCode.persistenceFailed });
    const torn = await read(memory);
    assert.ok(torn.ok && torn.torn);
    const reopened = await SessionAppender.open(partial, PATH, SID, { create: false, expectedIntactLength: torn.intactLength });
    assert.ok(reopened.ok);
    assert.deepEqual(await reopened.appender.appendAll([prefs]), { ok: true });
    const result = await read(memory);
    assert.ok(result.ok && !result.torn);
    assert.deepEqual(result.records, [session, prefs]);
    const faultyPath = fileWith(encodeAll([session]));
    const faulty = await SessionAppender.open(faultyPath, PATH, SID, { create: false });
    assert.ok(faulty.ok);
    faultyPath.faults.set(PATH, "io");
    assert.deepEqual(await faulty.appender.appendAll([prefs]), { ok: false, code: ErrorCode.persistenceFailed });
    faultyPath.faults.delete(PATH);
    assert.deepEqual(await faulty.appender.appendAll([prefs]), { ok: true }, "a refused lstat wrote nothing, so it does not poison");
  });

  it("SessionAppender.open() leaves a file that changed since the snapshot untouched", async () => {
    const bytes = concatBytes([encodeAll([session, prefs]), "{\"v\":1,\"ty"]);
    const fs = fileWith(bytes);
    const snapshot = await read(fs);
    assert.ok(snapshot.ok && snapshot.torn);
    for (const expectedIntactLength of [snapshot.intactLength - 1, encodeAll([session]).length, bytes.length]) {
      assert.deepEqual(await SessionAppender.open(fs, PATH, SID, { create: false, expectedIntactLength }), { ok: false, code: ErrorCode.persistenceFailed });
      assert.deepEqual(fs.contents(PATH), bytes);
    }
    assert.deepEqual(await SessionAppender.open(new MemoryFileSystem(), PATH, SID, { create: false }), { ok: false, code: ErrorCode.sessionMissing });
    const writable = fileWith(bytes, 0o664);
    assert.deepEqual(await SessionAppender.open(writable, PATH, SID, { create: false }), { ok: false, code: ErrorCode.sessionInvalid });
    assert.deepEqual(writable.contents(PATH), bytes);
    const linked = new MemoryFileSystem();
    linked.writeFile("/target.jsonl", bytes, 0o600);
    linked.symlink("/target.jsonl", PATH);
    assert.deepEqual(await SessionAppender.open(linked, PATH, SID, { create: false }), { ok: false, code: ErrorCode.sessionInvalid });
    assert.deepEqual(linked.contents("/target.jsonl"), bytes);
  });

  it("SessionAppender refuses to append once its file was replaced", async () => {
    const fs = fileWith(encodeAll([session]));
    const opened = await SessionAppender.open(fs, PATH, SID, { create: false });
    assert.ok(opened.ok);
    fs.writeFile(PATH, encodeAll([session]), 0o600);
    assert.deepEqual(await opened.appender.appendAll([prefs]), { ok: false, code: ErrorCode.persistenceFailed });
    assert.deepEqual(fs.contents(PATH), encodeAll([session]));
  });
});

const diskAdapters: [string, FileSystem][] = [["node", nodeFileSystem], ...(deno === null ? [] : [["deno", deno.denoFileSystem] as [string, FileSystem]])];

for (const [adapter, disk] of diskAdapters) describe(`session files on disk (the ${adapter} fs adapter)`, () => {
  const scratch = mkdtempSync(join(tmpdir(), "magi-session-file-"));
  after(() => rmSync(scratch, { recursive: true, force: true }));
  let counter = 0;
  const records = buildSession(SID, TURNS);
  const bytes = encodeAll(records);

  function directory(): string {
    const dir = join(scratch, `case-${counter++}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /** What must not change: kind, size, mtime, and the bytes of a regular file. */
  function fingerprint(path: string): unknown {
    const info = lstatSync(path);
    return {
      kind: info.isFile() ? "file" : info.isSymbolicLink() ? "symlink" : info.isFIFO() ? "fifo" : "other",
      size: info.size,
      mode: info.mode,
      mtimeMs: info.mtimeMs,
      bytes: info.isFile() ? readFileSync(path) : null,
    };
  }

  /** Runs `body` and fails instead of hanging if it blocks (a FIFO opened for reading would never return). */
  const promptly = <T>(body: Promise<T>): Promise<T> => guarded(body, "a refusal that must not block");

  async function refusesUnchanged(path: string, watched: readonly string[], code: ErrorCode): Promise<void> {
    const before = watched.map(fingerprint);
    assert.deepEqual(await promptly(readSessionFile(disk, path, SID, options())), { ok: false, code });
    const appenderCode = code === ErrorCode.historyLimit ? ErrorCode.historyLimit : ErrorCode.sessionInvalid;
    assert.deepEqual(await promptly(SessionAppender.open(disk, path, SID, { create: false })), { ok: false, code: appenderCode });
    assert.deepEqual(await promptly(SessionAppender.open(disk, path, SID, { create: true, firstRecords: records.slice(0, 1) })), {
      ok: false,
      code: ErrorCode.persistenceFailed,
    });
    assert.deepEqual(watched.map(fingerprint), before, "nothing was written");
  }

  it("readSessionFile() and SessionAppender refuse a symlinked session file without writing", async () => {
    const dir = directory();
    const target = join(dir, "target.jsonl");
    writeFileSync(target, bytes, { mode: 0o600 });
    const link = join(dir, `${SID}.jsonl`);
    symlinkSync(target, link);
    await refusesUnchanged(link, [link, target], ErrorCode.sessionInvalid);
  });

  it("readSessionFile() and SessionAppender refuse a world-writable session file without writing", async () => {
    const path = join(directory(), `${SID}.jsonl`);
    writeFileSync(path, bytes);
    chmodSync(path, 0o666);
    await refusesUnchanged(path, [path], ErrorCode.sessionInvalid);
  });

  it("readSessionFile() and SessionAppender refuse a FIFO named like a session without blocking", async () => {
    const path = join(directory(), `${SID}.jsonl`);
    assert.equal(spawnSync("mkfifo", ["-m", "600", path]).status, 0);
    await refusesUnchanged(path, [path], ErrorCode.sessionInvalid);
  });

  it("readSessionFile() and SessionAppender refuse a sparse 65 MiB session file with history_limit", async () => {
    const path = join(directory(), `${SID}.jsonl`);
    const fd = openSync(path, "w", 0o600);
    try {
      ftruncateSync(fd, 65 * 1_048_576);
    } finally {
      closeSync(fd);
    }
    await refusesUnchanged(path, [path], ErrorCode.historyLimit);
  });

  it("SessionAppender creates a 0600 file on disk and repairs its torn tail before appending", async () => {
    const path = join(directory(), `${SID}.jsonl`);
    const created = await SessionAppender.open(disk, path, SID, { create: true, firstRecords: records.slice(0, 3) });
    assert.ok(created.ok);
    assert.equal(lstatSync(path).mode & 0o777, 0o600);
    await created.appender.close();
    // Through the adapter, not appendFileSync: Deno's node:fs applies appendFileSync's default mode 0o666 to an existing file.
    const raw = await disk.openAppend(path, { create: false, mode: 0o600 });
    await raw.append(new TextEncoder().encode('{"v":1,"type":"user_inp'));
    await raw.close();
    const torn = await readSessionFile(disk, path, SID, options());
    assert.ok(torn.ok && torn.torn);
    assert.deepEqual(torn.records, records.slice(0, 3));
    const reopened = await SessionAppender.open(disk, path, SID, { create: false, expectedIntactLength: torn.intactLength });
    assert.ok(reopened.ok);
    for (const record of records.slice(3)) assert.deepEqual(await reopened.appender.appendAll([record]), { ok: true });
    await reopened.appender.close();
    assert.deepEqual(new Uint8Array(readFileSync(path)), bytes);
    const whole = await readSessionFile(disk, path, SID, options());
    assert.ok(whole.ok && !whole.torn);
    assert.deepEqual(whole.records, records);
    const info = await disk.lstat(path);
    assert.deepEqual(whole.identity, { dev: info.dev, ino: info.ino, size: bytes.length, mtimeMs: info.mtimeMs });
  });
});
