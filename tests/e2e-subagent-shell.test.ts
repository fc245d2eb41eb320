// Stopping a turn while a subagent's own shell command runs, against the real
// entry over real pipes on each runtime. `turn.cancel`: the command's whole
// process group is gone before `run.finished` (outcome `cancelled`), the
// `subagent` activity ends `(cancelled)`, the child's history is closed with
// a `turn_finished` record, and the session takes a next turn and reopens in
// a fresh child. A SIGKILL of the backend: a fresh child reopens the
// delegating session (the started `subagent` activity, then the interruption
// notice), the child's history reads back, and the session takes a new turn;
// the command itself outlives a backend killed outright (documented), so the test ends it.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { createNodeRuntime } from "../runtime/node-runtime.ts";
import { loadAttachment } from "../src/store/attachment.ts";
import { startFakeProvider, type LoggedRequest, type Script } from "./support/fake-provider.ts";
import { eventually } from "./support/hang-guard.ts";
import { INTERRUPTED, pagedHistory } from "./support/kill-turns.ts";
import { isRunning } from "./support/mcp-servers.ts";
import { launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { WireClient, type Workspace, workspace } from "./support/wire-client.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-e2e-subagent-shell-")));
after(() => rmSync(root, { recursive: true, force: true }));

const API = "openai-chat";
const PROMPT = "Delegate the sleeper.";
// The shell and a grandchild in its process group, each writing its pid, then waiting far past any test.
const SLEEPER = "echo $$ > shell.pid; sleep 300 & echo $! > sleep.pid; wait";
type Messages = { messages: { role: string; content?: unknown }[] };
const isChild = (logged: LoggedRequest) => String((logged.body as Messages).messages[0]!.content).includes("You are a subagent");
const tools = (logged: LoggedRequest) => (logged.body as Messages).messages.filter((message) => message.role === "tool").length;
const lastPrompt = (logged: LoggedRequest) => String((logged.body as Messages).messages.findLast((message) => message.role === "user")?.content);

/** The delegating agent hands the sleeper to `general`, whose shell runs it; any later request is answered at once. */
function script(logged: LoggedRequest): Script {
  if (isChild(logged)) return reply(API, { calls: [{ id: "s", name: "shell", args: { command: SLEEPER } }] });
  if (tools(logged) === 0 && lastPrompt(logged) === PROMPT) {
    return reply(API, { calls: [{ id: "t", name: "task", args: { profile: "general", description: "Run the sleeper", prompt: "Run the sleeper." } }] });
  }
  return reply(API, { text: ["Still here."] });
}

/** The pids of the running command, once both are written. */
async function sleeperPids(ws: Workspace): Promise<number[]> {
  const files = ["shell.pid", "sleep.pid"].map((name) => join(ws.cwd, name));
  await eventually(() => files.every((file) => existsSync(file) && readFileSync(file, "utf8").endsWith("\n")), "the subagent's command wrote its pids");
  return files.map((file) => Number(readFileSync(file, "utf8").trim()));
}

