/**
 * A request's `signal` and `timeoutMs` through the client library against
 * real children (the Node bundle and the Deno entry over real pipes), on
 * `session.list`, `history.page` and `model.refresh` (its `/models` held by
 * a gate of the loopback fake provider). With `operation.cancel`
 * negotiated, an abort after sending goes out as `operation.cancel` naming
 * the request, and the promise settles once with the child's answer; without
 * it, the promise rejects at once and the late response is dropped; a
 * request still queued is never written. A tap between the library and the
 * child shows what went over the wire.
 */

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { RequestAborted } from "../src/client/mod.ts";
import type { MethodName } from "../src/protocol/methods.ts";
import { type FakeProvider, Gate, startFakeProvider } from "./support/fake-provider.ts";
import { guarded } from "./support/hang-guard.ts";
import { storedRecords, storedText } from "./support/listing.ts";
import { type Launcher, launchers } from "./support/processes.ts";
import { TappedAgent } from "./support/tapped-client.ts";
import { type Workspace, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-client-cancel-"));
let provider: FakeProvider | null = null;
after(async () => {
  await provider?.close();
  rmSync(root, { recursive: true, force: true });
});

const BASE: MethodName[] = ["session.open", "session.list", "history.page", "model.refresh", "shutdown"];
const SESSIONS = 40;

/** A workspace with {@link SESSIONS} stored sessions (so a listing reads for a while) and a child of `launcher` initialized with `capabilities`. */
async function started(launcher: Launcher, name: string, capabilities: MethodName[]): Promise<{ agent: TappedAgent; ws: Workspace; fake: FakeProvider }> {
  const fake = provider ??= await startFakeProvider();
  const ws = workspace(root, `${name}-${launcher.name}`, fake);
  mkdirSync(join(ws.home, "sessions"), { recursive: true, mode: 0o700 });
  for (let n = 0; n < SESSIONS; n++) {
    const id = `s${String(n).padStart(3, "0")}`;
    writeFileSync(join(ws.home, "sessions", `${id}.jsonl`), storedText(storedRecords(id, { cwd: ws.cwd, prompt: "x".repeat(2_000) })), { mode: 0o600 });
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

/** How the caller's promise of a request given up after sending settled. */
type Settled = "completed" | "cancelled" | "discarded";

/**
 * Sends `method` and gives it up right after it was written (the signal
 * aborts as the tap sees the request; a timeout of 0 fires on the next turn
 * of the event loop, which the answer may beat), then checks the wire: the
 * request once, `operation.cancel` naming it exactly when the caller's
 * promise was still waiting and the method was negotiated, and exactly one
 * response to it (read even when the caller was answered without it).
 */
async function giveUp(agent: TappedAgent, method: MethodName, params: object, trigger: Trigger, negotiated: boolean): Promise<Settled> {
  const controller = new AbortController();
  const from = agent.requests.length;
  agent.onRequest = (request) => {
    if (trigger === "signal" && request.method === method) controller.abort(new Error("the user pressed Stop"));
  };
  let settled: Settled = "completed";
  try {
    await guarded(agent.client.request(method, params as never, trigger === "signal" ? { signal: controller.signal } : { timeoutMs: 0 }), `${method} to settle`);
  } catch (error) {
    assert.ok(error instanceof RequestAborted, String(error));
    assert.deepEqual([error.method, error.timedOut], [method, trigger === "timeout"]);
    if (trigger === "signal") assert.equal((error.cause as Error).message, "the user pressed Stop");
    settled = error.outcome as Settled;
    assert.equal(settled, negotiated ? "cancelled" : "discarded");
  } finally {
    agent.onRequest = () => {};
  }
  // The next exclusive request goes out once the child answered this one; it is not refused busy.
  assert.equal((await agent.client.request("session.list", { limit: 1 })).sessions.length, 1);
  const sent = agent.requests.slice(from);
  const same = sent.filter((r) => r.method === method && JSON.stringify(r.params) === JSON.stringify(params));
  assert.equal(same.length, 1, "sent once");
  const request = same[0]!;
  const cancels = sent.filter((r) => r.method === "operation.cancel").map((r) => r.params);
  if (!negotiated) assert.deepEqual(cancels, []);
  else if (trigger === "signal" || settled === "cancelled") assert.deepEqual(cancels, [{ id: request.id }]);
  else {
    // The answer beat the timer, or the cancel the timer sent found the operation already answered.
    const cancel = sent.find((r) => r.method === "operation.cancel");
    assert.ok(cancel === undefined || agent.response(cancel.id)?.error?.code === "stale_operation", JSON.stringify(cancels));
  }
  assert.equal(agent.frames.filter((frame) => frame.type === "response" && frame.id === request.id).length, 1, "answered once");
  if (negotiated) assert.equal(agent.response(request.id)!.error?.code === "operation_cancelled", settled === "cancelled", "the promise agrees with the child");
  return settled;
}

/** Gives `method` up until the caller was answered without its result once (a fast operation may complete first), checking every attempt. */
async function givesUp(agent: TappedAgent, method: MethodName, params: object, trigger: Trigger, negotiated: boolean): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    if (await giveUp(agent, method, params, trigger, negotiated) !== "completed") return;
  }
  assert.fail(`${method} completed before every one of 20 ${trigger}s`);
}

describe("cancel and timeout through the client library against a real child", () => {
  for (const launcher of launchers().filter((l) => l.name !== "sea")) {
    for (const trigger of ["signal", "timeout"] as const) {
      it(`${launcher.name}: with operation.cancel negotiated, a ${trigger} cancels a sent session.list, history.page and model.refresh`, async () => {
        const { agent, fake } = await started(launcher, `negotiated-${trigger}`, [...BASE, "operation.cancel"]);
        try {
          const opened = await agent.client.request("session.open", { session_id: "s000" });
          await givesUp(agent, "session.list", { limit: 100 }, trigger, true);
          await givesUp(agent, "history.page", { session_id: "s000", revision: opened.revision }, trigger, true);

          // model.refresh waits on the provider's /models, so the cancel always finds it running.
          const gate = holdRefresh(fake);
          const held = fake.log.length;
          const stop = new AbortController();
          const refresh = agent.client.request("model.refresh", { provider: "ollama" }, trigger === "signal" ? { signal: stop.signal } : { timeoutMs: 50 });
          await fake.until(() => fake.log.length > held);
          // The refresh holds the lane: a page asked for now is still queued, and giving it up sends nothing.
          const queued = new AbortController();
          const pages = agent.sent("history.page").length;
          const page = agent.client.request("history.page", { session_id: "s000", revision: opened.revision }, { signal: queued.signal });
          queued.abort();
          await assert.rejects(page, (error: unknown) => error instanceof RequestAborted && error.outcome === "not_sent");
          stop.abort(new Error("the user pressed Stop"));
          await assert.rejects(refresh, (error: unknown) => error instanceof RequestAborted && error.outcome === "cancelled" && error.timedOut === (trigger === "timeout"));
          assert.deepEqual(agent.sent("operation.cancel").at(-1)!.params, { id: agent.sent("model.refresh")[0]!.id });
          assert.equal(agent.sent("history.page").length, pages, "the withdrawn page was never written");
          await fake.until(() => fake.log[held]?.clientClosed === true);
          gate.release();
          assert.equal((await agent.client.request("status", {})).readiness, "ready");
          assert.equal(agent.client.failure, null);
          assert.equal(await guarded(agent.client.shutdown(), "exit"), 0);
        } finally {
          await agent.client.close();
        }
      });
    }

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
          await givesUp(agent, "session.list", { limit: 100 }, trigger, false);
          await givesUp(agent, "history.page", { session_id: "s001", revision: opened.revision }, trigger, false);
        }
        assert.equal(agent.sent("operation.cancel").length, 0);
        assert.equal(agent.client.failure, null, "no dropped response was a violation");
        assert.equal(await guarded(agent.client.shutdown(), "exit"), 0);
      } finally {
        await agent.client.close();
      }
    });
  }
});
