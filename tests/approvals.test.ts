import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ManualClock } from "../runtime/memory.ts";
import { ErrorCode } from "../src/protocol/errors.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { type ApprovalDecision, type ApprovalHost, ApprovalBroker, type ApprovalRequest } from "../src/runner/approvals.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const EXPIRY = LIMITS.approval_expiry_ms;
const STALE = { ok: false, code: ErrorCode.staleApproval };
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A {@link ManualClock} host that counts live timers: armed and neither fired nor disposed. */
function countingHost(clock = new ManualClock(), uuid: () => string = () => crypto.randomUUID()) {
  const live = new Set<object>();
  const host: ApprovalHost = {
    randomUUID: uuid,
    setTimer(ms, callback) {
      const token = {};
      live.add(token);
      const inner = clock.setTimer(ms, () => {
        live.delete(token);
        callback();
      });
      return {
        dispose: () => {
          live.delete(token);
          inner.dispose();
        },
      };
    },
  };
  return { host, clock, liveTimers: () => live.size };
}

/** `request` after its `approval.requested` reached the writer, which starts the expiry. */
function delivered(request: ApprovalRequest): ApprovalRequest {
  request.delivered();
  return request;
}

/** Resolves a promise's state without waiting for it: "pending" if it has not settled yet. */
async function peek<T>(promise: Promise<T>): Promise<T | "pending"> {
  const marker = Symbol("pending");
  const value = await Promise.race([promise, Promise.resolve().then(() => marker)]);
  return value === marker ? "pending" : (value as T);
}

describe("ApprovalBroker rules", () => {
  it("issues a run-scoped v4 UUID with the spec's expiry and one live timer", async () => {
    const { host, liveTimers } = countingHost();
    const broker = new ApprovalBroker(host);
    const request = delivered(broker.request("shell: npm test"));
    assert.match(request.approvalId, UUID_V4);
    assert.equal(request.expiresInMs, 60_000);
    assert.equal(request.summary, "shell: npm test");
    assert.equal(liveTimers(), 1);
    assert.equal(await peek(request.decision), "pending");
    assert.notEqual(delivered(broker.request("again")).approvalId, request.approvalId);
  });

  it("the expiry starts when approval.requested is delivered, not when it is requested", async () => {
    const { host, clock, liveTimers } = countingHost();
    const broker = new ApprovalBroker(host);
    const request = broker.request("shell: npm test");
    assert.equal(liveTimers(), 0, "no expiry before delivery");
    clock.advance(EXPIRY * 2);
    assert.equal(await peek(request.decision), "pending");
    request.delivered();
    request.delivered();
    assert.equal(liveTimers(), 1, "delivering twice arms one expiry");
    clock.advance(EXPIRY - 1);
    assert.equal(await peek(request.decision), "pending");
    clock.advance(1);
    assert.equal(await request.decision, "expired");
  });

  it("an approval cancelled before delivery never arms its expiry", async () => {
    const { host, liveTimers } = countingHost();
    const broker = new ApprovalBroker(host);
    const request = broker.request("shell: ls");
    broker.cancel("disconnected");
    request.delivered();
    assert.equal(liveTimers(), 0);
    assert.equal(await request.decision, "cancelled");
  });

  for (const allow of [true, false]) {
    it(`first reply (allow=${allow}) wins, disposes the timer, and every later reply is stale`, async () => {
      const { host, clock, liveTimers } = countingHost();
      const broker = new ApprovalBroker(host);
      const request = delivered(broker.request("write_file: a.txt"));
      assert.deepEqual(broker.answer(request.approvalId, allow), { ok: true });
      assert.equal(liveTimers(), 0);
      assert.deepEqual(broker.answer(request.approvalId, !allow), STALE);
      assert.deepEqual(broker.answer(request.approvalId, allow), STALE);
      clock.advance(EXPIRY * 2);
      broker.cancel("cancelled");
      assert.equal(await request.decision, allow ? "allowed" : "denied");
    });
  }

  it("is still pending at 59,999 ms, expired (a deny) at 60,000 ms, and stale afterwards", async () => {
    const { host, clock, liveTimers } = countingHost();
    const broker = new ApprovalBroker(host);
    const request = delivered(broker.request("edit_file: src/a.ts"));
    clock.advance(EXPIRY - 1);
    assert.equal(await peek(request.decision), "pending");
    clock.advance(1);
    assert.equal(await request.decision, "expired");
    assert.equal(liveTimers(), 0);
    assert.deepEqual(broker.answer(request.approvalId, true), STALE);
  });

  it("an allow at 59,999 ms still wins", async () => {
    const { host, clock } = countingHost();
    const broker = new ApprovalBroker(host);
    const request = delivered(broker.request("shell: ls"));
    clock.advance(EXPIRY - 1);
    assert.deepEqual(broker.answer(request.approvalId, true), { ok: true });
    clock.advance(1);
    assert.equal(await request.decision, "allowed");
  });

  it("unknown ids and another run's ids are stale and settle nothing", async () => {
    const { host } = countingHost();
    const broker = new ApprovalBroker(host);
    const other = new ApprovalBroker(countingHost().host);
    const request = delivered(broker.request("shell: ls"));
    const foreign = delivered(other.request("shell: ls"));
    assert.deepEqual(broker.answer(crypto.randomUUID(), true), STALE);
    assert.deepEqual(broker.answer("", true), STALE);
    assert.deepEqual(broker.answer(foreign.approvalId, true), STALE);
    assert.equal(await peek(request.decision), "pending");
    assert.equal(await peek(foreign.decision), "pending");
  });

  for (const reason of ["cancelled", "disconnected"] as const) {
    it(`cancel(${reason}) denies every pending approval (cancelled), refuses new ones and makes all answers stale`, async () => {
      const { host, clock, liveTimers } = countingHost();
      const broker = new ApprovalBroker(host);
      const answered = delivered(broker.request("read: a"));
      const open = [delivered(broker.request("shell: a")), delivered(broker.request("shell: b"))];
      broker.answer(answered.approvalId, true);
      assert.equal(broker.cancel(reason), 2);
      assert.equal(liveTimers(), 0);
      assert.deepEqual(await Promise.all(open.map((r) => r.decision)), ["cancelled", "cancelled"]);
      assert.equal(await answered.decision, "allowed");
      for (const r of [answered, ...open]) assert.deepEqual(broker.answer(r.approvalId, true), STALE);

      const late = delivered(broker.request("shell: c"));
      assert.equal(late.expiresInMs, 0);
      assert.equal(await late.decision, "cancelled");
      assert.equal(liveTimers(), 0);
      assert.deepEqual(broker.answer(late.approvalId, true), STALE);

      assert.equal(broker.cancel("cancelled"), 0);
      clock.advance(EXPIRY);
    });
  }

  it("never issues an id twice, and stops if the host's UUIDs keep repeating", () => {
    const ids = ["a", "a", "b", "b", "b", "b", "b"];
    const broker = new ApprovalBroker(countingHost(undefined, () => ids.shift() ?? "z").host);
    assert.equal(delivered(broker.request("x")).approvalId, "a");
    assert.equal(delivered(broker.request("y")).approvalId, "b");
    assert.throws(() => delivered(broker.request("z")), /repeating/);
  });
});

