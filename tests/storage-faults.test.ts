import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { denoBinary, nodeBinary, repoRoot } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { HOME, request, runEvents, startTurn, startTurnServer, stopTurnServer, terminalData } from "./support/turns.ts";

const API = "openai-chat";
const outcomeOf = (events: Parameters<typeof terminalData>[0]) => {
  const data = terminalData(events);
  return [data.outcome, data.persistence, data.error_code];
};

const root = repoRoot();
const scratch = mkdtempSync(join(tmpdir(), "magi-storage-faults-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

describe("the fs adapters under a real short write", () => {
  const commands = {
    node: [nodeBinary(), join(root, "dist", "tests", "support", "short-write.js")],
    deno: [denoBinary(), "run", "--allow-all", "--quiet", join(root, "tests", "support", "short-write.ts")],
  } as const;
  for (const [name, command] of Object.entries(commands)) {
    it(`${name}: append() and createExclusive() reject a write the kernel cut short, never report it written`, () => {
      const dir = mkdtempSync(join(scratch, `${name}-`));
      // `ulimit -f 2` caps files at 2,048 bytes: a 3,000-byte write stores 2,048 and returns that
      // count; the next write is refused (EFBIG, SIGXFSZ ignored so the process lives to see it).
      const shell = `trap '' XFSZ; ulimit -f 2; exec "$@"`;
      const ran = spawnSync("bash", ["-c", shell, "short-write", ...command, dir, "3000"], { encoding: "utf8" });
      assert.equal(ran.status, 0, ran.stderr);
      assert.deepEqual(ran.stdout.trim().split("\n"), ["append rejected 2048", "create rejected 2048"]);
    });
  }
});

describe("a full disk (the memory filesystem's free space)", () => {
  it("a lazy session whose first create was cut short takes its next turn once space returns", async () => {
    const fs = new MemoryFileSystem();
    const server = await startTurnServer(API, { fs });
    const created = await request(server, "c", "session.create");
    const sessionId = (created.result as { session_id: string }).session_id;
    const path = `${HOME}/sessions/${sessionId}.jsonl`;
    // Room for both leases but only part of the first record.
    fs.freeBytes = 400;
    const first = await startTurn(server, "first", sessionId);
    assert.deepEqual(outcomeOf(await runEvents(server, first.runId)), ["failed", "not_started", "persistence_failed"]);
    assert.ok((fs.contents(path)?.length ?? 0) > 0, "the create left a fragment");
    assert.ok(!new TextDecoder().decode(fs.contents(path)).includes("\n"), "and no complete line");
    fs.freeBytes = null;
    server.provider.enqueue(reply(API, { text: ["answer"] }));
    const second = await startTurn(server, "second", sessionId);
    const events = await runEvents(server, second.runId);
    assert.deepEqual(outcomeOf(events), ["completed", "durable", null]);
    const types = new TextDecoder().decode(fs.contents(path)).trimEnd().split("\n").map((text) => JSON.parse(text).type);
    assert.deepEqual(types.slice(0, 3), ["session", "turn_started", "user_input"]);
    const page = await request(server, "page", "history.page", { session_id: sessionId, revision: terminalData(events).revision });
    assert.deepEqual((page.result as { entries: { text: string }[] }).entries.map((entry) => entry.text), ["second", "answer"]);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("with 0 bytes free session.open answers session_busy and leaves no lease; with space back it opens", async () => {
    const fs = new MemoryFileSystem();
    const sessionId = "full-disk";
    fs.writeFile(`${HOME}/sessions/${sessionId}.jsonl`, "", 0o600);
    const server = await startTurnServer(API, { fs });
    fs.freeBytes = 0;
    assert.deepEqual((await request(server, "o1", "session.open", { session_id: sessionId })).error, { code: "session_busy" });
    assert.deepEqual((await fs.readDir(`${HOME}/sessions`)).map((entry) => entry.name), [`${sessionId}.jsonl`], "no lease left behind");
    fs.freeBytes = null;
    const opened = await request(server, "o2", "session.open", { session_id: sessionId });
    assert.equal((opened.result as { durable: boolean }).durable, true, JSON.stringify(opened.error));
    assert.equal(await stopTurnServer(server), 0);
  });
});
