import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { SessionRecord } from "../src/store/records.ts";
import { Gate } from "./support/fake-provider.ts";
import { type Frame, line } from "./support/harness.ts";
import { encodeAll, overSnapshotParts } from "./support/records.ts";
import { reply } from "./support/provider-scripts.ts";
import { CWD, HOME, request, runEvents, startTurn, startTurnServer, stopTurnServer, terminalData } from "./support/turns.ts";

const API = "openai-chat";
const SESSION = "sess-1";
const at = "2026-11-30T10:00:00.000Z";

function stored(records: readonly SessionRecord[]): string {
  return records.map((record) => `${JSON.stringify(record)}\n`).join("");
}

function firstTurn(question: string, finished = true): SessionRecord[] {
  return [
    { v: 1, type: "session", session_id: SESSION, at, cwd: CWD, created_at: at },
    { v: 1, type: "turn_started", session_id: SESSION, at, turn_id: "T1", run_id: "R1" },
    { v: 1, type: "user_input", session_id: SESSION, at, turn_id: "T1", message_id: "input", text: question },
    { v: 1, type: "assistant_message", session_id: SESSION, at, turn_id: "T1", message_id: "a1", text: "old answer", partial: false },
    ...(finished ? [{ v: 1, type: "turn_finished", session_id: SESSION, at, turn_id: "T1", outcome: "completed", error_code: null } as const] : []),
  ];
}

/** The codes of the run's `diagnostic` events, in order. */
const diagnostics = (events: readonly Frame[]) => events.filter((frame) => frame.event === "diagnostic").map((frame) => (frame.data as { code: string }).code);

async function openAndTurn(fs: MemoryFileSystem, prompt: string) {
  const server = await startTurnServer(API, { fs });
  const opened = await request(server, "open", "session.open", { session_id: SESSION });
  assert.ok(opened.result, JSON.stringify(opened.error));
  server.provider.enqueue(reply(API, { text: ["new answer"] }));
  const { runId } = await startTurn(server, prompt, SESSION);
  return { server, events: await runEvents(server, runId) };
}

