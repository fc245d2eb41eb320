import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { createMemoryRuntime, ManualClock, type MemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { ErrorCode } from "../src/protocol/errors.ts";
import { Lease, LEASE_STALE_MS, type LeaseBody, leasePath } from "../src/store/leases.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const SESSIONS = "/home/user/.magi/sessions";
const PATH = leasePath(SESSIONS, "s1", "writer");

/** Children 0 and 1 share host alpha, so each can see the other's pid; child 2 is on host beta. */
const HOSTS = ["alpha", "alpha", "beta"] as const;

interface ChildModel {
  pid: number;
  instance: string;
  alive: boolean;
  /** Holds a lease object it has neither released nor seen lost. */
  holding: boolean;
  /** Model time of its last acquisition or successful renewal. */
  lastBeat: number;
}

interface Model {
  now: number;
  /** Who the lease file names, or null when there is none. */
  file: { instance: string; pid: number; host: string; heartbeatAt: number } | null;
  children: ChildModel[];
  nextPid: number;
}

interface Real {
  clock: ManualClock;
  fs: MemoryFileSystem;
  hosts: Record<string, Set<number>>;
  runtimes: MemoryRuntime[];
  leases: (Lease | null)[];
}

type LeaseCommand = fc.AsyncCommand<Model, Real>;

/** Outcomes met across all runs, so the test can show it exercised every path it claims to. */
const seen = { created: 0, reentrant: 0, "taken over (dead pid)": 0, "taken over (old heartbeat)": 0, busy: 0, lost: 0 };

function spawnChild(model: Model, real: Real, index: number): void {
  const pid = model.nextPid++;
  const host = HOSTS[index]!;
  real.hosts[host]!.add(pid);
  real.runtimes[index] = createMemoryRuntime({ clock: real.clock, fs: real.fs, pid, livePids: real.hosts[host]!, hostname: host });
  real.leases[index] = null;
  model.children[index] = { pid, instance: `child${index}-pid${pid}`, alive: true, holding: false, lastBeat: model.now };
}

/** The model's staleness rule, from child `index`'s point of view. */
function staleFor(model: Model, index: number): boolean {
  const file = model.file!;
  const owner = model.children.find((child) => child.instance === file.instance);
  const pidDead = owner === undefined || !owner.alive;
  return (file.host === HOSTS[index] && pidDead) || model.now - file.heartbeatAt > LEASE_STALE_MS;
}

/** After every step: the file matches the model, and no two live children believe they hold a fresh lease. */
function checkInvariants(model: Model, real: Real): void {
  if (model.file === null) {
    assert.equal(real.fs.exists(PATH), false, "no lease file");
  } else {
    const body: LeaseBody = JSON.parse(new TextDecoder().decode(real.fs.contents(PATH)));
    assert.equal(body.instance_id, model.file.instance);
    assert.equal(body.pid, model.file.pid);
    assert.equal(body.host, model.file.host);
    assert.equal(Date.parse(body.heartbeat_at), real.clock.wallNow() - model.now + model.file.heartbeatAt);
  }
  const believers = model.children.flatMap((child, index) =>
    child.alive && real.leases[index]?.state === "held" && model.now - child.lastBeat <= LEASE_STALE_MS ? [child] : []
  );
  assert.ok(believers.length <= 1, `at most one live, fresh holder, got ${believers.map((child) => child.instance)}`);
  if (believers.length === 1) assert.equal(model.file?.instance, believers[0]!.instance, "the fresh holder is the one on file");
}

class Acquire implements LeaseCommand {
  constructor(readonly index: number) {}
  check = (model: Readonly<Model>) => model.children[this.index]!.alive;
  async run(model: Model, real: Real): Promise<void> {
    const child = model.children[this.index]!;
    const expected = model.file === null
      ? "created"
      : model.file.instance === child.instance
      ? "reentrant"
      : staleFor(model, this.index)
      ? "taken over"
      : "busy";
    if (expected === "taken over") {
      const old = model.now - model.file!.heartbeatAt > LEASE_STALE_MS;
      seen[old ? "taken over (old heartbeat)" : "taken over (dead pid)"]++;
    } else seen[expected]++;
    const result = await Lease.acquire(real.runtimes[this.index]!, PATH, { instanceId: child.instance });
    if (expected === "busy") {
      assert.deepEqual(result, { ok: false, code: ErrorCode.sessionBusy });
    } else {
      assert.ok(result.ok, `expected ${expected}`);
      real.leases[this.index] = result.lease;
      child.holding = true;
      if (expected === "reentrant") child.lastBeat = model.file!.heartbeatAt;
      else {
        child.lastBeat = model.now;
        model.file = { instance: child.instance, pid: child.pid, host: HOSTS[this.index]!, heartbeatAt: model.now };
      }
    }
    checkInvariants(model, real);
  }
  toString = () => `acquire(${this.index})`;
}

class Heartbeat implements LeaseCommand {
  constructor(readonly index: number) {}
  check = (model: Readonly<Model>) => model.children[this.index]!.alive && model.children[this.index]!.holding;
  async run(model: Model, real: Real): Promise<void> {
    const child = model.children[this.index]!;
    const ours = model.file?.instance === child.instance;
    const lease = real.leases[this.index]!;
    const result = await lease.heartbeat();
    if (ours) {
      assert.deepEqual(result, { ok: true });
      model.file!.heartbeatAt = model.now;
      child.lastBeat = model.now;
    } else {
      assert.deepEqual(result, { ok: false, code: ErrorCode.sessionBusy });
      assert.equal(lease.state, "lost");
      seen.lost++;
      child.holding = false;
    }
    checkInvariants(model, real);
  }
  toString = () => `heartbeat(${this.index})`;
}

class Release implements LeaseCommand {
  constructor(readonly index: number) {}
  check = (model: Readonly<Model>) => model.children[this.index]!.alive && model.children[this.index]!.holding;
  async run(model: Model, real: Real): Promise<void> {
    const child = model.children[this.index]!;
    const lease = real.leases[this.index]!;
    assert.deepEqual(await lease.release(), { ok: true });
    assert.equal(lease.state, "released");
    if (model.file?.instance === child.instance) model.file = null;
    child.holding = false;
    checkInvariants(model, real);
  }
  toString = () => `release(${this.index})`;
}

class Crash implements LeaseCommand {
  constructor(readonly index: number) {}
  check = (model: Readonly<Model>) => model.children[this.index]!.alive;
  run(model: Model, real: Real): Promise<void> {
    const child = model.children[this.index]!;
    real.hosts[HOSTS[this.index]!]!.delete(child.pid);
    child.alive = false;
    child.holding = false;
    checkInvariants(model, real);
    return Promise.resolve();
  }
  toString = () => `crash(${this.index})`;
}

class Restart implements LeaseCommand {
  constructor(readonly index: number) {}
  check = (model: Readonly<Model>) => !model.children[this.index]!.alive;
  run(model: Model, real: Real): Promise<void> {
    spawnChild(model, real, this.index);
    checkInvariants(model, real);
    return Promise.resolve();
  }
  toString = () => `restart(${this.index})`;
}

class Advance implements LeaseCommand {
  constructor(readonly ms: number) {}
  check = () => true;
  run(model: Model, real: Real): Promise<void> {
    real.clock.advance(this.ms);
    model.now += this.ms;
    checkInvariants(model, real);
    return Promise.resolve();
  }
  toString = () => `advance(${this.ms})`;
}

const child = fc.integer({ min: 0, max: HOSTS.length - 1 });
const acquire = child.map((index): LeaseCommand => new Acquire(index));
const heartbeat = child.map((index): LeaseCommand => new Heartbeat(index));
// Sums of these land exactly on the 60,000 ms boundary as well as either side of it.
const advance = fc.constantFrom(1, 15_000, 30_000, 59_999, 60_001).map((ms): LeaseCommand => new Advance(ms));
// fc.commands picks uniformly, so repeats weight the steps that make contention likely.
const commands = fc.commands(
  [
    acquire,
    acquire,
    heartbeat,
    heartbeat,
    child.map((index): LeaseCommand => new Release(index)),
    child.map((index): LeaseCommand => new Crash(index)),
    child.map((index): LeaseCommand => new Restart(index)),
    advance,
    advance,
  ],
  { maxCommands: 80, size: "max" },
);

describe("writer lease model (fc.commands)", () => {
  it("at most one live holder with a fresh lease; a crashed holder's lease moves only once stale", async () => {
    await fc.assert(
      fc.asyncProperty(commands, async (script) => {
        const clock = new ManualClock();
        const fs = new MemoryFileSystem({ now: () => clock.wallNow() });
        await fs.mkdir(SESSIONS, 0o700);
        const real: Real = { clock, fs, hosts: { alpha: new Set(), beta: new Set() }, runtimes: [], leases: [] };
        const model: Model = { now: 0, file: null, children: [], nextPid: 100 };
        HOSTS.forEach((_, index) => spawnChild(model, real, index));
        await fc.asyncModelRun(() => ({ model, real }), script);
      }),
      { numRuns: fuzzRuns(300, 10) },
    );
    if (globalThis.process?.env?.LEASE_MODEL_STATS) console.error(seen);
    for (const [outcome, count] of Object.entries(seen)) assert.ok(count > 0, `never exercised: ${outcome}`);
  });
});