/** The child's history file, read back as the store reads it, and its records as stored. */
async function childHistory(ws: Workspace): Promise<{ conversation: string[]; records: { type: string }[] }> {
  const subagents = join(ws.home, "sessions", "subagents");
  const [file] = readdirSync(subagents).filter((name) => name.endsWith(".jsonl"));
  assert.ok(file !== undefined, "the child's history exists");
  const context = { runtime: createNodeRuntime(), instanceId: "reader", cwd: ws.cwd, secrets: [], nextGeneration: () => 1 };
  const loaded = await loadAttachment(context, join(subagents, file), file.slice(0, -".jsonl".length), new AbortController().signal, true);
  assert.ok(loaded.ok, "the child's history reads back");
  const records = readFileSync(join(subagents, file), "utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as { type: string });
  return { conversation: loaded.attachment.conversation.map((record) => record.type), records };
}

/** A fresh child reopens the session, pages its history, and takes a next turn. */
async function reopen(ws: Workspace, launcher: ReturnType<typeof launchers>[number], sessionId: string, clients: WireClient[]): Promise<unknown[]> {
  const fresh = new WireClient(launcher, ws.cwd, ws.env);
  clients.push(fresh);
  await fresh.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
  const opened = await fresh.ok("session.open", { session_id: sessionId });
  const { entries } = await pagedHistory(fresh, sessionId, opened.revision as string);
  const next = (await fresh.ok("turn.start", { session_id: sessionId, prompt: "Are you there?" })).run_id as string;
  assert.equal((await fresh.event(next, "run.finished")).data!.outcome, "completed");
  assert.equal((await fresh.shutdown()).code, 0);
  return entries;
}

describe("stopping a turn while a subagent's shell command runs", () => {
  for (const launcher of launchers()) {
    it(`${launcher.name}: turn.cancel ends the command's whole group before run.finished, closes both histories, and the session goes on`, async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `cancel-${launcher.name}`, provider, { tools: { shell: "allow" } });
      const clients: WireClient[] = [];
      try {
        provider.handler = script;
        const client = new WireClient(launcher, ws.cwd, ws.env);
        clients.push(client);
        await client.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
        const sessionId = (await client.ok("session.create")).session_id as string;
        const runId = (await client.ok("turn.start", { session_id: sessionId, prompt: PROMPT })).run_id as string;
        const pids = await sleeperPids(ws);
        assert.deepEqual(await client.ok("turn.cancel", { session_id: sessionId, run_id: runId }), { cancellation_requested: true });
        const finished = await client.event(runId, "run.finished");
        assert.deepEqual(pids.filter(isRunning), [], "nothing of the command runs once run.finished is out");
        assert.equal(finished.data!.outcome, "cancelled");
        const activities = client.eventsOf(runId).filter((frame) => frame.event === "activity").map((frame) => [frame.data!.kind, frame.data!.state, frame.data!.summary]);
        assert.deepEqual(activities.filter(([kind]) => kind === "subagent"), [["subagent", "started", "Run the sleeper"], ["subagent", "failed", "Run the sleeper (cancelled)"]]);
        assert.deepEqual(activities.filter(([kind]) => kind === "tool").map(([, state]) => state), ["started", "failed"]);
        const child = await childHistory(ws);
        assert.equal(child.records.at(-1)!.type, "turn_finished", "the child's history is closed");
        assert.equal((await client.shutdown()).code, 0);
        const entries = await reopen(ws, launcher, sessionId, clients);
        assert.deepEqual(entries.slice(0, 2), [["user", PROMPT, false], ["activity", "Run the sleeper (cancelled)", false]]);
      } finally {
        for (const client of clients) client.abandon();
        await provider.close();
      }
    });

    it(`${launcher.name}: a SIGKILL of the backend while a subagent's command runs leaves both histories readable and the session reopens`, async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `kill-${launcher.name}`, provider, { tools: { shell: "allow" } });
      const clients: WireClient[] = [];
      try {
        provider.handler = script;
        const doomed = new WireClient(launcher, ws.cwd, ws.env);
        clients.push(doomed);
        await doomed.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
        const sessionId = (await doomed.ok("session.create")).session_id as string;
        await doomed.ok("turn.start", { session_id: sessionId, prompt: PROMPT });
        const pids = await sleeperPids(ws);
        assert.equal(await doomed.kill("SIGKILL"), null, "the backend died of the signal");
        // Nothing ends the command's group once its backend is killed outright (docs/features/runner.md, "Cancellation
        // and failures"): this test ends it itself.
        if (isRunning(pids[0]!)) process.kill(-pids[0]!, "SIGKILL");
        const child = await childHistory(ws);
        assert.deepEqual(child.conversation, ["user_input", "activity"], "its prompt and its started command, nothing it did not finish");
        const entries = await reopen(ws, launcher, sessionId, clients);
        assert.deepEqual(entries.slice(0, 3), [["user", PROMPT, false], ["activity", "Run the sleeper", true], ["diagnostic", INTERRUPTED, true]]);
      } finally {
        for (const client of clients) client.abandon();
        await provider.close();
      }
    });
  }
});
