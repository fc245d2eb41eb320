/**
 * Session titles (docs/protocol.md#session-titles): after a session's first
 * completed turn, one titling request to the selected model, in the
 * background, whose sanitized answer is stored as a `session_title` record
 * and shown by `session.list`; never an event, never a delay or change of
 * `run.finished`, silent when it fails, off when settings say so. Through
 * the real server on the memory runtime, against loopback providers.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ProviderApi } from "../src/config/settings.ts";
import { generatedTitle } from "../src/store/discovery/title.ts";
import { TITLE_INSTRUCTIONS } from "../src/runner/title-request.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { Gate } from "./support/fake-provider.ts";
import { eventually, guarded } from "./support/hang-guard.ts";
import { errorScript } from "./support/provider-fixtures.ts";
import { reply } from "./support/provider-scripts.ts";
import { HOME, reconciled, request, runEvents, startTurn, startTurnServer, stopTurnServer, type TurnServer } from "./support/turns.ts";

const APIS: ProviderApi[] = ["openai-chat", "openai-responses", "anthropic-messages"];
const TITLES_ON = { agent: { titles: { enabled: true } } };

/** The session file's records. */
function records(fs: MemoryFileSystem, sessionId: string): Record<string, unknown>[] {
  const text = new TextDecoder().decode(fs.contents(`${HOME}/sessions/${sessionId}.jsonl`) ?? new Uint8Array());
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
}

/** The titles stored in the session file. */
function storedTitles(fs: MemoryFileSystem, sessionId: string): unknown[] {
  return records(fs, sessionId).filter((record) => record.type === "session_title").map((record) => record.title);
}

/** `session.list`'s title of `sessionId`. */
async function listedTitle(server: TurnServer, sessionId: string): Promise<unknown> {
  const listed = await request(server, `list-${server.frames().length}`, "session.list", {});
  const sessions = (listed.result as { sessions: { session_id: string; title: unknown }[] }).sessions;
  return sessions.find((entry) => entry.session_id === sessionId)?.title;
}

/** Every event name the server wrote, deltas left out (they are best effort). */
function eventNames(server: TurnServer): string[] {
  return server.frames().filter((frame) => frame.type === "event" && frame.event !== "message.delta").map((frame) => frame.event as string);
}

for (const api of APIS) {
  describe(`session titles over ${api}`, () => {
    it("the first completed turn gets a title from the model, shown by session.list; the run's revision still pages", async () => {
      const fs = new MemoryFileSystem();
      const server = await startTurnServer(api, { fs, settings: TITLES_ON });
      server.provider.enqueue(reply(api, { text: ["The off-by-one is in range.ts; fixed."] }));
      server.provider.enqueue(reply(api, { text: ["\"Fixing the range off-by-one\""] }));
      const { sessionId, runId } = await startTurn(server, "Find the failing test and fix it.");
      const events = await runEvents(server, runId);
      const finished = events.at(-1)!.data as { outcome: string; revision: string };
      assert.equal(finished.outcome, "completed");
      await eventually(() => storedTitles(fs, sessionId).length > 0, "the stored title");
      assert.deepEqual(storedTitles(fs, sessionId), ["Fixing the range off-by-one"]);
      assert.equal(await listedTitle(server, sessionId), "Fixing the range off-by-one");

      // The titling request: the model, no tools, the instructions and an excerpt of the turn.
      assert.equal(server.provider.log.length, 2);
      const body = server.provider.log[1]!.body as Record<string, unknown>;
      assert.equal(body.tools, undefined);
      const sent = JSON.stringify(body);
      for (const part of [TITLE_INSTRUCTIONS, "Find the failing test and fix it.", "The off-by-one is in range.ts; fixed."]) {
        assert.ok(sent.includes(JSON.stringify(part).slice(1, -1)), `the request holds ${part}`);
      }
      // No event tells of it, and the history run.finished named still pages: a title projects nothing.
      assert.deepEqual(eventNames(server), ["input.persisted", "message.reconcile", "run.finished"]);
      const page = await request(server, "page", "history.page", { session_id: sessionId, revision: finished.revision });
      assert.deepEqual((page.result as { entries: { kind: string }[] }).entries.map((entry) => entry.kind), ["user", "assistant"]);

      // The next turn appends after the title; no second title is asked for.
      server.provider.enqueue(reply(api, { text: ["Done."] }));
      const next = await startTurn(server, "Thanks", sessionId);
      assert.equal(((await runEvents(server, next.runId)).at(-1)!.data as { outcome: string }).outcome, "completed");
      assert.equal(server.provider.log.length, 3);
      assert.deepEqual(records(fs, sessionId).map((record) => record.type).slice(-4), ["user_input", "assistant_message", "usage", "turn_finished"]);
      assert.equal(await stopTurnServer(server), 0);
    });
  });
}

