// Subagents over the protocol on the memory runtime against a scripted
// loopback provider: a primary turn delegates with the `task` tool, the child
// runs with its profile's prompt and only the tools its ceiling allows, its
// report comes back bound to the call that asked, the client sees one
// `subagent` activity and the child's tool activities named after it, and
// the child's history is its own file, which session listing never shows.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { reply } from "./support/provider-scripts.ts";
import { CWD, HOME, nextEvent, request, runEvents, startTurn, startTurnServer, stopTurnServer, terminalData, TURN_CAPABILITIES, type TurnServer } from "./support/turns.ts";
import { Gate, type LoggedRequest, type Script, startFakeProvider } from "./support/fake-provider.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { ManualClock } from "../runtime/memory.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { BUILTIN_PROFILES } from "../src/config/agent-settings.ts";
import type { Frame } from "./support/harness.ts";

const API = "openai-chat";
const EXPLORE = BUILTIN_PROFILES.get("explore")!.body;
const GENERAL = BUILTIN_PROFILES.get("general")!.body;

type ChatMessage = { role: string; content?: unknown; tool_call_id?: string; tool_calls?: { id: string }[] };
const messagesOf = (logged: LoggedRequest) => (logged.body as { messages: ChatMessage[] }).messages;
const toolsOf = (logged: LoggedRequest) => ((logged.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((tool) => tool.function.name);
const systemOf = (logged: LoggedRequest) => String(messagesOf(logged)[0]!.content);
/** Which agent sent a request: `explore`, `general`, or the primary. */
const agentOf = (logged: LoggedRequest) => systemOf(logged).includes(EXPLORE) ? "explore" : systemOf(logged).includes(GENERAL) ? "general" : "primary";
/** How many tool results a request carries: the step it is within its conversation, from 0. */
const resultsIn = (logged: LoggedRequest) => messagesOf(logged).filter((message) => message.role === "tool").length;

const task = (id: string, profile: string, description: string, prompt: string) => ({ id, name: "task", args: { profile, description, prompt } });

function activities(events: readonly Frame[]): { kind: string; name: string; state: string; summary: string; activity_id: string }[] {
  return events.filter((frame) => frame.event === "activity").map((frame) => frame.data as { kind: string; name: string; state: string; summary: string; activity_id: string });
}

/** The records of a JSONL file on the server's memory filesystem. */
function recordsOf(server: TurnServer, path: string): Record<string, unknown>[] {
  return new TextDecoder().decode(server.runtime.fs.contents(path)).trim().split("\n").map((line) => JSON.parse(line));
}

/** The child histories under `sessions/subagents/`. */
async function childFiles(server: TurnServer): Promise<string[]> {
  const dir = `${HOME}/sessions/subagents`;
  if (!server.runtime.fs.exists(dir)) return [];
  return (await server.runtime.fs.readDir(dir)).map((entry) => entry.name).filter((name) => name.endsWith(".jsonl")).sort().map((name) => `${dir}/${name}`);
}

describe("the task tool", () => {
  it("delegates to explore: the child gets the profile's prompt and only allowed tools, the report reaches the next request bound to its call", async () => {
    const server = await startTurnServer(API, { capabilities: [...TURN_CAPABILITIES, "session.list", "session.discover"] });
    server.runtime.fs.writeFile(`${CWD}/loader.ts`, "export const load = 1;\n");
    server.provider.handler = (logged): Script => {
      if (agentOf(logged) === "explore") {
        return resultsIn(logged) === 0
          ? reply(API, { text: ["Looking."], calls: [{ id: "r1", name: "read_file", args: { path: "loader.ts" } }] })
          : reply(API, { text: ["The loader is loader.ts."] });
      }
      return resultsIn(logged) === 0
        ? reply(API, { calls: [{ id: "read-first", name: "list_directory", args: { path: "." } }, task("t-call", "explore", "Find the loader", "Where is the loader defined?")] })
        : reply(API, { text: ["Found it."] });
    };
    const { sessionId, runId } = await startTurn(server, "Find the loader");
    const events = await runEvents(server, runId);
    assert.equal(terminalData(events).outcome, "completed");

    const log = server.provider.log;
    assert.deepEqual(log.map(agentOf), ["primary", "explore", "explore", "primary"]);
    assert.ok(toolsOf(log[0]!).includes("task"), "the primary is offered task");
    assert.deepEqual(toolsOf(log[1]!), ["read_file", "list_directory", "glob", "grep"], "explore is offered no tool it may not call, and no task");
    assert.ok(systemOf(log[1]!).endsWith(`The "explore" agent profile this window runs as:\n\n${EXPLORE}`));
    assert.deepEqual(messagesOf(log[1]!).slice(1), [{ role: "user", content: "Where is the loader defined?" }], "the child sees only the task's prompt");
    const results = messagesOf(log[3]!).filter((message) => message.role === "tool");
    assert.deepEqual(results.map((message) => [message.tool_call_id, message.content]).at(-1), ["t-call", "The loader is loader.ts."]);

    const shown = activities(events);
    const subagent = shown.filter((activity) => activity.kind === "subagent");
    assert.deepEqual(subagent.map(({ name, state, summary }) => [name, state, summary]), [
      ["explore", "started", "Find the loader"],
      ["explore", "completed", "Find the loader: The loader is loader.ts."],
    ]);
    const id = subagent[0]!.activity_id;
    const childTool = shown.filter((activity) => activity.kind === "tool" && activity.summary.startsWith(`[explore ${id}] `));
    assert.deepEqual(childTool.map((activity) => activity.state), ["started", "completed"]);
    // No child text on the wire: the parent's transcript shows the report as the task's result only.
    const texts = events.filter((frame) => frame.event === "message.delta" || frame.event === "message.reconcile").map((frame) => (frame.data as { text: string }).text).join("");
    assert.doesNotMatch(texts, /Looking|loader\.ts\./);

    const [child] = await childFiles(server);
    assert.ok(child !== undefined, "the child's history is a file of its own");
    const stored = recordsOf(server, child);
    assert.deepEqual(stored.map((record) => record.type), ["session", "turn_started", "user_input", "assistant_message", "activity", "activity", "assistant_message", "usage", "turn_finished"]);
    assert.equal((stored[1]!.context as { profile: { name: string } }).profile.name, "explore");
    // The delegating history links the child's, with the ceiling it ran under and the call it answered.
    const links = recordsOf(server, `${HOME}/sessions/${sessionId}.jsonl`).filter((record) => record.type === "subagent_link");
    assert.deepEqual(links.map(({ v, ignorable, activity_id, call_id, call_index, child, ceiling, ceiling_unnamed }) => ({ v, ignorable, activity_id, call_id, call_index, child, ceiling, ceiling_unnamed })), [{
      v: 3,
      ignorable: true,
      activity_id: id,
      call_id: "t-call",
      call_index: 1,
      child: { session_id: stored[0]!.session_id, profile: "explore" },
      // explore's allowlist: its `*` apart, which a reader of an earlier release of format 3 would refuse as a key.
      ceiling: {
        tools: Object.fromEntries(Object.entries(BUILTIN_PROFILES.get("explore")!.tools).filter(([tool]) => tool !== "*")),
        sources: Object.fromEntries(Object.keys(BUILTIN_PROFILES.get("explore")!.tools).filter((tool) => tool !== "*").map((tool) => [tool, "explore"])),
      },
      ceiling_unnamed: { policy: "deny", source: "explore" },
    }]);
    assert.equal(child, `${HOME}/sessions/subagents/${stored[0]!.session_id}.jsonl`);
    const listed = await request(server, "list", "session.list", { limit: 100 });
    assert.deepEqual((listed.result as { sessions: { session_id: string }[] }).sessions.map((entry) => entry.session_id), [sessionId]);
    const discovered = await request(server, "discover", "session.discover", { limit: 100 });
    assert.deepEqual((discovered.result as { sessions: { session_id: string }[] }).sessions.map((entry) => entry.session_id), [sessionId]);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a child's ask reaches the client as the parent run's approval, naming the subagent; deny, allow and a reused id", async () => {
    const server = await startTurnServer(API);
    server.provider.handler = (logged): Script => {
      if (agentOf(logged) === "general") {
        return resultsIn(logged) === 0
          ? reply(API, { calls: [{ id: "w1", name: "write_file", args: { path: "one.txt", content: "1" } }, { id: "w2", name: "write_file", args: { path: "two.txt", content: "2" } }] })
          : reply(API, { text: ["Wrote two.txt; one.txt was denied."] });
      }
      return resultsIn(logged) === 0 ? reply(API, { calls: [task("t", "general", "Write files", "Write one.txt and two.txt.")] }) : reply(API, { text: ["Done."] });
    };
    const { sessionId, runId } = await startTurn(server, "Write");
    const first = (await nextEvent(server, runId, "approval.requested")).data as { approval_id: string; summary: string; run_id: string };
    assert.equal(first.run_id, runId);
    assert.match(first.summary, /^\[general t1: Write files\] /);
    await request(server, "deny", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: first.approval_id, allow: false });
    const second = (await nextEvent(server, runId, "approval.requested", 1)).data as { approval_id: string; summary: string };
    // The first answer is spent: reusing its id approves nothing.
    const reused = await request(server, "reuse", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: first.approval_id, allow: true });
    assert.equal((reused.error as { code: string }).code, "stale_approval");
    await request(server, "allow", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: second.approval_id, allow: true });
    const events = await runEvents(server, runId);
    assert.equal(terminalData(events).outcome, "completed");
    assert.equal(server.runtime.fs.exists(`${CWD}/one.txt`), false);
    assert.equal(new TextDecoder().decode(server.runtime.fs.contents(`${CWD}/two.txt`)), "2");
    assert.equal(await stopTurnServer(server), 0);
  });

  it("two task calls of one step run at once, and each report comes back bound to its own call, in call order", async () => {
    const server = await startTurnServer(API);
    const held = new Gate();
    server.provider.handler = (logged): Script => {
      const prompt = String(messagesOf(logged)[1]?.content);
      if (agentOf(logged) === "explore") {
        // A's request is held until B's has arrived: B can only arrive while A is still running.
        return prompt === "Task A" ? reply(API, { text: ["Report ", "A"], gates: new Map([[0, held]]) }) : reply(API, { text: ["Report B"] });
      }
      return resultsIn(logged) === 0
        ? reply(API, { calls: [task("t-a", "explore", "First", "Task A"), task("t-b", "explore", "Second", "Task B")] })
        : reply(API, { text: ["Both done."] });
    };
    const { runId } = await startTurn(server, "Two at once");
    await server.provider.until(() => server.provider.log.some((logged) => String(messagesOf(logged)[1]?.content) === "Task B"));
    held.release();
    const events = await runEvents(server, runId);
    assert.equal(terminalData(events).outcome, "completed");
    const results = messagesOf(server.provider.log.at(-1)!).filter((message) => message.role === "tool").map((message) => [message.tool_call_id, message.content]);
    assert.deepEqual(results, [["t-a", "Report A"], ["t-b", "Report B"]]);
    const subagent = activities(events).filter((activity) => activity.kind === "subagent");
    assert.deepEqual(subagent.filter((activity) => activity.state === "started").map((activity) => [activity.activity_id, activity.summary]), [["t1", "First"], ["t2", "Second"]]);
    assert.equal((await childFiles(server)).length, 2);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("cancelling the run during a child's pending approval cancels the child before run.finished; its call never runs", async () => {
    const server = await startTurnServer(API);
    server.provider.handler = (logged): Script =>
      agentOf(logged) === "general"
        ? reply(API, { calls: [{ id: "w", name: "write_file", args: { path: "never.txt", content: "x" } }] })
        : reply(API, { calls: [task("t", "general", "Write", "Write never.txt.")] });
    const { sessionId, runId } = await startTurn(server, "Write");
    const approval = (await nextEvent(server, runId, "approval.requested")).data as { approval_id: string };
    await request(server, "cancel", "turn.cancel", { session_id: sessionId, run_id: runId });
    const events = await runEvents(server, runId);
    assert.equal(terminalData(events).outcome, "cancelled");
    const subagent = activities(events).filter((activity) => activity.kind === "subagent");
    assert.deepEqual(subagent.map((activity) => [activity.state, activity.summary]), [["started", "Write"], ["failed", "Write (cancelled)"]]);
    assert.equal(server.runtime.fs.exists(`${CWD}/never.txt`), false);
    const late = await request(server, "late", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: approval.approval_id, allow: true });
    assert.ok(late.error !== undefined, "nothing is left to approve");
    const [child] = await childFiles(server);
    assert.deepEqual(recordsOf(server, child!).at(-1), { ...recordsOf(server, child!).at(-1), type: "turn_finished", outcome: "cancelled", error_code: null });
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a child past its step bound fails its task, not the run; a child cannot delegate; a disabled profile is refused", async () => {
    const fs = new MemoryFileSystem();
    fs.writeFile(`${HOME}/agents/looper.md`, "---\ndescription: Loops\nmode: subagent\nmax_steps: 2\n---\nYou loop.\n");
    const server = await startTurnServer(API, { fs, settings: { agent: { disabled_subagents: ["general"] } } });
    server.runtime.fs.writeFile(`${CWD}/a.txt`, "a");
    server.provider.handler = (logged): Script => {
      if (systemOf(logged).includes("You loop.")) {
        return resultsIn(logged) === 0
          ? reply(API, { calls: [task("deeper", "explore", "Deeper", "Go deeper.")] })
          : reply(API, { calls: [{ id: `r${resultsIn(logged)}`, name: "read_file", args: { path: "a.txt" } }] });
      }
      return resultsIn(logged) === 0
        ? reply(API, { calls: [task("off", "general", "Disabled", "Anything."), task("loop", "looper", "Loop", "Loop forever.")] })
        : reply(API, { text: ["The subagent gave up."] });
    };
    const { runId } = await startTurn(server, "Loop");
    const events = await runEvents(server, runId);
    assert.equal(terminalData(events).outcome, "completed");
    const log = server.provider.log;
    const description = (log[0]!.body as { tools: { function: { name: string; description: string } }[] }).tools.find((tool) => tool.function.name === "task")!.function.description;
    assert.match(description, /- looper: Loops/);
    assert.doesNotMatch(description, /- general:/);
    assert.equal(log.filter((logged) => systemOf(logged).includes("You loop.")).length, 2, "the child's own bound: 2 requests");
    assert.ok(!toolsOf(log[1]!).includes("task"), "a child is offered no task");
    assert.equal(log.filter((logged) => agentOf(logged) === "explore").length, 0, "and its task call runs nothing");
    const childResults = messagesOf(log[2]!).filter((message) => message.role === "tool");
    assert.match(String(childResults[0]!.content), /There is no tool named "task"/);
    const results = messagesOf(log.at(-1)!).filter((message) => message.role === "tool").map((message) => ({ id: message.tool_call_id, text: String(message.content) }));
    assert.match(results[0]!.text, /^There is no subagent profile named "general"/);
    assert.equal(results[1]!.id, "loop");
    assert.match(results[1]!.text, /^The looper subagent failed: it reached its limit of 2 model requests/);
    const subagent = activities(events).filter((activity) => activity.kind === "subagent").map((activity) => [activity.name, activity.state]);
    assert.deepEqual(subagent, [["task", "failed"], ["looper", "started"], ["looper", "failed"]]);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a profile model not in providers.catalog.enabled fails its task with a clear result and sends nothing; an enabled one runs", async () => {
    const provider = await startFakeProvider();
    const fs = new MemoryFileSystem();
    fs.writeFile(`${HOME}/agents/pricey.md`, "---\ndescription: Pricey\nmode: subagent\nmodel: big-model\n---\nYou cost.\n");
    fs.writeFile(`${HOME}/agents/cheap.md`, "---\ndescription: Cheap\nmode: subagent\nmodel: small-model\n---\nYou save.\n");
    const providers = { endpoints: { ollama: { base_url: `${provider.url}/v1` } }, catalog: { enabled: ["ollama/qwen", "ollama/small-model"] } };
    const server = await startTurnServer(API, { fs, provider, settings: { providers } });
    server.provider.handler = (logged): Script => {
      if (systemOf(logged).includes("You save.")) return reply(API, { text: ["Saved."] });
      if (systemOf(logged).includes("You cost.")) return reply(API, { text: ["Spent."] });
      return resultsIn(logged) === 0
        ? reply(API, { calls: [task("big", "pricey", "Spend", "Spend."), task("small", "cheap", "Save", "Save.")] })
        : reply(API, { text: ["Done."] });
    };
    const { runId } = await startTurn(server, "Delegate");
    const events = await runEvents(server, runId);
    assert.equal(terminalData(events).outcome, "completed");
    const log = server.provider.log;
    const modelOf = (logged: LoggedRequest) => (logged.body as { model: string }).model;
    assert.ok(!log.some((logged) => modelOf(logged) === "big-model"), "no request ever names a model the user did not enable");
    assert.deepEqual(log.filter((logged) => systemOf(logged).includes("You save.")).map(modelOf), ["small-model"]);
    const results = messagesOf(log.at(-1)!).filter((message) => message.role === "tool").map((message) => ({ id: message.tool_call_id, text: String(message.content) }));
    assert.equal(results[0]!.id, "big");
    assert.match(results[0]!.text, /^The pricey subagent's model big-model is not enabled/);
    assert.deepEqual(results[1], { id: "small", text: "Saved." });
    const subagent = activities(events).filter((activity) => activity.kind === "subagent").map((activity) => [activity.name, activity.state]);
    assert.deepEqual(subagent.filter(([name]) => name === "pricey"), [["pricey", "failed"]]);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a child's approval left unanswered expires as the parent's would: denied, and the child is told nobody answered", async () => {
    const clock = new ManualClock();
    const server = await startTurnServer(API, { clock });
    server.provider.handler = (logged): Script => {
      if (agentOf(logged) === "general") {
        return resultsIn(logged) === 0 ? reply(API, { calls: [{ id: "w", name: "write_file", args: { path: "late.txt", content: "x" } }] }) : reply(API, { text: ["Nobody answered."] });
      }
      return resultsIn(logged) === 0 ? reply(API, { calls: [task("t", "general", "Write late", "Write late.txt.")] }) : reply(API, { text: ["Done."] });
    };
    const { runId } = await startTurn(server, "Write");
    const requested = (await nextEvent(server, runId, "approval.requested")).data as { expires_in_ms: number; summary: string };
    assert.equal(requested.expires_in_ms, LIMITS.approval_expiry_ms);
    assert.match(requested.summary, /^\[general t1: Write late\] /);
    clock.advance(LIMITS.approval_expiry_ms);
    const events = await runEvents(server, runId);
    assert.equal(terminalData(events).outcome, "completed");
    const expired = activities(events).find((activity) => activity.kind === "tool" && activity.state === "failed")!;
    assert.match(expired.summary, /^\[general t1\] .*\(approval expired\)$/);
    const childSecond = server.provider.log.find((logged) => agentOf(logged) === "general" && resultsIn(logged) === 1)!;
    assert.match(String(messagesOf(childSecond).find((message) => message.role === "tool")!.content), /^No one answered the approval request in time/);
    assert.equal(server.runtime.fs.exists(`${CWD}/late.txt`), false);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("with approval.scope, a session grant given the primary never answers a subagent's call, and a subagent's approval offers once only", async () => {
    const server = await startTurnServer(API, { capabilities: [...TURN_CAPABILITIES, "approval.scope"] });
    const write = (id: string) => reply(API, { calls: [{ id, name: "write_file", args: { path: "a.txt", content: id } }] });
    server.provider.handler = (logged): Script => {
      if (agentOf(logged) === "general") return resultsIn(logged) === 0 ? write("child") : reply(API, { text: ["Asked."] });
      const step = resultsIn(logged);
      return step === 0 ? write("parent") : step === 1 ? reply(API, { calls: [task("t", "general", "Write again", "Write a.txt.")] }) : reply(API, { text: ["Done."] });
    };
    const { sessionId, runId } = await startTurn(server, "Write");
    const first = (await nextEvent(server, runId, "approval.requested")).data as { approval_id: string; scopes: string[] };
    assert.deepEqual(first.scopes, ["once", "session"]);
    await request(server, "grant", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: first.approval_id, allow: true, scope: "session" });
    const child = (await nextEvent(server, runId, "approval.requested", 1)).data as { approval_id: string; summary: string; scopes: string[]; scope_key: string | null };
    assert.match(child.summary, /^\[general t2: Write again\] /);
    assert.deepEqual([child.scopes, child.scope_key], [["once"], null]);
    await request(server, "deny", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: child.approval_id, allow: false });
    const events = await runEvents(server, runId);
    assert.equal(terminalData(events).outcome, "completed");
    assert.equal(new TextDecoder().decode(server.runtime.fs.contents(`${CWD}/a.txt`)), "parent");
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a child's text counts against the run's content budget: past it the task fails, and the run goes on with what is left", async () => {
    const server = await startTurnServer(API);
    const piece = "x".repeat(65_536);
    const over = LIMITS.run_content_bytes / piece.length + 1;
    server.provider.handler = (logged): Script => {
      if (agentOf(logged) === "explore") return reply(API, { text: Array.from({ length: over }, () => piece) });
      return resultsIn(logged) === 0 ? reply(API, { calls: [task("t", "explore", "Read everything", "Print a lot.")] }) : reply(API, { text: ["Done."] });
    };
    const { runId } = await startTurn(server, "Flood");
    const events = await runEvents(server, runId);
    const failed = activities(events).find((activity) => activity.kind === "subagent" && activity.state === "failed")!;
    assert.equal(failed.summary, "Read everything: failed, the run's content budget ran out");
    const result = messagesOf(server.provider.log.at(-1)!).find((message) => message.role === "tool")!;
    assert.equal(result.content, "The explore subagent failed: the run's content budget ran out. It produced no report.");
    // The child stopped where the run's budget did, the delegating step's bytes counted; the run goes on with what is left.
    assert.equal(terminalData(events).outcome, "completed");
    assert.equal(await stopTurnServer(server), 0);
  });
});
