import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { createSha256 } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { ErrorCode } from "../src/protocol/errors.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import type { FileSystem } from "../src/host/runtime.ts";
import type { SessionRecord } from "../src/store/records.ts";
import { READ_CHUNK_BYTES, readSessionFile, type ReadSessionOptions, type ReadSessionResult } from "../src/store/session-file.ts";
import { SLICE_MS } from "../src/store/cooperative-slices.ts";
import { sha256Hex } from "../src/util/digest.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { buildSession, concatBytes, encodeAll } from "./support/records.ts";

const SID = "0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const PATH = `/home/.mc/sessions/${SID}.jsonl`;

function fileWith(bytes: Uint8Array | string): MemoryFileSystem {
  const fs = new MemoryFileSystem();
  fs.writeFile(PATH, bytes, 0o600);
  return fs;
}

function read(fs: FileSystem, overrides: Partial<ReadSessionOptions> = {}): Promise<ReadSessionResult> {
  return readSessionFile(fs, PATH, SID, {
    maxBytes: LIMITS.stored_history_bytes,
    maxLines: LIMITS.stored_history_lines,
    signal: new AbortController().signal,
    createSha256,
    ...overrides,
  });
}

/** `memory` with its read handles spied on (every requested length, every byte served); `lie` makes fstat report size 0. */
function spied(memory: MemoryFileSystem, lie = false): { fs: FileSystem; requests: number[]; served: () => number } {
  const requests: number[] = [];
  let served = 0;
  const fs = Object.create(memory) as FileSystem;
  fs.lstat = (path) => memory.lstat(path);
  fs.openRead = async (path) => {
    const handle = await memory.openRead(path);
    return {
      info: { ...handle.info, ...(lie ? { size: 0 } : {}) },
      stat: async () => ({ ...(await handle.stat()), ...(lie ? { size: 0 } : {}) }),
      read: async (buffer, position) => {
        requests.push(buffer.length);
        const count = await handle.read(buffer, position);
        served += count;
        return count;
      },
      close: () => handle.close(),
    };
  };
  return { fs, requests, served: () => served };
}

const finished = (turn: string, seconds: number): SessionRecord => ({
  v: 1,
  type: "turn_finished",
  session_id: SID,
  at: new Date(Date.UTC(2025, 0, 2) + seconds * 1000).toISOString(),
  turn_id: turn,
  outcome: "completed",
  error_code: null,
});

// Sizes around the read chunk, so lines end just before, on and after chunk boundaries and span several chunks.
const replySizeArb = fc.constantFrom(0, 1, 700, READ_CHUNK_BYTES - 400, READ_CHUNK_BYTES - 200, READ_CHUNK_BYTES, 2 * READ_CHUNK_BYTES + 3);

describe("readSessionFile() streaming", () => {
  it("reads lines spanning chunks and torn tails of any length like the whole bytes, a chunk at a time", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(replySizeArb, { minLength: 1, maxLength: 3 }),
        fc.constantFrom(0, 1, 300, READ_CHUNK_BYTES + 17),
        fc.constantFrom("x", "é", "😀"),
        async (sizes, tornBytes, unit) => {
          const turns = sizes.map((size) => ({ prompt: "p", reply: unit.repeat(Math.ceil(size / unit.length / 2)), summary: "s" }));
          const records = buildSession(SID, turns);
          const intact = encodeAll(records);
          const file = concatBytes([intact, "{".padEnd(tornBytes, "z").slice(0, tornBytes)]);
          const spy = spied(fileWith(file));
          const result = await read(spy.fs);
          assert.ok(result.ok);
          assert.deepEqual(result.records, records);
          assert.equal(result.intactLength, intact.length);
          assert.equal(result.torn, tornBytes > 0);
          assert.equal(result.identity.size, file.length);
          assert.equal(result.digest, await sha256Hex(intact));
          assert.equal(spy.served(), file.length);
          assert.ok(Math.max(...spy.requests) <= READ_CHUNK_BYTES, `a read asked for ${Math.max(...spy.requests)} bytes`);
        },
      ),
      { numRuns: fuzzRuns(12, 50) },
    );
  });

  it("never asks for more than maxBytes + 1 bytes in total, even when fstat under-reports the size", async () => {
    const records = buildSession(SID, [{ prompt: "p", reply: "r".repeat(3 * READ_CHUNK_BYTES), summary: "" }]);
    const file = encodeAll(records);
    for (const maxBytes of [10, READ_CHUNK_BYTES - 1, READ_CHUNK_BYTES, READ_CHUNK_BYTES + 1, 2 * READ_CHUNK_BYTES + 5, file.length - 1]) {
      const spy = spied(fileWith(file), true);
      assert.deepEqual(await read(spy.fs, { maxBytes }), { ok: false, code: ErrorCode.historyLimit }, `maxBytes ${maxBytes}`);
      assert.equal(spy.requests.reduce((sum, size) => sum + size, 0), maxBytes + 1, `maxBytes ${maxBytes}`);
    }
    assert.equal((await read(fileWith(file), { maxBytes: file.length })).ok, true);
  });

  it("answers history_limit for a file both corrupt and over a bound, as a whole-file read did, and session_invalid otherwise", async () => {
    const records = [buildSession(SID, [])[0]!, ...Array.from({ length: 30 }, (_, i) => finished(`t${i}`, i))];
    const good = encodeAll(records);
    const corrupt = concatBytes([encodeAll(records.slice(0, 2)), "{not json}\n", encodeAll(records.slice(2))]);
    assert.deepEqual(await read(fileWith(corrupt)), { ok: false, code: ErrorCode.sessionInvalid });
    assert.deepEqual(await read(fileWith(corrupt), { maxLines: 30 }), { ok: false, code: ErrorCode.historyLimit });
    assert.deepEqual(await read(fileWith(corrupt), { maxBytes: good.length }), { ok: false, code: ErrorCode.historyLimit });
    assert.equal((await read(fileWith(good), { maxLines: 31, maxBytes: good.length })).ok, true);
  });

  it("pauses whenever SLICE_MS went by on its clock, and only by the work bounds without one", async () => {
    const records = [buildSession(SID, [])[0]!, ...Array.from({ length: 59 }, (_, i) => finished(`t${i}`, i))];
    const fs = fileWith(encodeAll(records));
    let clock = 0;
    let pauses = 0;
    let readings = 0;
    const timed = await read(fs, {
      now: () => (readings++, clock += 1),
      yieldEvery: () => Promise.resolve(void pauses++),
    });
    assert.ok(timed.ok && timed.records.length === records.length);
    // Each line reads the clock once, and the clock moves 1 ms per reading.
    assert.ok(pauses >= Math.floor(records.length / (SLICE_MS + 1)), `${pauses} pauses over ${readings} clock readings`);
    pauses = 0;
    assert.equal((await read(fs, { yieldEvery: () => Promise.resolve(void pauses++) })).ok, true);
    assert.equal(pauses, 0, "a small file without a clock never pauses");
    pauses = 0;
    const many = [buildSession(SID, [])[0]!, ...Array.from({ length: 12_000 }, (_, i) => finished(`t${i}`, i))];
    const frozen = await read(fileWith(encodeAll(many)), { now: () => 0, yieldEvery: () => Promise.resolve(void pauses++) });
    assert.ok(frozen.ok);
    assert.equal(pauses, 2, "a clock that never moves still pauses every 5,000 lines");
  });
});
