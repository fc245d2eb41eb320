/**
 * Turns end to end: the real entry points (the Node bundle and the Deno
 * entry) over real pipes, a temp workspace, a temp `MC_HOME` whose settings
 * point the keyless `ollama` provider at a loopback fake provider.
 */

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type FakeProvider, Gate, startFakeProvider } from "./support/fake-provider.ts";
import { type Launcher, launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import {
  guarded,
  reconciledTexts,
  streamedTexts,
  WireClient,
  type WireFrame,
  workspace,
} from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-turns-"));
after(() => rmSync(root, { recursive: true, force: true }));

const PROMPTS = [
  "Please create hello.txt with a greeting.",
  "What did you just write, and where?",
  "Thanks! Anything else to add after the restart?",
];
const FILE_CONTENT = "hello from turn one\n";
const ANSWERS = {
  beforeTool: "I'll create hello.txt now.",
  afterTool: "Created hello.txt with a greeting.",
  second: "I wrote a greeting into hello.txt in the workspace.",
  third: "Nothing else: hello.txt is still there from before the restart.",
};

type ChatMessage = { role: string; content: string | null; tool_calls?: unknown[]; tool_call_id?: string };

/** The chat messages of the provider's `index`-th request. */
function sentMessages(provider: FakeProvider, index: number): ChatMessage[] {
  const body = provider.log[index]?.body as { messages?: ChatMessage[] } | undefined;
  assert.ok(body?.messages, `provider request ${index} has chat messages`);
  return body.messages;
}

function leaseFiles(home: string): string[] {
  const sessions = join(home, "sessions");
  return existsSync(sessions) ? readdirSync(sessions).filter((name) => name.endsWith(".lease")) : [];
}

/** Every frame is one envelope of one child: constant protocol, version and instance, seq 1, 2, 3, … */
function assertEnvelopes(client: WireClient): void {
  assert.equal(client.partial, "", "stdout ends with a complete frame");
  assert.deepEqual(client.frames.map((frame) => frame.seq), client.frames.map((_, index) => index + 1));
  assert.equal(new Set(client.frames.map((frame) => frame.instance_id)).size, 1);
  for (const frame of client.frames) {
    assert.equal(frame.protocol, "magi-code.local-agent");
    assert.equal(frame.version, 1);
    assert.ok(frame.type === "response" || frame.type === "event", `frame type ${frame.type}`);
  }
}

/** Checks the shape every completed run shares; returns its run.finished data. */
function assertCompletedRun(client: WireClient, events: WireFrame[], started: WireFrame, sessionId: string): Record<string, unknown> {
  const names = events.map((frame) => frame.event);
  assert.equal(names[0], "input.persisted", `first event: ${names.join(", ")}`);
  assert.equal(names.at(-1), "run.finished");
  assert.equal(names.filter((name) => name === "run.finished").length, 1);
  assert.ok(started.seq < events[0]!.seq, "the turn.start response precedes the run's events");
  for (const frame of events) assert.equal(frame.data!.session_id, sessionId);
  const input = events[0]!.data!;
  assert.equal(input.durable, true);
  assert.equal(typeof input.revision, "string");
  const finished = events.at(-1)!.data!;
  assert.deepEqual(
    { outcome: finished.outcome, persistence: finished.persistence, error_code: finished.error_code },
    { outcome: "completed", persistence: "durable", error_code: null },
  );
  assert.equal(typeof finished.revision, "string");
  // Nothing of this run after its terminal event.
  const terminalSeq = events.at(-1)!.seq;
  assert.equal(client.eventsOf(finished.run_id as string).filter((frame) => frame.seq > terminalSeq).length, 0);
  return finished;
}

/** Pages the whole history of `revision`; returns `[kind, text, partial]` per message (parts joined) and completeness. */
async function fullHistory(client: WireClient, sessionId: string, revision: string): Promise<{ entries: [string, string, boolean][]; complete: boolean }> {
  const entries: { message_id: string; kind: string; text: string; partial: boolean; part: number; last_part: boolean }[] = [];
  let cursor: string | null = null;
  let complete = false;
  for (let pages = 0; pages < 100; pages++) {
    const page = await client.ok("history.page", { session_id: sessionId, revision, cursor });
    entries.push(...(page.entries as typeof entries));
    cursor = page.next_cursor as string | null;
    complete = page.complete as boolean;
    if (cursor === null) break;
  }
  const joined: [string, string, boolean][] = [];
  let previous: string | null = null;
  for (const entry of entries) {
    if (entry.message_id === previous && entry.part > 0) joined.at(-1)![1] += entry.text;
    else joined.push([entry.kind, entry.text, entry.partial]);
    previous = entry.message_id;
  }
  return { entries: joined, complete };
}

/**
 * What must not differ between runtimes, per child: the responses in request order (by id and outcome) and
 * the run events in order with their protocol-relevant fields. The two lists are kept apart because a
 * response (an approval answer's, say) may overtake or trail a run's events depending on scheduling, and
 * deltas are left out because they are best effort (they may coalesce or drop).
 */
function skeleton(client: WireClient): { responses: unknown[]; events: unknown[] } {
  const responses: unknown[] = [];
  const events: unknown[] = [];
  for (const frame of client.frames) {
    if (frame.type === "response") {
      responses.push([frame.id, frame.error?.code ?? Object.keys(frame.result!).sort().join(",")]);
      continue;
    }
    const data = frame.data!;
    switch (frame.event) {
      case "message.delta":
        break;
      case "activity":
        events.push([frame.event, data.kind, data.name, data.state, data.summary]);
        break;
      case "approval.requested":
        events.push([frame.event, data.summary, data.expires_in_ms]);
        break;
      case "run.finished":
        events.push([frame.event, data.outcome, data.persistence, data.error_code]);
        break;
      case "message.reconcile":
        events.push([frame.event, data.part, data.last_part, data.partial, data.text]);
        break;
      default:
        events.push([frame.event]);
    }
  }
  return { responses, events };
}

interface Transcript {
  readonly children: { responses: unknown[]; events: unknown[] }[];
  readonly providerRoles: string[][];
}

/** Two turns in one child, a restart, a reopen with history and a third turn. */
async function conversation(launcher: Launcher): Promise<Transcript> {
  const provider = await startFakeProvider();
  const ws = workspace(root, `conversation-${launcher.name}`, provider);
  const clients: WireClient[] = [];
  try {
    // --- First child: two turns. ---
    const first = new WireClient(launcher, ws.cwd, ws.env);
    clients.push(first);
    const init = await first.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
    const status = init.status as Record<string, unknown>;
    assert.deepEqual([status.state, status.readiness, status.provider, status.model], ["idle", "ready", "ollama", "qwen"]);
    for (const name of TURN_CAPABILITIES) assert.ok((init.capabilities as string[]).includes(name), `capability ${name}`);
    const created = await first.ok("session.create");
    assert.equal(created.durable, false);
    const sessionId = created.session_id as string;
    assert.equal(leaseFiles(ws.home).length, 0, "a lazy session holds no lease");

    // Turn 1: a text segment and a write_file call (policy ask), then the answer after the tool.
    provider.enqueue(reply("openai-chat", {
      text: ["I'll create ", "hello.txt now."],
      calls: [{ id: "call_1", name: "write_file", args: { path: "hello.txt", content: FILE_CONTENT } }],
    }));
    provider.enqueue(reply("openai-chat", { text: ["Created hello.txt ", "with a greeting."] }));
    const startedId = first.send("turn.start", { session_id: sessionId, prompt: PROMPTS[0] });
    const started1 = await first.waitFor((frame) => frame.id === startedId, "turn.start response");
    assert.equal(started1.result?.accepted, true, JSON.stringify(started1.error));
    const run1 = started1.result!.run_id as string;
    assert.match(run1, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

    const approval = (await first.event(run1, "approval.requested")).data!;
    assert.equal(approval.expires_in_ms, 60_000);
    assert.match(approval.summary as string, /hello\.txt/);
    assert.equal(existsSync(join(ws.cwd, "hello.txt")), false, "nothing is written before the approval");
    const running = await first.ok("status");
    assert.deepEqual([running.state, running.run_id, running.session_id], ["running", run1, sessionId]);
    const answered = await first.ok("approval.answer", { session_id: sessionId, run_id: run1, approval_id: approval.approval_id, allow: true });
    assert.deepEqual(answered, { recorded: true });

    const events1 = await first.runEvents(run1);
    const finished1 = assertCompletedRun(first, events1, started1, sessionId);
    const names1 = events1.map((frame) => frame.event);
    const activities = events1.filter((frame) => frame.event === "activity").map((frame) => frame.data!);
    assert.deepEqual(activities.map((data) => [data.kind, data.name, data.state]), [["tool", "write_file", "started"], ["tool", "write_file", "completed"]]);
    assert.equal(activities[0]!.activity_id, activities[1]!.activity_id);
    assert.ok(names1.indexOf("approval.requested") < names1.indexOf("activity"), "approval before the tool starts");
    assert.match(activities[1]!.summary as string, /hello\.txt/);
    assert.deepEqual(reconciledTexts(events1), [
      { text: ANSWERS.beforeTool, partial: false, complete: true },
      { text: ANSWERS.afterTool, partial: false, complete: true },
    ]);
    // Whatever deltas arrived are prefixes of the authoritative text (deltas are best effort).
    for (const [index, streamed] of streamedTexts(events1).entries()) {
      assert.ok([ANSWERS.beforeTool, ANSWERS.afterTool][index]!.startsWith(streamed), `delta text ${JSON.stringify(streamed)}`);
    }
    assert.equal(readFileSync(join(ws.cwd, "hello.txt"), "utf8"), FILE_CONTENT, "the tool really wrote the workspace file");
    assert.ok(existsSync(join(ws.home, "sessions", `${sessionId}.jsonl`)), "the session is durable on disk");
    assert.ok(leaseFiles(ws.home).includes(`${sessionId}.writer.lease`), "the attached durable session keeps its writer lease");

    // The tool result went back to the model in the same turn.
    assert.equal(provider.log.length, 2);
    const step2 = sentMessages(provider, 1);
    assert.deepEqual(step2.map((message) => message.role), ["system", "user", "assistant", "tool"]);
    assert.equal(step2[1]!.content, PROMPTS[0]);
    assert.equal(step2[3]!.tool_call_id, "call_1");
    assert.match(step2[3]!.content!, /hello\.txt/);

    // Turn 2: plain text; the provider sees turn 1's input and answers in its history.
    provider.enqueue(reply("openai-chat", { text: [ANSWERS.second] }));
    const started2 = await first.call("turn.start", { session_id: sessionId, prompt: PROMPTS[1] });
    const run2 = started2.result!.run_id as string;
    assert.notEqual(run2, run1);
    const events2 = await first.runEvents(run2);
    const finished2 = assertCompletedRun(first, events2, started2, sessionId);
    assert.deepEqual(events2.filter((frame) => frame.event === "activity"), []);
    assert.deepEqual(reconciledTexts(events2), [{ text: ANSWERS.second, partial: false, complete: true }]);
    assert.equal(provider.log.length, 3);
    const history2 = sentMessages(provider, 2);
    assert.deepEqual(history2.map((message) => message.role), ["system", "user", "assistant", "user"]);
    assert.equal(history2[1]!.content, PROMPTS[0]);
    assert.match(history2[2]!.content!, new RegExp(escape(ANSWERS.beforeTool)));
    assert.match(history2[2]!.content!, new RegExp(escape(ANSWERS.afterTool)));
    assert.match(history2[2]!.content!, /write_file/, "the replayed turn mentions the tool activity");
    assert.equal(history2[3]!.content, PROMPTS[1]);
    assert.notEqual(finished2.revision, finished1.revision);

    // The same child pages its history with the terminal revision.
    const live = await fullHistory(first, sessionId, finished2.revision as string);
    const idle = await first.ok("status");
    assert.deepEqual([idle.state, idle.run_id, idle.session_id], ["idle", null, sessionId]);
    const stopped = await first.shutdown();
    assert.deepEqual(stopped.response.result, { state: "stopping" });
    assert.equal(stopped.code, 0);
    assert.equal(await first.stderr, "", "stderr carries nothing while serving");
    assertEnvelopes(first);
    assert.deepEqual(leaseFiles(ws.home), [], "no lease outlives the first child");

    // --- Second child: reopen, page history, continue. ---
    const second = new WireClient(launcher, ws.cwd, ws.env);
    clients.push(second);
    await second.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
    const opened = await second.ok("session.open", { session_id: sessionId });
    assert.equal(opened.session_id, sessionId);
    assert.equal(opened.durable, true);
    assert.deepEqual(opened.notices, []);
    const reopened = await fullHistory(second, sessionId, opened.revision as string);
    assert.equal(reopened.complete, true);
    const writeSummary = activities[1]!.summary as string;
    assert.deepEqual(reopened.entries, [
      ["user", PROMPTS[0], false],
      ["assistant", ANSWERS.beforeTool, false],
      ["activity", writeSummary, false],
      ["assistant", ANSWERS.afterTool, false],
      ["user", PROMPTS[1], false],
      ["assistant", ANSWERS.second, false],
    ]);
    assert.deepEqual(live.entries, reopened.entries, "the first child's history and the reopened one agree");

    provider.enqueue(reply("openai-chat", { text: [ANSWERS.third] }));
    const started3 = await second.call("turn.start", { session_id: sessionId, prompt: PROMPTS[2] });
    const run3 = started3.result!.run_id as string;
    const events3 = await second.runEvents(run3);
    const finished3 = assertCompletedRun(second, events3, started3, sessionId);
    assert.deepEqual(reconciledTexts(events3), [{ text: ANSWERS.third, partial: false, complete: true }]);
    assert.equal(provider.log.length, 4);
    const history3 = sentMessages(provider, 3);
    assert.deepEqual(history3.map((message) => message.role), ["system", "user", "assistant", "user", "assistant", "user"]);
    assert.deepEqual(history3.filter((message) => message.role === "user").map((message) => message.content), PROMPTS);
    assert.match(history3[2]!.content!, new RegExp(escape(ANSWERS.beforeTool)));
    assert.match(history3[2]!.content!, new RegExp(escape(ANSWERS.afterTool)));
    assert.equal(history3[4]!.content, ANSWERS.second);
    // A restarted child sends the same earlier context as the child that ran those turns.
    assert.deepEqual(history3.slice(0, 4), history2);

    const after3 = await fullHistory(second, sessionId, finished3.revision as string);
    assert.deepEqual(after3.entries, [...reopened.entries, ["user", PROMPTS[2], false], ["assistant", ANSWERS.third, false]]);
    assert.equal(after3.complete, true);
    const stopped2 = await second.shutdown();
    assert.equal(stopped2.code, 0);
    assert.equal(await second.stderr, "");
    assertEnvelopes(second);
    assert.deepEqual(leaseFiles(ws.home), [], "no lease outlives the second child");

    return {
      children: clients.map(skeleton),
      providerRoles: provider.log.map((_, index) => sentMessages(provider, index).map((message) => message.role)),
    };
  } finally {
    for (const client of clients) client.abandon();
    await provider.close();
  }
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe("turns end to end over real pipes", () => {
  // Each test stands alone: whichever needs a runtime's conversation first runs it, and a later test (in
  // any order, or run alone) reuses that run instead of depending on an earlier test having stored it.
  const conversations = new Map<string, Promise<Transcript>>();
  const transcriptOf = (launcher: Launcher): Promise<Transcript> => {
    if (!conversations.has(launcher.name)) conversations.set(launcher.name, conversation(launcher));
    return conversations.get(launcher.name)!;
  };
  for (const launcher of launchers()) {
    it(`${launcher.name}: two turns with an approved write_file, a restart, history and a third turn`, async () => {
      await transcriptOf(launcher);
    });
  }

  it("every launcher produces the same transcript structure", async () => {
    const [node, ...others] = await Promise.all(launchers().map(transcriptOf));
    for (const other of others) assert.deepEqual(other, node);
  });

  for (const launcher of launchers()) {
    it(`${launcher.name}: EOF while the provider stream is held cancels the run, exits 0 and releases every lease`, async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `eof-${launcher.name}`, provider);
      const gate = new Gate();
      // Longer than any configured secret, so the redactor releases it as a delta before the gate.
      const partial = "Partial answer that is long enough to pass the redaction hold-back. ";
      provider.enqueue(reply("openai-chat", { text: [partial, "never sent"], gates: new Map([[0, gate]]) }));
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        await client.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
        const sessionId = (await client.ok("session.create")).session_id as string;
        const started = await client.ok("turn.start", { session_id: sessionId, prompt: "Stream until I hang up" });
        const runId = started.run_id as string;
        await guarded(gate.whenReached(), "the provider stream reaching its gate");
        await client.event(runId, "message.delta");
        assert.notDeepEqual(leaseFiles(ws.home), [], "a running turn holds the session's leases");

        client.closeInput();
        const code = await guarded(client.exited, `${launcher.name} exit after EOF`);
        await guarded(client.stdoutEnded, "stdout end");
        assert.equal(code, 0, "EOF drains and exits 0");
        assert.equal(await client.stderr, "");
        assertEnvelopes(client);
        // EOF does not promise a terminal event; if one came, it is the only one and says cancelled.
        const terminal = client.eventsOf(runId).filter((frame) => frame.event === "run.finished");
        assert.ok(terminal.length <= 1);
        if (terminal.length === 1) {
          assert.equal(terminal[0]!.data!.outcome, "cancelled");
          assert.equal(terminal[0]!.data!.error_code, null);
          assert.equal(client.frames.at(-1), terminal[0], "nothing follows the terminal event");
        }
        assert.deepEqual(leaseFiles(ws.home), [], "the writer lease (and every other) is gone after exit");
        await provider.until(() => provider.log[0]!.clientClosed);
        gate.release();

        // The session is not stuck: a new child opens it and sees the partial reply.
        const next = new WireClient(launcher, ws.cwd, ws.env);
        try {
          await next.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
          const opened = await next.ok("session.open", { session_id: sessionId });
          assert.equal(opened.durable, true);
          const history = await fullHistory(next, sessionId, opened.revision as string);
          assert.deepEqual(history.entries.slice(0, 2), [["user", "Stream until I hang up", false], ["assistant", partial, true]]);
          assert.equal((await next.shutdown()).code, 0);
        } finally {
          next.abandon();
        }
        assert.deepEqual(leaseFiles(ws.home), []);
      } finally {
        gate.release();
        client.abandon();
        await provider.close();
      }
    });

    it(`${launcher.name}: another child's session.open during a turn gets session_busy, and succeeds once the first exits`, async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `contention-${launcher.name}`, provider);
      const gate = new Gate();
      provider.enqueue(reply("openai-chat", { text: ["Still thinking about it, please hold on for a moment. ", "Done."], gates: new Map([[0, gate]]) }));
      const first = new WireClient(launcher, ws.cwd, ws.env);
      const second = new WireClient(launcher, ws.cwd, ws.env);
      try {
        await first.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
        await second.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
        const sessionId = (await first.ok("session.create")).session_id as string;
        const runId = (await first.ok("turn.start", { session_id: sessionId, prompt: "Take your time" })).run_id as string;
        await first.event(runId, "input.persisted");
        await guarded(gate.whenReached(), "the provider stream reaching its gate");
        const busy = await second.call("session.open", { session_id: sessionId });
        assert.deepEqual(busy.error, { code: "session_busy" });
        gate.release();
        const finished = await first.event(runId, "run.finished");
        assert.equal(finished.data!.outcome, "completed");
        assert.deepEqual((await second.call("session.open", { session_id: sessionId })).error, { code: "session_busy" }, "the writer lease outlives the turn");
        assert.equal((await first.shutdown()).code, 0);
        const opened = await second.ok("session.open", { session_id: sessionId });
        assert.equal(opened.durable, true);
        assert.equal((await second.shutdown()).code, 0);
      } finally {
        gate.release();
        first.abandon();
        second.abandon();
        await provider.close();
      }
    });

    it(`${launcher.name}: EOF while an approval is pending denies it: the tool never runs, exit 0, no lease left`, async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `eof-approval-${launcher.name}`, provider);
      provider.enqueue(reply("openai-chat", {
        text: ["Writing it."],
        calls: [{ id: "call_1", name: "write_file", args: { path: "never.txt", content: "no\n" } }],
      }));
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        await client.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
        const sessionId = (await client.ok("session.create")).session_id as string;
        const runId = (await client.ok("turn.start", { session_id: sessionId, prompt: "Write never.txt" })).run_id as string;
        await client.event(runId, "approval.requested");
        client.closeInput();
        assert.equal(await guarded(client.exited, `${launcher.name} exit after EOF`), 0);
        await guarded(client.stdoutEnded, "stdout end");
        assertEnvelopes(client);
        const events = client.eventsOf(runId);
        for (const frame of events.filter((event) => event.event === "activity")) assert.notEqual(frame.data!.state, "started");
        const terminal = events.filter((frame) => frame.event === "run.finished");
        assert.ok(terminal.length <= 1);
        if (terminal.length === 1) assert.equal(terminal[0]!.data!.outcome, "cancelled");
        assert.equal(existsSync(join(ws.cwd, "never.txt")), false, "a disconnected approval is a denial");
        assert.equal(provider.log.length, 1, "no further model request after the disconnect");
        assert.deepEqual(leaseFiles(ws.home), []);
      } finally {
        client.abandon();
        await provider.close();
      }
    });
  }
});
