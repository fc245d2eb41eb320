/**
 * Checkpoint retention under what a listing cannot see coming
 * (docs/storage.md, "Checkpoint retention"): a checkpoint whose header a
 * read fails on is never left out of a rewind, nor makes room by evicting
 * newer turns than its own can be, and a sweep never evicts a turn begun by a child that took
 * the session's writer lease after the sweep measured it.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryRuntime, ManualClock } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { FileSystem, Runtime } from "../src/host/runtime.ts";
import { CheckpointDirectory } from "../src/rewind/checkpoint-files.ts";
import { sweepCheckpoints } from "../src/rewind/checkpoint-sweep.ts";
import { Checkpoints } from "../src/rewind/checkpoints.ts";
import { MAX_WRITE_BYTES } from "../src/runner/tools/atomic-write.ts";
import { findBuiltinTool } from "../src/runner/tools/registry.ts";
import { invokeTool, memoryWorld } from "./support/tools.ts";

const HOME = "/home/user/.magi-code";
const WS = "/ws";
const SESSION = "01890000-0000-7000-8000-000000000000";
const DIRECTORY = `${HOME}/checkpoints/${SESSION}`;
const encoder = new TextEncoder();
const turn = (n: number) => `01890000-0000-7000-8000-${String(n).padStart(12, "0")}`;

/** The paths `of()` gives for `turns`, or "evicted". */
async function paths(store: Checkpoints, turns: readonly number[]): Promise<string[] | "evicted"> {
  const result = await store.of(SESSION, new Set(turns.map(turn)));
  return result === "evicted" ? result : result.map((checkpoint) => checkpoint.path);
}

async function write(store: Checkpoints, n: number, path: string): Promise<void> {
  await store.taker(SESSION, turn(n))(`${WS}/${path}`, encoder.encode(`before ${path}`), encoder.encode(`after ${path}`));
}

/**
 * `runtime` whose file system calls `hook` before each call of `method` (its
 * path as argument); `hook` answers whether that call fails as an I/O
 * error would (EIO, EMFILE) instead of running.
 */
function intercepted(runtime: Runtime, method: keyof FileSystem, hook: (path: string) => Promise<boolean> | boolean): Runtime {
  const fs = new Proxy(runtime.fs, {
    get(target, property) {
      const value = Reflect.get(target, property) as unknown;
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        if (property === method && await hook(String(args[0]))) throw new Error("EIO");
        return (value as (...args: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as FileSystem;
  return { ...runtime, fs };
}

/** Fails the first `method` call on `SESSION`'s oldest checkpoint, as EIO or EMFILE would. */
function oldestFailsOnce(runtime: Runtime, method: keyof FileSystem = "openRead"): Runtime {
  let failed = false;
  return intercepted(runtime, method, async (path) => {
    if (failed || !path.startsWith(DIRECTORY)) return false;
    const names = (await runtime.fs.readDir(DIRECTORY)).map((entry) => entry.name).filter((name) => name.endsWith(".checkpoint")).sort();
    failed = path === `${DIRECTORY}/${names[0]}`;
    return failed;
  });
}

describe("checkpoint retention races", () => {
  for (const method of ["openRead", "lstat"] as const) {
    it(`Checkpoints.of() whose ${method} of one dropped turn's checkpoint fails once refuses (or gives every checkpoint), never the turn without that file`, async () => {
      const runtime = createMemoryRuntime({ cwd: WS });
      const seeder = new Checkpoints(runtime, HOME, WS);
      for (const path of ["a.txt", "b.txt"]) await write(seeder, 1, path);
      const store = new Checkpoints(oldestFailsOnce(runtime, method), HOME, WS);
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const got = await paths(store, [1]);
        if (got !== "evicted") assert.deepEqual(got, ["a.txt", "b.txt"], `attempt ${attempt}`);
      }
      assert.deepEqual(await paths(store, [1]), ["a.txt", "b.txt"], "a failed read is tried again");
    });
  }

  it("Checkpoints.taker() making room while a read of the oldest header fails evicts through the next checkpoint's turn, never the turn being written", async () => {
    const runtime = createMemoryRuntime({ cwd: WS });
    const bounds = { count: 3, bytes: 100_000, totalBytes: 1_000_000 };
    const seeder = new Checkpoints(runtime, HOME, WS, bounds);
    for (const [n, path] of [[1, "a.txt"], [1, "b.txt"], [2, "c.txt"]] as const) await write(seeder, n, path);
    await write(new Checkpoints(oldestFailsOnce(runtime), HOME, WS, bounds), 3, "d.txt");
    const got = await paths(new Checkpoints(runtime, HOME, WS, bounds), [1, 2, 3]);
    if (got !== "evicted") assert.deepEqual(got, ["a.txt", "b.txt", "c.txt", "d.txt"]);
    assert.deepEqual(await paths(new Checkpoints(runtime, HOME, WS, bounds), [2, 3]), ["c.txt", "d.txt"]);
  });

  it("Checkpoints.of() refuses a turn one of whose checkpoints could be neither written nor marked evicted (the directory refuses new files), in the child that tried", async () => {
    const runtime = createMemoryRuntime({ cwd: WS });
    let refusing = false;
    const store = new Checkpoints(intercepted(runtime, "createExclusive", () => refusing), HOME, WS);
    await write(store, 1, "a.txt");
    refusing = true;
    await write(store, 1, "b.txt");
    assert.equal(await paths(store, [1]), "evicted");
  });

  it("sweepCheckpoints() keeps the turn a child began after taking the writer lease of a session the sweep had measured unleased", async () => {
    const clock = new ManualClock();
    const fs = new MemoryFileSystem({ now: () => clock.wallNow() });
    const runtime = createMemoryRuntime({ cwd: WS, fs, clock });
    fs.writeFile(`${HOME}/sessions/${SESSION}.jsonl`, "{}\n", 0o600);
    for (const n of [1, 2]) await write(new Checkpoints(runtime, HOME, WS), n, `f${n}.txt`);
    let reads = 0;
    // The second listing of the session is the sweep's just before it evicts: another child opens the session then.
    const sweeper = intercepted(runtime, "readDir", async (path) => {
      if (path !== DIRECTORY || ++reads !== 2) return false;
      fs.writeFile(`${HOME}/sessions/${SESSION}.writer.lease`, "{}", 0o600);
      clock.advance(1_000);
      await write(new Checkpoints(runtime, HOME, WS), 3, "g.txt");
      return false;
    });
    await sweepCheckpoints(sweeper, HOME, new CheckpointDirectory(sweeper), new Set(), 0);
    assert.equal(reads, 2);
    assert.deepEqual(await paths(new Checkpoints(runtime, HOME, WS), [3]), ["g.txt"]);
  });
});

describe("checkpoints of a write whose replaced content cannot be read", () => {
  it("write_file over a file past MAX_WRITE_BYTES marks its turn evicted: a rewind never restores the turn's other files without it", async () => {
    const world = memoryWorld();
    world.file("ws/small.txt", "old");
    world.file("ws/big.bin", new Uint8Array(MAX_WRITE_BYTES + 1));
    const store = new Checkpoints(world.runtime, world.home, world.workspace);
    const context = { ...world.context(), checkpoint: store.taker(SESSION, turn(1)) };
    for (const path of ["small.txt", "big.bin"]) assert.equal((await invokeTool(findBuiltinTool("write_file")!, { path, content: "new" }, context)).ok, true);
    assert.equal(await store.of(SESSION, new Set([turn(1)])), "evicted");
    assert.equal(await new Checkpoints(world.runtime, world.home, world.workspace).of(SESSION, new Set([turn(1)])), "evicted");
  });
});
