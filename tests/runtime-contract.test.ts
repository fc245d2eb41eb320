import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { describe, it } from "node:test";
import fc from "fast-check";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { createNodeRuntime } from "../runtime/node-runtime.ts";
import { isRuntimeError, type Runtime } from "../src/host/runtime.ts";
import { sha256Hex } from "../src/util/digest.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { adapters, deno, rejectsWith, scratch } from "./support/fs-adapters.ts";

for (const [name, fs, fixture] of adapters) {
  describe(`FileSystem contract: ${name}`, () => {
    it("readFile() returns a file of exactly maxBytes and rejects maxBytes + 1 with too_large", async () => {
      const f = fixture();
      const path = f.file("a.txt", "x".repeat(100));
      assert.equal((await fs.readFile(path, 100)).length, 100);
      await rejectsWith(fs.readFile(path, 99), "too_large");
    });

    it("readFile() refuses a final symlink, a FIFO (without blocking) and a directory", async () => {
      const f = fixture();
      const target = f.file("target.txt", "secret");
      await rejectsWith(fs.readFile(f.link(target, "link.txt"), 1024), "symlink");
      await rejectsWith(fs.readFile(f.fifo("pipe"), 1024), "not_file");
      await assert.rejects(fs.readFile(f.dir, 1024), (error: unknown) => isRuntimeError(error));
      await rejectsWith(fs.readFile(`${f.dir}/missing`, 1024), "not_found");
    });

    it("openRead() reads at positions and stats the handle; info is the handle's stat at open", async () => {
      const f = fixture();
      const path = f.file("b.txt", "hello world");
      const handle = await fs.openRead(path);
      assert.deepEqual(handle.info, await handle.stat());
      const lstat = await fs.lstat(path);
      assert.deepEqual([handle.info.dev, handle.info.ino], [lstat.dev, lstat.ino]);
      const buffer = new Uint8Array(5);
      assert.equal(await handle.read(buffer, 6), 5);
      assert.equal(new TextDecoder().decode(buffer), "world");
      assert.equal(await handle.read(buffer, 11), 0);
      const info = await handle.stat();
      assert.equal(info.kind, "file");
      assert.equal(info.size, 11);
      await handle.close();
      await rejectsWith(fs.openRead(f.link(path, "l")), "symlink");
    });

    it("createExclusive() creates once, then rejects with exists", async () => {
      const f = fixture();
      const path = `${f.dir}/lease`;
      await fs.createExclusive(path, new TextEncoder().encode("1"), 0o600);
      assert.equal((await fs.lstat(path)).mode & 0o777, 0o600);
      await rejectsWith(fs.createExclusive(path, new Uint8Array(1), 0o600), "exists");
    });

    it("link() gives a file a second name and never replaces one: exists, not_found", async () => {
      const f = fixture();
      const source = f.file("tmp", "body");
      const taken = f.file("taken", "someone else's");
      await fs.link(source, `${f.dir}/lease`);
      await fs.unlink(source);
      assert.equal(new TextDecoder().decode(await fs.readFile(`${f.dir}/lease`, 100)), "body");
      await rejectsWith(fs.link(`${f.dir}/lease`, taken), "exists");
      assert.equal(new TextDecoder().decode(await fs.readFile(taken, 100)), "someone else's");
      await rejectsWith(fs.link(`${f.dir}/missing`, `${f.dir}/other`), "not_found");
    });

    it("syncDirectory() syncs a directory and rejects a missing path with not_found", async () => {
      const f = fixture();
      await fs.syncDirectory(f.dir);
      await rejectsWith(fs.syncDirectory(`${f.dir}/missing`), "not_found");
    });

    it("openAppend() appends, syncs and truncates, and refuses a symlink; info is the opened file's stat", async () => {
      const f = fixture();
      const path = `${f.dir}/log.jsonl`;
      await rejectsWith(fs.openAppend(path, { create: false, mode: 0o600 }), "not_found");
      const handle = await fs.openAppend(path, { create: true, mode: 0o600 });
      assert.deepEqual(handle.info, await handle.stat());
      assert.deepEqual([handle.info.kind, handle.info.size, handle.info.mode], ["file", 0, 0o600]);
      await handle.append(new TextEncoder().encode("one\n"));
      await handle.append(new TextEncoder().encode("two\n"));
      await handle.sync();
      await handle.truncate(4);
      await handle.append(new TextEncoder().encode("three\n"));
      await handle.close();
      assert.equal(new TextDecoder().decode(await fs.readFile(path, 100)), "one\nthree\n");
      await rejectsWith(fs.openAppend(f.link(path, "alias.jsonl"), { create: false, mode: 0o600 }), "symlink");
    });

    it("mkdir() is recursive and idempotent; readDir() lists kinds", async () => {
      const f = fixture();
      await fs.mkdir(`${f.dir}/x/y/z`, 0o700);
      await fs.mkdir(`${f.dir}/x/y/z`, 0o700);
      f.file("plain", "p");
      const entries = (await fs.readDir(f.dir)).sort((a, b) => a.name.localeCompare(b.name));
      assert.deepEqual(entries, [{ name: "plain", kind: "file" }, { name: "x", kind: "directory" }]);
      await rejectsWith(fs.mkdir(`${f.dir}/plain/sub`, 0o700), "not_directory");
    });

    it("openDir() lists what readDir() lists, in batches of at most the size asked for", async () => {
      const f = fixture();
      await fs.mkdir(`${f.dir}/sub`, 0o700);
      for (let n = 0; n < 150; n++) f.file(`e${n}`, "");
      f.link("nowhere", "dangling");
      const reader = await fs.openDir(f.dir);
      const batches: number[] = [];
      const listed = [];
      for (let batch = await reader.read(64); batch.length > 0; batch = await reader.read(64)) {
        batches.push(batch.length);
        listed.push(...batch);
      }
      assert.deepEqual(await reader.read(64), [], "the end stays the end");
      await reader.close();
      await reader.close();
      assert.ok(batches.every((size) => size >= 1 && size <= 64), batches.join(","));
      const byName = (a: { name: string }, b: { name: string }) => a.name < b.name ? -1 : 1;
      assert.deepEqual(listed.sort(byName), (await fs.readDir(f.dir)).sort(byName));
      assert.equal(listed.length, 152);
      assert.deepEqual((await reader.read(1)).length, 0, "a closed listing yields nothing");
      const early = await fs.openDir(f.dir);
      assert.equal((await early.read(1)).length, 1);
      await early.close();
      await rejectsWith(fs.openDir(`${f.dir}/missing`), "not_found");
      await rejectsWith(fs.openDir(`${f.dir}/e0`), "not_directory");
    });

    it("realpath() resolves symlinks; lstat() and stat() differ on them", async () => {
      const f = fixture();
      const target = f.file("t", "t");
      const link = f.link(target, "l");
      assert.equal(await fs.realpath(link), await fs.realpath(target));
      assert.equal((await fs.lstat(link)).kind, "symlink");
      assert.equal((await fs.stat(link)).kind, "file");
      await rejectsWith(fs.realpath(`${f.dir}/nope`), "not_found");
    });

    it("rename() and unlink() move and remove files", async () => {
      const f = fixture();
      const from = f.file("from", "data");
      await fs.rename(from, `${f.dir}/to`);
      await rejectsWith(fs.lstat(from), "not_found");
      await fs.unlink(`${f.dir}/to`);
      await rejectsWith(fs.unlink(`${f.dir}/to`), "not_found");
    });

    it("removeDirectory() removes an empty directory and refuses a non-empty one", async () => {
      const f = fixture();
      await fs.mkdir(`${f.dir}/full`, 0o700);
      f.file("full/inside", "data");
      await fs.mkdir(`${f.dir}/empty`, 0o700);
      await fs.removeDirectory(`${f.dir}/empty`);
      await rejectsWith(fs.lstat(`${f.dir}/empty`), "not_found");
      await assert.rejects(fs.removeDirectory(`${f.dir}/full`));
      assert.equal((await fs.lstat(`${f.dir}/full/inside`)).kind, "file");
      await rejectsWith(fs.removeDirectory(`${f.dir}/empty`), "not_found");
    });

    it("removeDirectory() refuses a file and a symlink to a directory as not_directory, and leaves both", async () => {
      const f = fixture();
      const file = f.file("plain", "data");
      await fs.mkdir(`${f.dir}/target`, 0o700);
      const link = f.link(`${f.dir}/target`, "link");
      await rejectsWith(fs.removeDirectory(file), "not_directory");
      await rejectsWith(fs.removeDirectory(link), "not_directory");
      assert.equal((await fs.lstat(file)).kind, "file");
      assert.equal((await fs.lstat(link)).kind, "symlink");
    });
  });
}

