import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { createMemoryRuntime, ManualClock, type MemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { ErrorCode } from "../src/protocol/errors.ts";
import { inspectLease, LEASE_IDENTITY_SETTLE_MS, removeLeaseIf } from "../src/store/lease-file.ts";
import {
  isLeaseStale,
  Lease,
  LEASE_HEARTBEAT_MS,
  LEASE_STALE_MS,
  type LeaseBody,
  type LeaseHolder,
  leasePath,
} from "../src/store/leases.ts";
import { denoBinary, nodeBinary, repoRoot } from "./support/processes.ts";

const SESSIONS = "/home/user/.magi/sessions";
const PATH = leasePath(SESSIONS, "s1", "writer");

/** Children sharing one memory filesystem, one manual clock and one host's process table. */
function world() {
  const clock = new ManualClock();
  const fs = new MemoryFileSystem({ now: () => clock.wallNow() });
  void fs.mkdir(SESSIONS, 0o700);
  const livePids = new Set<number>();
  const child = (pid: number, hostname: string | null = "memory"): MemoryRuntime => {
    livePids.add(pid);
    return createMemoryRuntime({ clock, fs, pid, livePids, hostname });
  };
  const body = (): LeaseBody => JSON.parse(new TextDecoder().decode(fs.contents(PATH)!));
  return { clock, fs, livePids, child, body };
}

/** Lets the memory filesystem's promise chains (heartbeats fired by the clock) finish. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

async function take(runtime: MemoryRuntime, instanceId: string): Promise<Lease> {
  const acquired = await Lease.acquire(runtime, PATH, { instanceId });
  assert.ok(acquired.ok, `expected ${instanceId} to acquire`);
  return acquired.lease;
}

async function busy(runtime: MemoryRuntime, instanceId: string): Promise<void> {
  assert.deepEqual(await Lease.acquire(runtime, PATH, { instanceId }), { ok: false, code: ErrorCode.sessionBusy });
}

describe("leases on one memory host", () => {
  it("leasePath() is <sessions>/<id>.<kind>.lease", () => {
    assert.equal(leasePath("/m/sessions", "abc", "active"), "/m/sessions/abc.active.lease");
    assert.equal(PATH, `${SESSIONS}/s1.writer.lease`);
  });

  it("acquire() creates the file exclusively, 0600, with the documented body", async () => {
    const w = world();
    await take(w.child(10), "inst-a");
    const at = new Date(w.clock.wallNow()).toISOString();
    assert.deepEqual(w.body(), { v: 1, pid: 10, instance_id: "inst-a", host: "memory", acquired_at: at, heartbeat_at: at });
    assert.equal((await w.fs.lstat(PATH)).mode, 0o600);
  });

  it("the same instance re-acquires without rewriting; another live instance is session_busy", async () => {
    const w = world();
    const a = w.child(10);
    const first = await take(a, "inst-a");
    const before = w.fs.contents(PATH);
    w.clock.advance(5_000);
    const again = await take(a, "inst-a");
    assert.equal(again, first, "ownership is one object: re-acquiring returns the held lease itself");
    assert.deepEqual(w.fs.contents(PATH), before);
    await busy(w.child(11), "inst-b");
    assert.deepEqual(w.fs.contents(PATH), before);
  });

  it("a dead pid on this host is stale at once; on another host only its heartbeat age counts", async () => {
    const w = world();
    await take(w.child(10), "inst-a");
    w.livePids.delete(10);
    await take(w.child(11), "inst-b");
    assert.equal(w.body().instance_id, "inst-b");

    const far = w.child(12, "far-host");
    w.livePids.delete(11);
    await busy(far, "inst-c"); // pid 11 means nothing on far-host.
    w.clock.advance(LEASE_STALE_MS + 1);
    await take(far, "inst-c");
  });

  it("a heartbeat 60,000 ms old is held, 60,001 ms old is stale; renewals every 15 s keep it held", async () => {
    const w = world();
    await take(w.child(10), "silent");
    const other = w.child(11);
    w.clock.advance(LEASE_STALE_MS);
    await busy(other, "other");
    w.clock.advance(1);
    await take(other, "other");

    const v = world();
    const beating = v.child(20);
    const setTimer = beating.setTimer;
    let armed = 0;
    beating.setTimer = (ms, callback) => (armed++, setTimer(ms, callback));
    const lease = await take(beating, "beating");
    lease.startHeartbeat();
    const rival = v.child(21);
    for (let step = 0; step < 8; step++) {
      v.clock.advance(LEASE_HEARTBEAT_MS);
      await settle();
      await busy(rival, "rival");
    }
    assert.equal(v.body().heartbeat_at, new Date(v.clock.wallNow()).toISOString());
    assert.equal(v.body().acquired_at, new Date(v.clock.wallNow() - 8 * LEASE_HEARTBEAT_MS).toISOString());
    assert.deepEqual((await v.fs.readDir(SESSIONS)).map((entry) => entry.name), ["s1.writer.lease"], "no temporary left");
    assert.equal(armed, 9, "one renewal armed at a time");
    await lease.release();
    v.clock.advance(LEASE_HEARTBEAT_MS * 4);
    await settle();
    assert.equal(armed, 9, "release stops the heartbeat");
    assert.equal(v.fs.exists(PATH), false);
  });

  for (const [label, content] of [["garbage", "{not json"], ["empty", ""], ["oversized", "x".repeat(2048)], ["a newer version", "{\"v\":2}"]] as const) {
    it(`an unparseable lease file (${label}) is held until its mtime is over 60 s old`, async () => {
      const w = world();
      w.fs.writeFile(PATH, content, 0o600);
      const a = w.child(10);
      w.clock.advance(LEASE_STALE_MS);
      await busy(a, "inst-a");
      w.clock.advance(1);
      await take(a, "inst-a");
      assert.equal(w.body().instance_id, "inst-a");
    });
  }

  it("release() removes only our own file and is idempotent", async () => {
    const w = world();
    const a = await take(w.child(10), "inst-a");
    assert.deepEqual(await a.release(), { ok: true });
    assert.equal(w.fs.exists(PATH), false);
    assert.deepEqual(await a.release(), { ok: true });
    assert.equal(a.state, "released");

    const old = await take(w.child(11), "old");
    w.livePids.delete(11);
    await take(w.child(12), "new");
    assert.deepEqual(await old.release(), { ok: true });
    assert.equal(w.body().instance_id, "new", "a taken-over lease is not removed by its former holder");
  });

  it("heartbeat() and verify() after someone replaced the file report session_busy and mark the lease lost", async () => {
    const w = world();
    const a = await take(w.child(10), "inst-a");
    a.startHeartbeat(LEASE_HEARTBEAT_MS);
    w.livePids.delete(10); // Looks dead to the rival (a reused pid namespace, say), though it still runs.
    await take(w.child(11), "inst-b");
    w.clock.advance(LEASE_HEARTBEAT_MS);
    await settle();
    assert.equal(a.state, "lost");
    assert.deepEqual(await a.heartbeat(), { ok: false, code: ErrorCode.sessionBusy });
    assert.deepEqual(await a.verify(), { ok: false, code: ErrorCode.sessionBusy });
    assert.equal(w.body().instance_id, "inst-b", "the rival's file is untouched");
  });

  it("verify() and release() read the file only when its identity moved since the last read that found it ours", async () => {
    const w = world();
    const a = await take(w.child(10), "inst-a");
    const readFile = w.fs.readFile.bind(w.fs);
    let reads = 0;
    w.fs.readFile = (path, maxBytes) => (reads++, readFile(path, maxBytes));
    w.clock.advance(1_000);
    for (let i = 0; i < 3; i++) assert.deepEqual(await a.verify(), { ok: true });
    assert.equal(reads, 1, "one read; then an lstat showing the same device, inode, size and mtime answers");
    assert.deepEqual(await a.heartbeat(), { ok: true });
    w.clock.advance(1_000);
    assert.deepEqual(await a.verify(), { ok: true });
    assert.equal(reads, 2, "the renewal renamed a new file over the lease: read again");
    assert.deepEqual(await a.release(), { ok: true });
    assert.equal(reads, 2);
    assert.equal(w.fs.exists(PATH), false);

    const b = await take(w.child(11), "inst-b");
    w.clock.advance(1_000);
    assert.deepEqual(await b.verify(), { ok: true });
    // A rival's file at the same name is another file object, whatever its size and mtime.
    w.fs.writeFile(PATH, JSON.stringify({ ...w.body(), instance_id: "inst-c" }), 0o600);
    assert.deepEqual(await b.verify(), { ok: false, code: ErrorCode.sessionBusy });
    assert.deepEqual(await b.release(), { ok: true });
    assert.equal(w.body().instance_id, "inst-c", "a lost lease's release leaves the rival's file alone");
  });

  it(`a lease read within ${LEASE_IDENTITY_SETTLE_MS} ms of its write is read again at every check: a replacement in the same clock tick could share its mtime`, async () => {
    const w = world();
    const a = await take(w.child(10), "inst-a");
    const readFile = w.fs.readFile.bind(w.fs);
    let reads = 0;
    w.fs.readFile = (path, maxBytes) => (reads++, readFile(path, maxBytes));
    w.clock.advance(LEASE_IDENTITY_SETTLE_MS);
    assert.deepEqual(await a.verify(), { ok: true });
    assert.deepEqual(await a.verify(), { ok: true });
    assert.equal(reads, 2);
    w.clock.advance(1);
    assert.deepEqual(await a.verify(), { ok: true });
    assert.deepEqual(await a.verify(), { ok: true });
    assert.equal(reads, 3, "read once more, after which the identity answers");
  });

  it("a lease judged stale is not removed if it changed before removal", async () => {
    const w = world();
    const a = await take(w.child(10), "inst-a");
    const judged = await inspectLease(w.fs, PATH);
    assert.equal(judged.state, "present");
    w.clock.advance(1);
    assert.deepEqual(await a.heartbeat(), { ok: true });
    assert.equal(await removeLeaseIf(w.fs, PATH, judged.state === "present" ? judged.fingerprint : ""), "changed");
    assert.equal(w.fs.exists(PATH), true);
  });

  it("a lease appears with its content or not at all: a full disk leaves no file, and nothing to wait out", async () => {
    const w = world();
    w.fs.freeBytes = 20; // Part of a body fits, as a write cut short by a full disk.
    assert.deepEqual(await Lease.acquire(w.child(10), PATH, { instanceId: "inst-a" }), { ok: false, code: ErrorCode.persistenceFailed });
    assert.equal(w.fs.exists(PATH), false, "no empty or partial lease file");
    assert.deepEqual((await w.fs.readDir(SESSIONS)).map((entry) => entry.name), [], "no temporary file either");
    w.fs.freeBytes = null;
    const lease = await take(w.child(11), "inst-b");
    assert.equal(w.body().instance_id, "inst-b", "another child takes it at once, not after 60 s");
    assert.deepEqual((await w.fs.readDir(SESSIONS)).map((entry) => entry.name), ["s1.writer.lease"]);
    await lease.release();
  });

  it("filesystem failures are persistence_failed data, never thrown", async () => {
    const w = world();
    const a = w.child(10);
    w.fs.faults.set(PATH, "io");
    assert.deepEqual(await Lease.acquire(a, PATH, { instanceId: "inst-a" }), { ok: false, code: ErrorCode.persistenceFailed });
    w.fs.faults.delete(PATH);
    const lease = await take(a, "inst-a");
    w.fs.faults.set(PATH, "io");
    assert.deepEqual(await lease.heartbeat(), { ok: false, code: ErrorCode.persistenceFailed });
    assert.deepEqual(await lease.release(), { ok: false, code: ErrorCode.persistenceFailed });
    assert.equal(lease.state, "held", "a failed release can be retried");
    w.fs.faults.delete(PATH);
    assert.deepEqual(await lease.release(), { ok: true });
    const invalid = await Lease.acquire(a, PATH, { instanceId: "../escape" });
    assert.deepEqual(invalid, { ok: false, code: ErrorCode.persistenceFailed });
  });

});

describe("isLeaseStale()", () => {
  const now = Date.UTC(2025, 0, 1, 12);
  const parsed = (pid: number, host: string | null, ageMs: number): LeaseHolder => {
    const at = new Date(now - ageMs).toISOString();
    return { state: "parsed", body: { v: 1, pid, instance_id: "x", host, acquired_at: at, heartbeat_at: at } };
  };
  const alive = (pid: number) => pid === 1;

  it("applies the pid rule only when both hosts are known and equal", () => {
    assert.equal(isLeaseStale(parsed(2, "h", 0), now, alive, "h"), true);
    assert.equal(isLeaseStale(parsed(1, "h", 0), now, alive, "h"), false);
    assert.equal(isLeaseStale(parsed(2, "other", 0), now, alive, "h"), false);
    assert.equal(isLeaseStale(parsed(2, null, 0), now, alive, null), false);
    assert.equal(isLeaseStale(parsed(2, "h", 0), now, alive, null), false);
  });

  it("ages heartbeats and unparseable files by strictly more than 60 s", () => {
    assert.equal(isLeaseStale(parsed(1, "h", LEASE_STALE_MS), now, alive, "h"), false);
    assert.equal(isLeaseStale(parsed(1, "h", LEASE_STALE_MS + 1), now, alive, "h"), true);
    assert.equal(isLeaseStale({ state: "unparseable", mtimeMs: now - LEASE_STALE_MS }, now, alive, "h"), false);
    assert.equal(isLeaseStale({ state: "unparseable", mtimeMs: now - LEASE_STALE_MS - 1 }, now, alive, "h"), true);
  });
});

describe("the writer lease across real Node and Deno processes", () => {
  const root = repoRoot();
  const scratch = mkdtempSync(join(tmpdir(), "magi-lease-"));
  after(() => rmSync(scratch, { recursive: true, force: true }));
  const commands = {
    node: [nodeBinary(), join(root, "dist", "tests", "support", "lease-holder.js")],
    deno: [denoBinary(), "run", "--allow-all", "--quiet", join(root, "tests", "support", "lease-holder.ts")],
  } as const;

  /** Starts a holder; `verdict` resolves with its one line, `exited` once it is gone and reaped. */
  function holder(kind: keyof typeof commands, sessionsDir: string) {
    const [command, ...args] = commands[kind];
    const child: ChildProcess = spawn(command, [...args, sessionsDir, "s1"], { stdio: ["pipe", "pipe", "inherit"] });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const verdict = new Promise<string>((resolve) => {
      let text = "";
      child.stdout!.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
        if (text.includes("\n")) resolve(text.split("\n")[0]!);
      });
      child.once("exit", () => resolve(text.split("\n")[0]!));
    });
    return { kind, child, verdict, exited };
  }

  for (const [first, second] of [["node", "deno"], ["deno", "node"]] as const) {
    it(`${first} and ${second} race: exactly one acquires; release and SIGKILL hand the lease on`, async () => {
      const dir = mkdtempSync(join(scratch, `${first}-`));
      const path = join(dir, "s1.writer.lease");
      const racers = [holder(first, dir), holder(second, dir)];
      const verdicts = await Promise.all(racers.map((racer) => racer.verdict));
      assert.deepEqual([...verdicts].sort(), ["acquired", "busy"]);
      const winner = racers[verdicts.indexOf("acquired")]!;
      assert.equal(JSON.parse(readFileSync(path, "utf8")).pid, winner.child.pid);
      for (const racer of racers) racer.child.stdin!.end();
      await Promise.all(racers.map((racer) => racer.exited));
      assert.equal(existsSync(path), false, "the winner released on EOF");

      const third = holder(second, dir);
      assert.equal(await third.verdict, "acquired");
      third.child.kill("SIGKILL");
      await third.exited;
      assert.equal(JSON.parse(readFileSync(path, "utf8")).pid, third.child.pid, "a killed holder leaves its lease");

      const fourth = holder(first, dir);
      assert.equal(await fourth.verdict, "acquired", "the killed holder's pid is dead, so its lease is stale");
      assert.equal(JSON.parse(readFileSync(path, "utf8")).pid, fourth.child.pid);
      fourth.child.stdin!.end();
      await fourth.exited;
      assert.equal(existsSync(path), false);
    });
  }
});
