/**
 * Proactive compaction in turns against scripted loopback providers of all
 * three APIs, with a configured window of 8,000 tokens (threshold 6,400):
 * what is compacted and when, what the next requests carry, what history
 * pages show, and the faults (cancel, empty or failed summary, a summary
 * over its bound, repeated failures).
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { PRUNED_OUTPUT } from "../src/runner/compactor.ts";
import { SUMMARY_CUT_NOTE, SUMMARY_MAX_BYTES } from "../src/runner/summary-request.ts";
import { utf8ByteCount } from "../src/util/utf8.ts";
import type { ProviderApi } from "../src/config/settings.ts";
import type { Frame } from "./support/harness.ts";
import { Gate } from "./support/fake-provider.ts";
import { reply } from "./support/provider-scripts.ts";
import { encodeAll, overSnapshotParts } from "./support/records.ts";
import { APIS, compactionStates, diagnosticCodes, pagedEntries, sentText, startWindowServer, storedRecords, turn } from "./support/compaction.ts";
import { CWD, HOME, nextEvent, request, runEvents, startTurn, stopTurnServer, terminalData, type TurnServer } from "./support/turns.ts";

const API: ProviderApi = "openai-chat";
const revisionOf = (events: readonly Frame[]) => (events.at(-1)!.data as { revision: string }).revision;
const read = (id: string) => ({ id, name: "read_file", args: { path: "a.txt" } });

/** A first turn that answers FIRST-ANSWER, in a new session; returns the session id. */
async function firstTurn(server: TurnServer, api = API): Promise<string> {
  server.provider.enqueue(reply(api, { text: ["FIRST-ANSWER"], inputTokens: 100 }));
  return (await turn(server, "FIRST-PROMPT")).sessionId;
}

