/**
 * Checkpoint retention (docs/storage.md, "Checkpoint retention"): a
 * session's checkpoints stay within its bounds by evicting the oldest turns
 * whole; a rewind over an evicted turn is refused, never half restored; a
 * kill at any point of an eviction or a sweep leaves nothing a later rewind
 * trusts wrongly; the sweep removes gone sessions' checkpoints and keeps
 * every session within the total bound, never touching one another child
 * holds.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { createMemoryRuntime, ManualClock } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { FileSystem, Runtime } from "../src/host/runtime.ts";
import { CheckpointDirectory } from "../src/rewind/checkpoint-files.ts";
import { sweepCheckpoints } from "../src/rewind/checkpoint-sweep.ts";
import { type CheckpointBounds, Checkpoints } from "../src/rewind/checkpoints.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const HOME = "/home/user/.magi-code";
const WS = "/ws";
const SESSION = "01890000-0000-7000-8000-000000000000";
const OTHER = "01890000-0000-7000-8000-000000000001";
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const turn = (n: number) => `01890000-0000-7000-8000-${String(n).padStart(12, "0")}`;

/** One write the model expects a checkpoint of. */
interface Write {
  readonly turn: number;
  readonly path: string;
  readonly before: string | null;
  readonly after: string;
}

/** What `of()` gives, as comparable values. */
async function found(store: Checkpoints, session: string, turns: readonly number[]) {
  const result = await store.of(session, new Set(turns.map(turn)));
  if (result === "evicted") return result;
  return result.map((checkpoint) => ({ turn: checkpoint.turnId, path: checkpoint.path, before: checkpoint.before === null ? null : decoder.decode(checkpoint.before), after: checkpoint.afterSha256 }));
}

function sha256(runtime: Runtime, text: string): string {
  const hash = runtime.createSha256();
  hash.update(encoder.encode(text));
  return hash.digest();
}

/** What `of()` must give for `writes` when nothing of theirs was evicted. */
function expected(runtime: Runtime, writes: readonly Write[]) {
  return writes.map((write) => ({ turn: turn(write.turn), path: write.path, before: write.before, after: sha256(runtime, write.after) }));
}

async function take(store: Checkpoints, session: string, write: Write): Promise<void> {
  await store.taker(session, turn(write.turn))(`${WS}/${write.path}`, write.before === null ? null : encoder.encode(write.before), encoder.encode(write.after));
}

/** The checkpoint files of `session` on `fs`, with their sizes. */
async function onDisk(fs: FileSystem, session: string): Promise<number[]> {
  const directory = `${HOME}/checkpoints/${session}`;
  const entries = await fs.readDir(directory).catch(() => []);
  const names = entries.filter((entry) => entry.name.endsWith(".checkpoint")).map((entry) => entry.name);
  return Promise.all(names.map(async (name) => (await fs.lstat(`${directory}/${name}`)).size));
}

/**
 * `fs` as a child killed after `operations` changes sees it: every call
 * after that rejects, so what is on disk is what the changes before the
 * kill left.
 */
