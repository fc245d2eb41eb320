/**
 * The client library against a scripted peer over in-memory web streams:
 * the frames a correct server could send in an order or shape the real
 * backend never produces on demand (reconcile parts split across frames,
 * dropped deltas), and everything the spec says a client must fail closed
 * on (unknown frame type, event name, error code, enum value; an event
 * outside its run; a broken sequence). The peer is the other party of the
 * protocol, not a part of magi-code standing in for one.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AgentClient, type Capability, ConnectionClosed, ErrorCode, ProtocolError, ProtocolViolation, RequestAborted, RequestRefused, type RunMessage } from "../src/client/mod.ts";
import { ErrorCodeSchema } from "../src/protocol/events.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { CAPABILITIES } from "../src/protocol/negotiation.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./support/processes.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const INSTANCE = "0190b8a4-5d6e-7f00-8a00-000000000001";
const LISTING = { revision: "l1", sessions: [], next_cursor: null, complete: true, notices: [] };
const STATUS = { state: "idle", readiness: "ready", provider: "p", model: "m", context_id: "c", session_id: null, run_id: null, selection: null };

/** A peer: what the client wrote, line by line, and a way to write frames back. */
class Peer {
  readonly requests: Record<string, any>[] = [];
  readonly client: AgentClient;
  ended = false;
  #seq = 0;
  #out!: ReadableStreamDefaultController<Uint8Array>;
  #waiters: (() => void)[] = [];

