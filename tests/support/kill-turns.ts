/**
 * Crash consistency against real children: a turn of a real entry point
 * (over real pipes) is SIGKILLed when a chosen protocol event arrives, then a
 * fresh child reopens the session (taking over the dead child's leases: same
 * host, pid gone) and the history it pages is checked against what the
 * client saw and what the fake provider produced, before the fresh child
 * takes a new complete turn.
 *
 * The kill points are protocol events, never sleeps; the provider holds its
 * stream at a gate (or the turn waits for an approval or a command), so the
 * dead child could not have produced more than the test knows about.
 *
 * @module
 */

import assert from "node:assert/strict";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeProvider, Gate, type LoggedRequest, type Script } from "./fake-provider.ts";
import type { Launcher } from "./processes.ts";
import { reply } from "./provider-scripts.ts";
import { TURN_CAPABILITIES } from "./turns.ts";
import { guarded, reconciledTexts, WireClient, type WireFrame, type Workspace } from "./wire-client.ts";

/** Where the turn is killed: when this protocol event of the second turn reaches the client. */
export type KillPoint =
  | "turn.start" // the accepted response, before input.persisted
  | "input.persisted"
  | "message.delta" // the provider holds the rest of its stream
  | "approval.requested" // a write_file approval left pending
  | "tool.running" // a shell command waits (activity started)
  | "run.finished";

/**
 * A kill point, or a number `k`: a free-running stream of several deltas (nothing holds the child, so it
 * races ahead of what the client saw), killed when the run's `k`-th event arrives or its `run.finished`,
 * whichever comes first.
 */
export type At = KillPoint | number;

/** The deltas of the free-running stream. */
export const RACING_DELTAS = ["One fairly long opening sentence of the answer, ", "then a second part, ", "a third, ", "a fourth ", "and an end."];

/** Every kill point, in turn order. */
export const KILL_POINTS: readonly KillPoint[] = ["turn.start", "input.persisted", "message.delta", "approval.requested", "tool.running", "run.finished"];

/** `[kind, text, partial]` of one history entry, its parts joined. */
export type Entry = [string, string, boolean];

/** The interruption notice a torn turn shows (docs/storage.md, Torn tails). */
export const INTERRUPTED = "The turn was interrupted before it finished.";

const FIRST = { prompt: "Say something first.", answer: "A first, complete answer." };
const KILLED_PROMPT = "Now the turn that dies.";
const LAST = { prompt: "Are you still there after the crash?", answer: "Yes: the session survived the crash." };
/** Longer than any configured secret, so the redactor releases it as a delta before the gate. */
const HELD = "A partial answer that is long enough to pass the redaction hold-back. ";

/** Pages the whole history of `revision`. */
export async function pagedHistory(client: WireClient, sessionId: string, revision: string): Promise<{ entries: Entry[]; complete: boolean }> {
  type Part = { message_id: string; kind: string; text: string; partial: boolean; part: number };
  const parts: Part[] = [];
  let cursor: string | null = null;
  let complete = false;
  for (let pages = 0; pages < 100; pages++) {
    const page = await client.ok("history.page", { session_id: sessionId, revision, cursor });
    parts.push(...(page.entries as Part[]));
    cursor = page.next_cursor as string | null;
    complete = page.complete as boolean;
    if (cursor === null) break;
  }
  const entries: Entry[] = [];
  let previous: string | null = null;
  for (const part of parts) {
    if (part.message_id === previous && part.part > 0) entries.at(-1)![1] += part.text;
    else entries.push([part.kind, part.text, part.partial]);
    previous = part.message_id;
  }
  return { entries, complete };
}

/** Lease files left in `home`'s sessions directory. */
export function leaseFiles(home: string): string[] {
  const sessions = join(home, "sessions");
  return existsSync(sessions) ? readdirSync(sessions).filter((name) => name.endsWith(".lease")) : [];
}

/** What the killed turn's provider script is able to produce, and how the test reaches the kill point. */
interface Plan {
  /** The killed turn's provider reply. */
  readonly script: Script;
  /** Assistant texts the provider sends before it holds (or ends), one per segment. */
  readonly produced: readonly string[];
  readonly gate: Gate | null;
  /** The file the shell command waits for; created after the kill so the orphaned command ends. */
  readonly release: string | null;
}