describe("session titles: failures, ownership and settings", () => {
  const api: ProviderApi = "openai-chat";

  it("a failed titling request changes nothing else, and is not repeated for the session", async () => {
    const fs = new MemoryFileSystem();
    const server = await startTurnServer(api, { fs, settings: TITLES_ON });
    server.provider.enqueue(reply(api, { text: ["Hello."] }));
    server.provider.enqueue(errorScript(api, 500, "overloaded"));
    const { sessionId, runId } = await startTurn(server, "Hi");
    const finished = (await runEvents(server, runId)).at(-1)!.data as { outcome: string; revision: string };
    await server.provider.until(() => server.provider.log.length === 2 && server.provider.log[1]!.finished);
    server.provider.enqueue(reply(api, { text: ["Again."] }));
    const next = await startTurn(server, "Again", sessionId);
    const nextFinished = (await runEvents(server, next.runId)).at(-1)!.data as { outcome: string; revision: string };
    assert.deepEqual([finished.outcome, nextFinished.outcome], ["completed", "completed"]);
    assert.equal(server.provider.log.length, 3, "no second titling request");
    assert.deepEqual(storedTitles(fs, sessionId), []);
    assert.equal(await listedTitle(server, sessionId), null);
    assert.ok(!eventNames(server).includes("diagnostic"), "a failed title is silent");
    const page = await request(server, "page", "history.page", { session_id: sessionId, revision: nextFinished.revision });
    assert.equal((page.result as { entries: unknown[] }).entries.length, 4);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a title append a full disk cuts short leaves the session as it was: no fragment, the revision pages, the next turn appends", async () => {
    const fs = new MemoryFileSystem();
    const server = await startTurnServer(api, { fs, settings: TITLES_ON });
    const held = new Gate();
    server.provider.enqueue(reply(api, { text: ["First answer."] }));
    server.provider.enqueue(reply(api, { text: ["A title that will not fit"], gates: new Map([[0, held]]) }));
    const { sessionId, runId } = await startTurn(server, "First");
    const finished = (await runEvents(server, runId)).at(-1)!.data as { revision: string };
    await guarded(held.whenReached(), "the titling reply reaching its gate");
    const path = `${HOME}/sessions/${sessionId}.jsonl`;
    const before = fs.contents(path)!;
    // Room for the active lease (as long as the writer lease) and a few bytes of the record: a short write.
    fs.freeBytes = fs.contents(`${HOME}/sessions/${sessionId}.writer.lease`)!.length + 16;
    held.release();
    await eventually(() => fs.freeBytes === 0, "the title append using up the space");
    fs.freeBytes = null;
    // The page waits for the failed append to end, which cut its fragment: the file is the revision's again.
    const page = await request(server, "page", "history.page", { session_id: sessionId, revision: finished.revision });
    assert.deepEqual((page.result as { entries: { kind: string }[] }).entries.map((entry) => entry.kind), ["user", "assistant"]);
    assert.deepEqual(fs.contents(path), before);
    server.provider.enqueue(reply(api, { text: ["Second answer."] }));
    const next = await startTurn(server, "Second", sessionId);
    const nextFinished = (await runEvents(server, next.runId)).at(-1)!.data as { outcome: string; persistence: string };
    assert.deepEqual([nextFinished.outcome, nextFinished.persistence], ["completed", "durable"]);
    const after = new TextDecoder().decode(fs.contents(path)!);
    assert.ok(after.startsWith(new TextDecoder().decode(before)), "the first turn's bytes are untouched");
    assert.deepEqual(storedTitles(fs, sessionId), []);
    assert.ok(after.split("\n").slice(0, -1).every((line) => JSON.parse(line).session_id === sessionId), "every line whole: no fragment was left");
    assert.equal(await listedTitle(server, sessionId), null);
    assert.ok(!eventNames(server).includes("diagnostic"), "a failed title is silent");
    assert.equal(await stopTurnServer(server), 0);
  });

  it("titles off: no titling request", async () => {
    const fs = new MemoryFileSystem();
    const server = await startTurnServer(api, { fs, settings: { agent: { titles: { enabled: false } } } });
    server.provider.enqueue(reply(api, { text: ["One."] }));
    const { sessionId, runId } = await startTurn(server, "First");
    await runEvents(server, runId);
    server.provider.enqueue(reply(api, { text: ["Two."] }));
    const next = await startTurn(server, "Second", sessionId);
    await runEvents(server, next.runId);
    assert.equal(server.provider.log.length, 2, "only the two turns' requests");
    assert.deepEqual(storedTitles(fs, sessionId), []);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a turn that did not complete asks for no title", async () => {
    const server = await startTurnServer(api, { settings: TITLES_ON });
    server.provider.enqueue(errorScript(api, 500, "overloaded"));
    const { sessionId, runId } = await startTurn(server, "Fail");
    assert.equal(((await runEvents(server, runId)).at(-1)!.data as { outcome: string }).outcome, "failed");
    server.provider.enqueue(reply(api, { text: ["Fine now."] }));
    server.provider.enqueue(reply(api, { text: ["Second try"] }));
    const next = await startTurn(server, "Try again", sessionId);
    // Had the failed turn asked for a title, that request would have taken this turn's answer.
    assert.deepEqual([...reconciled(await runEvents(server, next.runId)).values()].map((entry) => entry.text), ["Fine now."]);
    // The completed turn is the session's first: it is the one titled.
    await server.provider.until(() => server.provider.log.length === 3);
    assert.ok(JSON.stringify(server.provider.log[2]!.body).includes("You write titles"));
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a pending title holds nothing up: the next turn runs meanwhile, and the title is stored after it", async () => {
    const fs = new MemoryFileSystem();
    const server = await startTurnServer(api, { fs, settings: TITLES_ON });
    const held = new Gate();
    server.provider.enqueue(reply(api, { text: ["First answer."] }));
    server.provider.enqueue(reply(api, { text: ["Held title"], gates: new Map([[0, held]]) }));
    const { sessionId, runId } = await startTurn(server, "First");
    await runEvents(server, runId);
    await guarded(held.whenReached(), "the titling reply reaching its gate");
    const idle = await request(server, "status", "status");
    assert.deepEqual([(idle.result as { state: string }).state, (idle.result as { run_id: unknown }).run_id], ["idle", null]);

    const gate = new Gate();
    server.provider.enqueue(reply(api, { text: ["Second answer."], gates: new Map([[0, gate]]) }));
    const next = await startTurn(server, "Second", sessionId);
    await guarded(gate.whenReached(), "the second turn's reply reaching its gate");
    held.release();
    await server.provider.until(() => server.provider.log[1]!.finished);
    assert.deepEqual(storedTitles(fs, sessionId), [], "no append while the turn runs");
    gate.release();
    const finished = (await runEvents(server, next.runId)).at(-1)!.data as { outcome: string; revision: string };
    assert.equal(finished.outcome, "completed");
    await eventually(() => storedTitles(fs, sessionId).length > 0, "the title stored after the turn");
    assert.deepEqual(storedTitles(fs, sessionId), ["Held title"]);
    assert.deepEqual(records(fs, sessionId).map((record) => record.type).slice(-2), ["turn_finished", "session_title"], "appended once the turn ended");
    const page = await request(server, "page", "history.page", { session_id: sessionId, revision: finished.revision });
    assert.ok(page.result, JSON.stringify(page.error));
    assert.equal(await stopTurnServer(server), 0);
  });

  it("closing while the titling request is pending cancels it: exit 0, no title, no lease left", async () => {
    const fs = new MemoryFileSystem();
    const server = await startTurnServer(api, { fs, settings: TITLES_ON });
    const held = new Gate();
    server.provider.enqueue(reply(api, { text: ["Answer."] }));
    server.provider.enqueue(reply(api, { text: ["Never stored"], gates: new Map([[0, held]]) }));
    const { sessionId, runId } = await startTurn(server, "Hello");
    await runEvents(server, runId);
    await guarded(held.whenReached(), "the titling reply reaching its gate");
    server.runtime.input.end();
    assert.equal(await guarded(server.exit, "the exit after EOF"), 0);
    await server.provider.until(() => server.provider.log[1]!.clientClosed);
    held.release();
    assert.deepEqual(storedTitles(fs, sessionId), []);
    const leases = ["writer", "active", "append"].filter((kind) => fs.exists(`${HOME}/sessions/${sessionId}.${kind}.lease`));
    assert.deepEqual(leases, []);
    await server.provider.close();
  });
});

