/**
 * The client library's flow control against real children (the Node bundle
 * and the Deno entry over real pipes, a loopback fake provider for turns):
 * bursts of up to 200 mixed requests fired at once through `AgentClient`,
 * checked on the wire by a tap between the library and the child: never
 * more unanswered requests than the window (16; 4 while a run is active;
 * the last 2 only for requests that stop or answer something), never two
 * session/history/catalog operations at once, every request answered or
 * rejected with a code its situation explains (`busy` only while a run is
 * active), and the child alive afterwards.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { ProtocolError } from "../src/client/mod.ts";
import { EXCLUSIVE, REQUEST_WINDOW, RUN_REQUEST_WINDOW, URGENT, URGENT_SLOTS } from "../src/client/outbox.ts";
import type { MethodName } from "../src/protocol/methods.ts";
import { type FakeProvider, startFakeProvider } from "./support/fake-provider.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { guarded } from "./support/hang-guard.ts";
import { type Launcher, launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { TappedAgent, type WireRequest } from "./support/tapped-client.ts";
import type { WireFrame } from "./support/wire-client.ts";
import { workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-client-window-"));
let provider: FakeProvider | null = null;
after(async () => {
  await provider?.close();
  rmSync(root, { recursive: true, force: true });
});

const CAPABILITIES: MethodName[] = [
  "session.create",
  "session.list",
  "history.page",
  "model.catalog",
  "turn.start",
  "turn.cancel",
  "approval.answer",
  "operation.cancel",
  "shutdown",
];

/** The window the library promises, checked request by request and frame by frame. */
class WindowCheck {
  readonly problems: string[] = [];
  /** Unanswered request id → method. */
  readonly #unanswered = new Map<string, string>();
  readonly #runs = new Set<string>();

  /** Whether a run is active or being started, leaving out request `except`. */
  #running(except?: string): boolean {
    return this.#runs.size > 0 || [...this.#unanswered].some(([id, method]) => id !== except && method === "turn.start");
  }

  request(request: WireRequest): void {
    const method = request.method as MethodName;
    const before = this.#unanswered.size;
    const window = this.#running() || method === "turn.start" ? RUN_REQUEST_WINDOW : REQUEST_WINDOW;
    // Ordinary requests leave the window's last slots to those that stop or answer something; shutdown is never held.
    const limit = URGENT.has(method) ? window : window - URGENT_SLOTS;
    if (method !== "shutdown" && before >= limit) this.problems.push(`${method} sent with ${before} unanswered (limit ${limit})`);
    if (EXCLUSIVE.has(method) && [...this.#unanswered.values()].some((other) => EXCLUSIVE.has(other as MethodName))) {
      this.problems.push(`${method} sent while another session operation was unanswered`);
    }
    this.#unanswered.set(request.id, method);
  }

  frame(frame: WireFrame): void {
    if (frame.type === "event") {
      if (frame.event === "run.finished") this.#runs.delete(String(frame.data?.run_id));
      return;
    }
    const id = String(frame.id);
    const method = this.#unanswered.get(id);
    if (method === undefined) return void this.problems.push(`a response to ${id}, which is not unanswered`);
    if (frame.error?.code === "busy" && !this.#running(id)) this.problems.push(`${method} answered busy while no run was active`);
    this.#unanswered.delete(id);
    if (method === "turn.start" && frame.result !== undefined) this.#runs.add(String(frame.result.run_id));
  }
}

/** One request of a burst. */
type Op = "status" | "session.list" | "session.create" | "history.page" | "model.catalog" | "turn" | "turn.cancel" | "operation.cancel" | "approval.answer";

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.constant<Op>("status"), weight: 6 },
  { arbitrary: fc.constantFrom<Op>("session.list", "history.page", "model.catalog"), weight: 6 },
  { arbitrary: fc.constant<Op>("session.create"), weight: 1 },
  { arbitrary: fc.constant<Op>("turn"), weight: 1 },
  { arbitrary: fc.constantFrom<Op>("turn.cancel", "operation.cancel", "approval.answer"), weight: 2 },
);

/** Codes a burst's requests may meet: stale identities (a create replaced the attachment, a turn the revision; made-up ids), busy during a run. */
const EXPLAINED = new Set(["busy", "stale_revision", "stale_session", "session_missing", "stale_run", "stale_approval", "stale_operation"]);

/** Fires `ops` at once on one fresh child and checks the wire and every answer. */
async function burst(launcher: Launcher, fake: FakeProvider, ops: readonly Op[], name: string): Promise<void> {
  const ws = workspace(root, name, fake);
  const agent = new TappedAgent(launcher, ws.cwd, ws.env);
  const check = new WindowCheck();
  agent.onRequest = (request) => check.request(request);
  agent.onFrame = (frame) => check.frame(frame);
  let exited = false;
  void agent.exited.then(() => (exited = true));
  const client = agent.client;
  try {
    await guarded(client.initialize(CAPABILITIES), "initialize");
    const session = await client.request("session.create", {});
    const send = (op: Op): Promise<unknown> => {
      switch (op) {
        case "status":
        case "model.catalog":
        case "session.create":
          return client.request(op, {});
        case "session.list":
          return client.request(op, { limit: 1 });
        case "history.page":
          return client.request(op, { session_id: session.session_id, revision: session.revision });
        case "turn":
          return client.startTurn(session.session_id, "hello").then((run) => run.finished);
        case "turn.cancel":
          return client.request(op, { session_id: session.session_id, run_id: "no-such-run" });
        case "approval.answer":
          return client.request(op, { session_id: session.session_id, run_id: "no-such-run", approval_id: "no-such-approval", allow: false });
        case "operation.cancel":
          return client.request(op, { id: "never-sent" });
      }
    };
    const settled = await guarded(Promise.allSettled(ops.map(send)), `a burst of ${ops.length}`);
    assert.deepEqual(check.problems, []);
    settled.forEach((outcome, index) => {
      if (outcome.status === "fulfilled") return;
      const error = outcome.reason as unknown;
      assert.ok(error instanceof ProtocolError && EXPLAINED.has(error.code), `${ops[index]}: ${String(error)}`);
    });
    assert.equal((await client.request("status", {})).readiness, "ready");
    assert.equal(exited, false, "the child is alive");
    assert.equal(await guarded(client.shutdown(), "exit"), 0);
  } finally {
    await client.close();
  }
}

describe("the client library keeps its window against a real child", () => {
  for (const launcher of launchers().filter((l) => l.name !== "sea")) {
    it(`${launcher.name}: 33 status requests at once (one more than the child's output bound) are all answered`, async () => {
      provider ??= await startFakeProvider();
      await burst(launcher, provider, Array.from({ length: 33 }, () => "status"), `status-${launcher.name}`);
    });

    it(`${launcher.name}: 16 session.list at once are queued and all answered, none busy`, async () => {
      provider ??= await startFakeProvider();
      await burst(launcher, provider, Array.from({ length: 16 }, () => "session.list"), `list-${launcher.name}`);
    });

    it(`${launcher.name}: random bursts of 1-200 mixed requests (turns included): the window holds on the wire and every request is answered`, async () => {
      const fake = provider ??= await startFakeProvider();
      fake.handler = () => reply("openai-chat", { text: ["Hello ", "there."] });
      let run = 0;
      try {
        await fc.assert(
          fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 200, size: "max" }), (ops) => burst(launcher, fake, ops, `burst-${launcher.name}-${run++}`)),
          { numRuns: fuzzRuns(6, 200) },
        );
      } finally {
        fake.handler = null;
      }
    });
  }
});
