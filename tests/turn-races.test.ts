/**
 * Races between `turn.cancel`, provider completion, `approval.answer`
 * (allow/deny), approval expiry and EOF, over whole turns on the memory
 * runtime with a loopback fake provider.
 *
 * Every run scripts the same turn: step 1 streams text and a `write_file`
 * call (policy `ask`) and is held at gate G1 before its terminal event;
 * step 2 (after the tool result) streams "Done." and is held at gate G2. A
 * generated list of actions (release a gate, cancel, answer allow/deny, let
 * the approval expire by advancing the runtime's ManualClock 60,000 ms,
 * EOF), each after a generated number of event-loop turns, decides the
 * interleaving; the real HTTP stream and the run's own awaits race with it.
 *
 * What the implementation guarantees, and what is asserted for every
 * interleaving:
 *
 * - exactly one `run.finished` per run, and no event of the run after it;
 * - `turn.cancel` is accepted iff it was processed before `run.finished`
 *   was handed to the writer (accepted ⇒ its response precedes the terminal
 *   frame; `stale_run` ⇒ it follows it);
 * - the outcome is `cancelled` only if a cancel was accepted or EOF was
 *   sent; and it is `cancelled` whenever that cancel/EOF happened while the
 *   run could not yet complete (a gate still held, or the approval still
 *   pending). A cancel that lands after both gates opened and the approval
 *   settled may lose to completion: `cancellation_requested` promises no
 *   rollback, and the run may report `completed`;
 * - the approval is settled exactly once: the first answer while it is
 *   pending is `recorded`, every other answer (unknown id, after another
 *   answer, after expiry, after cancel, after the run) is `stale_approval`;
 * - the tool writes its file only after a recorded allow; a denied, expired
 *   or cancelled approval never runs it; an allowed one without any
 *   cancel/EOF always does, and the run completes;
 * - after `run.finished`, `status` is idle, the old run is `stale_run`, and a
 *   follow-up `turn.start` is admitted and completes; EOF then exits 0.
 *
 * @module
 */

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { ManualClock } from "../runtime/memory.ts";
import type { ProviderApi } from "../src/config/settings.ts";
import { type FakeProvider, Gate, type Script, startFakeProvider } from "./support/fake-provider.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { guarded, HANG_GUARD_MS } from "./support/hang-guard.ts";
import { type Frame, line } from "./support/harness.ts";
import { reply } from "./support/provider-scripts.ts";
import { CWD, startTurnServer, type TurnServer } from "./support/turns.ts";

const APIS: readonly ProviderApi[] = ["openai-chat", "openai-responses", "anthropic-messages"];
const EXPIRY_MS = 60_000;
const OUT = `${CWD}/out.txt`;
const FOLLOW_UP = "FOLLOWUP please answer";

type Action =
  | { readonly kind: "release"; readonly gate: 0 | 1 }
  | { readonly kind: "cancel" }
  | { readonly kind: "answer"; readonly allow: boolean; readonly settleFirst?: boolean }
  | { readonly kind: "expire" }
  | { readonly kind: "settle" }
  | { readonly kind: "eof" };

interface Step {
  /** Event-loop turns to let pass before the action. */
  readonly ticks: number;
  readonly action: Action;
}

type ApprovalState = "none" | "pending" | "allowed" | "denied" | "expired" | "cancelled";

/** The index, in the SSE event list of {@link reply}, after which the gate holds the stream: just before the terminal event. */
function gateIndex(api: ProviderApi, withCall: boolean): number {
  // chat: text, [call], finish chunk, usage chunk, [DONE]: hold after the last content chunk.
  if (api === "openai-chat") return withCall ? 1 : 0;
  // anthropic: message_start, block start, text delta, block stop, [tool start, json delta, stop], message_delta, message_stop.
  if (api === "anthropic-messages") return withCall ? 6 : 3;
  // responses: created, item added, text delta, item done, [call added, args delta, call done], completed.
  return withCall ? 6 : 3;
}

/** A script source keyed by what the request carries, so stray and follow-up requests get the right reply. */
function handlerFor(api: ProviderApi, gates: readonly [Gate, Gate]): (request: { body: unknown }) => Script {
  const first = reply(api, {
    text: ["Let me write the file."],
    calls: [{ id: "call_1", name: "write_file", args: { path: "out.txt", content: "raced\n" } }],
    gates: new Map([[gateIndex(api, true), gates[0]]]),
  });
  const second = reply(api, { text: ["Done."], gates: new Map([[gateIndex(api, false), gates[1]]]) });
  const followUp = reply(api, { text: ["Follow-up answer."] });
  return (request) => {
    const body = JSON.stringify(request.body);
    if (body.includes("FOLLOWUP")) return followUp;
    return body.includes("call_1") ? second : first;
  };
}

