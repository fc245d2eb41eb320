/**
 * The negotiated `approval.scope` extension: session grants cover exactly
 * the key the user saw (a fast-check property over keys and later calls),
 * live per session in the child's memory, and an answer's scope is checked
 * against what the request offered; `approval.resolved` reports how each
 * approval ended exactly once (answer, expiry, cancel, EOF, shutdown); a base client
 * sees none of it and its `scope` field stays unknown.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ManualClock } from "../runtime/memory.ts";
import { ErrorCode } from "../src/protocol/errors.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { APPROVAL_OUTCOMES, RESOLVED_APPROVAL_OUTCOMES } from "../src/protocol/approval-outcomes.ts";
import { MAX_SESSION_GRANTS, scopeKey, SessionGrants } from "../src/grants/session-grants.ts";
import { ApprovalBroker } from "../src/runner/approvals.ts";
import { showExactly } from "../src/runner/tools/tool-text.ts";
import type { Frame } from "./support/harness.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { reply } from "./support/provider-scripts.ts";
import { HOME, nextEvent, request, runEvents, startTurn, startTurnServer, stopTurnServer, TURN_CAPABILITIES, type TurnServer } from "./support/turns.ts";

const API = "openai-chat";
const SCOPED = [...TURN_CAPABILITIES, "approval.scope"];
function host() {
  const clock = new ManualClock();
  return { setTimer: (ms: number, callback: () => void) => clock.setTimer(ms, callback), randomUUID: () => crypto.randomUUID() };
}

/** A call as the tools name it: a tool and its target (shown with `showExactly`, as `scopeTarget` is). */
const toolCall = fc.record({
  tool: fc.constantFrom("write_file", "edit_file", "read_file", "shell"),
  target: fc.oneof(fc.constantFrom("a.txt", "a.txt ", "src/a.ts", "a\u200btxt", "a\\u{200B}txt", "npm test", "npm test; rm -rf /"), fc.string({ maxLength: 12 })),
  session: fc.constantFrom("s1", "s2"),
});

describe("session grants", () => {
  it("a grant covers exactly its tool, its target and its session: never a call the user did not see", () => {
    fc.assert(
      fc.property(fc.array(toolCall, { maxLength: 8 }), fc.array(toolCall, { minLength: 1, maxLength: 8 }), (granted, later) => {
        const grants = new SessionGrants();
        const keyOf = (c: { tool: string; target: string }) => scopeKey(c.tool, showExactly(c.target), []);
        for (const c of granted) grants.grant(c.session, keyOf(c)!);
        for (const c of later) {
          const seen = granted.some((g) => g.session === c.session && g.tool === c.tool && g.target === c.target);
          assert.equal(grants.covers(c.session, keyOf(c)!), seen, JSON.stringify(c));
        }
      }),
      { numRuns: fuzzRuns(500) },
    );
  });

  it("scopeKey() offers no key that cannot be shown whole: over summary_bytes, or holding a secret", () => {
    assert.equal(scopeKey("shell", showExactly("x".repeat(LIMITS.summary_bytes)), []), null);
    assert.equal(scopeKey("shell", showExactly("echo sk-test-0123456789"), ["sk-test-0123456789"]), null);
    assert.equal(scopeKey("shell", showExactly("npm test"), []), 'shell "npm test"');
    assert.equal(scopeKey("mcp__files__a_b", showExactly("a.b"), []), 'mcp__files__a_b "a.b"');
  });

  it(`holds at most ${MAX_SESSION_GRANTS} grants; a full child offers once only`, () => {
    const grants = new SessionGrants();
    for (let i = 0; i < MAX_SESSION_GRANTS; i++) assert.equal(grants.grant(`s${i % 3}`, `shell "${i}"`), true);
    assert.equal(grants.hasRoom, false);
    assert.equal(grants.grant("s0", 'shell "more"'), false);
    const broker = new ApprovalBroker(host(), { grants, sessionId: "s0" });
    assert.equal(broker.request("Run more", 'shell "more"').scopeKey, null);
  });

  it("approval.resolved speaks the one outcome vocabulary: every outcome but not_asked", () => {
    assert.deepEqual([...RESOLVED_APPROVAL_OUTCOMES], APPROVAL_OUTCOMES.filter((outcome) => outcome !== "not_asked"));
  });
});

