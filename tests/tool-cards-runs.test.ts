import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { Runtime } from "../src/host/runtime.ts";
import type { McpServerDefinition } from "../src/mcp/definition.ts";
import type { Card } from "../src/protocol/tool-cards.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { CLOSING_RESERVE_LINES } from "../src/store/appender.ts";
import type { Frame } from "./support/harness.ts";
import { faultServer } from "./support/mcp-servers.ts";
import { reply } from "./support/provider-scripts.ts";
import { spawningRuntimes } from "./support/tools.ts";
import {
  closedAfterAll,
  CWD,
  HOME,
  nextEvent,
  request,
  runEvents,
  startTurn,
  startTurnServer,
  stopTurnServer,
  terminalData,
  TURN_CAPABILITIES,
  type TurnServer,
} from "./support/turns.ts";

const API = "openai-chat";
const SESSION = "cards-session";
const PATH = `${HOME}/sessions/${SESSION}.jsonl`;
const at = "2026-12-01T10:00:00.000Z";
const CARDS = [...TURN_CAPABILITIES, "tool.cards"];
// Servers a failed assertion left running are stopped after all tests.
const started = closedAfterAll();

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
  started.push(server);
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

/** The `tool.card` snapshots of `events`, in order. */
const cards = (events: readonly Frame[]) =>
  events.filter((frame) => frame.event === "tool.card").map((frame) => frame.data as { activity_id: string; stage: string; card: Card });

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

  it("a saved card is redacted with the secrets of the child that pages it, as the entry it is attached to is", async () => {
    const secret = "plainsecretvalue";
    const fs = new MemoryFileSystem();
    fs.writeFile(`${CWD}/${secret}.txt`, "alpha\n", 0o644);
    const writer = await startTurnServer(API, { fs, capabilities: CARDS });
    started.push(writer);
    writer.provider.enqueue(reply(API, { calls: [{ id: "c1", name: "read_file", args: { path: `${secret}.txt` } }] }));
    writer.provider.enqueue(reply(API, { text: ["done"] }));
    const { sessionId, runId } = await startTurn(writer, "read it");
    const written = cards(await runEvents(writer, runId)).at(-1)!;
    assert.equal(written.card.path, `${secret}.txt`, "not a secret to the child that ran it");
    assert.equal(await stopTurnServer(writer), 0);
    // The child that reopens the session knows the value as a secret (a provider key of its environment).
    const reader = await startTurnServer(API, { fs, capabilities: CARDS, env: { OPENAI_API_KEY: secret } });
    started.push(reader);
    const opened = await request(reader, "open", "session.open", { session_id: sessionId });
    const revision = (opened.result as { revision: string }).revision;
    const page = await request(reader, "page", "history.page", { session_id: sessionId, revision });
    const activity = (page.result as { entries: { kind: string; text: string; card?: Card | null }[] }).entries.filter((entry) => entry.kind === "activity").at(-1)!;
    assert.ok(!activity.text.includes(secret), "the entry's text is redacted");
    assert.ok(activity.card !== null && activity.card !== undefined, "the card is attached");
    assert.ok(!JSON.stringify(activity.card).includes(secret), "and so is its card");
    assert.equal(activity.card.path, "[redacted].txt");
    assert.equal(await stopTurnServer(reader), 0);
  });
});

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-cards-mcp-")));
after(() => rmSync(root, { recursive: true, force: true }));


async function startWith(runtime: Runtime, definitions: McpServerDefinition[]): Promise<TurnServer> {
  const server = await startTurnServer(API, {
    processes: runtime,
    fetch: runtime.fetch,
    env: { PATH: process.env.PATH ?? "" },
    mcpServers: () => Promise.resolve(definitions),
    capabilities: CARDS,
  });
  started.push(server);
  return server;
}

for (const [runtimeName, runtime] of spawningRuntimes()) {
  describe(`tool.cards of MCP tool calls on ${runtimeName}`, () => {
    it("an asked MCP call's card names server and tool and previews the arguments before approval.requested; its terminal card says the result kind", async () => {
      const server = await startWith(runtime, [faultServer("fault", "well", root)]);
      server.provider.enqueue(reply(API, { calls: [{ id: "call_1", name: "mcp__fault__echo", args: { text: "hello" } }] }));
      server.provider.enqueue(reply(API, { text: ["Echoed."] }));
      const { sessionId, runId } = await startTurn(server, "Echo");
      const approval = await nextEvent(server, runId, "approval.requested");
      const before = cards(server.frames().slice(0, server.frames().indexOf(approval)).filter((frame) => (frame.data as { run_id?: string })?.run_id === runId));
      assert.equal(before.length, 1, "the initial card precedes the question");
      assert.deepEqual([before[0]!.card.kind, before[0]!.card.phase, before[0]!.card.tool], ["other", "awaiting_approval", "mcp__fault__echo"]);
      assert.deepEqual(before[0]!.card.mcp, { server: "fault", tool: "echo", arguments: '{"text":"hello"}', arguments_truncated: false, arguments_bytes: 16, result_kind: null });
      const approvalId = (approval.data as { approval_id: string }).approval_id;
      await request(server, "allow", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: approvalId, allow: true });
      const terminal = cards(await runEvents(server, runId)).at(-1)!;
      assert.equal(terminal.stage, "terminal");
      assert.deepEqual([terminal.card.outcome, terminal.card.effect, terminal.card.decision, terminal.card.mcp?.result_kind], ["completed", "unknown", "allowed", "text"]);
      assert.equal(await stopTurnServer(server), 0);
    });

    it("an MCP call that times out on its server ends unknown, with no result; a credential in the arguments is redacted from the preview", async () => {
      const token = "ghp_0123456789abcdefABCDEF";
      const policies = { toolPolicies: { slow: "allow", echo: "allow" }, toolTimeoutMs: 300 } as const;
      const server = await startWith(runtime, [faultServer("fault", "well", root, undefined, policies)]);
      const calls = [{ id: "call_1", name: "mcp__fault__slow", args: {} }, { id: "call_2", name: "mcp__fault__echo", args: { text: `use ${token}` } }];
      server.provider.enqueue(reply(API, { calls }));
      server.provider.enqueue(reply(API, { text: ["Done."] }));
      const { runId } = await startTurn(server, "Try both");
      const events = await runEvents(server, runId);
      const [slow, echo] = cards(events).filter((entry) => entry.stage === "terminal");
      assert.deepEqual([slow!.card.outcome, slow!.card.effect, slow!.card.mcp?.result_kind, slow!.card.decision], ["unknown", "unknown", "none", "not_asked"]);
      assert.equal(echo!.card.mcp?.arguments, '{"text":"use [redacted]"}');
      assert.ok(!JSON.stringify(events).includes(token), "the token is nowhere in the run's events");
      assert.equal(await stopTurnServer(server), 0);
    });
  });
}
