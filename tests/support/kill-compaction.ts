/**
 * Crash consistency of compaction against real children (the kill-point
 * property of `kill-turns.ts`, extended to compaction): a turn that
 * compacts is SIGKILLed while its summary request is held, right after the
 * compaction's completed activity arrived, or at its k-th event of a free
 * run; a fresh child then reopens the session, and its next turn must
 * replay either the old conversation (no `compaction` record survived) or
 * the new one (the record did), never a mix, with nothing lost.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type FakeProvider, Gate, type LoggedRequest, type Script } from "./fake-provider.ts";
import type { Launcher } from "./processes.ts";
import { reply } from "./provider-scripts.ts";
import { type Entry, INTERRUPTED, leaseFiles, pagedHistory } from "./kill-turns.ts";
import { TURN_CAPABILITIES } from "./turns.ts";
import { guarded, WireClient, type Workspace, workspace } from "./wire-client.ts";

/** Where the compacting turn dies: its summary request held, its compaction just completed, or its k-th event. */
export type CompactionKillPoint = "compaction.started" | "compaction.completed" | number;

const FIRST = { prompt: "FIRST-PROMPT of the session.", answer: "FIRST-ANSWER of the session." };
const KILLED = "KILLED-PROMPT: list the files.";
const SUMMARY = "SUMMARY-TEXT of everything before.";
const AFTER = "AFTER-ANSWER once compacted.";
const LAST = { prompt: "LAST-PROMPT after the crash.", answer: "LAST-ANSWER." };
/** The request a compaction makes ends with a user message starting so. */
const SUMMARY_REQUEST = "Summarise this conversation";

/** A workspace whose ollama endpoint holds 8,000 tokens, so a step reporting 7,000 makes the next one compact. */
export function compactingWorkspace(root: string, name: string, provider: FakeProvider): Workspace {
  return workspace(root, name, provider, { providers: { endpoints: { ollama: { base_url: `${provider.url}/v1`, context_window: 8_000 } } } });
}

type Message = { role: string; content: unknown };
const messagesOf = (request: LoggedRequest): Message[] => (request.body as { messages?: Message[] } | null)?.messages ?? [];
const lastUser = (request: LoggedRequest) => String(messagesOf(request).findLast((message) => message.role === "user")?.content ?? "");

/** Answers each request by what it is: the first turn, the killed turn's two steps, its summary request, the last turn. */
function answer(provider: FakeProvider, gates: { readonly summary: Gate | null; readonly after: Gate | null }): void {
  provider.handler = (request): Script => {
    const last = lastUser(request);
    if (last === FIRST.prompt) return reply("openai-chat", { text: [FIRST.answer], inputTokens: 100 });
    if (last === LAST.prompt) return reply("openai-chat", { text: [LAST.answer] });
    if (last.startsWith(SUMMARY_REQUEST)) return reply("openai-chat", { text: [SUMMARY], gates: new Map(gates.summary === null ? [] : [[0, gates.summary]]) });
    if (last !== KILLED) return { status: 599, body: "no script for this request" };
    if (!messagesOf(request).some((message) => message.role === "tool")) {
      return reply("openai-chat", { calls: [{ id: "call_l", name: "list_directory", args: { path: "." } }], inputTokens: 7_000 });
    }
    return reply("openai-chat", { text: [AFTER], gates: new Map(gates.after === null ? [] : [[0, gates.after]]) });
  };
}

/**
 * Checks the reopened history: the first turn whole, then the killed turn's
 * input and only entries it produced: its tool and compaction activities,
 * the compaction's summary (present exactly when `compacted`), its answer,
 * and the interruption notice when it did not finish.
 */