describe("ApprovalBroker with approval.scope", () => {
  it("a session answer to a once-only request is invalid_params and leaves it pending; a denied session answer grants nothing", async () => {
    const grants = new SessionGrants();
    const broker = new ApprovalBroker(host(), { grants, sessionId: "s" });
    const once = broker.request("Run it", null);
    assert.deepEqual(broker.answer(once.approvalId, true, "session"), { ok: false, code: ErrorCode.invalidParams });
    assert.deepEqual(broker.answer(once.approvalId, true), { ok: true });
    assert.equal(await once.decision, "allowed");
    const scoped = broker.request("Run npm test", 'shell "npm test"');
    assert.equal(scoped.scopeKey, 'shell "npm test"');
    assert.deepEqual(broker.answer(scoped.approvalId, false, "session"), { ok: true });
    assert.equal(await scoped.decision, "denied");
    assert.equal(broker.granted('shell "npm test"'), false);
  });

  it("without approval.scope nothing is offered, granted or answered for a session", () => {
    const broker = new ApprovalBroker(host());
    const request = broker.request("Run npm test", 'shell "npm test"');
    assert.equal(request.scopeKey, null);
    assert.deepEqual(broker.answer(request.approvalId, true, "session"), { ok: false, code: ErrorCode.invalidParams });
    assert.equal(broker.granted('shell "npm test"'), false);
  });
});

function events(server: TurnServer, name: string): Frame[] {
  return server.frames().filter((frame) => frame.type === "event" && frame.event === name);
}

function writeCall(id: string, path: string) {
  return reply(API, { calls: [{ id, name: "write_file", args: { path, content: `${path}\n` } }] });
}

async function answer(server: TurnServer, id: string, sessionId: string, requested: Frame, allow: boolean, scope?: string) {
  const data = requested.data as { run_id: string; approval_id: string };
  return await request(server, id, "approval.answer", { session_id: sessionId, run_id: data.run_id, approval_id: data.approval_id, allow, ...(scope === undefined ? {} : { scope }) });
}

