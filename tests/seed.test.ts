import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createSha256 } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { projectHistory } from "../src/store/projection.ts";
import type { SessionRecord } from "../src/store/records.ts";
import { readSessionFile, type ReadSessionResult } from "../src/store/session-file.ts";
import { generateSession, parseByteSize, seedSession } from "./support/seed.ts";

const HOME = "/home/dev/.magi-code";
const CWD = "/home/dev/project";
const TARGET = 300 * 1024;

async function memory(): Promise<MemoryFileSystem> {
  const fs = new MemoryFileSystem();
  await fs.mkdir(CWD, 0o755);
  return fs;
}

function read(fs: MemoryFileSystem, path: string, sessionId: string): Promise<ReadSessionResult> {
  return readSessionFile(fs, path, sessionId, {
    maxBytes: LIMITS.stored_history_bytes,
    maxLines: LIMITS.stored_history_lines,
    signal: new AbortController().signal,
    createSha256,
  });
}

const count = (records: readonly SessionRecord[], type: SessionRecord["type"]) => records.filter((record) => record.type === type).length;

describe("seeded sessions", () => {
  it("are read back completely, and project to a complete history", async () => {
    const fs = await memory();
    const seeded = await seedSession(fs, HOME, { cwd: CWD, targetBytes: TARGET, seed: 7 });
    assert.equal(seeded.path, `${HOME}/sessions/${seeded.sessionId}.jsonl`);
    assert.ok(seeded.bytes.length <= TARGET && seeded.bytes.length > TARGET - 4_096, `${seeded.bytes.length} bytes`);
    assert.ok(seeded.turns > 1);
    assert.deepEqual(fs.contents(seeded.path), seeded.bytes);
    assert.equal((await fs.lstat(seeded.path)).mode, 0o600);
    assert.equal((await fs.lstat(`${HOME}/sessions`)).mode, 0o700);

    const result = await read(fs, seeded.path, seeded.sessionId);
    assert.ok(result.ok, `read failed: ${JSON.stringify(result)}`);
    assert.equal(result.torn, false);
    assert.equal(result.intactLength, seeded.bytes.length);
    assert.equal(result.records.length, seeded.lines);
    const first = result.records[0]!;
    assert.equal(first.type, "session");
    assert.equal(first.type === "session" ? first.cwd : null, CWD);
    assert.equal(count(result.records, "turn_started"), seeded.turns);
    assert.equal(count(result.records, "turn_finished"), seeded.turns);
    for (const type of ["user_input", "assistant_chunk", "assistant_message", "activity", "internal_prompt", "usage", "reasoning_summary"] as const) {
      assert.ok(count(result.records, type) > 0, `no ${type} record`);
    }
    const texts = result.records.map((record) => ("text" in record ? record.text : "")).join("");
    assert.match(texts, /\p{Extended_Pictographic}/u);
    assert.match(texts, /\p{Script=Han}/u);
    assert.match(texts, /\p{M}/u);

    const projected = projectHistory(result.records, { torn: result.torn, secrets: [] });
    assert.ok(projected.ok);
    assert.equal(projected.snapshot.complete, true);
  });

  it("--torn ends in a fragment the reader reports as torn", async () => {
    const fs = await memory();
    const seeded = await seedSession(fs, HOME, { cwd: CWD, targetBytes: TARGET, seed: 7, torn: true });
    assert.notEqual(seeded.bytes.at(-1), 0x0a);
    assert.ok(seeded.bytes.length <= TARGET);
    const result = await read(fs, seeded.path, seeded.sessionId);
    assert.ok(result.ok, `read failed: ${JSON.stringify(result)}`);
    assert.equal(result.torn, true);
    assert.ok(result.intactLength < seeded.bytes.length);
    assert.equal(result.records.length, seeded.lines);
    assert.equal(result.identity.size, seeded.bytes.length);

    // A torn tail ends the projection with an interrupted-turn diagnostic: never complete.
    const projected = projectHistory(result.records, { torn: result.torn, secrets: [] });
    assert.ok(projected.ok);
    assert.equal(projected.snapshot.complete, false);
  });

  it("is deterministic for a seed, and varies with it", async () => {
    const a = await seedSession(await memory(), HOME, { cwd: CWD, targetBytes: TARGET, seed: 42 });
    const b = await seedSession(await memory(), HOME, { cwd: CWD, targetBytes: TARGET, seed: 42 });
    assert.equal(a.sessionId, b.sessionId);
    assert.deepEqual(a.bytes, b.bytes);
    const torn = generateSession({ cwd: CWD, targetBytes: TARGET, seed: 42, torn: true });
    assert.deepEqual(torn.bytes, generateSession({ cwd: CWD, targetBytes: TARGET, seed: 42, torn: true }).bytes);
    const other = generateSession({ cwd: CWD, targetBytes: TARGET, seed: 43 });
    assert.notEqual(other.sessionId, a.sessionId);
    assert.notDeepEqual(other.bytes, a.bytes);
  });

  it("honours --turns, --id and the line bound", async () => {
    const fs = await memory();
    const seeded = await seedSession(fs, HOME, { cwd: CWD, turns: 3, sessionId: "fixture_1" });
    assert.equal(seeded.turns, 3);
    assert.ok(fs.exists(`${HOME}/sessions/fixture_1.jsonl`));
    await assert.rejects(seedSession(fs, HOME, { cwd: CWD, turns: 3, sessionId: "fixture_1" }));

    const bounded = generateSession({ cwd: CWD, targetBytes: 4 * 1_048_576, maxLines: 500 });
    assert.ok(bounded.lines <= 500);
    assert.ok(bounded.lines > 400, `${bounded.lines} lines`);
  });

  it("parses byte sizes", () => {
    assert.equal(parseByteSize("64MiB"), 67_108_864);
    assert.equal(parseByteSize("64 MiB"), 67_108_864);
    assert.equal(parseByteSize("512K"), 524_288);
    assert.equal(parseByteSize("1000"), 1000);
    assert.equal(parseByteSize("lots"), null);
  });
});