/** One macrotask, after firing every runtime timer already due (a `setTimer(0)` yield under the manual clock). */
async function tick(clock: ManualClock): Promise<void> {
  clock.advance(0);
  await new Promise<void>((resolve) => setTimeout(resolve, 0));
  clock.advance(0);
}

/** Lets the loop run until `done()` holds; a hang guard (real time, never a speed claim) names `what` if it never does. */
async function pump(clock: ManualClock, done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + HANG_GUARD_MS;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`Gave up waiting for ${what} after ${HANG_GUARD_MS} ms (hang guard)`);
    await tick(clock);
  }
}

const eventsOf = (frames: readonly Frame[], runId: string) =>
  frames.filter((frame) => frame.type === "event" && (frame.data as { run_id?: string }).run_id === runId);

/** Drives one turn through `steps` and checks every guarantee listed in the module comment. */
async function race(provider: FakeProvider, api: ProviderApi, steps: readonly Step[]): Promise<void> {
  const clock = new ManualClock();
  const gates: [Gate, Gate] = [new Gate(), new Gate()];
  provider.handler = handlerFor(api, gates);
  const server: TurnServer = await startTurnServer(api, { provider, clock });
  let ids = 0;
  const send = async (method: string, params: Record<string, unknown>): Promise<Frame> => {
    const id = `r${++ids}`;
    server.runtime.input.push(line(id, method, params));
    let response: Frame | undefined;
    await pump(clock, () => (response = server.frames().find((frame) => frame.type === "response" && frame.id === id)) !== undefined, `the ${method} response`);
    return response!;
  };

  const created = await send("session.create", {});
  const sessionId = (created.result as { session_id: string }).session_id;
  const started = await send("turn.start", { session_id: sessionId, prompt: "Write out.txt" });
  const runId = (started.result as { run_id: string }).run_id;
  assert.equal((started.result as { accepted: boolean }).accepted, true);

  const released = [false, false];
  let approvalId: string | null = null;
  let approval = "none" as ApprovalState;
  let allowRecorded = false;
  let eof = false;
  let stopWhileBlocked = false;
  let stopped = false;
  const cancels: { response: Frame; blocked: boolean }[] = [];
  const answers: { response: Frame; expected: "recorded" | "stale_approval" }[] = [];

  const finished = () => eventsOf(server.frames(), runId).find((frame) => frame.event === "run.finished");
  /** Catches up with what the run showed: the approval it requested. */
  const observe = () => {
    const requested = eventsOf(server.frames(), runId).filter((frame) => frame.event === "approval.requested");
    assert.ok(requested.length <= 1, "one tool call asks at most once");
    if (requested.length === 1 && approvalId === null) {
      const data = requested[0]!.data as { approval_id: string; expires_in_ms: number };
      approvalId = data.approval_id;
      // An approval requested after the run's broker was cancelled is born denied (expires_in_ms 0).
      approval = data.expires_in_ms === 0 ? "cancelled" : "pending";
      if (data.expires_in_ms !== 0) assert.equal(data.expires_in_ms, EXPIRY_MS);
    }
  };
  /** Waits for the approval (or the end), but only when the run can get there without further help. */
  const settle = async () => {
    if (!released[0] && !stopped) return;
    await pump(clock, () => {
      observe();
      return approvalId !== null || finished() !== undefined;
    }, "the approval or the end of the run");
  };
  const blocked = () => !released[0] || !released[1] || approval === "pending";

  for (const { ticks, action } of steps) {
    for (let i = 0; i < ticks; i++) await tick(clock);
    observe();
    if (eof && action.kind !== "release") continue;
    switch (action.kind) {
      case "release":
        released[action.gate] = true;
        gates[action.gate].release();
        break;
      case "cancel": {
        const wasBlocked = blocked();
        const response = await send("turn.cancel", { session_id: sessionId, run_id: runId });
        cancels.push({ response, blocked: wasBlocked });
        if (response.result !== undefined) {
          stopped = true;
          if (wasBlocked) stopWhileBlocked = true;
          if (approval === "pending") approval = "cancelled";
        }
        break;
      }
      case "answer": {
        if (action.settleFirst) await settle();
        const pending = approval === "pending";
        const id = approvalId ?? crypto.randomUUID();
        const response = await send("approval.answer", { session_id: sessionId, run_id: runId, approval_id: id, allow: action.allow });
        answers.push({ response, expected: pending ? "recorded" : "stale_approval" });
        if (pending) {
          approval = action.allow ? "allowed" : "denied";
          allowRecorded ||= action.allow;
        }
        break;
      }
      case "expire":
        clock.advance(EXPIRY_MS);
        if (approval === "pending") approval = "expired";
        break;
      case "settle":
        await settle();
        break;
      case "eof":
        eof = true;
        if (blocked()) stopWhileBlocked = true;
        if (approval === "pending") approval = "cancelled";
        server.runtime.input.end();
        break;
    }
  }

  // Unblock everything the actions left held, so the run (and the fake provider's handlers) can end.
  for (const index of [0, 1] as const) {
    released[index] = true;
    gates[index].release();
  }
  if (eof) {
    assert.equal(await guarded(server.exit, "the exit after EOF"), 0, "EOF drains the cancelled run and exits 0");
  } else {
    await pump(clock, () => {
      observe();
      if (approval === "pending") {
        clock.advance(EXPIRY_MS);
        approval = "expired";
      }
      return finished() !== undefined;
    }, "run.finished");
  }

  // Exactly one terminal event, and nothing of the run after it.
  const frames = server.frames();
  const events = eventsOf(frames, runId);
  const terminals = events.filter((frame) => frame.event === "run.finished");
  assert.equal(terminals.length, 1, "exactly one run.finished");
  assert.equal(events.at(-1), terminals[0], "no event of the run after run.finished");
  const terminal = terminals[0]!;
  const data = terminal.data as { outcome: string; persistence: string; error_code: string | null; revision: string | null };

  // Cancellation: accepted exactly while the run was active, and decisive while the run was held.
  for (const { response } of cancels) {
    if (response.result !== undefined) {
      assert.deepEqual(response.result, { cancellation_requested: true });
      assert.ok(response.seq < terminal.seq, "an accepted cancel precedes the terminal event");
    } else {
      assert.deepEqual(response.error, { code: "stale_run" });
      assert.ok(response.seq > terminal.seq, "a stale_run cancel follows the terminal event");
    }
  }
  assert.notEqual(data.outcome, "failed", `no failure in a plain race: ${JSON.stringify(data)}`);
  assert.equal(data.error_code, null);
  if (data.outcome === "cancelled") assert.ok(stopped || eof, "cancelled only after an accepted cancel or EOF");
  if (stopWhileBlocked) assert.equal(data.outcome, "cancelled", "a cancel/EOF while the run was held wins");
  const persisted = events.some((frame) => frame.event === "input.persisted");
  assert.equal(data.persistence, persisted ? "durable" : "not_started");
  assert.equal(data.revision === null, !persisted);
  if (!persisted) assert.equal(data.outcome, "cancelled");

  // The approval: first pending answer wins, every other is stale; only a recorded allow runs the tool.
  for (const { response, expected } of answers) {
    if (expected === "recorded") assert.deepEqual(response.result, { recorded: true });
    else assert.deepEqual(response.error, { code: "stale_approval" });
  }
  const written = server.runtime.fs.exists(OUT);
  if (written) {
    assert.ok(allowRecorded, "the tool ran only after a recorded allow");
    assert.equal(new TextDecoder().decode(server.runtime.fs.contents(OUT)), "raced\n");
  }
  if (allowRecorded && !stopped && !eof) {
    assert.ok(written, "an allowed call without cancellation runs");
    assert.equal(data.outcome, "completed");
  }
  if (approval === "denied" || approval === "expired") {
    const states = events.filter((frame) => frame.event === "activity").map((frame) => (frame.data as { state: string }).state);
    assert.deepEqual(states, ["failed"], "a refused call reports one failed activity and never starts");
  }
  if (data.outcome === "completed") {
    assert.ok(approvalId !== null, "a completed run went through the approval");
    assert.equal(data.persistence, "durable");
  }

  if (eof) return;

  // Settled for good: later answers are stale, the run is stale, the worker is idle and admits the next turn.
  const late = await send("approval.answer", { session_id: sessionId, run_id: runId, approval_id: approvalId ?? crypto.randomUUID(), allow: true });
  assert.deepEqual(late.error, { code: "stale_approval" });
  const lateCancel = await send("turn.cancel", { session_id: sessionId, run_id: runId });
  assert.deepEqual(lateCancel.error, { code: "stale_run" });
  const status = await send("status", {});
  assert.equal((status.result as { state: string }).state, "idle");
  assert.equal((status.result as { run_id: unknown }).run_id ?? null, null);
  const next = await send("turn.start", { session_id: sessionId, prompt: FOLLOW_UP });
  assert.ok(next.result, `follow-up admitted: ${JSON.stringify(next.error)}`);
  const nextRun = (next.result as { run_id: string }).run_id;
  await pump(clock, () => eventsOf(server.frames(), nextRun).some((frame) => frame.event === "run.finished"), "the follow-up's run.finished");
  const nextEnd = eventsOf(server.frames(), nextRun).at(-1)!.data as { outcome: string };
  assert.equal(nextEnd.outcome, "completed");
  // The earlier approval stays stale while another run is active too (nothing lets it authorize again).
  if (!written) assert.equal(server.runtime.fs.exists(OUT), false);
  server.runtime.input.end();
  assert.equal(await guarded(server.exit, "the exit after EOF"), 0);
  assert.equal(eventsOf(server.frames(), runId).length, events.length, "no event of the first run arrived later");
}