describe("approval.scope over the protocol", () => {
  it("an allowing session answer lets later calls of exactly that key run unasked, in this session only; other keys still ask", async () => {
    const server = await startTurnServer(API, { capabilities: SCOPED });
    try {
      server.provider.enqueue(writeCall("c1", "a.txt"));
      server.provider.enqueue(reply(API, { text: ["Done."] }));
      const first = await startTurn(server, "write a");
      const requested = await nextEvent(server, first.runId, "approval.requested");
      const data = requested.data as Record<string, unknown>;
      assert.deepEqual(data.scopes, ["once", "session"]);
      assert.equal(data.scope_key, 'write_file "a.txt"');
      assert.deepEqual((await answer(server, "a1", first.sessionId, requested, true, "session")).result, { recorded: true });
      const firstEvents = await runEvents(server, first.runId);
      assert.deepEqual(firstEvents.filter((e) => e.event === "approval.resolved").map((e) => e.data), [
        { session_id: first.sessionId, run_id: first.runId, approval_id: data.approval_id, outcome: "allowed" },
      ]);

      // The same key runs unasked; another path asks again.
      server.provider.enqueue(reply(API, { calls: [{ id: "c2", name: "write_file", args: { path: "a.txt", content: "again\n" } }, { id: "c3", name: "write_file", args: { path: "b.txt", content: "b\n" } }] }));
      server.provider.enqueue(reply(API, { text: ["Done."] }));
      const second = await startTurn(server, "write both", first.sessionId);
      const asked = await nextEvent(server, second.runId, "approval.requested");
      assert.equal((asked.data as Record<string, unknown>).scope_key, 'write_file "b.txt"');
      await answer(server, "a2", first.sessionId, asked, false);
      const secondEvents = await runEvents(server, second.runId);
      assert.equal(secondEvents.filter((e) => e.event === "approval.requested").length, 1);
      assert.equal(new TextDecoder().decode(server.runtime.fs.contents("/work/project/a.txt")), "again\n");
      assert.equal(server.runtime.fs.exists("/work/project/b.txt"), false);
      // The history records each call a grant let run, as the decision's public record; nothing else carries it.
      const stored = new TextDecoder().decode(server.runtime.fs.contents(`${HOME}/sessions/${first.sessionId}.jsonl`)!).trim().split("\n").map((l) => JSON.parse(l));
      const granted = stored.filter((r) => r.session_grant !== undefined);
      assert.deepEqual(granted.map((r) => [r.type, r.state, r.session_grant]), [["activity", "started", 'write_file "a.txt"'], ["activity", "started", 'write_file "a.txt"']]);

      // Another session of the same child holds no grant.
      server.provider.enqueue(writeCall("c4", "a.txt"));
      server.provider.enqueue(reply(API, { text: ["Done."] }));
      const other = await startTurn(server, "write a elsewhere");
      const again = await nextEvent(server, other.runId, "approval.requested");
      assert.equal((again.data as Record<string, unknown>).scope_key, 'write_file "a.txt"');
      await answer(server, "a3", other.sessionId, again, false, "session");
      await runEvents(server, other.runId);
    } finally {
      assert.equal(await stopTurnServer(server), 0);
    }
  });

  it("a grant covers the file the user saw however the model spells it, and nothing that only looks like it", async () => {
    const server = await startTurnServer(API, { capabilities: SCOPED });
    try {
      server.runtime.fs.mkdir("/work/project/sub", 0o755);
      server.provider.enqueue(writeCall("c1", "a.txt"));
      server.provider.enqueue(reply(API, { text: ["Done."] }));
      const first = await startTurn(server, "write a");
      await answer(server, "a1", first.sessionId, await nextEvent(server, first.runId, "approval.requested"), true, "session");
      await runEvents(server, first.runId);
      const paths = ["./a.txt", "sub/../a.txt", "a.txt\u200b", "A.txt", "sub/a.txt", "a.txt "];
      server.provider.enqueue(reply(API, { calls: paths.map((path, index) => ({ id: `p${index}`, name: "write_file", args: { path: JSON.parse(`"${path}"`), content: "x\n" } })) }));
      server.provider.enqueue(reply(API, { text: ["Done."] }));
      const second = await startTurn(server, "write the lookalikes", first.sessionId);
      const asked: string[] = [];
      for (let index = 0; index < 4; index++) {
        const requested = await nextEvent(server, second.runId, "approval.requested", index);
        asked.push((requested.data as { scope_key: string }).scope_key);
        await answer(server, `d${index}`, first.sessionId, requested, false);
      }
      await runEvents(server, second.runId);
      assert.deepEqual(asked, ['write_file "a.txt\\u{200B}"', 'write_file "A.txt"', 'write_file "sub/a.txt"', 'write_file "a.txt "']);
      assert.equal(events(server, "approval.requested").length, 5);
    } finally {
      assert.equal(await stopTurnServer(server), 0);
    }
  });

  it("grants die with the child: a new child over the same session asks again", async () => {
    const first = await startTurnServer(API, { capabilities: SCOPED });
    const fs = first.runtime.fs;
    let sessionId = "";
    try {
      first.provider.enqueue(writeCall("c1", "a.txt"));
      first.provider.enqueue(reply(API, { text: ["Done."] }));
      const run = await startTurn(first, "write a");
      sessionId = run.sessionId;
      await answer(first, "a1", sessionId, await nextEvent(first, run.runId, "approval.requested"), true, "session");
      await runEvents(first, run.runId);
    } finally {
      assert.equal(await stopTurnServer(first), 0);
    }
    const second = await startTurnServer(API, { capabilities: SCOPED, fs });
    try {
      assert.ok((await request(second, "o", "session.open", { session_id: sessionId })).result);
      second.provider.enqueue(writeCall("c2", "a.txt"));
      second.provider.enqueue(reply(API, { text: ["Done."] }));
      const run = await startTurn(second, "write a again", sessionId);
      const asked = await nextEvent(second, run.runId, "approval.requested");
      await answer(second, "a2", sessionId, asked, false);
      await runEvents(second, run.runId);
    } finally {
      assert.equal(await stopTurnServer(second), 0);
    }
  });

  for (const ending of ["allow", "deny", "expiry", "cancel", "eof", "shutdown"] as const) {
    it(`approval.resolved comes exactly once, before run.finished, when the approval ends by ${ending}`, async () => {
      const clock = new ManualClock();
      const server = await startTurnServer(API, { capabilities: SCOPED, clock });
      server.provider.enqueue(writeCall("c1", "a.txt"));
      server.provider.enqueue(reply(API, { text: ["Done."] }));
      const run = await startTurn(server, "write a");
      const requested = await nextEvent(server, run.runId, "approval.requested");
      const expected = { allow: "allowed", deny: "denied", expiry: "expired", cancel: "cancelled", eof: "cancelled", shutdown: "cancelled" }[ending];
      if (ending === "allow" || ending === "deny") await answer(server, "a", run.sessionId, requested, ending === "allow");
      if (ending === "expiry") clock.advance(LIMITS.approval_expiry_ms);
      if (ending === "cancel") await request(server, "x", "turn.cancel", { session_id: run.sessionId, run_id: run.runId });
      if (ending === "eof") server.runtime.input.end();
      const shutdown = ending === "shutdown" ? request(server, "q", "shutdown", {}) : null;
      const all = await runEvents(server, run.runId);
      const resolved = all.filter((e) => e.event === "approval.resolved");
      assert.deepEqual(resolved.map((e) => (e.data as { outcome: string }).outcome), [expected]);
      assert.equal((resolved[0]!.data as { approval_id: string }).approval_id, (requested.data as { approval_id: string }).approval_id);
      assert.ok(all.indexOf(resolved[0]!) < all.length - 1);
      if (shutdown !== null) assert.ok((await shutdown).result);
      if (ending !== "eof") assert.equal(await stopTurnServer(server), 0);
      else await server.provider.close();
    });
  }
});