/** `deliveredAt` is when `approval.requested` reached the writer (null before), which starts the expiry. */
type Model = { status: "pending" | ApprovalDecision; deliveredAt: number | null };

describe("ApprovalBroker under fc.scheduler()", () => {
  it("answers, delivery, expiry and cancel race: one decision each, never changed, allowed only by a winning allow", async () => {
    const plan = fc.record({
      late: fc.boolean(), // requested from a scheduled task instead of up front
      answers: fc.array(fc.boolean(), { maxLength: 3 }), // allow, deny, second answers …
    });
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(plan, { minLength: 1, maxLength: 4 }),
        fc.array(fc.constantFrom(1, 30_000, EXPIRY - 1, EXPIRY), { maxLength: 3 }),
        fc.option(fc.constantFrom("cancelled" as const, "disconnected" as const), { nil: null }),
        async (s, plans, advances, cancelReason) => {
          const { host, clock, liveTimers } = countingHost();
          const broker = new ApprovalBroker(host);
          let cancelled = false;
          const seen: { id: string; model: Model; decisions: ApprovalDecision[] }[] = [];

          const check = () => {
            // Only delivered approvals have an expiry running.
            const pending = seen.filter((a) => a.model.status === "pending" && a.model.deliveredAt !== null).length;
            assert.equal(liveTimers(), pending);
            for (const a of seen) {
              assert.ok(a.decisions.length <= 1, "an approval decided twice");
              if (a.decisions.length === 1) assert.equal(a.decisions[0], a.model.status);
            }
          };
          const act = (label: string, action: () => void) =>
            void s.schedule(Promise.resolve(), label).then(() => {
              action();
              check();
            });

          const request = (answers: readonly boolean[]) => {
            const issued = broker.request("shell: npm test");
            const entry = { id: issued.approvalId, model: { status: "pending", deliveredAt: null } as Model, decisions: [] as ApprovalDecision[] };
            act("delivered", () => {
              issued.delivered();
              if (entry.model.status === "pending") entry.model.deliveredAt = clock.now();
            });
            if (cancelled) {
              entry.model.status = "cancelled";
              assert.equal(issued.expiresInMs, 0);
            }
            seen.push(entry);
            void issued.decision.then((d) => entry.decisions.push(d));
            answers.forEach((allow, i) =>
              act(`answer#${i}(${allow})`, () => {
                const result = broker.answer(issued.approvalId, allow);
                if (entry.model.status !== "pending") return assert.deepEqual(result, STALE);
                assert.deepEqual(result, { ok: true });
                entry.model.status = allow ? "allowed" : "denied";
              })
            );
          };

          for (const p of plans) {
            if (p.late) act("request", () => request(p.answers));
            else request(p.answers);
          }
          for (const ms of advances) {
            act(`advance(${ms})`, () => {
              clock.advance(ms);
              for (const a of seen) {
                const { deliveredAt } = a.model;
                if (a.model.status === "pending" && deliveredAt !== null && clock.now() >= deliveredAt + EXPIRY) a.model.status = "expired";
              }
            });
          }
          if (cancelReason !== null) {
            act(`cancel(${cancelReason})`, () => {
              broker.cancel(cancelReason);
              cancelled = true;
              for (const a of seen) if (a.model.status === "pending") a.model.status = "cancelled";
            });
          }
          check();
          await s.waitIdle();
          await Promise.resolve();
          check();

          // Run cleanup always cancels: nothing stays pending, no timer survives, nothing authorizes later.
          broker.cancel("cancelled");
          for (const a of seen) if (a.model.status === "pending") a.model.status = "cancelled";
          await Promise.all([0, 1, 2].map(() => Promise.resolve()));
          for (const a of seen) assert.deepEqual(a.decisions, [a.model.status]);
          assert.equal(liveTimers(), 0);
          clock.advance(EXPIRY * 2);
          for (const a of seen) assert.deepEqual(broker.answer(a.id, true), STALE);
          assert.deepEqual(seen.map((a) => a.decisions.length), seen.map(() => 1));
        },
      ),
      { numRuns: fuzzRuns(300) },
    );
  });
});