const answerArb: fc.Arbitrary<Action> = fc.record({ allow: fc.boolean(), settleFirst: fc.boolean() }).map((answer) => ({ kind: "answer", ...answer }));
const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<Action>({ kind: "release", gate: 0 }, { kind: "release", gate: 1 }) },
  { weight: 2, arbitrary: fc.constant<Action>({ kind: "cancel" }) },
  { weight: 3, arbitrary: answerArb },
  { weight: 1, arbitrary: fc.constant<Action>({ kind: "expire" }) },
  { weight: 2, arbitrary: fc.constant<Action>({ kind: "settle" }) },
  { weight: 1, arbitrary: fc.constant<Action>({ kind: "eof" }) },
);
const OPTIONAL: readonly Action[] = [{ kind: "cancel" }, { kind: "expire" }, { kind: "eof" }, { kind: "settle" }];
/**
 * A permutation of both gate releases, one answer and a subset of the other
 * actions (a second answer among them): every ordering of the meaningful
 * events, including the ones where nothing is left to race.
 */
const permutedActions: fc.Arbitrary<Action[]> = fc
  .tuple(answerArb, fc.option(answerArb, { nil: undefined }), fc.subarray([...OPTIONAL]))
  .chain(([answer, second, extra]) => {
    const pool: Action[] = [{ kind: "release", gate: 0 }, { kind: "release", gate: 1 }, answer, ...(second === undefined ? [] : [second]), ...extra];
    return fc.shuffledSubarray(pool, { minLength: pool.length, maxLength: pool.length });
  });
