import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { prompt } from "../src/fuzz/mod.ts";
import type { ProviderApi } from "../src/config/settings.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { Gate } from "./support/fake-provider.ts";
import { errorScript } from "./support/provider-fixtures.ts";
import { reply } from "./support/provider-scripts.ts";
import { assertPaired } from "./support/request-checks.ts";
import { HOME, nextEvent, reconciled, request, runEvents, startTurn, startTurnServer, stopTurnServer } from "./support/turns.ts";

const APIS: ProviderApi[] = ["openai-chat", "openai-responses", "anthropic-messages"];

for (const api of APIS) {
  describe(`turns over ${api}`, () => {
    it("turn.start streams an answer, reconciles it and finishes durable", async () => {
      const server = await startTurnServer(api);
      server.provider.enqueue(reply(api, { text: ["Hello", ", world", "!"], summary: "Thinking about greetings." }));
      const { sessionId, runId } = await startTurn(server, "Say hello");
      const events = await runEvents(server, runId);
      const names = events.map((frame) => frame.event);
      assert.equal(names[0], "input.persisted");
      assert.equal(names.at(-1), "run.finished");
      assert.equal(names.filter((name) => name === "run.finished").length, 1);
      const finished = events.at(-1)!.data as Record<string, unknown>;
      assert.deepEqual(
        { outcome: finished.outcome, persistence: finished.persistence, error_code: finished.error_code },
        { outcome: "completed", persistence: "durable", error_code: null },
      );
      assert.deepEqual([...reconciled(events).values()], [{ text: "Hello, world!", partial: false }]);

      const page = await request(server, "page", "history.page", { session_id: sessionId, revision: finished.revision });
      const entries = (page.result as { entries: { kind: string; text: string }[] }).entries;
      assert.deepEqual(
        entries.map((entry) => [entry.kind, entry.text]),
        api === "openai-chat"
          ? [["user", "Say hello"], ["assistant", "Hello, world!"]]
          : [["user", "Say hello"], ["reasoning_summary", "Thinking about greetings."], ["assistant", "Hello, world!"]],
      );
      const sent = server.provider.log[0]!.body as Record<string, unknown>;
      assert.match(JSON.stringify(sent), /Say hello/);
      assert.equal(await stopTurnServer(server), 0);
    });

    it("a tool call that needs approval runs once allowed and its result goes back to the model", async () => {
      const server = await startTurnServer(api);
      server.runtime.fs.writeFile("/work/project/notes.txt", "remember the milk\n");
      server.provider.enqueue(reply(api, { text: ["Let me write it."], calls: [{ id: "call_1", name: "write_file", args: { path: "out.txt", content: "milk\n" } }] }));
      server.provider.enqueue(reply(api, { text: ["Done."] }));
      const { runId, sessionId } = await startTurn(server, "Write out.txt");
      const approval = await nextEvent(server, runId, "approval.requested");
      const data = approval.data as { approval_id: string; summary: string; expires_in_ms: number };
      assert.equal(data.expires_in_ms, 60_000);
      const answered = await request(server, "allow", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: data.approval_id, allow: true });
      assert.deepEqual(answered.result, { recorded: true });
      const again = await request(server, "allow-again", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: data.approval_id, allow: true });
      assert.deepEqual(again.error, { code: "stale_approval" });
      const events = await runEvents(server, runId);
      const activities = events.filter((frame) => frame.event === "activity").map((frame) => (frame.data as { state: string }).state);
      assert.deepEqual(activities, ["started", "completed"]);
      assert.equal(new TextDecoder().decode(server.runtime.fs.contents("/work/project/out.txt")), "milk\n");
      assert.deepEqual([...reconciled(events).values()].map((entry) => entry.text), ["Let me write it.", "Done."]);
      assert.equal((events.at(-1)!.data as { outcome: string }).outcome, "completed");
      assert.equal(server.provider.log.length, 2);
      assert.equal(await stopTurnServer(server), 0);
    });

    it("parallel tool calls run in order and every result is paired with its call in the next request", async () => {
      const server = await startTurnServer(api, { settings: { tools: { write_file: "deny" } } });
      server.runtime.fs.writeFile("/work/project/a.txt", "alpha\n");
      server.provider.enqueue(reply(api, {
        text: ["Looking."],
        calls: [
          { id: "call_a", name: "read_file", args: { path: "a.txt" } },
          { id: "call_b", name: "list_directory", args: { path: "." } },
          { id: "call_c", name: "write_file", args: { path: "b.txt", content: "no" } },
        ],
      }));
      server.provider.enqueue(reply(api, { text: ["Both done."] }));
      const { runId } = await startTurn(server, "Look around");
      const events = await runEvents(server, runId);
      const activities = events.filter((frame) => frame.event === "activity").map((frame) => {
        const data = frame.data as { activity_id: string; name: string; state: string };
        return [data.activity_id, data.name, data.state];
      });
      assert.deepEqual(activities, [
        ["t1", "read_file", "started"],
        ["t1", "read_file", "completed"],
        ["t2", "list_directory", "started"],
        ["t2", "list_directory", "completed"],
        ["t3", "write_file", "failed"],
      ]);
      assertPaired(api, server.provider.log[1]!.body as Record<string, unknown>);
      assert.match(JSON.stringify(server.provider.log[1]!.body), /alpha/);
      assert.equal(await stopTurnServer(server), 0);
    });

    it("turn.cancel during a gated stream ends the run cancelled with its partial text", async () => {
      const server = await startTurnServer(api);
      const gate = new Gate();
      // Longer than the longest configured key, so the redactor releases it as a delta before the gate.
      const partial = "Partial answer that is long enough to pass the redaction hold-back. ";
      server.provider.enqueue(reply(api, { text: [partial, "never sent"], gates: new Map([[api === "openai-chat" ? 0 : 2, gate]]) }));
      const { runId, sessionId } = await startTurn(server, "Cancel me");
      await gate.whenReached();
      await nextEvent(server, runId, "message.delta");
      const cancelled = await request(server, "cancel", "turn.cancel", { session_id: sessionId, run_id: runId });
      assert.deepEqual(cancelled.result, { cancellation_requested: true });
      const events = await runEvents(server, runId);
      const finished = events.at(-1)!.data as Record<string, unknown>;
      assert.equal(finished.outcome, "cancelled");
      assert.equal(finished.error_code, null);
      assert.deepEqual([...reconciled(events).values()], [{ text: partial, partial: true }]);
      await server.provider.until(() => server.provider.log[0]!.clientClosed);
      const late = await request(server, "cancel-late", "turn.cancel", { session_id: sessionId, run_id: runId });
      assert.deepEqual(late.error, { code: "stale_run" });
      gate.release();
      assert.equal(await stopTurnServer(server), 0);
    });

    for (const [status, code] of [[429, "provider_rate_limited"], [500, "provider_server_error"]] as const) {
      it(`an HTTP ${status} fails the run with ${code}`, async () => {
        const server = await startTurnServer(api);
        server.provider.enqueue(errorScript(api, status, "Slow down, sk-test-openai-0123456789abcdef", "7"));
        const { runId } = await startTurn(server, "Hi");
        const events = await runEvents(server, runId);
        assert.equal((events.find((frame) => frame.event === "diagnostic")!.data as { code: string }).code, code);
        assert.equal((events.at(-1)!.data as { error_code: string }).error_code, "execution_failed");
        assert.equal(server.provider.log.length, 1, "no automatic retry");
        assert.equal(await stopTurnServer(server), 0);
      });
    }

    if (api !== "anthropic-messages") {
      it("a refusal is shown and stored as the assistant's reply", async () => {
        const server = await startTurnServer(api);
        server.provider.enqueue(reply(api, { refusal: "I can't help with that." }));
        const { runId } = await startTurn(server, "Do something bad");
        const events = await runEvents(server, runId);
        assert.deepEqual([...reconciled(events).values()], [{ text: "I can't help with that.", partial: false }]);
        assert.equal((events.at(-1)!.data as { outcome: string }).outcome, "completed");
        assert.equal(await stopTurnServer(server), 0);
      });
    }

    it("a 401 fails the run with a diagnostic and no provider text", async () => {
      const server = await startTurnServer(api);
      server.provider.enqueue(errorScript(api, 401, "Incorrect API key provided: sk-test-openai-0123456789abcdef"));
      const { runId } = await startTurn(server, "Hi");
      const events = await runEvents(server, runId);
      const diagnostic = events.find((frame) => frame.event === "diagnostic")!.data as { code: string };
      assert.equal(diagnostic.code, "provider_auth");
      const finished = events.at(-1)!.data as Record<string, unknown>;
      assert.deepEqual([finished.outcome, finished.persistence, finished.error_code], ["failed", "durable", "execution_failed"]);
      assert.doesNotMatch(JSON.stringify(server.frames()), /Incorrect API key|0123456789abcdef/);
      assert.equal(await stopTurnServer(server), 0);
    });
  });
}