function killedAfter(fs: MemoryFileSystem, operations: number): FileSystem {
  const changes = new Set(["mkdir", "createExclusive", "syncDirectory", "openAppend", "link", "rename", "unlink", "removeDirectory"]);
  let left = operations;
  return new Proxy(fs, {
    get(target, property) {
      const value = Reflect.get(target, property) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (left <= 0) return Promise.reject(new Error("killed"));
        if (changes.has(String(property))) left -= 1;
        return (value as (...args: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as FileSystem;
}

describe("checkpoint retention", () => {
  it("Checkpoints.taker() past 256 checkpoints evicts the oldest turn whole: the newest turn still restores, a rewind over the evicted one is refused", async () => {
    const runtime = createMemoryRuntime({ cwd: WS });
    const store = new Checkpoints(runtime, HOME, WS);
    const writes: Write[] = [];
    for (let index = 0; index < 200; index += 1) writes.push({ turn: 1, path: `f${index}.txt`, before: `old ${index}`, after: `new ${index}` });
    for (let index = 0; index < 100; index += 1) writes.push({ turn: 2, path: `g${index}.txt`, before: null, after: `g ${index}` });
    for (const write of writes) await take(store, SESSION, write);
    assert.deepEqual(await found(store, SESSION, [2]), expected(runtime, writes.filter((write) => write.turn === 2)));
    assert.equal(await found(store, SESSION, [1, 2]), "evicted");
    assert.equal((await onDisk(runtime.fs, SESSION)).length, 100);
  });

  it("Checkpoints.taker() marks a turn whose own checkpoints pass the bound evicted, and takes the next turn's again", async () => {
    const runtime = createMemoryRuntime({ cwd: WS });
    const store = new Checkpoints(runtime, HOME, WS, { count: 3, bytes: 100_000, totalBytes: 1_000_000 });
    const writes = [1, 1, 1, 1, 2].map((n, index): Write => ({ turn: n, path: `f${index}.txt`, before: "x", after: "y" }));
    for (const write of writes) await take(store, SESSION, write);
    assert.equal(await found(store, SESSION, [1]), "evicted");
    assert.deepEqual(await found(store, SESSION, [2]), expected(runtime, writes.slice(4)));
  });

  it("fc.commands: every rewind's checkpoints are exactly its turns' writes or refused, the bounds hold, eviction is oldest first and the current turn stays while it fits", async () => {
    const bounds: CheckpointBounds = { count: 5, bytes: 2_000, totalBytes: 1_000_000 };
    type Model = { turn: number; writes: Write[] };
    type Real = { runtime: Runtime; store: Checkpoints };
    const check = async (model: Model, real: Real) => {
      const sizes = await onDisk(real.runtime.fs, SESSION);
      assert.ok(sizes.length <= bounds.count, `${sizes.length} checkpoints`);
      assert.ok(sizes.reduce((sum, size) => sum + size, 0) <= bounds.bytes);
      let kept = false;
      for (let from = 1; from <= model.turn; from += 1) {
        const got = await found(real.store, SESSION, Array.from({ length: model.turn - from + 1 }, (_, index) => from + index));
        if (got !== "evicted") assert.deepEqual(got, expected(real.runtime, model.writes.filter((write) => write.turn >= from)));
        // Oldest first: once one turn is kept, so is every later one.
        const alone = await found(real.store, SESSION, [from]);
        if (kept) assert.notEqual(alone, "evicted", `turn ${from} evicted after a kept one`);
        kept ||= alone !== "evicted";
      }
      const current = model.writes.filter((write) => write.turn === model.turn);
      // A header is at most 200 bytes here: a turn whose checkpoints surely fit is never evicted.
      if (current.length <= bounds.count && current.reduce((sum, write) => sum + 200 + (write.before?.length ?? 0), 0) <= bounds.bytes) {
        assert.notEqual(await found(real.store, SESSION, [model.turn]), "evicted");
      }
    };
    class NextTurn implements fc.AsyncCommand<Model, Real> {
      check = () => true;
      async run(model: Model, real: Real) {
        model.turn += 1;
        await check(model, real);
      }
      toString = () => "next turn";
    }
    class WriteFile implements fc.AsyncCommand<Model, Real> {
      constructor(readonly file: number, readonly before: string | null, readonly after: string) {}
      check = () => true;
      async run(model: Model, real: Real) {
        const write = { turn: model.turn, path: `f${this.file}.txt`, before: this.before, after: this.after };
        model.writes.push(write);
        await take(real.store, SESSION, write);
        await check(model, real);
      }
      toString = () => `write f${this.file} (${this.before?.length ?? "new"})`;
    }
    const write = fc.tuple(fc.integer({ min: 0, max: 3 }), fc.option(fc.string({ maxLength: 700 })), fc.string({ maxLength: 8 }))
      .map(([file, before, after]) => new WriteFile(file, before, after));
    await fc.assert(
      fc.asyncProperty(fc.commands([write, write, write, fc.constant(new NextTurn())], { maxCommands: 40 }), async (script) => {
        const runtime = createMemoryRuntime({ cwd: WS });
        await fc.asyncModelRun(() => ({ model: { turn: 1, writes: [] }, real: { runtime, store: new Checkpoints(runtime, HOME, WS, bounds) } }), script);
      }),
      { numRuns: fuzzRuns(60, 5) },
    );
  });

  it("a child killed at any point of an eviction leaves every rewind exactly its turns' checkpoints or refused, and the next child keeps the bounds", async () => {
    const bounds: CheckpointBounds = { count: 4, bytes: 100_000, totalBytes: 1_000_000 };
    const writes = [1, 1, 2, 2, 3].map((n, index): Write => ({ turn: n, path: `f${index}.txt`, before: index % 2 === 0 ? null : `before ${index}`, after: `after ${index}` }));
    let completed = false;
    for (let operations = 0; !completed; operations += 1) {
      const fs = new MemoryFileSystem();
      const runtime = createMemoryRuntime({ cwd: WS, fs });
      for (const write of writes.slice(0, 4)) await take(new Checkpoints(runtime, HOME, WS, bounds), SESSION, write);
      const killed = new Checkpoints({ ...runtime, fs: killedAfter(fs, operations) }, HOME, WS, bounds);
      await take(killed, SESSION, writes[4]!);
      const after = new Checkpoints(runtime, HOME, WS, bounds);
      const last = await found(after, SESSION, [3]);
      completed = last !== "evicted" && last.length === 1;
      for (const from of [1, 2, 3]) {
        const turns = [1, 2, 3].filter((n) => n >= from);
        const got = await found(after, SESSION, turns);
        if (got === "evicted") continue;
        // The killed write may or may not have been kept: the write it guarded never ran if not.
        const kept = writes.filter((write) => write.turn >= from);
        assert.ok([expected(runtime, kept), expected(runtime, kept.slice(0, -1))].some((want) => JSON.stringify(want) === JSON.stringify(got)), `killed after ${operations}: ${JSON.stringify(got)}`);
      }
      await take(after, SESSION, { turn: 3, path: "again.txt", before: null, after: "again" });
      assert.ok((await onDisk(fs, SESSION)).length <= bounds.count);
      assert.deepEqual((await fs.readDir(`${HOME}/checkpoints/${SESSION}`)).filter((entry) => entry.name.endsWith(".tmp")), []);
      assert.ok(operations < 50, "the eviction never completed");
    }
  });
});

describe("checkpoint sweep", () => {
  /** `home` holding checkpoints of `sessions` (one write in each of two turns, a second apart), and those in `present` with a history file. */
  async function seeded(sessions: readonly string[], present: readonly string[], bytes = 10) {
    const clock = new ManualClock();
    const fs = new MemoryFileSystem({ now: () => clock.wallNow() });
    const runtime = createMemoryRuntime({ cwd: WS, fs, clock });
    for (const session of present) fs.writeFile(`${HOME}/sessions/${session}.jsonl`, "{}\n", 0o600);
    // One seeder for all: its own sweep, which its first checkpoint starts, never touches its own sessions.
    const seeder = new Checkpoints(runtime, HOME, WS);
    for (const session of sessions) {
      for (const n of [1, 2]) await take(seeder, session, { turn: n, path: `${session}-${n}.txt`, before: "x".repeat(bytes), after: "y" });
      clock.advance(1_000);
    }
    return { fs, runtime };
  }

  it("sweepCheckpoints() removes a gone session's checkpoints and directory, and keeps a present one's and a leased one's", async () => {
    const LEASED = "01890000-0000-7000-8000-000000000002";
    const { fs, runtime } = await seeded([SESSION, OTHER, LEASED], [OTHER]);
    fs.writeFile(`${HOME}/sessions/${LEASED}.writer.lease`, "{}", 0o600);
    await sweepCheckpoints(runtime, HOME, new CheckpointDirectory(runtime), new Set(), 1_000_000);
    assert.deepEqual((await fs.readDir(`${HOME}/checkpoints`)).map((entry) => entry.name).sort(), [OTHER, LEASED].sort());
    for (const session of [OTHER, LEASED]) assert.equal((await found(new Checkpoints(runtime, HOME, WS), session, [1, 2]) as unknown[]).length, 2);
  });

  it("sweepCheckpoints() past the total bound evicts the least recently written session first, never its own nor a leased one", async () => {
    const NEWEST = "01890000-0000-7000-8000-000000000003";
    const sessions = [SESSION, OTHER, NEWEST];
    const { fs, runtime } = await seeded(sessions, sessions, 1_000);
    const each = (await onDisk(fs, SESSION)).reduce((sum, size) => sum + size, 0);
    await sweepCheckpoints(runtime, HOME, new CheckpointDirectory(runtime), new Set(), 2 * each);
    const store = new Checkpoints(runtime, HOME, WS);
    assert.equal(await found(store, SESSION, [2]), "evicted");
    for (const session of [OTHER, NEWEST]) assert.equal((await found(store, session, [1, 2]) as unknown[]).length, 2);
    // Owned by this child, or leased by another: kept whatever the bound.
    fs.writeFile(`${HOME}/sessions/${NEWEST}.writer.lease`, "{}", 0o600);
    await sweepCheckpoints(runtime, HOME, new CheckpointDirectory(runtime), new Set([OTHER]), 0);
    for (const session of [OTHER, NEWEST]) assert.equal((await found(store, session, [1, 2]) as unknown[]).length, 2);
  });

  it("fc.scheduler: a sweep evicting a session while a rewind reads its checkpoints leaves that rewind all of them or refused, never part", async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), async (s) => {
        const { fs, runtime } = await seeded([OTHER], [OTHER], 100);
        const interleaved = (base: Runtime): Runtime => {
          const scheduled = new Proxy(fs, {
            get(target, property) {
              const value = Reflect.get(target, property) as unknown;
              return typeof value === "function" ? s.scheduleFunction((...args: unknown[]) => (value as (...args: unknown[]) => Promise<unknown>).apply(target, args)) : value;
            },
          }) as FileSystem;
          return { ...base, fs: scheduled };
        };
        const sweeper = interleaved(runtime);
        const reader = interleaved(runtime);
        const sweep = sweepCheckpoints(sweeper, HOME, new CheckpointDirectory(sweeper), new Set(), 0);
        const read = found(new Checkpoints(reader, HOME, WS), OTHER, [1, 2]);
        const [, got] = await s.waitFor(Promise.all([sweep, read]));
        if (got !== "evicted") assert.equal(got.length, 2);
      }),
      { numRuns: fuzzRuns(100, 5) },
    );
  });

  it("a sweep killed at any point leaves a present session's rewinds whole or refused, and the next sweep finishes it", async () => {
    let completed = false;
    for (let operations = 0; !completed; operations += 1) {
      const { fs, runtime } = await seeded([SESSION, OTHER], [OTHER], 1_000);
      const directory = `${HOME}/checkpoints`;
      const killed = { ...runtime, fs: killedAfter(fs, operations) };
      await sweepCheckpoints(killed, HOME, new CheckpointDirectory(killed), new Set(), 0).catch(() => {});
      completed = (await fs.readDir(directory)).length === 1 && await found(new Checkpoints(runtime, HOME, WS), OTHER, [2]) === "evicted";
      for (const from of [1, 2]) {
        const got = await found(new Checkpoints(runtime, HOME, WS), OTHER, [1, 2].filter((n) => n >= from));
        if (got !== "evicted") assert.equal(got.length, 3 - from, `killed after ${operations}`);
      }
      await sweepCheckpoints(runtime, HOME, new CheckpointDirectory(runtime), new Set(), 0);
      assert.deepEqual((await fs.readDir(directory)).map((entry) => entry.name), [OTHER]);
      assert.equal(await found(new Checkpoints(runtime, HOME, WS), OTHER, [2]), "evicted");
      assert.ok(operations < 50, "the sweep never completed");
    }
  });
});
