import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { CLOSING_RESERVE_BYTES, CLOSING_RESERVE_LINES, SessionAppender } from "../src/store/appender.ts";
import { reply } from "./support/provider-scripts.ts";
import { HOME, request, runEvents, startTurn, startTurnServer, stopTurnServer, terminalData } from "./support/turns.ts";

const API = "openai-chat";
const SESSION = "full-session";
const PATH = `${HOME}/sessions/${SESSION}.jsonl`;
const at = "2026-11-30T10:00:00.000Z";

/**
 * A session file of exactly `lines` complete lines: its session record, then
 * `skipped` ignorable records this version does not understand, then empty
 * finished turns.
 */
function fileOf(lines: number, skipped = 0): string {
  const out = [JSON.stringify({ v: 1, type: "session", session_id: SESSION, at, cwd: "/work/project", created_at: at })];
  while (out.length <= skipped) out.push(JSON.stringify({ v: 2, type: "session_note", session_id: SESSION, at, ignorable: true, note: "pinned" }));
  for (let turn = 0; out.length < lines; turn++) {
    out.push(JSON.stringify({ v: 1, type: "turn_started", session_id: SESSION, at, turn_id: `T${turn}`, run_id: `R${turn}` }));
    if (out.length < lines) {
      out.push(JSON.stringify({ v: 1, type: "turn_finished", session_id: SESSION, at, turn_id: `T${turn}`, outcome: "completed", error_code: null }));
    }
  }
  return `${out.join("\n")}\n`;
}

const lineCount = (fs: MemoryFileSystem) => new TextDecoder().decode(fs.contents(PATH)).split("\n").length - 1;

async function fullServer(lines: number, skipped = 0) {
  const fs = new MemoryFileSystem();
  fs.writeFile(PATH, fileOf(lines, skipped), 0o600);
  const server = await startTurnServer(API, { fs });
  const opened = await request(server, "open", "session.open", { session_id: SESSION });
  assert.ok(opened.result, JSON.stringify(opened.error));
  return { fs, server };
}

const diagnostics = (events: Awaited<ReturnType<typeof runEvents>>) =>
  events.filter((frame) => frame.event === "diagnostic").map((frame) => (frame.data as { code: string }).code);

describe("the stored history never outgrows what session.open can read", () => {
  it("a turn whose input would cross the line bound fails before the append: content_limit, not_started, session_full", async () => {
    // The input (two lines) would eat into the reserve kept for closing a turn.
    const lines = LIMITS.stored_history_lines - CLOSING_RESERVE_LINES - 1;
    const { fs, server } = await fullServer(lines);
    const { runId } = await startTurn(server, "one more", SESSION);
    const events = await runEvents(server, runId);
    assert.deepEqual([terminalData(events).outcome, terminalData(events).persistence, terminalData(events).error_code], ["failed", "not_started", "content_limit"]);
    assert.deepEqual(diagnostics(events), ["session_full"]);
    assert.equal(server.provider.log.length, 0, "no provider request");
    assert.equal(lineCount(fs), lines, "nothing appended");
    assert.equal(await stopTurnServer(server), 0);
  });

  it("records skipped on open count toward the line bound: a turn whose input would cross it still fails with session_full", async () => {
    const lines = LIMITS.stored_history_lines - CLOSING_RESERVE_LINES - 1;
    const { fs, server } = await fullServer(lines, 1_000);
    const { runId } = await startTurn(server, "one more", SESSION);
    const events = await runEvents(server, runId);
    assert.deepEqual([terminalData(events).persistence, terminalData(events).error_code], ["not_started", "content_limit"]);
    assert.deepEqual(diagnostics(events), ["session_full"]);
    assert.equal(lineCount(fs), lines, "nothing appended");
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a later append that would cross it fails the run content_limit, degraded, and the turn still closes within the bound", async () => {
    // The input fits exactly; the reply does not.
    const lines = LIMITS.stored_history_lines - CLOSING_RESERVE_LINES - 2;
    const { fs, server } = await fullServer(lines);
    server.provider.enqueue(reply(API, { text: ["an answer that does not fit"] }));
    const { runId } = await startTurn(server, "one more", SESSION);
    const events = await runEvents(server, runId);
    assert.equal(events[0]!.event, "input.persisted");
    assert.deepEqual([terminalData(events).outcome, terminalData(events).persistence, terminalData(events).error_code], ["failed", "degraded", "content_limit"]);
    assert.deepEqual(diagnostics(events), ["session_full"]);
    assert.ok(lineCount(fs) <= LIMITS.stored_history_lines, "within the read bound");
    const last = JSON.parse(new TextDecoder().decode(fs.contents(PATH)).trimEnd().split("\n").at(-1)!);
    assert.deepEqual([last.type, last.outcome, last.error_code], ["turn_finished", "failed", "content_limit"]);
    const reopened = await request(server, "reopen", "session.open", { session_id: SESSION });
    const revision = (reopened.result as { revision: string }).revision;
    const page = await request(server, "page", "history.page", { session_id: SESSION, revision });
    const entries = (page.result as { entries: { kind: string; text: string }[] }).entries;
    assert.deepEqual(entries.map((entry) => entry.kind), ["user", "diagnostic"], "the reopened history says why it stopped");
    const again = await startTurn(server, "and another", SESSION);
    assert.equal(terminalData(await runEvents(server, again.runId)).error_code, "content_limit", "the full session keeps saying so");
    assert.equal(await stopTurnServer(server), 0);
  });

  it("SessionAppender refuses bytes past the 64 MiB bound less the closing reserve; a turn_finished may use the reserve", async () => {
    const fs = new MemoryFileSystem();
    const head = `${JSON.stringify({ v: 1, type: "session", session_id: SESSION, at, created_at: at })}\n`;
    const room = 10;
    const padding = LIMITS.stored_history_bytes - CLOSING_RESERVE_BYTES - room - head.length - 1;
    fs.writeFile(PATH, `${head}${"x".repeat(padding)}\n`, 0o600);
    const opened = await SessionAppender.open(fs, PATH, SESSION, { create: false, lines: 2 });
    assert.ok(opened.ok);
    const base = { v: 1, session_id: SESSION, at, turn_id: "T" } as const;
    const diagnostic = { ...base, type: "diagnostic", code: "x", summary: "does not fit in ten bytes" } as const;
    assert.deepEqual(await opened.appender.appendAll([diagnostic]), { ok: false, code: "content_limit" });
    assert.equal(fs.contents(PATH)!.length, LIMITS.stored_history_bytes - CLOSING_RESERVE_BYTES - room, "nothing written");
    const finished = { ...base, type: "turn_finished", outcome: "failed", error_code: "content_limit" } as const;
    assert.deepEqual(await opened.appender.appendAll([diagnostic, finished]), { ok: true }, "closing a turn may use the reserve");
    const huge = { ...diagnostic, summary: "y".repeat(CLOSING_RESERVE_BYTES) };
    assert.deepEqual(await opened.appender.appendAll([huge, finished]), { ok: false, code: "content_limit" }, "but never the bound itself");
    assert.ok(fs.contents(PATH)!.length <= LIMITS.stored_history_bytes);
    await opened.appender.close();
  });
});