const runtimes: [string, () => Runtime][] = [
  ["node", createNodeRuntime],
  ...(deno === null ? [] : [["deno", deno.createDenoRuntime] as [string, () => Runtime]]),
];

for (const [name, create] of runtimes) {
  describe(`Runtime contract: ${name}`, () => {
    const runtime = create();

    it("spawn() pipes stdio and reports the exit code", async () => {
      const child = runtime.spawn("sh", {
        args: ["-c", "read line; echo \"got $line\"; echo oops >&2; exit 3"],
        cwd: scratch,
        env: { PATH: runtime.env("PATH") ?? "/usr/bin:/bin" },
        stdio: { stdin: "pipe", stdout: "pipe", stderr: "pipe" },
        processGroup: false,
      });
      await child.stdin!.write(new TextEncoder().encode("ping\n"));
      await child.stdin!.close();
      let out = "";
      for (let chunk = await child.stdout!.read(); chunk !== null; chunk = await child.stdout!.read()) {
        out += new TextDecoder().decode(chunk);
      }
      assert.equal(out, "got ping\n");
      assert.deepEqual(await child.exited, { code: 3, signal: null });
    });

    it("spawn() with processGroup lets kill() end the whole group", async () => {
      const child = runtime.spawn("sh", {
        args: ["-c", "sleep 30 & sleep 30; wait"],
        cwd: scratch,
        env: { PATH: runtime.env("PATH") ?? "/usr/bin:/bin" },
        stdio: { stdin: "null", stdout: "null", stderr: "null" },
        processGroup: true,
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      child.kill("SIGKILL");
      const status = await child.exited;
      assert.equal(status.code, null);
      assert.equal(status.signal, "SIGKILL");
      let left = true;
      for (let attempt = 0; attempt < 50 && left; attempt++) {
        // Zombies are dead already; whether the sandbox's init reaps them promptly is not ours to test.
        const states = spawnSync("ps", ["-o", "stat=", "-g", String(child.pid)]).stdout.toString();
        left = states.split("\n").some((state) => state.trim() !== "" && !state.trim().startsWith("Z"));
        if (left) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(left, false, "no process left in the group");
    });

    it("setTimer() fires once and dispose() cancels it", async () => {
      let fired = 0;
      runtime.setTimer(1, () => fired++);
      runtime.setTimer(1, () => fired += 10).dispose();
      await new Promise((resolve) => setTimeout(resolve, 30));
      assert.equal(fired, 1);
    });

    it("isProcessAlive() is true for this process, false for a reaped child and for non-pids", async () => {
      assert.equal(runtime.isProcessAlive(runtime.pid), true);
      // pid 1 always exists; for anyone but root the probe fails with EPERM, which still means alive.
      assert.equal(runtime.isProcessAlive(1), true);
      const child = runtime.spawn("sh", {
        args: ["-c", "exit 0"],
        cwd: scratch,
        env: { PATH: runtime.env("PATH") ?? "/usr/bin:/bin" },
        stdio: { stdin: "null", stdout: "null", stderr: "null" },
        processGroup: false,
      });
      await child.exited;
      assert.equal(runtime.isProcessAlive(child.pid), false);
      // 0 and negatives would address process groups; fractions and huge values are no pid_t.
      for (const pid of [0, -1, -child.pid, 1.5, Number.NaN, 2 ** 31]) assert.equal(runtime.isProcessAlive(pid), false, String(pid));
    });

    it("hostname() is the operating system's host name", () => {
      assert.equal(runtime.hostname(), hostname() === "" ? null : hostname());
    });

    it("randomUUID() returns distinct version-4 UUIDs and clocks advance", () => {
      const a = runtime.randomUUID();
      assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.notEqual(a, runtime.randomUUID());
      assert.ok(runtime.monotonicNow() >= 0);
      assert.ok(Math.abs(runtime.wallNow() - Date.now()) < 5_000);
      assert.equal(runtime.cwd(), process.cwd());
    });
  });
}

/**
 * `bytes` fed to a new hash of `runtime` in the pieces `cuts` makes, through
 * one buffer overwritten after each update (the caller may reuse its buffer
 * once update() returns, as the session reader does), then digested.
 */
function digestInCuts(runtime: Runtime, bytes: Uint8Array, cuts: readonly number[]): string {
  const hash = runtime.createSha256();
  const scratch = new Uint8Array(bytes.length);
  let from = 0;
  for (const cut of [...cuts.map((c) => c % (bytes.length + 1)).sort((a, b) => a - b), bytes.length]) {
    scratch.set(bytes.subarray(from, cut));
    hash.update(scratch.subarray(0, cut - from));
    scratch.fill(0xa5);
    from = Math.max(from, cut);
  }
  return hash.digest();
}

const hashers: [string, Runtime][] = [...runtimes.map(([name, create]): [string, Runtime] => [name, create()]), ["memory", createMemoryRuntime()]];

for (const [name, runtime] of hashers) {
  describe(`Runtime contract: ${name} createSha256()`, () => {
    it("createSha256() digests bytes fed in any cut exactly as sha256Hex() digests them whole", async () => {
      await fc.assert(
        fc.asyncProperty(fc.uint8Array({ maxLength: 4_096 }), fc.array(fc.nat(4_096), { maxLength: 6 }), async (bytes, cuts) => {
          assert.equal(digestInCuts(runtime, bytes, cuts), await sha256Hex(bytes));
        }),
        { numRuns: fuzzRuns(100) },
      );
      assert.equal(runtime.createSha256().digest(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    });

    it("createSha256() agrees on inputs at and around 16,384 bytes, cut anywhere (Deno's JavaScript hash hands over to the native one there)", async () => {
      // 16,384 is SMALL_HASH_BYTES of runtime/deno-runtime.ts, which this file cannot import under Node.
      const near = fc.integer({ min: 16_378, max: 16_390 });
      await fc.assert(
        fc.asyncProperty(fc.oneof(near, fc.integer({ min: 0, max: 70_000 })), fc.array(fc.oneof(fc.nat(70_000), near), { maxLength: 5 }), fc.nat(255), async (length, cuts, fill) => {
          const bytes = new Uint8Array(length).map((_, index) => (index * 31 + fill) & 0xff);
          assert.equal(digestInCuts(runtime, bytes, cuts), await sha256Hex(bytes));
        }),
        { numRuns: fuzzRuns(40) },
      );
    });

    it("createSha256() refuses an update or a digest after its digest, on every runtime", () => {
      for (const size of [10, 20_000]) {
        const hash = runtime.createSha256();
        hash.update(new Uint8Array(size));
        hash.digest();
        assert.throws(() => hash.update(new Uint8Array(1)));
        assert.throws(() => hash.digest());
      }
    });
  });
}

describe("Runtime contract: memory process table", () => {
  it("isProcessAlive() knows only its own pid by default; a shared set simulates one host", () => {
    const alone = createMemoryRuntime({ pid: 100 });
    assert.equal(alone.isProcessAlive(100), true);
    assert.equal(alone.isProcessAlive(101), false);
    const host = new Set([200, 201]);
    const first = createMemoryRuntime({ pid: 200, livePids: host });
    const second = createMemoryRuntime({ pid: 201, livePids: host });
    assert.equal(first.isProcessAlive(201), true);
    second.livePids.delete(201);
    assert.equal(first.isProcessAlive(201), false);
  });

  it("hostname() is \"memory\" unless configured, and may be null", () => {
    assert.equal(createMemoryRuntime().hostname(), "memory");
    assert.equal(createMemoryRuntime({ hostname: "far" }).hostname(), "far");
    assert.equal(createMemoryRuntime({ hostname: null }).hostname(), null);
  });
});