describe("generatedTitle()", () => {
  it("takes the first line without a label, quotes, emphasis or a trailing period", () => {
    assert.equal(generatedTitle("\n  Title: \"Fix the flaky test.\"  \nBecause the user asked.", []), "Fix the flaky test");
    assert.equal(generatedTitle("**Range bug fix**", []), "Range bug fix");
    assert.equal(generatedTitle("`parser` cleanup", []), "parser` cleanup");
  });

  it("cuts a title over 50 characters to 49 and an ellipsis", () => {
    const long = "A".repeat(80);
    assert.equal(generatedTitle(long, []), `${"A".repeat(49)}…`);
    assert.equal([...generatedTitle("é".repeat(60), [])!].length, 50);
  });

  it("refuses an empty reply, one holding a known secret, and one with a lone surrogate", () => {
    assert.equal(generatedTitle("", []), null);
    assert.equal(generatedTitle(" \n \"\" \n", []), null);
    assert.equal(generatedTitle("Rotate sk-test-0123456789abcdefghij now", ["sk-test-0123456789abcdefghij"]), null);
    assert.equal(generatedTitle("Broken \ud800 text", []), null);
  });

  it("folds controls and runs of whitespace into single spaces", () => {
    assert.equal(generatedTitle("Tabs\tand\u0007bells   here", []), "Tabs and bells here");
  });
});