describe("proactive compaction (window 8,000 tokens, threshold 0.8)", () => {
  for (const api of APIS) {
    it(`${api}: past the threshold between two requests, the earlier turns are compacted; the next request carries the summary and this turn only, and so does the next turn`, async () => {
      const server = await startWindowServer(api);
      try {
        server.runtime.fs.writeFile(`${CWD}/a.txt`, "alpha\n");
        const sessionId = await firstTurn(server, api);
        server.provider.enqueue(reply(api, { calls: [read("call_1")], inputTokens: 7_000 }));
        server.provider.enqueue(reply(api, { text: ["SUMMARY-ONE"], inputTokens: 900 }));
        server.provider.enqueue(reply(api, { text: ["SECOND-ANSWER"], inputTokens: 1_200 }));
        const second = await turn(server, "SECOND-PROMPT", sessionId);
        assert.deepEqual([terminalData(second.events).outcome, terminalData(second.events).error_code], ["completed", null]);
        assert.deepEqual(compactionStates(second.events).map(([state]) => state), ["started", "completed"]);
        assert.match(compactionStates(second.events)[0]![1], /88% of the model's context/);
        assert.equal((server.provider.log[2]!.body as { tools?: unknown }).tools, undefined);
        assert.ok(sentText(server, 2).includes("FIRST-ANSWER"), "the summary request carries what it replaces");
        const next = sentText(server, 3);
        assert.ok(next.includes("SUMMARY-ONE") && next.includes("SECOND-PROMPT") && next.includes("alpha"), next);
        assert.ok(!next.includes("FIRST-PROMPT") && !next.includes("FIRST-ANSWER"), next);

        const records = storedRecords(server, sessionId);
        const turnIds = records.filter((record) => record.type === "turn_started").map((record) => record.turn_id);
        const at = records.findIndex((record) => record.type === "compaction");
        assert.deepEqual([records[at]!.v, records[at]!.through_turn, records[at]!.summary], [2, turnIds[0], "SUMMARY-ONE"]);
        assert.deepEqual([records[at - 1]!.type, records[at - 1]!.kind, records[at - 1]!.state], ["activity", "compaction", "completed"]);
        // The summary request's usage counts toward the turn.
        const usage = records.filter((record) => record.type === "usage").at(-1)!;
        assert.equal(usage.input_tokens, 7_000 + 900 + 1_200);

        server.provider.enqueue(reply(api, { text: ["THIRD-ANSWER"], inputTokens: 1_500 }));
        const third = await turn(server, "THIRD-PROMPT", sessionId);
        const replayed = sentText(server, 4);
        assert.ok(replayed.includes("SUMMARY-ONE") && replayed.includes("SECOND-PROMPT") && replayed.includes("SECOND-ANSWER"), replayed);
        assert.ok(!replayed.includes("FIRST-PROMPT") && !replayed.includes("FIRST-ANSWER"), replayed);
        assert.deepEqual(compactionStates(third.events), []);

        const entries = await pagedEntries(server, sessionId, revisionOf(third.events));
        assert.deepEqual(entries.map(([kind]) => kind), ["user", "assistant", "user", "activity", "activity", "compaction", "assistant", "user", "assistant"]);
        assert.deepEqual(entries[5], ["compaction", "SUMMARY-ONE"]);
        assert.match(entries[4]![1], /^Compacted the conversation: 2 earlier messages replaced by a 11-byte summary$/);
        // A reopen pages the same and replays the same.
        const reopened = await request(server, "reopen", "session.open", { session_id: sessionId });
        assert.deepEqual(await pagedEntries(server, sessionId, (reopened.result as { revision: string }).revision), entries);
        server.provider.enqueue(reply(api, { text: ["FOURTH-ANSWER"] }));
        await turn(server, "FOURTH-PROMPT", sessionId);
        // The reopened session replays what the continuing one did: request 5 starts as request 4 did, before its prompt.
        const conversation = (index: number) => {
          const body = server.provider.log[index]!.body as { messages?: unknown[]; input?: unknown[] };
          return body.messages ?? body.input ?? [];
        };
        assert.deepEqual(conversation(5).slice(0, conversation(4).length - 1), conversation(4).slice(0, -1));
      } finally {
        await stopTurnServer(server);
      }
    });

    it(`${api}: a replay already past the threshold is compacted before the turn's first request, keeping the turn's input`, async () => {
      const server = await startWindowServer(api);
      try {
        server.provider.enqueue(reply(api, { text: ["FIRST-ANSWER ", "lorem ipsum dolor sit amet ".repeat(300)] }));
        const first = await turn(server, `FIRST-PROMPT ${"consectetur adipiscing elit ".repeat(550)}`);
        server.provider.enqueue(reply(api, { text: ["SUMMARY-ONE"] }));
        server.provider.enqueue(reply(api, { text: ["SECOND-ANSWER"] }));
        const second = await turn(server, "SECOND-PROMPT", first.sessionId);
        assert.deepEqual(compactionStates(second.events).map(([state]) => state), ["started", "completed"]);
        assert.equal(server.provider.log.length, 3);
        const next = sentText(server, 2);
        assert.ok(next.includes("SUMMARY-ONE") && next.includes("SECOND-PROMPT") && !next.includes("FIRST-PROMPT"), next.slice(0, 2_000));
        const entries = await pagedEntries(server, first.sessionId, revisionOf(second.events));
        assert.deepEqual(entries.slice(2).map(([kind]) => kind), ["user", "activity", "compaction", "assistant"]);
      } finally {
        await stopTurnServer(server);
      }
    });
  }

  it("when this turn alone is too much, everything before its latest step is compacted: the summary covers the turn's input, the latest call and its result stay", async () => {
    const server = await startWindowServer(API);
    try {
      server.runtime.fs.writeFile(`${CWD}/a.txt`, `BIG-FILE ${"the quick brown fox jumps ".repeat(1_200)}\n`);
      const sessionId = await firstTurn(server);
      server.provider.enqueue(reply(API, { calls: [read("call_1")], inputTokens: 2_000 }));
      server.provider.enqueue(reply(API, { text: ["SUMMARY-ALL"] }));
      server.provider.enqueue(reply(API, { text: ["SECOND-ANSWER"] }));
      const second = await turn(server, "SECOND-PROMPT", sessionId);
      assert.deepEqual(compactionStates(second.events).map(([state]) => state), ["started", "completed"]);
      assert.ok(sentText(server, 2).includes("SECOND-PROMPT"), "the summary covers the turn's input");
      const next = sentText(server, 3);
      assert.ok(next.includes("SUMMARY-ALL") && next.includes("BIG-FILE") && next.includes("call_1"), next.slice(0, 500));
      assert.ok(!next.includes("SECOND-PROMPT") && !next.includes("FIRST-ANSWER"));
      const records = storedRecords(server, sessionId);
      const compaction = records.find((record) => record.type === "compaction")!;
      assert.equal(compaction.through_turn, compaction.turn_id, "it replaces through its own turn");
      server.provider.enqueue(reply(API, { text: ["THIRD-ANSWER"] }));
      await turn(server, "THIRD-PROMPT", sessionId);
      const third = sentText(server, 4);
      assert.ok(third.includes("SUMMARY-ALL") && third.includes("SECOND-ANSWER") && !third.includes("SECOND-PROMPT"), third);
    } finally {
      await stopTurnServer(server);
    }
  });

  it("a skill loaded in the part a compaction replaces comes back after the summary, from the startup snapshot", async () => {
    const fs = new MemoryFileSystem();
    fs.writeFile("/home/user/.agents/skills/pdf-tools/SKILL.md", `---\nname: pdf-tools\ndescription: "Work with PDF files."\n---\nPDF-SKILL-BODY: run scripts/extract.py first.\n`);
    const server = await startWindowServer(API, 8_000, {}, { fs });
    try {
      server.runtime.fs.writeFile(`${CWD}/a.txt`, `BIG-FILE ${"the quick brown fox jumps ".repeat(1_200)}\n`);
      const sessionId = await firstTurn(server);
      server.provider.enqueue(reply(API, { calls: [{ id: "call_s", name: "skill", args: { name: "pdf-tools" } }], inputTokens: 1_000 }));
      server.provider.enqueue(reply(API, { calls: [read("call_1")], inputTokens: 2_000 }));
      server.provider.enqueue(reply(API, { text: ["SUMMARY-ALL"] }));
      server.provider.enqueue(reply(API, { text: ["SECOND-ANSWER"] }));
      const second = await turn(server, "SECOND-PROMPT", sessionId);
      assert.deepEqual(compactionStates(second.events).map(([state]) => state), ["started", "completed"]);
      const next = sentText(server, 4);
      assert.ok(next.includes("SUMMARY-ALL") && next.includes("BIG-FILE") && !next.includes("SECOND-PROMPT"), next.slice(0, 500));
      assert.match(next, /Skills loaded earlier in this conversation[^"]*<skill name=\\"pdf-tools\\">\\nPDF-SKILL-BODY/);
      assert.ok(!next.includes("call_s"), "the skill call itself was replaced");
    } finally {
      await stopTurnServer(server);
    }
  });

  it("pruning the outputs of calls the model already answered comes first when that alone is enough: no compaction", async () => {
    const server = await startWindowServer(API);
    try {
      server.runtime.fs.writeFile(`${CWD}/a.txt`, `BIG-FILE ${"jumps over the lazy dog ".repeat(800)}\n`);
      const sessionId = await firstTurn(server);
      server.provider.enqueue(reply(API, { calls: [read("call_1")], inputTokens: 1_500 }));
      server.provider.enqueue(reply(API, { calls: [{ id: "call_2", name: "list_directory", args: { path: "." } }], inputTokens: 6_500 }));
      server.provider.enqueue(reply(API, { text: ["SECOND-ANSWER"] }));
      const second = await turn(server, "SECOND-PROMPT", sessionId);
      assert.deepEqual(compactionStates(second.events), []);
      assert.equal(server.provider.log.length, 4);
      assert.ok(sentText(server, 2).includes("BIG-FILE"));
      const pruned = sentText(server, 3);
      assert.ok(!pruned.includes("BIG-FILE") && pruned.includes(PRUNED_OUTPUT.slice(0, 40)) && pruned.includes("FIRST-PROMPT"), pruned.slice(0, 3_000));
    } finally {
      await stopTurnServer(server);
    }
  });

  it("with an unknown window, or compaction disabled, nothing compacts proactively", async () => {
    for (const [window, agent] of [[null, {}], [8_000, { compaction: { enabled: false } }]] as const) {
      const server = await startWindowServer(API, window, agent);
      try {
        const sessionId = await firstTurn(server);
        server.provider.enqueue(reply(API, { calls: [{ id: "call_2", name: "list_directory", args: { path: "." } }], inputTokens: 7_900 }));
        server.provider.enqueue(reply(API, { text: ["SECOND-ANSWER"] }));
        const second = await turn(server, "SECOND-PROMPT", sessionId);
        assert.deepEqual(compactionStates(second.events), []);
        assert.ok(sentText(server, 2).includes("FIRST-PROMPT"));
      } finally {
        await stopTurnServer(server);
      }
    }
  });
});

describe("compaction faults", () => {
  /** Starts a second turn whose first step reports `input` tokens and calls a tool, so a compaction follows. */
  async function overThreshold(server: TurnServer, input = 7_000): Promise<string> {
    const sessionId = await firstTurn(server);
    server.provider.enqueue(reply(API, { calls: [{ id: "call_2", name: "list_directory", args: { path: "." } }], inputTokens: input }));
    return sessionId;
  }

  it("cancelling during the summary request cancels the compaction: no compaction record, the activity failed, the old replay stays", async () => {
    const server = await startWindowServer(API);
    try {
      const sessionId = await overThreshold(server);
      const gate = new Gate();
      server.provider.enqueue(reply(API, { text: ["SUMMARY ", "never whole"], gates: new Map([[0, gate]]) }));
      const { runId } = await startTurn(server, "SECOND-PROMPT", sessionId);
      await nextEvent(server, runId, "activity", 0);
      await gate.whenReached();
      await request(server, "cancel", "turn.cancel", { session_id: sessionId, run_id: runId });
      const events = await runEvents(server, runId);
      assert.equal(terminalData(events).outcome, "cancelled");
      assert.deepEqual(compactionStates(events), [["started", compactionStates(events)[0]![1]], ["failed", "Compaction cancelled"]]);
      await server.provider.until(() => server.provider.log[2]!.clientClosed);
      gate.release();
      assert.equal(storedRecords(server, sessionId).some((record) => record.type === "compaction"), false);
      server.provider.enqueue(reply(API, { text: ["THIRD-ANSWER"] }));
      await turn(server, "THIRD-PROMPT", sessionId);
      assert.ok(sentText(server, 3).includes("FIRST-PROMPT"), "the next turn replays what was there");
    } finally {
      await stopTurnServer(server);
    }
  });

  it("an empty summary fails the compaction visibly and the turn goes on uncompacted while it fits the window", async () => {
    const server = await startWindowServer(API);
    try {
      const sessionId = await overThreshold(server);
      server.provider.enqueue(reply(API, { text: ["  \n "] }));
      server.provider.enqueue(reply(API, { text: ["SECOND-ANSWER"] }));
      const second = await turn(server, "SECOND-PROMPT", sessionId);
      assert.deepEqual([terminalData(second.events).outcome, terminalData(second.events).error_code], ["completed", null]);
      assert.deepEqual(compactionStates(second.events).map(([state, text]) => [state, state === "failed" ? text : ""]), [["started", ""], ["failed", "Compaction failed: the model returned no summary"]]);
      assert.deepEqual(diagnosticCodes(second.events), ["compaction_failed"]);
      assert.ok(sentText(server, 3).includes("FIRST-PROMPT"));
      assert.equal(storedRecords(server, sessionId).some((record) => record.type === "compaction"), false);
    } finally {
      await stopTurnServer(server);
    }
  });

  it("a failed summary request when the conversation no longer fits the window ends the turn with context_full", async () => {
    const server = await startWindowServer(API);
    try {
      const sessionId = await overThreshold(server, 8_500);
      server.provider.enqueue({ status: 500, body: { error: "boom" } });
      const second = await turn(server, "SECOND-PROMPT", sessionId);
      assert.deepEqual([terminalData(second.events).outcome, terminalData(second.events).error_code], ["failed", "execution_failed"]);
      assert.deepEqual(diagnosticCodes(second.events), ["compaction_failed", "context_full"]);
      assert.equal(server.provider.log.length, 3);
    } finally {
      await stopTurnServer(server);
    }
  });

  it("three failed compactions in a row stop the run from trying, and it says so", async () => {
    const server = await startWindowServer(API);
    try {
      const sessionId = await overThreshold(server);
      for (let attempt = 0; attempt < 3; attempt++) {
        server.provider.enqueue(reply(API, { text: [] }));
        server.provider.enqueue(reply(API, { calls: [{ id: `call_r${attempt}`, name: "list_directory", args: { path: "." } }], inputTokens: 7_000 }));
      }
      server.provider.enqueue(reply(API, { text: ["SECOND-ANSWER"] }));
      const second = await turn(server, "SECOND-PROMPT", sessionId);
      assert.deepEqual(terminalData(second.events).outcome, "completed");
      assert.deepEqual(diagnosticCodes(second.events), ["compaction_failed", "compaction_failed", "compaction_failed", "compaction_stopped"]);
      assert.equal(server.provider.log.length, 1 + 1 + 3 * 2 + 1);
    } finally {
      await stopTurnServer(server);
    }
  });

  it(`a summary over ${SUMMARY_MAX_BYTES} bytes is cut there, visibly, in the record, the entry and the activity`, async () => {
    const server = await startWindowServer(API);
    try {
      const sessionId = await overThreshold(server);
      server.provider.enqueue(reply(API, { text: Array.from({ length: 40 }, (_, index) => `part ${index} `.padEnd(1_000, "-")) }));
      server.provider.enqueue(reply(API, { text: ["SECOND-ANSWER"] }));
      const second = await turn(server, "SECOND-PROMPT", sessionId);
      assert.match(compactionStates(second.events)[1]![1], /\(cut at 32,768 bytes\)$/);
      const summary = storedRecords(server, sessionId).find((record) => record.type === "compaction")!.summary as string;
      assert.ok(summary.endsWith(SUMMARY_CUT_NOTE) && utf8ByteCount(summary) <= SUMMARY_MAX_BYTES && summary.startsWith("part 0 "));
      const entries = await pagedEntries(server, sessionId, revisionOf(second.events));
      assert.equal(entries.find(([kind]) => kind === "compaction")![1], summary);
    } finally {
      await stopTurnServer(server);
    }
  });
});

describe("a compacted session past the snapshot bound", () => {
  it("a history over the snapshot's part bound pages again once a turn compacted it: from the compaction's turn on", async () => {
    const fs = new MemoryFileSystem();
    const id = "01900000-0000-7000-8000-00000000c0de";
    fs.writeFile(`${HOME}/sessions/${id}.jsonl`, encodeAll(overSnapshotParts(id, CWD)), 0o600);
    const server = await startWindowServer(API, 8_000, {}, { fs });
    try {
      const opened = await request(server, "open", "session.open", { session_id: id });
      const before = await request(server, "page-before", "history.page", { session_id: id, revision: (opened.result as { revision: string }).revision });
      assert.equal(before.error?.code, "history_limit");
      server.provider.enqueue(reply(API, { text: ["SUMMARY-OF-MANY"] }));
      server.provider.enqueue(reply(API, { text: ["AN-ANSWER"] }));
      const compacted = await turn(server, "A-PROMPT", id);
      assert.deepEqual(compactionStates(compacted.events).map(([state]) => state), ["started", "completed"]);
      assert.ok(sentText(server, 0).includes("earlier messages left out"), "the transcript was bounded to the window");
      assert.notEqual(revisionOf(compacted.events), null);
      const expected = [["user", "A-PROMPT"], ["activity", compactionStates(compacted.events)[1]![1]], ["compaction", "SUMMARY-OF-MANY"], ["assistant", "AN-ANSWER"]];
      assert.deepEqual(await pagedEntries(server, id, revisionOf(compacted.events)), expected);
      const reopened = await request(server, "reopen", "session.open", { session_id: id });
      assert.deepEqual(await pagedEntries(server, id, (reopened.result as { revision: string }).revision), expected);
    } finally {
      await stopTurnServer(server);
    }
  });
});