function plan(point: At, ws: Workspace): Plan {
  const gate = new Gate();
  if (typeof point === "number") return { script: reply("openai-chat", { text: RACING_DELTAS }), produced: [RACING_DELTAS.join("")], gate: null, release: null };
  switch (point) {
    case "approval.requested":
      return {
        script: reply("openai-chat", { text: ["Writing it."], calls: [{ id: "call_w", name: "write_file", args: { path: "never.txt", content: "no\n" } }] }),
        produced: ["Writing it."], gate: null, release: null };
    case "tool.running": {
      const release = join(ws.cwd, "release-the-command");
      const command = `while [ ! -e ${release} ]; do sleep 0.05; done; echo released`;
      return { script: reply("openai-chat", { text: ["Running it."], calls: [{ id: "call_s", name: "shell", args: { command } }] }), produced: ["Running it."], gate: null, release };
    }
    case "run.finished":
      return { script: reply("openai-chat", { text: [HELD, "and its end."] }), produced: [HELD + "and its end."], gate: null, release: null };
    default:
      return { script: reply("openai-chat", { text: [HELD, "never sent"], gates: new Map([[0, gate]]) }), produced: [HELD], gate, release: null };
  }
}

/** The text of the last user message a chat request carries. */
function lastUserText(request: LoggedRequest): string {
  const messages = (request.body as { messages?: { role: string; content: unknown }[] } | null)?.messages ?? [];
  return String(messages.findLast((message) => message.role === "user")?.content ?? "");
}

/**
 * Answers each request by the prompt of its turn: a child killed before it sent its request leaves no
 * script queued for the next child.
 */
function answerByPrompt(provider: FakeProvider, scripts: ReadonlyMap<string, Script>): void {
  provider.handler = (request) => scripts.get(lastUserText(request)) ?? { status: 599, body: "no script for this prompt" };
}

/** Drives the killed turn until `point`; resolves once the kill point's event has arrived. */
async function reach(point: At, client: WireClient, runId: string, gate: Gate | null): Promise<void> {
  if (typeof point === "number") {
    let count = 0;
    await client.waitFor((frame) => frame.data?.run_id === runId && frame.type === "event" && (++count >= point || frame.event === "run.finished"), `event ${point}`);
    return;
  }
  switch (point) {
    case "turn.start":
      return;
    case "message.delta":
      await guarded(gate!.whenReached(), "the provider stream reaching its gate");
      await client.event(runId, "message.delta");
      return;
    case "tool.running": {
      const approval = (await client.event(runId, "approval.requested")).data!;
      client.send("approval.answer", { session_id: approval.session_id, run_id: runId, approval_id: approval.approval_id, allow: true });
      await client.waitFor((frame) => frame.event === "activity" && frame.data?.run_id === runId && frame.data?.state === "started", "the shell activity starting");
      return;
    }
    default:
      await client.event(runId, point);
  }
}

/** What the client had seen of the killed run when it died. */
interface Seen {
  readonly events: readonly WireFrame[];
  readonly acknowledged: boolean;
  readonly finished: boolean;
}

/**
 * Checks the reopened history: the first turn exactly; of the killed turn, no acknowledged input lost
 * and nothing that was not produced (assistant text a prefix of what the provider sent and equal to a
 * reconciled text the client saw, activity summaries the client saw), an unfinished turn closed by the
 * partial interruption notice.
 */
export function checkHistory(entries: readonly Entry[], complete: boolean, seen: Seen, produced: readonly string[], racing = false): void {
  const describe = JSON.stringify(entries);
  assert.deepEqual(entries.slice(0, 2), [["user", FIRST.prompt, false], ["assistant", FIRST.answer, false]], `the completed turn survives: ${describe}`);
  const rest = entries.slice(2);
  if (seen.acknowledged) assert.ok(rest.length > 0, `the acknowledged input is kept: ${describe}`);
  if (rest.length === 0) return assert.equal(complete, true);
  assert.deepEqual(rest[0], ["user", KILLED_PROMPT, false], `the killed turn starts with its input: ${describe}`);
  const reconciled = reconciledTexts(seen.events).map((message) => (message.complete ? message.text : null));
  const activities = seen.events.filter((frame) => frame.event === "activity").map((frame) => frame.data!.summary);
  let segment = 0;
  for (const [index, [kind, text, partial]] of rest.slice(1).entries()) {
    if (kind === "assistant") {
      const source = produced[segment];
      assert.ok(source !== undefined && source.startsWith(text), `assistant text ${JSON.stringify(text)} was produced: ${describe}`);
      const shown = reconciled[segment++];
      if (shown != null) assert.equal(text, shown, `the stored reply is the one the client saw reconciled: ${describe}`);
      if (!partial) assert.equal(text, source, `only a whole reply is stored as complete: ${describe}`);
    } else if (kind === "activity") {
      assert.ok(activities.includes(text), `activity ${JSON.stringify(text)} was shown to the client: ${describe}`);
    } else {
      assert.deepEqual([kind, text, partial], ["diagnostic", INTERRUPTED, true], `only the interruption notice: ${describe}`);
      assert.equal(index, rest.length - 2, `the notice ends the history: ${describe}`);
    }
  }
  if (seen.finished || (racing && complete)) {
    // A racing child may have finished the turn on disk before the client saw run.finished.
    assert.equal(complete, true, `a finished turn reopens complete: ${describe}`);
    assert.deepEqual(rest.slice(1), produced.map((text) => ["assistant", text, false]), `exactly what was produced: ${describe}`);
  } else {
    assert.equal(complete, false, `an interrupted turn never reopens complete: ${describe}`);
    assert.deepEqual(rest.at(-1), ["diagnostic", INTERRUPTED, true], `the interruption is shown: ${describe}`);
  }
}