const stepsArb: fc.Arbitrary<Step[]> = fc
  .oneof({ weight: 3, arbitrary: permutedActions }, { weight: 1, arbitrary: fc.array(actionArb, { maxLength: 7 }) })
  .chain((actions) => fc.tuple(...actions.map((action) => fc.nat({ max: 4 }).map((ticks): Step => ({ ticks, action })))));

const at = (action: Action, ticks = 0): Step => ({ ticks, action });
const R0 = at({ kind: "release", gate: 0 });
const R1 = at({ kind: "release", gate: 1 });
const SETTLE = at({ kind: "settle" });
/** Hand-picked interleavings every API goes through before the generated ones. */
const NAMED: readonly (readonly Step[])[] = [
  [R0, SETTLE, at({ kind: "answer", allow: true }), R1], // allowed and completed
  [R0, SETTLE, at({ kind: "answer", allow: false }), at({ kind: "answer", allow: true }), R1], // denied, then stale
  [R0, SETTLE, at({ kind: "expire" }), at({ kind: "answer", allow: true }), R1], // expired, then stale
  [R0, SETTLE, at({ kind: "cancel" }), at({ kind: "answer", allow: true })], // cancel while pending, then stale
  [at({ kind: "cancel" }), R0, R1], // cancel while the stream is held
  [R0, SETTLE, at({ kind: "answer", allow: true }), at({ kind: "cancel" })], // allow then cancel at once: tool may run, run cancelled
  [R0, R1, SETTLE, at({ kind: "answer", allow: true }), at({ kind: "cancel" }, 3)], // cancel racing completion
  [R0, SETTLE, at({ kind: "eof" })], // EOF while pending
  [at({ kind: "eof" }, 1)], // EOF while the stream is held
  [R0, R1, SETTLE, at({ kind: "answer", allow: true }), at({ kind: "eof" }, 2)], // EOF racing completion
];

describe("turn races: cancel, completion, approvals, expiry and EOF", () => {
  let provider: FakeProvider;
  before(async () => {
    provider = await startFakeProvider();
  });
  after(async () => {
    await provider.close();
  });

  for (const api of APIS) {
    it(`every interleaving over ${api} keeps one terminal, settled approvals and an idle worker`, async () => {
      await fc.assert(
        fc.asyncProperty(stepsArb, (steps) => race(provider, api, steps)),
        { numRuns: fuzzRuns(12, 20), examples: NAMED.map((steps) => [steps]) },
      );
    });
  }
});