function checkHistory(entries: readonly Entry[], compacted: boolean, finished: boolean): void {
  const describe = JSON.stringify(entries);
  assert.deepEqual(entries.slice(0, 3), [["user", FIRST.prompt, false], ["assistant", FIRST.answer, false], ["user", KILLED, false]], describe);
  for (const [kind, text] of entries.slice(3)) {
    if (kind === "compaction") assert.equal(text, SUMMARY, describe);
    else if (kind === "assistant") assert.ok(AFTER.startsWith(text), describe);
    else if (kind === "diagnostic") assert.equal(text, INTERRUPTED, describe);
    else assert.equal(kind, "activity", describe);
  }
  assert.equal(entries.some(([kind]) => kind === "compaction"), compacted, `the compaction entry shows exactly when its record survived: ${describe}`);
  if (!finished) assert.deepEqual(entries.at(-1), ["diagnostic", INTERRUPTED, true], describe);
}

/** Kills a compacting turn at `point` under `launcher`, reopens in a fresh child and checks history and replay. */
export async function crashDuringCompaction(launcher: Launcher, point: CompactionKillPoint, provider: FakeProvider, ws: Workspace): Promise<void> {
  const held = typeof point === "number" ? null : new Gate();
  const gates = { summary: point === "compaction.started" ? held : null, after: point === "compaction.completed" ? held : null };
  const clients: WireClient[] = [];
  try {
    answer(provider, gates);
    const doomed = new WireClient(launcher, ws.cwd, ws.env);
    clients.push(doomed);
    await doomed.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
    const sessionId = (await doomed.ok("session.create")).session_id as string;
    const first = (await doomed.ok("turn.start", { session_id: sessionId, prompt: FIRST.prompt })).run_id as string;
    assert.equal((await doomed.event(first, "run.finished")).data!.outcome, "completed");
    const runId = (await doomed.ok("turn.start", { session_id: sessionId, prompt: KILLED })).run_id as string;
    const compaction = (state: string) => (frame: { event?: string; data?: Record<string, unknown> }) =>
      frame.event === "activity" && frame.data?.run_id === runId && frame.data?.kind === "compaction" && frame.data?.state === state;
    if (point === "compaction.started") {
      await doomed.waitFor(compaction("started"), "the compaction starting");
      await guarded(held!.whenReached(), "the summary request reaching its gate");
    } else if (point === "compaction.completed") {
      await doomed.waitFor(compaction("completed"), "the compaction completing");
    } else {
      let count = 0;
      await doomed.waitFor((frame) => frame.data?.run_id === runId && frame.type === "event" && (++count >= point || frame.event === "run.finished"), `event ${point}`);
    }
    assert.equal(await doomed.kill("SIGKILL"), null, "the child died of the signal");
    const finished = doomed.eventsOf(runId).some((frame) => frame.event === "run.finished");

    const fresh = new WireClient(launcher, ws.cwd, ws.env);
    clients.push(fresh);
    await fresh.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
    const opened = await fresh.ok("session.open", { session_id: sessionId });
    const reopened = await pagedHistory(fresh, sessionId, opened.revision as string);
    const compacted = reopened.entries.some(([kind]) => kind === "compaction");
    if (point === "compaction.started") assert.equal(compacted, false, "a compaction killed before its summary arrived left nothing");
    if (point === "compaction.completed") assert.equal(compacted, true, "a compaction the client saw complete is durable");
    checkHistory(reopened.entries, compacted, finished || reopened.complete);

    const before = provider.log.length;
    const last = (await fresh.ok("turn.start", { session_id: sessionId, prompt: LAST.prompt })).run_id as string;
    const done = (await fresh.event(last, "run.finished")).data!;
    assert.deepEqual([done.outcome, done.error_code], ["completed", null]);
    const replayed = JSON.stringify(provider.log.slice(before).find((request) => lastUser(request) === LAST.prompt)!.body);
    // The old replay or the new one, whole: never the summary beside what it replaced, never neither.
    assert.equal(replayed.includes(SUMMARY), compacted, replayed);
    assert.equal(replayed.includes(FIRST.prompt) && replayed.includes(FIRST.answer), !compacted, replayed);
    assert.ok(replayed.includes(KILLED), `the killed turn's input is replayed either way: ${replayed}`);
    assert.equal((await fresh.shutdown()).code, 0);
    assert.deepEqual(leaseFiles(ws.home), [], "the fresh child took over and released every lease");
  } finally {
    held?.release();
    for (const client of clients) client.abandon();
  }
}
