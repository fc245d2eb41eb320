import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { Gate } from "./support/fake-provider.ts";
import { reply } from "./support/provider-scripts.ts";
import { CWD, HOME, nextEvent, reconciled, request, runEvents, startTurn, startTurnServer, stopTurnServer, terminalData, type TurnServer } from "./support/turns.ts";

const API = "openai-chat";
const decoder = new TextDecoder();

function storedRecords(server: TurnServer, sessionId: string): Record<string, unknown>[] {
  const bytes = server.runtime.fs.contents(`${HOME}/sessions/${sessionId}.jsonl`);
  assert.ok(bytes, "the session file exists");
  return decoder.decode(bytes).trim().split("\n").map((line) => JSON.parse(line));
}

/** The messages array of the provider request `index` (chat format). */
function sentMessages(server: TurnServer, index: number): { role: string; content?: unknown; tool_call_id?: string }[] {
  return (server.provider.log[index]!.body as { messages: { role: string; content?: unknown }[] }).messages;
}

describe("the turn loop", () => {
  it("a lazy session becomes durable with a session record, the input, the reply, usage and turn_finished", async () => {
    const server = await startTurnServer(API);
    server.provider.enqueue(reply(API, { text: ["Fine, thanks."] }));
    const { sessionId, runId } = await startTurn(server, "How are you?");
    const events = await runEvents(server, runId);
    const persisted = events[0]!.data as { message_id: string; durable: boolean; revision: string };
    assert.equal(persisted.message_id, "m0");
    assert.equal(persisted.durable, true);
    const records = storedRecords(server, sessionId);
    assert.deepEqual(records.map((record) => record.type), ["session", "turn_started", "user_input", "assistant_message", "usage", "turn_finished"]);
    assert.equal(records[0]!.cwd, CWD);
    assert.equal(records[1]!.run_id, runId);
    assert.deepEqual([records[4]!.input_tokens, records[4]!.output_tokens], [11, 7]);
    assert.deepEqual([records[5]!.outcome, records[5]!.error_code], ["completed", null]);
    // Reopening in the same child reads the same durable file.
    const reopened = await request(server, "open", "session.open", { session_id: sessionId });
    assert.equal((reopened.result as { durable: boolean }).durable, true);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("the system prompt carries global and workspace AGENTS.md, and the next turn replays the first", async () => {
    const server = await startTurnServer(API, {
      fs: (() => {
        const fs = new MemoryFileSystem();
        fs.writeFile(`${HOME}/AGENTS.md`, "Global rule: answer in English.");
        fs.writeFile(`${CWD}/AGENTS.md`, "Workspace rule: run the tests with npm test.");
        return fs;
      })(),
    });
    server.runtime.fs.writeFile(`${CWD}/a.txt`, "alpha\n");
    server.provider.enqueue(reply(API, { calls: [{ id: "call_r", name: "read_file", args: { path: "a.txt" } }] }));
    server.provider.enqueue(reply(API, { text: ["It says alpha."] }));
    server.provider.enqueue(reply(API, { text: ["Yes."] }));
    const first = await startTurn(server, "What is in a.txt?");
    await runEvents(server, first.runId);
    const system = sentMessages(server, 0)[0]!;
    assert.equal(system.role, "system");
    assert.match(String(system.content), /Global rule: answer in English\.[\s\S]*Workspace rule: run the tests/);
    // The tool result went back paired with its call.
    const second = sentMessages(server, 1);
    const tool = second.find((message) => message.role === "tool")!;
    assert.equal(tool.tool_call_id, "call_r");
    assert.match(String(tool.content), /alpha/);

    const next = await startTurn(server, "Are you sure?", first.sessionId);
    await runEvents(server, next.runId);
    const third = sentMessages(server, 2).map((message) => [message.role, String(message.content)]);
    assert.deepEqual(third.slice(1).map(([role]) => role), ["user", "assistant", "user"]);
    assert.equal(third[1]![1], "What is in a.txt?");
    assert.match(third[2]![1]!, /\[tool read_file completed: [^\]]*a\.txt[^\]]*\]\n\nIt says alpha\./);
    assert.equal(third[3]![1], "Are you sure?");

    // The snapshot extended after each turn equals a fresh read of the file.
    const events = await runEvents(server, next.runId);
    const extended = await request(server, "page-extended", "history.page", { session_id: first.sessionId, revision: (events.at(-1)!.data as { revision: string }).revision });
    const reopened = await request(server, "reopen", "session.open", { session_id: first.sessionId });
    const fresh = await request(server, "page-fresh", "history.page", { session_id: first.sessionId, revision: (reopened.result as { revision: string }).revision });
    assert.deepEqual((extended.result as { entries: unknown[] }).entries, (fresh.result as { entries: unknown[] }).entries);
    assert.equal((extended.result as { entries: unknown[] }).entries.length, 5);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("deny policies, unknown tools and invalid arguments fail their activity and the model hears why", async () => {
    const server = await startTurnServer(API, { settings: { tools: { shell: "deny" } } });
    server.provider.enqueue(reply(API, {
      calls: [
        { id: "c1", name: "shell", args: { command: "rm -rf /" } },
        { id: "c2", name: "launch_missiles", args: {} },
        { id: "c3", name: "read_file", args: { nope: true } },
      ],
    }));
    server.provider.enqueue(reply(API, { text: ["Understood."] }));
    const { runId } = await startTurn(server, "Do things");
    const events = await runEvents(server, runId);
    const activities = events.filter((frame) => frame.event === "activity").map((frame) => frame.data as { name: string; state: string; summary: string });
    assert.deepEqual(activities.map((activity) => [activity.name, activity.state]), [
      ["shell", "failed"],
      ["launch_missiles", "failed"],
      // Arguments that do not validate are refused while preparing: the call never starts.
      ["read_file", "failed"],
    ]);
    assert.ok(!events.some((frame) => frame.event === "approval.requested"));
    const results = sentMessages(server, 1).filter((message) => message.role === "tool").map((message) => String(message.content));
    assert.equal(results.length, 3);
    assert.match(results[0]!, /denied by the user's settings/);
    assert.match(results[1]!, /no tool named/);
    assert.match(results[2]!, /Invalid arguments for read_file/);
    assert.equal(terminalData(events).outcome, "completed");
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a denied approval does not run the tool", async () => {
    const server = await startTurnServer(API);
    server.provider.enqueue(reply(API, { calls: [{ id: "w", name: "write_file", args: { path: "x.txt", content: "x" } }] }));
    server.provider.enqueue(reply(API, { text: ["Okay, I will not write it."] }));
    const { runId, sessionId } = await startTurn(server, "Write x");
    const approval = (await nextEvent(server, runId, "approval.requested")).data as { approval_id: string; summary: string };
    assert.match(approval.summary, /x\.txt/);
    const answered = await request(server, "deny", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: approval.approval_id, allow: false });
    assert.deepEqual(answered.result, { recorded: true });
    const events = await runEvents(server, runId);
    assert.equal(server.runtime.fs.exists(`${CWD}/x.txt`), false);
    assert.match(String(sentMessages(server, 1).find((message) => message.role === "tool")!.content), /denied/);
    assert.equal(terminalData(events).outcome, "completed");
    assert.equal(await stopTurnServer(server), 0);
  });

  it("agent.max_steps stops a model that keeps calling tools", async () => {
    const server = await startTurnServer(API, { settings: { agent: { max_steps: 2 } } });
    server.runtime.fs.writeFile(`${CWD}/a.txt`, "a");
    server.provider.handler = () => reply(API, { calls: [{ id: `c${Math.random()}`, name: "read_file", args: { path: "a.txt" } }] });
    const { runId } = await startTurn(server, "Loop");
    const events = await runEvents(server, runId);
    assert.equal(server.provider.log.length, 2);
    assert.equal((events.findLast((frame) => frame.event === "diagnostic")!.data as { code: string }).code, "step_limit");
    assert.deepEqual([terminalData(events).outcome, terminalData(events).error_code], ["failed", "execution_failed"]);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a stream without its terminal event fails the run and keeps the partial reply", async () => {
    const server = await startTurnServer(API);
    server.provider.enqueue(reply(API, { text: ["Half an ", "answer"], truncate: true }));
    const { runId, sessionId } = await startTurn(server, "Hi");
    const events = await runEvents(server, runId);
    assert.equal((events.find((frame) => frame.event === "diagnostic")!.data as { code: string }).code, "provider_stream_truncated");
    assert.deepEqual([...reconciled(events).values()], [{ text: "Half an answer", partial: true }]);
    assert.deepEqual([terminalData(events).outcome, terminalData(events).persistence], ["failed", "durable"]);
    const page = await request(server, "p", "history.page", { session_id: sessionId, revision: terminalData(events).revision });
    const entries = (page.result as { entries: { kind: string; partial: boolean }[] }).entries;
    assert.deepEqual(entries.map((entry) => [entry.kind, entry.partial]), [["user", false], ["assistant", true], ["diagnostic", false]]);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a reply cut at the output token limit completes with a diagnostic", async () => {
    const server = await startTurnServer(API);
    server.provider.enqueue(reply(API, { text: ["Long"], maxTokens: true }));
    const { runId } = await startTurn(server, "Write a novel");
    const events = await runEvents(server, runId);
    assert.equal((events.find((frame) => frame.event === "diagnostic")!.data as { code: string }).code, "output_token_limit");
    assert.equal(terminalData(events).outcome, "completed");
    assert.equal(await stopTurnServer(server), 0);
  });

  it("an unreachable provider fails the run with provider_unreachable", async () => {
    const server = await startTurnServer(API);
    await server.provider.close();
    const { runId } = await startTurn(server, "Hi");
    const events = await runEvents(server, runId);
    assert.equal((events.find((frame) => frame.event === "diagnostic")!.data as { code: string }).code, "provider_unreachable");
    server.runtime.input.end();
    assert.equal(await server.exit, 0);
  });

  it("a failed input append ends the run not_started with persistence_failed and no acknowledgement", async () => {
    const server = await startTurnServer(API);
    const created = await request(server, "c", "session.create");
    const sessionId = (created.result as { session_id: string }).session_id;
    server.runtime.fs.faults.set(`${HOME}/sessions/${sessionId}.jsonl`, "io");
    const { runId } = await startTurn(server, "Hi", sessionId);
    const events = await runEvents(server, runId);
    assert.deepEqual(events.map((frame) => frame.event), ["run.finished"]);
    assert.deepEqual(terminalData(events), {
      session_id: sessionId,
      run_id: runId,
      outcome: "failed",
      persistence: "not_started",
      revision: null,
      error_code: "persistence_failed",
    });
    assert.equal(server.provider.log.length, 0);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a failed later append degrades persistence but the reply still arrives", async () => {
    const server = await startTurnServer(API);
    const gate = new Gate();
    server.provider.enqueue(reply(API, { text: ["Still here."], gates: new Map([[0, gate]]) }));
    const { runId, sessionId } = await startTurn(server, "Hi");
    await nextEvent(server, runId, "input.persisted");
    server.runtime.fs.faults.set(`${HOME}/sessions/${sessionId}.jsonl`, "io");
    gate.release();
    const events = await runEvents(server, runId);
    assert.deepEqual([...reconciled(events).values()], [{ text: "Still here.", partial: false }]);
    assert.equal((events.find((frame) => frame.event === "diagnostic")!.data as { code: string }).code, "persistence_degraded");
    assert.deepEqual([terminalData(events).outcome, terminalData(events).persistence, terminalData(events).revision], ["completed", "degraded", null]);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("more than 8 MiB of assistant text fails with content_limit and a truthful partial reply", async () => {
    const server = await startTurnServer(API);
    const piece = `${"word ".repeat(20_000)}\n`;
    server.provider.enqueue(reply(API, { text: Array.from({ length: 90 }, () => piece) }));
    const { runId } = await startTurn(server, "Talk a lot");
    const events = await runEvents(server, runId);
    const text = [...reconciled(events).values()];
    assert.equal(text.length, 1);
    assert.equal(text[0]!.partial, true);
    assert.equal(text[0]!.text.length, piece.length * Math.floor(8 * 1024 * 1024 / piece.length));
    assert.deepEqual([terminalData(events).outcome, terminalData(events).error_code], ["failed", "content_limit"]);
    assert.equal(await stopTurnServer(server), 0);
  });
});