  constructor() {
    const readable = new ReadableStream<Uint8Array>({ start: (controller) => void (this.#out = controller) });
    let buffer = "";
    const writable = new WritableStream<Uint8Array>({
      write: (chunk) => {
        buffer += decoder.decode(chunk);
        for (let lf = buffer.indexOf("\n"); lf !== -1; lf = buffer.indexOf("\n")) {
          this.requests.push(JSON.parse(buffer.slice(0, lf)));
          buffer = buffer.slice(lf + 1);
        }
        this.#wake();
      },
      close: () => {
        this.ended = true;
        this.#wake();
      },
    });
    this.client = new AgentClient({ readable, writable });
  }

  #wake(): void {
    for (const waiter of this.#waiters.splice(0)) waiter();
  }

  /** Resolves once the client has written `count` requests. */
  async requested(count: number): Promise<Record<string, any>> {
    while (this.requests.length < count) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    return this.requests[count - 1]!;
  }

  /** Writes raw bytes. */
  raw(text: string): void {
    this.#out.enqueue(encoder.encode(text));
  }

  /** Writes one frame with the envelope filled in. */
  frame(body: Record<string, unknown>): void {
    this.raw(`${JSON.stringify({ protocol: "magi-code.local-agent", version: 1, instance_id: INSTANCE, seq: ++this.#seq, ...body })}\n`);
  }

  result(id: string, result: unknown): void {
    this.frame({ type: "response", id, result });
  }

  error(id: string, code: string): void {
    this.frame({ type: "response", id, error: { code } });
  }

  event(event: string, data: Record<string, unknown>): void {
    this.frame({ type: "event", event, data: { session_id: "s1", run_id: "run1", ...data } });
  }

  end(): void {
    this.#out.close();
  }
}

/** A peer whose client is initialized with `capabilities` advertised (every one by default), requiring `required`, under `limits`. */
async function initialized(capabilities: readonly string[] = CAPABILITIES, required: readonly Capability[] = ["turn.start"], limits: object = LIMITS): Promise<Peer> {
  const peer = new Peer();
  const init = peer.client.initialize(required);
  const request = await peer.requested(1);
  peer.result(request.id, { capabilities, limits, status: STATUS });
  await init;
  return peer;
}

/** A peer with an admitted run `run1` of session `s1`; `messages` records what each event left visible. */
async function running(seen: RunMessage[][] = [], peerReady: Promise<Peer> = initialized()) {
  const peer = await peerReady;
  const started = peer.client.startTurn("s1", "hello", { onEvent: (_event, run) => seen.push([...run.messages.values()]) });
  const request = await peer.requested(2);
  peer.result(request.id, { run_id: "run1", accepted: true });
  return { peer, run: await started };
}

/** The events of a real negotiating child's approved edit_file turn (`cards-edit-turn.jsonl`, ids masked), scope removed. */
function recordedEvents(): { event: string; data: Record<string, unknown> }[] {
  const file = join(repoRoot(), "tests", "fixtures", "transcripts", "cards-edit-turn.jsonl");
  return readFileSync(file, "utf8").split("\n").filter((line) => line !== "").map((line) => {
    const { event, data: { session_id: _, run_id: __, ...data } } = JSON.parse(line);
    return { event, data };
  });
}

/** The recorded `tool.card` events' data. */
const recordedCards = () => recordedEvents().filter((item) => item.event === "tool.card").map((item) => item.data);

const finished = { outcome: "completed", persistence: "durable", revision: "r2", error_code: null };
const usage = {
  input_tokens: 1_200,
  output_tokens: 40,
  cached_input_tokens: 1_000,
  reasoning_tokens: null,
  session_input_tokens: 3_000,
  session_output_tokens: 90,
  context_window: null,
  context_used: 1_200,
};

describe("the client library against a scripted peer", () => {
  it("sends fresh ids and exactly the request envelope", async () => {
    const peer = await initialized();
    const status = peer.client.request("status", {});
    const request = await peer.requested(2);
    peer.result(request.id, STATUS);
    assert.equal((await status).state, "idle");
    assert.deepEqual(peer.requests.map((r) => r.id), ["c1", "c2"]);
    assert.deepEqual(Object.keys(request), ["protocol", "version", "id", "method", "params"]);
    assert.deepEqual([request.protocol, request.version, request.method, request.params], ["magi-code.local-agent", 1, "status", {}]);
  });

  it("replaces streamed text with the reconciled parts, complete only at last_part", async () => {
    const seen: RunMessage[][] = [];
    const { peer, run } = await running(seen);
    peer.event("message.delta", { message_id: "a1", part: 0, text: "Hel" });
    peer.event("message.delta", { message_id: "a1", part: 2, text: "wor" }); // part 1 was dropped
    peer.event("message.reconcile", { message_id: "a1", part: 0, text: "Hello ", last_part: false, partial: false });
    peer.event("message.reconcile", { message_id: "a1", part: 1, text: "world", last_part: true, partial: false });
    peer.event("run.finished", finished);
    assert.deepEqual(await run.finished, { session_id: "s1", run_id: "run1", ...finished });
    const views = seen.map((messages) => messages.map((m) => [m.text, m.complete, m.gap]));
    assert.deepEqual(views, [
      [["Hel", false, false]],
      [["Helwor", false, true]],
      // One authoritative part is not a message: the streamed text stays until the last part.
      [["Helwor", false, true]],
      [["Hello world", true, false]],
      [["Hello world", true, false]],
    ]);
    assert.equal(run.text(), "Hello world");
  });

  it("an approval's answer(allow) sends approval.answer; a late one resolves false", async () => {
    const { peer, run } = await running();
    peer.event("approval.requested", { approval_id: "ap1", summary: "write x", expires_in_ms: 60_000 });
    peer.event("approval.requested", { approval_id: "ap2", summary: "write y", expires_in_ms: 60_000 });
    while (run.approvals.size < 2) await new Promise((resolve) => setTimeout(resolve, 0));
    assert.deepEqual([...run.approvals.keys()], ["ap1", "ap2"]);
    const first = run.approvals.get("ap1")!.answer(true);
    const sent = await peer.requested(3);
    assert.deepEqual([sent.method, sent.params], ["approval.answer", { session_id: "s1", run_id: "run1", approval_id: "ap1", allow: true }]);
    peer.result(sent.id, { recorded: true });
    assert.equal(await first, true);
    const second = run.approvals.get("ap2")!.answer(false);
    const late = await peer.requested(4);
    peer.frame({ type: "response", id: late.id, error: { code: "stale_approval" } });
    assert.equal(await second, false);
  });

  const violations: [string, (peer: Peer) => void][] = [
    ["an unknown frame type", (peer) => peer.frame({ type: "notification", id: "c2" })],
    ["an unknown event name", (peer) => peer.event("message.sparkle", { message_id: "a1" })],
    ["an unknown error code", (peer) => peer.frame({ type: "response", id: "c2", error: { code: "teapot" } })],
    ["an unknown enum value", (peer) => peer.event("activity", { activity_id: "t1", kind: "robot", state: "started", name: "x", summary: "" })],
    ["an unknown run.finished outcome", (peer) => peer.event("run.finished", { ...finished, outcome: "maybe" })],
    ["an unknown error_code in run.finished", (peer) => peer.event("run.finished", { ...finished, outcome: "failed", error_code: "teapot" })],
    ["an event of another run", (peer) => peer.event("message.delta", { run_id: "run2", message_id: "a1", part: 0, text: "x" })],
    ["reconcile parts out of order", (peer) => peer.event("message.reconcile", { message_id: "a1", part: 1, text: "x", last_part: true, partial: false })],
    ["a delta part going backwards", (peer) => {
      peer.event("message.delta", { message_id: "a1", part: 3, text: "x" });
      peer.event("message.delta", { message_id: "a1", part: 1, text: "y" });
    }],
    ["a seq that does not increase", (peer) => peer.raw(`${JSON.stringify({ protocol: "magi-code.local-agent", version: 1, type: "response", instance_id: INSTANCE, seq: 1, id: "c9", result: {} })}\n`)],
    ["a foreign protocol version", (peer) => peer.raw(`${JSON.stringify({ protocol: "magi-code.local-agent", version: 2, type: "response", instance_id: INSTANCE, seq: 9, id: "c2", result: {} })}\n`)],
    ["a line that is not JSON", (peer) => peer.raw("hello\n")],
    ["a response to no request", (peer) => peer.result("c77", { state: "stopping" })],
    ["a malformed result", (peer) => peer.result("c3", { state: "idle" })],
    ["a run.usage the client did not require", (peer) => peer.event("run.usage", usage)],
    ["a tool.card the client did not require", (peer) => peer.event("tool.card", recordedCards()[0]!)],
    ["an activity with a card_id the client did not require", (peer) => peer.event("activity", { activity_id: "t1", kind: "tool", state: "started", name: "x", summary: "", card_id: "card.t1" })],
    ["an approval.resolved the client did not require", (peer) => {
      peer.event("approval.requested", { approval_id: "ap1", summary: "write x", expires_in_ms: 60_000 });
      peer.event("approval.resolved", { approval_id: "ap1", outcome: "allowed" });
    }],
    ["approval.requested scopes the client did not require", (peer) => peer.event("approval.requested", { approval_id: "ap1", summary: "write x", expires_in_ms: 60_000, scopes: ["once"], scope_key: null })],
  ];
  for (const [what, send] of violations) {
    it(`fails closed on ${what}: rejects the pending request and run, closes the child's stdin`, async () => {
      const { peer, run } = await running();
      const pending = peer.client.request("status", {});
      await peer.requested(3);
      send(peer);
      await assert.rejects(pending, (error: unknown) => error instanceof ProtocolViolation);
      await assert.rejects(run.finished, (error: unknown) => error instanceof ProtocolViolation);
      await peer.client.closed;
      assert.ok(peer.ended, "stdin closed");
      assert.ok(peer.client.failure instanceof ProtocolViolation);
      await assert.rejects(peer.client.request("status", {}), (error: unknown) => error instanceof ProtocolViolation);
    });
  }

  it("a client that required run.usage keeps the run's usage; a second run.usage in one run is a violation", async () => {
    const withUsage = initialized([...CAPABILITIES, "run.usage"].sort(), ["turn.start", "run.usage"]);
    const { peer, run } = await running([], withUsage);
    assert.equal(run.usage, null);
    peer.event("run.usage", usage);
    peer.event("run.finished", finished);
    await run.finished;
    assert.deepEqual(run.usage, { session_id: "s1", run_id: "run1", ...usage });
    assert.equal(peer.client.failure, null);

    const again = await running([], initialized([...CAPABILITIES, "run.usage"].sort(), ["turn.start", "run.usage"]));
    again.peer.event("run.usage", usage);
    again.peer.event("run.usage", usage);
    await assert.rejects(again.run.finished, (error: unknown) => error instanceof ProtocolViolation);
  });

  it("a client that required tool.cards assembles each call's card from a recorded transcript; a stale snapshot is a violation", async () => {
    const capabilities = [...CAPABILITIES, "tool.cards"].sort();
    const peer = await initialized(capabilities, ["turn.start", "tool.cards"]);
    const snapshots: number[] = [];
    const started = peer.client.startTurn("s1", "edit it", {
      onEvent: (event, run) => void (event.event === "tool.card" && snapshots.push(run.cards.get("card.t1")!.revision)),
      onApproval: (approval) => void approval.answer(true),
    });
    peer.result((await peer.requested(2)).id, { run_id: "run1", accepted: true });
    const run = await started;
    for (const { event, data } of recordedEvents()) {
      if (event === "approval.requested") {
        peer.event(event, { ...data, approval_id: "ap1" });
        peer.result((await peer.requested(3)).id, { recorded: true });
      } else peer.event(event, { ...data, ...(event === "run.finished" || event === "input.persisted" ? { revision: "r2" } : {}) });
    }
    await run.finished;
    assert.equal(peer.client.failure, null);
    assert.deepEqual(snapshots, [0, 1, 2]);
    const card = run.cards.get("card.t1")!;
    assert.deepEqual([...run.cards.keys()], ["card.t1"]);
    assert.deepEqual([card.stage, card.activity_id, card.card.outcome, card.card.effect, card.card.decision], ["terminal", "t1", "completed", "applied", "allowed"]);
    assert.equal(card.card.diff?.text, "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n");

    const stale = await running([], initialized(capabilities, ["turn.start", "tool.cards"]));
    const [initial, update] = recordedCards();
    stale.peer.event("tool.card", update!);
    stale.peer.event("tool.card", initial!);
    await assert.rejects(stale.run.finished, (error: unknown) => error instanceof ProtocolViolation);
  });

  it("with approval.scope: scopes and scope_key, a session answer sends scope, resolutions are kept; session without its key, a resolution of no request, a second one or none before run.finished are violations", async () => {
    const scoped = () => initialized([...CAPABILITIES, "approval.scope"].sort(), ["turn.start", "approval.scope"]);
    const { peer, run } = await running([], scoped());
    peer.event("approval.requested", { approval_id: "ap1", summary: "write x", expires_in_ms: 60_000, scopes: ["once", "session"], scope_key: 'write_file "x"' });
    while (run.approvals.size < 1) await new Promise((resolve) => setTimeout(resolve, 0));
    const approval = run.approvals.get("ap1")!;
    assert.deepEqual([approval.scopes, approval.scopeKey], [["once", "session"], 'write_file "x"']);
    const answered = approval.answer(true, "session");
    const sent = await peer.requested(3);
    assert.deepEqual(sent.params, { session_id: "s1", run_id: "run1", approval_id: "ap1", allow: true, scope: "session" });
    peer.result(sent.id, { recorded: true });
    assert.equal(await answered, true);
    peer.event("approval.requested", { approval_id: "ap2", summary: "run y", expires_in_ms: 60_000, scopes: ["once"], scope_key: null });
    peer.event("approval.resolved", { approval_id: "ap1", outcome: "allowed" });
    peer.event("approval.resolved", { approval_id: "ap2", outcome: "expired" });
    peer.event("run.finished", finished);
    await run.finished;
    assert.deepEqual([...run.resolutions], [["ap1", "allowed"], ["ap2", "expired"]]);
    assert.equal(peer.client.failure, null);

    const bad: ((peer: Peer) => void)[] = [
      (p) => p.event("approval.requested", { approval_id: "ap1", summary: "x", expires_in_ms: 1, scopes: ["once", "session"], scope_key: null }),
      (p) => p.event("approval.resolved", { approval_id: "nobody", outcome: "denied" }),
      (p) => {
        p.event("approval.requested", { approval_id: "ap1", summary: "x", expires_in_ms: 1, scopes: ["once"], scope_key: null });
        p.event("approval.resolved", { approval_id: "ap1", outcome: "denied" });
        p.event("approval.resolved", { approval_id: "ap1", outcome: "denied" });
      },
      // Exactly once before run.finished: a run that ends with an approval never resolved leaves the client not knowing how it ended.
      (p) => {
        p.event("approval.requested", { approval_id: "ap1", summary: "x", expires_in_ms: 1, scopes: ["once"], scope_key: null });
        p.event("run.finished", finished);
      },
    ];
    for (const send of bad) {
      const again = await running([], scoped());
      send(again.peer);
      await assert.rejects(again.run.finished, (error: unknown) => error instanceof ProtocolViolation);
    }
  });

  it("an approval cannot be answered for a scope it did not offer: nothing is sent", async () => {
    const { peer, run } = await running();
    peer.event("approval.requested", { approval_id: "ap1", summary: "write x", expires_in_ms: 60_000 });
    while (run.approvals.size < 1) await new Promise((resolve) => setTimeout(resolve, 0));
    const approval = run.approvals.get("ap1")!;
    assert.deepEqual([approval.scopes, approval.scopeKey], [["once"], null]);
    await assert.rejects(approval.answer(true, "session"), RangeError);
    assert.ok(run.approvals.has("ap1"), "still pending");
  });

  it("knows exactly the codes of src/protocol/errors.ts", () => {
    assert.deepEqual([...ErrorCodeSchema.options].sort(), Object.values(ErrorCode).sort());
  });

  it("the end of output rejects what is pending with ConnectionClosed", async () => {
    const peer = await initialized();
    const pending = peer.client.request("status", {});
    await peer.requested(2);
    peer.end();
    await assert.rejects(pending, { name: "ConnectionClosed" });
    assert.equal(await peer.client.close(), null);
  });

  it("refuses a method the child did not advertise, without sending it", async () => {
    const peer = await initialized(["initialize", "status", "shutdown"]);
    await assert.rejects(peer.client.request("session.create", {}), { name: "RequestRefused" });
    assert.equal(peer.requests.length, 1);
  });

  it("request(\"agent.info\") is refused unsent unless the child advertised it; advertised, its result is checked against the schema", async () => {
    const base = await initialized();
    await assert.rejects(base.client.request("agent.info", {}), { name: "RequestRefused" });
    assert.equal(base.requests.length, 1);
    const peer = await initialized([...CAPABILITIES, "agent.info"].sort(), ["agent.info"]);
    const info = {
      profile: { name: "build", description: "d" },
      skills: [{ name: "lint", description: "l", scope: "user" }],
      mcp_servers: [{ name: "docs", state: "not_approved", tools: 0 }],
      hooks: [{ event: "Stop", scope: "project", approved: false }],
      subagents: [],
      omitted: { skills: 0, mcp_servers: 0, hooks: 0, subagents: 0 },
    };
    const answered = peer.client.request("agent.info", {});
    const request = await peer.requested(2);
    assert.deepEqual([request.method, request.params], ["agent.info", {}]);
    peer.result(request.id, info);
    assert.deepEqual(await answered, info);
    const malformed = peer.client.request("agent.info", {});
    peer.result((await peer.requested(3)).id, { ...info, mcp_servers: [{ name: "docs", state: "sleeping", tools: 0 }] });
    await assert.rejects(malformed, { name: "ProtocolViolation" });
  });

  it("keeps 14 ordinary requests unanswered at most, 2 while a run is active, and sends the rest as answers come", async () => {
    const peer = await initialized();
    const statuses = Array.from({ length: 20 }, () => peer.client.request("status", {}));
    await settled();
    assert.equal(peer.requests.length, 1 + 14, "the window's last 2 slots are for cancels and answers");
    peer.result(peer.requests[1]!.id, STATUS);
    await peer.requested(16);
    for (const request of peer.requests.slice(2)) peer.result(request.id, STATUS);
    await peer.requested(21);
    for (const request of peer.requests.slice(16)) peer.result(request.id, STATUS);
    assert.equal((await Promise.all(statuses)).length, 20);

    const started = peer.client.startTurn("s1", "hello");
    const turn = await peer.requested(22);
    peer.result(turn.id, { run_id: "run1", accepted: true });
    await started;
    const during = Array.from({ length: 6 }, () => peer.client.request("status", {}));
    await settled();
    assert.equal(peer.requests.length, 22 + 2, "two while the run is active");
    peer.event("run.finished", finished);
    // The run's events no longer compete for the child's slots: the other four go at once.
    await peer.requested(28);
    for (const request of peer.requests.slice(22)) peer.result(request.id, STATUS);
    assert.equal((await Promise.all(during)).length, 6);
  });

  it("sends session operations one at a time; a busy with no run active is sent again with a fresh id, a run's busy is returned", async () => {
    const peer = await initialized();
    const lists = [peer.client.request("session.list", {}), peer.client.request("history.page", { session_id: "s1", revision: "r1" })];
    await settled();
    assert.deepEqual(peer.requests.slice(1).map((r) => r.method), ["session.list"]);
    // A worker still stopping an operation cancelled by id: busy, though no run is active.
    peer.frame({ type: "response", id: "c2", error: { code: "busy" } });
    const again = await peer.requested(3);
    assert.deepEqual([again.id, again.method], ["c3", "session.list"]);
    peer.result("c3", LISTING);
    const page = await peer.requested(4);
    assert.equal(page.method, "history.page");
    peer.result(page.id, { session_id: "s1", revision: "r1", entries: [], next_cursor: null, complete: true });
    await Promise.all(lists);

    const started = peer.client.startTurn("s1", "hello");
    peer.result((await peer.requested(5)).id, { run_id: "run1", accepted: true });
    await started;
    const during = peer.client.request("session.list", {});
    peer.frame({ type: "response", id: (await peer.requested(6)).id, error: { code: "busy" } });
    await assert.rejects(during, (error: unknown) => error instanceof ProtocolError && error.code === "busy");
  });

  it("an abort sends operation.cancel ahead of the queue; the promise settles with the child's one answer", async () => {
    const peer = new Peer();
    const init = peer.client.initialize(["session.list", "operation.cancel"]);
    peer.result((await peer.requested(1)).id, { capabilities: CAPABILITIES, limits: LIMITS, status: STATUS });
    await init;
    const stop = new AbortController();
    const won = peer.client.request("session.list", {}, { signal: stop.signal });
    const statuses = Array.from({ length: 18 }, () => peer.client.request("status", {}));
    await settled();
    assert.equal(peer.requests.length, 1 + 14, "the ordinary window is full, four statuses wait");
    stop.abort();
    const cancel = await peer.requested(16);
    assert.deepEqual([cancel.method, cancel.params], ["operation.cancel", { id: "c2" }]);
    // The listing completed before the cancel reached it: its result is the answer, the cancel is stale.
    peer.result("c2", LISTING);
    peer.frame({ type: "response", id: cancel.id, error: { code: "stale_operation" } });
    assert.deepEqual(await won, LISTING);
    for (let n = 3; n <= 15; n++) peer.result(`c${n}`, STATUS);
    await peer.requested(21);
    for (const request of peer.requests.slice(16)) peer.result(request.id, STATUS);
    assert.equal((await Promise.all(statuses)).length, 18);

    const timed = peer.client.request("session.list", {}, { timeoutMs: 0 });
    const listing = await peer.requested(22);
    const timedCancel = await peer.requested(23);
    assert.deepEqual(timedCancel.params, { id: listing.id });
    peer.frame({ type: "response", id: listing.id, error: { code: "operation_cancelled" } });
    peer.result(timedCancel.id, { cancellation_requested: true });
    await assert.rejects(timed, (error: unknown) => error instanceof RequestAborted && error.outcome === "cancelled" && error.timedOut);
  });

  it("without operation.cancel negotiated an abort after sending discards: rejected at once, the late answer dropped", async () => {
    const peer = await initialized();
    const stop = new AbortController();
    const discarded = peer.client.request("session.list", {}, { signal: stop.signal });
    const sent = await peer.requested(2);
    stop.abort();
    await assert.rejects(discarded, (error: unknown) => error instanceof RequestAborted && error.outcome === "discarded");
    peer.result(sent.id, LISTING);
    await settled();
    assert.equal(peer.client.failure, null, "the dropped response is no violation");
    assert.equal(peer.requests.length, 2, "no operation.cancel");
  });

  it("shutdown goes out at once, ahead of what waits in the queue, which is refused", async () => {
    const peer = await initialized();
    const statuses = Array.from({ length: 17 }, () => peer.client.request("status", {}).catch((error: unknown) => error));
    await settled();
    const stopping = peer.client.shutdown();
    const shutdown = await peer.requested(1 + 14 + 1);
    assert.equal(shutdown.method, "shutdown");
    assert.ok((await statuses[16]) instanceof RequestRefused, "the queued 17th was refused");
    await assert.rejects(peer.client.request("status", {}), (error: unknown) => error instanceof RequestRefused);
    peer.end();
    await stopping;
  });

  for (const trigger of ["signal", "timeout"] as const) {
    it(`a session.list given up by its ${trigger} after sending, then answered busy, rejects RequestAborted "not_sent" and is never sent again`, async () => {
      const peer = await initialized(CAPABILITIES, ["session.list", "operation.cancel"]);
      const stop = new AbortController();
      const listing = peer.client.request("session.list", { limit: 1 }, trigger === "signal" ? { signal: stop.signal } : { timeoutMs: 0 });
      const outcome = listing.then(() => "resolved", (error: unknown) => error);
      const sent = await peer.requested(2);
      stop.abort(new Error("the user pressed Stop"));
      const cancel = await peer.requested(3);
      assert.deepEqual([cancel.method, cancel.params], ["operation.cancel", { id: sent.id }]);
      // The child's worker was still stopping an earlier cancelled operation: busy (nothing ran), and the cancel finds nothing.
      peer.error(sent.id, "busy");
      peer.error(cancel.id, "stale_operation");
      // Whichever comes first: the caller's answer, or the given-up listing written again.
      const first = await Promise.race([outcome, peer.requested(4).then((again) => `sent again as ${again.method}`)]);
      assert.ok(first instanceof RequestAborted, String(first));
      assert.deepEqual([first.outcome, first.timedOut], ["not_sent", trigger === "timeout"]);
      // The lane is free: the next session operation is the next request written.
      const next = peer.client.request("session.list", { limit: 2 });
      const written = await peer.requested(4);
      assert.deepEqual([written.method, written.params], ["session.list", { limit: 2 }]);
      peer.result(written.id, LISTING);
      assert.deepEqual(await next, LISTING);
    });
  }

  it("during a run, a session.list given up after sending and answered busy rejects RequestAborted, not ProtocolError busy", async () => {
    const peer = await initialized(CAPABILITIES, ["session.list", "operation.cancel", "turn.start"]);
    const started = peer.client.startTurn("s1", "hi");
    peer.result((await peer.requested(2)).id, { run_id: "run1", accepted: true });
    await started;
    const stop = new AbortController();
    const listing = peer.client.request("session.list", { limit: 1 }, { signal: stop.signal });
    const sent = await peer.requested(3);
    stop.abort();
    const cancel = await peer.requested(4);
    peer.error(sent.id, "busy");
    peer.error(cancel.id, "stale_operation");
    await assert.rejects(listing, (error: unknown) => error instanceof RequestAborted && error.outcome === "not_sent");
  });

  it("shutdown goes out at once while the full window holds back a turn.cancel, which is then refused", async () => {
    const peer = await initialized();
    const statuses = Array.from({ length: 14 }, () => peer.client.request("status", {}).catch((error: unknown) => error));
    const cancels = Array.from({ length: 3 }, () => peer.client.request("turn.cancel", { session_id: "s1", run_id: "r" }).catch((error: unknown) => error));
    await settled();
    assert.equal(peer.requests.length, 1 + 16, "the third turn.cancel waits for a slot");
    const stopping = peer.client.shutdown();
    await settled();
    assert.deepEqual(peer.requests.slice(17).map((r) => r.method), ["shutdown"]);
    assert.ok((await cancels[2]) instanceof RequestRefused, "the waiting turn.cancel was refused");
    peer.end();
    await stopping;
    await Promise.all([...statuses, ...cancels]);
  });

  it("refuses a timeoutMs above 2**31 - 1 ms (a timer cannot wait longer) with a RangeError, sending nothing; 2**31 - 1 is kept", async () => {
    const peer = await initialized();
    await assert.rejects(peer.client.request("status", {}, { timeoutMs: 2 ** 31 }), RangeError);
    await assert.rejects(peer.client.request("status", {}, { timeoutMs: Infinity }), RangeError);
    assert.equal(peer.requests.length, 1);
    const status = peer.client.request("status", {}, { timeoutMs: 2 ** 31 - 1 });
    peer.result((await peer.requested(2)).id, STATUS);
    assert.equal((await status).state, "idle");
  });

  it("refuses request(\"turn.start\") without sending it, pointing at startTurn(), which follows the run's events", async () => {
    const peer = await initialized();
    // @ts-expect-error turn.start is not a request(): its run's events need the Run that startTurn() registers.
    const refused = peer.client.request("turn.start", { session_id: "s1", prompt: "hi" });
    await assert.rejects(refused, (error: unknown) => error instanceof RequestRefused && /startTurn\(\)/.test(error.message));
    await settled();
    assert.equal(peer.requests.length, 1);
  });

  it("a child publishing pending_output_frames 6 gets a window of 3, during a run too: 1 ordinary request, the urgent ones up to 3", async () => {
    const peer = await initialized(CAPABILITIES, ["turn.start"], { ...LIMITS, pending_output_frames: 6 });
    const before = Array.from({ length: 3 }, () => peer.client.request("status", {}).catch((error: unknown) => error));
    await settled();
    assert.equal(peer.requests.length, 1 + 1, "outside a run: 3, less the 2 urgent slots");
    peer.result(peer.requests[1]!.id, STATUS);
    peer.result((await peer.requested(3)).id, STATUS);
    peer.result((await peer.requested(4)).id, STATUS);
    await Promise.all(before);
    const started = peer.client.startTurn("s1", "hi");
    peer.result((await peer.requested(5)).id, { run_id: "run1", accepted: true });
    const run = await started;
    const statuses = Array.from({ length: 4 }, () => peer.client.request("status", {}).catch((error: unknown) => error));
    const cancels = Array.from({ length: 4 }, () => peer.client.request("turn.cancel", { session_id: "s1", run_id: "run1" }).catch((error: unknown) => error));
    await settled();
    assert.deepEqual(peer.requests.slice(5).map((r) => r.method), ["status", "turn.cancel", "turn.cancel"]);
    peer.end();
    await assert.rejects(run.finished);
    await Promise.all([...statuses, ...cancels]);
  });

  it("startTurn() given up while it waits for the lane is never sent; once sent it is discarded, and the run it started is still followed", async () => {
    const peer = await initialized(CAPABILITIES, ["turn.start", "session.list"]);
    const listing = peer.client.request("session.list", {});
    const queued = new AbortController();
    const withdrawn = peer.client.startTurn("s1", "first", {}, { signal: queued.signal });
    await settled();
    queued.abort();
    await assert.rejects(withdrawn, (error: unknown) => error instanceof RequestAborted && error.method === "turn.start" && error.outcome === "not_sent");
    peer.result((await peer.requested(2)).id, LISTING);
    await listing;

    const seen: string[] = [];
    const given = peer.client.startTurn("s1", "second", { onEvent: ({ event }) => seen.push(event) }, { timeoutMs: 0 });
    const turn = await peer.requested(3);
    assert.deepEqual([turn.method, turn.params.prompt], ["turn.start", "second"], "the withdrawn turn was never written");
    await assert.rejects(given, (error: unknown) => error instanceof RequestAborted && error.outcome === "discarded" && error.timedOut);
    // The child admitted it anyway: its events reach the handlers and are no violation.
    peer.result(turn.id, { run_id: "run1", accepted: true });
    peer.event("run.finished", finished);
    const status = peer.client.request("status", {});
    peer.result((await peer.requested(4)).id, STATUS);
    await status;
    assert.equal(peer.client.failure, null);
    assert.deepEqual(seen, ["run.finished"]);
  });

  for (const trigger of ["signal", "timeout", "signal aborted before the call"] as const) {
    it(`initialize() given up by its ${trigger} rejects RequestAborted and closes the connection`, async () => {
      const peer = new Peer();
      const stop = new AbortController();
      if (trigger === "signal aborted before the call") stop.abort();
      const init = peer.client.initialize(["shutdown"], trigger === "timeout" ? { timeoutMs: 0 } : { signal: stop.signal });
      if (trigger === "signal") {
        await peer.requested(1);
        stop.abort();
      }
      const outcome = trigger === "signal aborted before the call" ? "not_sent" : "discarded";
      await assert.rejects(init, (error: unknown) => error instanceof RequestAborted && error.method === "initialize" && error.outcome === outcome);
      await peer.client.closed;
      assert.ok(peer.ended, "the child's stdin is closed");
      assert.ok(peer.client.failure instanceof ConnectionClosed, String(peer.client.failure));
      await assert.rejects(peer.client.request("status", {}), (error: unknown) => error === peer.client.failure);
    });
  }
});

/** Lets every queued microtask and the next macrotask run. */
function settled(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