/** Whether the workspace effect of the killed turn is what was allowed: a pending approval writes nothing. */
function checkWorkspace(point: At, ws: Workspace): void {
  if (point === "approval.requested") assert.equal(existsSync(join(ws.cwd, "never.txt")), false, "an unanswered write never ran");
}

/** Runs one crash at `point` under `launcher`, then the reopen, the checks and a new turn in a fresh child. */
export async function crashAndRecover(launcher: Launcher, point: At, provider: FakeProvider, ws: Workspace): Promise<void> {
  const clients: WireClient[] = [];
  let held: Plan | null = null;
  try {
    const doomed = new WireClient(launcher, ws.cwd, ws.env);
    clients.push(doomed);
    await doomed.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
    const sessionId = (await doomed.ok("session.create")).session_id as string;
    held = plan(point, ws);
    answerByPrompt(provider, new Map([
      [FIRST.prompt, reply("openai-chat", { text: [FIRST.answer] })],
      [KILLED_PROMPT, held.script],
      [LAST.prompt, reply("openai-chat", { text: [LAST.answer] })],
    ]));
    const first = (await doomed.ok("turn.start", { session_id: sessionId, prompt: FIRST.prompt })).run_id as string;
    assert.equal((await doomed.event(first, "run.finished")).data!.outcome, "completed");

    const runId = (await doomed.ok("turn.start", { session_id: sessionId, prompt: KILLED_PROMPT })).run_id as string;
    await reach(point, doomed, runId, held.gate);
    assert.equal(await doomed.kill("SIGKILL"), null, "the child died of the signal");
    const events = doomed.eventsOf(runId);
    const seen: Seen = {
      events,
      acknowledged: events.some((frame) => frame.event === "input.persisted" && frame.data!.durable === true),
      finished: events.some((frame) => frame.event === "run.finished"),
    };
    if (point !== "turn.start") assert.ok(seen.acknowledged, "every kill point after turn.start follows input.persisted");
    assert.ok(leaseFiles(ws.home).includes(`${sessionId}.writer.lease`), "the dead child left its writer lease behind");
    checkWorkspace(point, ws);

    const fresh = new WireClient(launcher, ws.cwd, ws.env);
    clients.push(fresh);
    await fresh.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
    const opened = await fresh.ok("session.open", { session_id: sessionId });
    assert.equal(opened.durable, true);
    const reopened = await pagedHistory(fresh, sessionId, opened.revision as string);
    checkHistory(reopened.entries, reopened.complete, seen, held.produced, typeof point === "number");

    const last = (await fresh.ok("turn.start", { session_id: sessionId, prompt: LAST.prompt })).run_id as string;
    const finished = (await fresh.event(last, "run.finished")).data!;
    assert.deepEqual([finished.outcome, finished.persistence, finished.error_code], ["completed", "durable", null]);
    const after = await pagedHistory(fresh, sessionId, finished.revision as string);
    assert.deepEqual(after.entries, [...reopened.entries, ["user", LAST.prompt, false], ["assistant", LAST.answer, false]]);
    assert.equal((await fresh.shutdown()).code, 0);
    assert.deepEqual(leaseFiles(ws.home), [], "the fresh child took over and released every lease");
  } finally {
    held?.gate?.release();
    if (held?.release) writeFileSync(held.release, "");
    for (const client of clients) client.abandon();
  }
}
