/**
 * A request's `signal` and `timeoutMs` through the client library against
 * real children (the Node bundle and the Deno entry over real pipes), on
 * `session.list`, `history.page` and `model.refresh` (its `/models` held by
 * a gate of the loopback fake provider). With `operation.cancel`
 * negotiated, an abort after sending goes out as `operation.cancel` naming
 * the request, and the promise settles once with the child's answer; without
 * it, the promise rejects at once and the late response is dropped; a
 * request still queued is never written, nor is one the child answered
 * `busy` after it was given up (a big stored session keeps the child's
 * worker stopping a cancelled open while the next one arrives). A tap
 * between the library and the child shows what went over the wire, and
 * holds the client's writes so a cancel reaches the child while the
 * operation runs, whatever its speed.
 */

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { RequestAborted, type RequestMethod } from "../src/client/mod.ts";
import type { MethodName } from "../src/protocol/methods.ts";
import type { SessionRecord } from "../src/store/records.ts";
import { type FakeProvider, Gate, startFakeProvider } from "./support/fake-provider.ts";
import { guarded } from "./support/hang-guard.ts";
import { storedRecords, storedText } from "./support/listing.ts";
import { type Launcher, launchers } from "./support/processes.ts";
import { TappedAgent } from "./support/tapped-client.ts";
import { type Workspace, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-client-cancel-"));
after(() => rmSync(root, { recursive: true, force: true }));

const BASE: MethodName[] = ["session.open", "session.list", "history.page", "model.refresh", "shutdown"];
const SESSIONS = 4;

/**
 * A fake provider of the test's own (no script another test left queued can
 * reach it), a workspace with {@link SESSIONS} stored sessions and a child
 * of `launcher` initialized with `capabilities`.
 */
async function started(launcher: Launcher, name: string, capabilities: MethodName[]): Promise<{ agent: TappedAgent; ws: Workspace; fake: FakeProvider }> {
  const fake = await startFakeProvider();
  const ws = workspace(root, `${name}-${launcher.name}`, fake);
  mkdirSync(join(ws.home, "sessions"), { recursive: true, mode: 0o700 });
  for (let n = 0; n < SESSIONS; n++) {
    const id = `s${String(n).padStart(3, "0")}`;
    writeFileSync(join(ws.home, "sessions", `${id}.jsonl`), storedText(storedRecords(id, { cwd: ws.cwd })), { mode: 0o600 });
  }
  const agent = new TappedAgent(launcher, ws.cwd, ws.env);
  await guarded(agent.client.initialize(capabilities), "initialize");
  return { agent, ws, fake };
}

/** Holds the next `/models` request of the fake provider until the gate is released, then answers an OpenAI list. */
function holdRefresh(fake: FakeProvider): Gate {
  const gate = new Gate();
  fake.enqueue({ headers: { "content-type": "application/json" }, chunks: [gate, JSON.stringify({ object: "list", data: [{ id: "qwen" }] })] });
  return gate;
}

type Trigger = "signal" | "timeout";

/**
 * Sends `method` and gives it up while the child has not yet seen it: the
 * tap holds what the client writes, so the caller's abort (a signal
 * aborted as the tap sees the request, or a timeout of 0) comes before any
 * answer can, and then the request and the client's `operation.cancel`
 * reach the child in one read, so the cancel always finds the operation
 * running. Checks the caller's promise and the wire: the request once,
 * `operation.cancel` naming it exactly when negotiated, exactly one
 * response to it (read even when the caller was answered without it), and
 * a next session operation that is not refused busy.
 */
async function giveUp(agent: TappedAgent, method: RequestMethod, params: object, trigger: Trigger, negotiated: boolean): Promise<void> {
  const controller = new AbortController();
  const from = agent.requests.length;
  let cancelSent!: () => void;
  const cancelled = new Promise<void>((resolve) => (cancelSent = resolve));
  agent.onRequest = (request) => {
    if (trigger === "signal" && request.method === method) controller.abort(new Error("the user pressed Stop"));
    if (request.method === "operation.cancel") cancelSent();
  };
  agent.hold();
  const given = agent.client.request(method, params as never, trigger === "signal" ? { signal: controller.signal } : { timeoutMs: 0 });
  const outcome = given.then(() => assert.fail(`${method} resolved`), (error: unknown) => error);
  // Negotiated, the promise waits for the child; otherwise it rejects before anything reaches the child.
  await guarded(negotiated ? cancelled : outcome, "the abort");
  await agent.release();
  const error = await guarded(outcome, `${method} to settle`);
  agent.onRequest = () => {};
  assert.ok(error instanceof RequestAborted, String(error));
  assert.deepEqual([error.method, error.outcome, error.timedOut], [method, negotiated ? "cancelled" : "discarded", trigger === "timeout"]);
  if (trigger === "signal") assert.equal((error.cause as Error).message, "the user pressed Stop");
  // The next exclusive request goes out once the child answered this one; it is not refused busy.
  assert.equal((await agent.client.request("session.list", { limit: 1 })).sessions.length, 1);
  const sent = agent.requests.slice(from);
  const same = sent.filter((r) => r.method === method && JSON.stringify(r.params) === JSON.stringify(params));
  assert.equal(same.length, 1, "sent once");
  const request = same[0]!;
  assert.deepEqual(sent.filter((r) => r.method === "operation.cancel").map((r) => r.params), negotiated ? [{ id: request.id }] : []);
  assert.equal(agent.frames.filter((frame) => frame.type === "response" && frame.id === request.id).length, 1, "answered once");
  if (negotiated) assert.equal(agent.response(request.id)!.error?.code, "operation_cancelled");
}

/**
 * A stored session of 100 turns of 60,000 characters each: opening it takes
 * the child's session worker many slices, so a cancel finds it running and
 * the worker stays occupied for a while after answering it.
 */
function bigSession(id: string, cwd: string): string {
  const at = "2026-01-01T00:00:00.000Z";
  const records: SessionRecord[] = [{ v: 1, type: "session", session_id: id, at, created_at: at, cwd } as SessionRecord];
  const text = "x".repeat(60_000);
  for (let n = 0; n < 100; n++) {
    records.push({ v: 1, type: "turn_started", session_id: id, at, turn_id: `t${n}`, run_id: `run${n}` });
    records.push({ v: 1, type: "user_input", session_id: id, at, turn_id: `t${n}`, message_id: `u${n}`, text: "q" });
    records.push({ v: 1, type: "assistant_message", session_id: id, at, turn_id: `t${n}`, message_id: `a${n}`, text, partial: false });
    records.push({ v: 1, type: "turn_finished", session_id: id, at, turn_id: `t${n}`, outcome: "completed", error_code: null });
  }
  return storedText(records);
}

describe("cancel and timeout through the client library against a real child", () => {
  for (const launcher of launchers().filter((l) => l.name !== "sea")) {
    for (const trigger of ["signal", "timeout"] as const) {
      it(`${launcher.name}: with operation.cancel negotiated, a ${trigger} cancels a sent session.list, history.page and model.refresh`, async () => {
        const { agent, fake } = await started(launcher, `negotiated-${trigger}`, [...BASE, "operation.cancel"]);
        try {
          const opened = await agent.client.request("session.open", { session_id: "s000" });
          await giveUp(agent, "session.list", { limit: 100 }, trigger, true);
          await giveUp(agent, "history.page", { session_id: "s000", revision: opened.revision }, trigger, true);

          // model.refresh waits on the provider's /models, so the cancel always finds it running.
          const gate = holdRefresh(fake);
          const held = fake.log.length;
          const stop = new AbortController();
          const refresh = agent.client.request("model.refresh", { provider: "ollama" }, trigger === "signal" ? { signal: stop.signal } : { timeoutMs: 50 });
          if (trigger === "signal") {
            await fake.until(() => fake.log.length > held);
            // The refresh holds the lane: a page asked for now is still queued, and giving it up sends nothing.
            const queued = new AbortController();
            const pages = agent.sent("history.page").length;
            const page = agent.client.request("history.page", { session_id: "s000", revision: opened.revision }, { signal: queued.signal });
            queued.abort();
            await assert.rejects(page, (error: unknown) => error instanceof RequestAborted && error.outcome === "not_sent");
            assert.equal(agent.sent("history.page").length, pages, "the withdrawn page was never written");
            stop.abort(new Error("the user pressed Stop"));
          }
          await assert.rejects(refresh, (error: unknown) => error instanceof RequestAborted && error.outcome === "cancelled" && error.timedOut === (trigger === "timeout"));
          assert.deepEqual(agent.sent("operation.cancel").at(-1)!.params, { id: agent.sent("model.refresh")[0]!.id });
          // A refresh cancelled after its request went out closes it (a timer may also beat the request).
          if (fake.log.length > held) await fake.until(() => fake.log[held]!.clientClosed);
          gate.release();
          assert.equal((await agent.client.request("status", {})).readiness, "ready");
          assert.equal(agent.client.failure, null);
          assert.equal(await guarded(agent.client.shutdown(), "exit"), 0);
        } finally {
          await agent.client.close();
          await fake.close();
        }
      });
    }

    it(`${launcher.name}: a session.open given up after sending and answered busy (a cancelled open's tail) is written once and rejects "not_sent"`, async () => {
      const { agent, ws, fake } = await started(launcher, "busy-tail", [...BASE, "operation.cancel"]);
      writeFileSync(join(ws.home, "sessions", "big.jsonl"), bigSession("big", ws.cwd), { mode: 0o600 });
      const answers: string[] = [];
      try {
        // How the child's worker and the cancels interleave is the scheduler's: each attempt gives the big open up at another moment.
        for (let attempt = 0; attempt < 20; attempt++) {
          const first = new AbortController();
          const second = new AbortController();
          agent.onRequest = (request) => {
            if (request.method !== "session.open") return;
            if (request.params.session_id === "big") setTimeout(() => first.abort(), attempt % 12);
            // The second open is given up as it is written, while the worker may still be stopping the first.
            else second.abort(new Error("the user pressed Stop"));
          };
          const from = agent.requests.length;
          const big = agent.client.request("session.open", { session_id: "big" }, { signal: first.signal }).catch(() => {});
          const small = agent.client.request("session.open", { session_id: "s001" }, { signal: second.signal }).then(() => null, (error: unknown) => error);
          await guarded(big, "the big open");
          const outcome = await guarded(small, "the second open");
          const sent = agent.requests.slice(from).filter((request) => request.method === "session.open" && request.params.session_id === "s001");
          assert.equal(sent.length, 1, `the given-up open was written once (answers so far: ${answers.join(", ")})`);
          const code = agent.response(sent[0]!.id)?.error?.code ?? "result";
          answers.push(code);
          if (code === "busy") assert.ok(outcome instanceof RequestAborted && outcome.outcome === "not_sent", String(outcome));
        }
        agent.onRequest = () => {};
        assert.equal(agent.client.failure, null);
        assert.equal(await guarded(agent.client.shutdown(), "exit"), 0);
      } finally {
        await agent.client.close();
        await fake.close();
      }
    });

    it(`${launcher.name}: without operation.cancel, giving up a sent request rejects at once ("discarded") and its late response is dropped`, async () => {
      const { agent, fake } = await started(launcher, "unnegotiated", BASE);
      try {
        const gate = holdRefresh(fake);
        const refresh = agent.client.request("model.refresh", { provider: "ollama" }, { timeoutMs: 50 });
        await assert.rejects(refresh, (error: unknown) => error instanceof RequestAborted && error.outcome === "discarded" && error.timedOut);
        // The refresh still holds the child's session worker: a listing waits for its answer instead of meeting busy.
        const listing = agent.client.request("session.list", { limit: 2 });
        const stop = new AbortController();
        const page = agent.client.request("history.page", { session_id: "s000", revision: "r" }, { signal: stop.signal });
        stop.abort();
        await assert.rejects(page, (error: unknown) => error instanceof RequestAborted && error.outcome === "not_sent" && !error.timedOut);
        assert.equal(agent.sent("session.list").length, 0);
        gate.release();
        assert.equal((await guarded(listing, "the queued listing")).sessions.length, 2);
        const refreshId = agent.sent("model.refresh")[0]!.id;
        assert.ok(agent.log.indexOf(`< ${refreshId}`) < agent.log.findIndex((line) => line.endsWith(" session.list")), "the listing went out after the refresh was answered");
        assert.equal(agent.sent("history.page").length, 0);

        const opened = await agent.client.request("session.open", { session_id: "s001" });
        for (const trigger of ["signal", "timeout"] as const) {
          await giveUp(agent, "session.list", { limit: 100 }, trigger, false);
          await giveUp(agent, "history.page", { session_id: "s001", revision: opened.revision }, trigger, false);
        }
        assert.equal(agent.sent("operation.cancel").length, 0);
        assert.equal(agent.client.failure, null, "no dropped response was a violation");
        assert.equal(await guarded(agent.client.shutdown(), "exit"), 0);
      } finally {
        await agent.client.close();
        await fake.close();
      }
    });
  }
});