describe("turn durability", () => {
  for (const [name, body] of [
    ["a torn tail", `${stored(firstTurn("old question"))}{"v":1,"type":"diag`],
    ["a turn that never started nor finished", stored(firstTurn("old question", false).filter((record) => record.type !== "turn_started"))],
  ] as const) {
    it(`input.persisted names the input's history entry after ${name}`, async () => {
      const fs = new MemoryFileSystem();
      fs.writeFile(`${HOME}/sessions/${SESSION}.jsonl`, body, 0o600);
      const { server, events } = await openAndTurn(fs, "NEW QUESTION");
      const messageId = (events[0]!.data as { message_id: string }).message_id;
      const page = await request(server, "page", "history.page", { session_id: SESSION, revision: terminalData(events).revision });
      const entry = (page.result as { entries: { message_id: string; kind: string; text: string }[] }).entries.find((e) => e.message_id === messageId);
      assert.deepEqual([entry?.kind, entry?.text], ["user", "NEW QUESTION"]);
      assert.equal(await stopTurnServer(server), 0);
    });
  }

  for (const [name, body] of [
    ["an empty file", ""],
    ["a file torn inside its first record", `{"v":1,"type":"session","session_id":"${SESSION}","at":"${at}","cw`],
  ] as const) {
    it(`${name} opens durable and its first turn writes the session record, then proceeds`, async () => {
      const fs = new MemoryFileSystem();
      const path = `${HOME}/sessions/${SESSION}.jsonl`;
      fs.writeFile(path, body, 0o600);
      const { server, events } = await openAndTurn(fs, "FIRST QUESTION");
      assert.equal(events[0]!.event, "input.persisted");
      assert.deepEqual([terminalData(events).outcome, terminalData(events).persistence], ["completed", "durable"]);
      assert.equal(server.provider.log.length, 1, "the provider was asked");
      const lines = new TextDecoder().decode(fs.contents(path)).split("\n").filter((text) => text !== "").map((text) => JSON.parse(text));
      assert.deepEqual([lines[0].type, lines[0].cwd, lines[1].type], ["session", CWD, "turn_started"]);
      const page = await request(server, "page", "history.page", { session_id: SESSION, revision: terminalData(events).revision });
      const entries = (page.result as { entries: { kind: string; text: string }[]; complete: boolean });
      assert.deepEqual(entries.entries.map((entry) => [entry.kind, entry.text]), [["user", "FIRST QUESTION"], ["assistant", "new answer"]]);
      assert.equal(entries.complete, true);
      const reopened = await request(server, "reopen", "session.open", { session_id: SESSION });
      assert.deepEqual((reopened.result as { notices: string[] }).notices, [], "the recorded cwd now verifies the workspace");
      assert.equal(await stopTurnServer(server), 0);
    });
  }

  it("a turn does not append once another child has taken the writer lease over", async () => {
    const server = await startTurnServer(API);
    server.provider.enqueue(reply(API, { text: ["one"] }));
    const { sessionId, runId } = await startTurn(server, "first");
    await runEvents(server, runId);
    const lease = `${HOME}/sessions/${sessionId}.writer.lease`;
    const other = { v: 1, pid: 99999, instance_id: "other-child", host: null, acquired_at: at, heartbeat_at: new Date().toISOString() };
    server.runtime.fs.writeFile(lease, `${JSON.stringify(other)}\n`, 0o600);
    const before = server.runtime.fs.contents(`${HOME}/sessions/${sessionId}.jsonl`);
    const second = await startTurn(server, "second", sessionId);
    const events = await runEvents(server, second.runId);
    assert.deepEqual([terminalData(events).outcome, terminalData(events).persistence, terminalData(events).error_code], ["failed", "not_started", "persistence_failed"]);
    assert.deepEqual(server.runtime.fs.contents(`${HOME}/sessions/${sessionId}.jsonl`), before, "nothing appended");
    assert.equal(JSON.parse(new TextDecoder().decode(server.runtime.fs.contents(lease))).instance_id, "other-child", "the other child's lease is untouched");
    assert.equal(server.provider.log.length, 1);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a turn stops appending once ownership is lost mid-turn: every append group checks the writer lease", async () => {
    const server = await startTurnServer(API);
    const gate = new Gate();
    const script = reply(API, { text: ["late answer"] });
    server.provider.enqueue({ ...script, chunks: [gate, ...(script as { chunks: readonly (string | Gate)[] }).chunks] });
    const { sessionId, runId } = await startTurn(server, "first");
    await gate.whenReached();
    const path = `${HOME}/sessions/${sessionId}.jsonl`;
    const lease = `${HOME}/sessions/${sessionId}.writer.lease`;
    const other = { v: 1, pid: 99999, instance_id: "other-child", host: null, acquired_at: at, heartbeat_at: new Date().toISOString() };
    server.runtime.fs.writeFile(lease, `${JSON.stringify(other)}\n`, 0o600);
    const before = server.runtime.fs.contents(path);
    gate.release();
    const events = await runEvents(server, runId);
    assert.deepEqual([terminalData(events).outcome, terminalData(events).persistence], ["completed", "degraded"]);
    assert.deepEqual(server.runtime.fs.contents(path), before, "nothing appended after the lease was lost");
    assert.equal(JSON.parse(new TextDecoder().decode(server.runtime.fs.contents(lease))).instance_id, "other-child");
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a session file replaced since it was read (same length) is not appended to", async () => {
    const fs = new MemoryFileSystem();
    const path = `${HOME}/sessions/${SESSION}.jsonl`;
    fs.writeFile(path, stored(firstTurn("ORIGINAL")), 0o600);
    const server = await startTurnServer(API, { fs });
    assert.ok((await request(server, "open", "session.open", { session_id: SESSION })).result);
    fs.writeFile(path, stored(firstTurn("REPLACED")), 0o600);
    const { runId } = await startTurn(server, "next", SESSION);
    const events = await runEvents(server, runId);
    assert.deepEqual([terminalData(events).persistence, terminalData(events).error_code], ["not_started", "persistence_failed"]);
    assert.equal(server.provider.log.length, 0, "the provider never saw the stale context");
    assert.equal(new TextDecoder().decode(fs.contents(path)), stored(firstTurn("REPLACED")));
    assert.equal(await stopTurnServer(server), 0);
  });

  // Reading goes on while the writer is stalled, so each case sends one request into the window
  // between cleanup and hand-off and sees it answered there.
  for (const probe of ["status", "turn.start", "history.page"] as const) {
    it(`${probe} still sees the run until run.finished is handed to the writer`, async () => {
      const server = await startTurnServer(API);
      const created = await request(server, "c", "session.create");
      const sessionId = (created.result as { session_id: string }).session_id;
      // More parts than the writer holds, so the terminal event waits in the run's channel.
      server.provider.enqueue(reply(API, { text: Array.from({ length: 30 }, (_, i) => `${"w".repeat(2_100)} ${i} `) }));
      server.runtime.output.stall();
      server.runtime.input.push(line("t1", "turn.start", { session_id: sessionId, prompt: "go" }));
      const path = `${HOME}/sessions/${sessionId}.jsonl`;
      while (!new TextDecoder().decode(server.runtime.fs.contents(path) ?? new Uint8Array()).includes("turn_finished")) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const params = probe === "status"
        ? {}
        : probe === "turn.start"
        ? { session_id: sessionId, prompt: "again" }
        : { session_id: sessionId, revision: "r1-0000000000000000000000000000000000000000" };
      server.runtime.input.push(line("probe", probe, params));
      await new Promise((resolve) => setTimeout(resolve, 20));
      server.runtime.output.resume();
      await request(server, "after", "status");
      const frames = server.frames();
      const runId = (frames.find((frame) => frame.id === "t1")!.result as { run_id: string }).run_id;
      const events = await runEvents(server, runId);
      const answer = frames.find((frame) => frame.id === "probe")!;
      assert.ok(answer.seq < events.at(-1)!.seq, "answered before the terminal event went out");
      if (probe === "status") assert.deepEqual([(answer.result as { state: string }).state, (answer.result as { run_id: string }).run_id], ["running", runId]);
      else assert.deepEqual(answer.error, { code: "busy" });
      assert.equal(await stopTurnServer(server), 0);
    });
  }

  it("a session whose projection outgrows the 8 MiB snapshot budget stays usable: durable, takes turns; no revision to page, history.page of a reopen is history_limit", async () => {
    const server = await startTurnServer(API);
    // Within the run's 8 MiB content bound, but the whole history then exceeds the 8 MiB snapshot.
    const piece = "lorem ipsum dolor sit amet ".repeat(111);
    server.provider.enqueue(reply(API, { text: Array.from({ length: Math.floor((8_388_608 - 20_000) / piece.length) }, () => piece) }));
    const { sessionId, runId } = await startTurn(server, "write a lot");
    const events = await runEvents(server, runId);
    const finished = terminalData(events);
    assert.deepEqual([finished.outcome, finished.persistence, finished.revision], ["completed", "durable", null]);
    assert.deepEqual(diagnostics(events), ["history_unavailable"]);
    server.provider.enqueue(reply(API, { text: ["short"] }));
    const next = await startTurn(server, "again", sessionId);
    const nextEvents = await runEvents(server, next.runId);
    assert.deepEqual([terminalData(nextEvents).outcome, terminalData(nextEvents).persistence], ["completed", "durable"]);
    const reopened = await request(server, "open", "session.open", { session_id: sessionId });
    assert.equal((reopened.result as { durable: boolean }).durable, true, JSON.stringify(reopened.error));
    const revision = (reopened.result as { revision: string }).revision;
    assert.deepEqual((await request(server, "page2", "history.page", { session_id: sessionId, revision })).error, { code: "history_limit" });
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a turn on a session over the 10,000-part snapshot budget ends with a null revision and history_unavailable, as selection.set answers", async () => {
    const fs = new MemoryFileSystem();
    fs.writeFile(`${HOME}/sessions/${SESSION}.jsonl`, encodeAll(overSnapshotParts(SESSION, CWD)), 0o600);
    const { server, events } = await openAndTurn(fs, "one more");
    const finished = terminalData(events);
    assert.deepEqual([finished.outcome, finished.persistence, finished.revision], ["completed", "durable", null]);
    assert.deepEqual(diagnostics(events), ["history_unavailable"]);
    const reopened = await request(server, "reopen", "session.open", { session_id: SESSION });
    const revision = (reopened.result as { revision: string }).revision;
    assert.deepEqual((await request(server, "page", "history.page", { session_id: SESSION, revision })).error, { code: "history_limit" });
    assert.equal(await stopTurnServer(server), 0);
  });

  it("lone surrogates from the provider reach the client as U+FFFD, live and reconciled", async () => {
    const server = await startTurnServer(API);
    server.provider.enqueue(reply(API, { text: ["bad \ud83d half ", "and more words to release the delta before the end"] }));
    const { runId } = await startTurn(server, "Hi");
    await runEvents(server, runId);
    const output = server.runtime.output.text();
    assert.doesNotMatch(output, /\\ud83d/i);
    assert.match(output, /bad \uFFFD half/);
    assert.equal(await stopTurnServer(server), 0);
  });
});