describe("approval.scope for a base client", () => {
  it("approval.requested has no scope fields, no approval.resolved is sent, and a scope field is invalid_params as before", async () => {
    const server = await startTurnServer(API);
    try {
      const init = server.frames().find((frame) => frame.type === "response" && frame.id === "init")!;
      assert.equal((init.result as { capabilities: string[] }).capabilities.includes("approval.scope"), false);
      server.provider.enqueue(writeCall("c1", "a.txt"));
      server.provider.enqueue(reply(API, { text: ["Done."] }));
      const run = await startTurn(server, "write a");
      const requested = await nextEvent(server, run.runId, "approval.requested");
      assert.deepEqual(Object.keys(requested.data as object), ["session_id", "run_id", "approval_id", "summary", "expires_in_ms"]);
      assert.equal((await answer(server, "s", run.sessionId, requested, true, "once")).error?.code, ErrorCode.invalidParams);
      assert.deepEqual((await answer(server, "a", run.sessionId, requested, true)).result, { recorded: true });
      await runEvents(server, run.runId);
      assert.deepEqual(events(server, "approval.resolved"), []);
      // An event's name and an extension capability are no methods, for a base client as before the extension.
      for (const method of ["approval.resolved", "approval.scope"]) {
        assert.equal((await request(server, `m-${method}`, method, { session_id: run.sessionId })).error?.code, ErrorCode.unsupportedMethod);
      }
    } finally {
      assert.equal(await stopTurnServer(server), 0);
    }
  });
});