describe("turn admission", () => {
  it("turn.start admits exactly the prompts of at most 16,384 UTF-8 bytes that are not all whitespace", async () => {
    const server = await startTurnServer("openai-chat");
    server.provider.handler = () => reply("openai-chat", { text: ["ok"] });
    const created = await request(server, "c", "session.create");
    const sessionId = (created.result as { session_id: string }).session_id;
    let n = 0;
    await fc.assert(
      fc.asyncProperty(prompt(), async ({ text, valid }) => {
        const answer = await request(server, `p${++n}`, "turn.start", { session_id: sessionId, prompt: text });
        if (!valid) return assert.deepEqual(answer.error, { code: "invalid_params" });
        const runId = (answer.result as { run_id: string }).run_id;
        await runEvents(server, runId);
      }),
      { numRuns: fuzzRuns(40) },
    );
    assert.equal(await stopTurnServer(server), 0);
  });


  it("turn.start refuses a missing session, a stale session, a blank prompt and a second run", async () => {
    const server = await startTurnServer("openai-chat");
    const missing = await request(server, "t0", "turn.start", { session_id: "nope", prompt: "hi" });
    assert.deepEqual(missing.error, { code: "session_missing" });
    const created = await request(server, "c1", "session.create");
    const sessionId = (created.result as { session_id: string }).session_id;
    const stale = await request(server, "t1", "turn.start", { session_id: "other", prompt: "hi" });
    assert.deepEqual(stale.error, { code: "stale_session" });
    const blank = await request(server, "t2", "turn.start", { session_id: sessionId, prompt: " \n\t " });
    assert.deepEqual(blank.error, { code: "invalid_params" });
    const large = await request(server, "t3", "turn.start", { session_id: sessionId, prompt: "é".repeat(8_193) });
    assert.deepEqual(large.error, { code: "invalid_params" });
    const gate = new Gate();
    server.provider.enqueue(reply("openai-chat", { text: ["a"], gates: new Map([[0, gate]]) }));
    const first = await request(server, "t4", "turn.start", { session_id: sessionId, prompt: "x".repeat(16_384) });
    const runId = (first.result as { run_id: string; accepted: boolean }).run_id;
    assert.equal((first.result as { accepted: boolean }).accepted, true);
    const second = await request(server, "t5", "turn.start", { session_id: sessionId, prompt: "again" });
    assert.deepEqual(second.error, { code: "busy" });
    const open = await request(server, "o1", "session.open", { session_id: sessionId });
    assert.deepEqual(open.error, { code: "busy" });
    const status = await request(server, "s1", "status");
    assert.equal((status.result as { state: string; run_id: string }).state, "running");
    assert.equal((status.result as { run_id: string }).run_id, runId);
    gate.release();
    await runEvents(server, runId);
    const after = await request(server, "s2", "status");
    assert.equal((after.result as { state: string }).state, "idle");
    assert.ok(server.runtime.fs.exists(`${HOME}/sessions/${sessionId}.jsonl`));
    assert.equal(await stopTurnServer(server), 0);
  });
});
