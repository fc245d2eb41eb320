import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { reply } from "./support/provider-scripts.ts";
import { HOME, request, runEvents, startTurn, startTurnServer, stopTurnServer, terminalData } from "./support/turns.ts";

const API = "openai-chat";

/** One child on its own disk: `files` arranged, a turn answered `answer` on `sessionId` (or a new lazy one). */
async function turnRevision(answer: string, sessionId?: string, files: Record<string, string> = {}) {
  const fs = new MemoryFileSystem();
  for (const [name, body] of Object.entries(files)) fs.writeFile(`${HOME}/sessions/${name}`, body, 0o600);
  const server = await startTurnServer(API, { fs });
  let opened: string | null = null;
  if (sessionId !== undefined) {
    const open = await request(server, "open", "session.open", { session_id: sessionId });
    opened = (open.result as { revision: string }).revision;
  }
  server.provider.enqueue(reply(API, { text: [answer] }));
  const turn = await startTurn(server, "same prompt", sessionId);
  const revision = terminalData(await runEvents(server, turn.runId)).revision as string;
  assert.equal(await stopTurnServer(server), 0);
  return { opened, revision };
}

describe("revisions name one projection of one session", () => {
  it("two children's lazy sessions of equal length end their first turns on different revisions", async () => {
    const [a, b] = [await turnRevision("answer"), await turnRevision("answer")];
    assert.notEqual(a.revision, b.revision);
  });

  it("two children's empty session files open on different revisions", async () => {
    const a = await turnRevision("x", "session-a", { "session-a.jsonl": "" });
    const b = await turnRevision("x", "session-b", { "session-b.jsonl": "" });
    assert.notEqual(a.opened, b.opened);
    assert.notEqual(a.revision, b.revision);
  });

  it("one session extended by two different turns of equal length gets two revisions", async () => {
    const a = await turnRevision("answer one", "shared", { "shared.jsonl": "" });
    const b = await turnRevision("answer two", "shared", { "shared.jsonl": "" });
    assert.notEqual(a.revision, b.revision);
  });

  it("two children opening the same bytes get different revisions (each child scopes its own)", async () => {
    const a = await turnRevision("answer", "shared", { "shared.jsonl": "" });
    const b = await turnRevision("answer", "shared", { "shared.jsonl": "" });
    assert.notEqual(a.opened, b.opened);
    assert.notEqual(a.revision, b.revision);
  });
});
