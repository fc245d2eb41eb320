import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { CLOSING_RESERVE_LINES } from "../src/store/appender.ts";
import type { Frame } from "./support/harness.ts";
import { reply } from "./support/provider-scripts.ts";
import { CWD, HOME, request, runEvents, startTurn, startTurnServer, stopTurnServer, terminalData, TURN_CAPABILITIES } from "./support/turns.ts";

const API = "openai-chat";
const SESSION = "cards-session";
const PATH = `${HOME}/sessions/${SESSION}.jsonl`;
const at = "2026-12-01T10:00:00.000Z";
const CARDS = [...TURN_CAPABILITIES, "tool.cards"];

/** A session file of `lines` complete lines: its session record, then empty finished turns. */
function fileOf(lines: number): string {
  const out = [JSON.stringify({ v: 1, type: "session", session_id: SESSION, at, cwd: CWD, created_at: at })];
  for (let turn = 0; out.length < lines; turn++) {
    out.push(JSON.stringify({ v: 1, type: "turn_started", session_id: SESSION, at, turn_id: `T${turn}`, run_id: `R${turn}` }));
    if (out.length < lines) out.push(JSON.stringify({ v: 1, type: "turn_finished", session_id: SESSION, at, turn_id: `T${turn}`, outcome: "completed", error_code: null }));
  }
  return `${out.join("\n")}\n`;
}

/** Runs one turn of a `tool.cards` client that reads a file, on a session file of `lines` lines; returns its events and the file's records. */
async function readTurn(lines: number) {
  const fs = new MemoryFileSystem();
  fs.writeFile(PATH, fileOf(lines), 0o600);
  fs.writeFile(`${CWD}/a.txt`, "alpha\n", 0o644);
  const server = await startTurnServer(API, { fs, capabilities: CARDS });
  const opened = await request(server, "open", "session.open", { session_id: SESSION });
  assert.ok(opened.result, JSON.stringify(opened.error));
  server.provider.enqueue(reply(API, { calls: [{ id: "c1", name: "read_file", args: { path: "a.txt" } }] }));
  server.provider.enqueue(reply(API, { text: ["done"] }));
  const { runId } = await startTurn(server, "read it", SESSION);
  const events = await runEvents(server, runId);
  assert.equal(await stopTurnServer(server), 0);
  const records = new TextDecoder().decode(fs.contents(PATH)).trimEnd().split("\n").slice(lines).map((line) => JSON.parse(line) as { type: string });
  return { events, records };
}

const stages = (events: readonly Frame[]) =>
  events.filter((frame) => frame.event === "tool.card").map((frame) => (frame.data as { stage: string }).stage);

describe("tool.cards in runs", () => {
  it("a call whose saved card does not fit the full session file still gets its terminal snapshot before the run fails content_limit", async () => {
    // The turn's records through the call's last activity, counted on a roomy file.
    const roomy = await readTurn(1);
    assert.deepEqual(stages(roomy.events), ["initial", "terminal"]);
    const upToCard = roomy.records.findIndex((record) => record.type === "tool_card");
    assert.ok(upToCard > 0);
    // Exactly those records fit; the card's is the first refused.
    const { events, records } = await readTurn(LIMITS.stored_history_lines - CLOSING_RESERVE_LINES - upToCard);
    assert.equal(records.some((record) => record.type === "tool_card"), false, "the card was not saved");
    assert.deepEqual([terminalData(events).outcome, terminalData(events).error_code], ["failed", "content_limit"]);
    assert.deepEqual(stages(events), ["initial", "terminal"], "the live card still ends");
    const terminal = events.find((frame) => frame.event === "tool.card" && (frame.data as { stage: string }).stage === "terminal")!;
    assert.equal((terminal.data as { card: { outcome: string } }).card.outcome, "completed");
  });
});
