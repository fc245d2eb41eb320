/**
 * MCP tools in turns: a server on the in-memory runtime whose subprocesses
 * and HTTP are the real runtime's (Node, and Deno under Deno), a scripted
 * loopback provider that calls an MCP tool, and real MCP servers
 * (`server-everything` over stdio and Streamable HTTP, `server-filesystem`,
 * our fault server). The call goes through the same approval path as a
 * built-in tool; its result is in the provider's next request; activity and
 * history entries show what ran, never the result.
 */

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { Runtime } from "../src/host/runtime.ts";
import type { McpServerDefinition } from "../src/mcp/definition.ts";
import { ARGUMENTS_TOO_LONG } from "../src/mcp/mcp-tool.ts";
import type { Frame } from "./support/harness.ts";
import { eventually } from "./support/hang-guard.ts";
import { everythingStdio, faultServer, filesystemStdio, isRunning, httpServer, startEverythingHttp } from "./support/mcp-servers.ts";
import { reply } from "./support/provider-scripts.ts";
import { spawningRuntimes } from "./support/tools.ts";
import { closedAfterAll, nextEvent, request, runEvents, startTurn, startTurnServer, stopTurnServer, type TurnServer } from "./support/turns.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-mcp-turns-")));
after(() => rmSync(root, { recursive: true, force: true }));

type ChatMessage = { role: string; content: string | null; tool_call_id?: string };
type ChatTool = { function: { name: string; parameters: Record<string, unknown> } };

/** The chat body of the provider's `index`-th request. */
function sent(server: TurnServer, index: number): { messages: ChatMessage[]; tools?: ChatTool[] } {
  return server.provider.log[index]!.body as { messages: ChatMessage[]; tools?: ChatTool[] };
}

/** The tool result message answering `callId` in the provider's `index`-th request. */
function toolResult(server: TurnServer, index: number, callId: string): string {
  const message = sent(server, index).messages.find((entry) => entry.role === "tool" && entry.tool_call_id === callId);
  assert.ok(message, `request ${index} carries the result of ${callId}`);
  return message.content ?? "";
}

function activities(events: readonly Frame[]): { name: string; state: string; summary: string }[] {
  return events.filter((frame) => frame.event === "activity").map((frame) => frame.data as { name: string; state: string; summary: string });
}

function diagnostics(events: readonly Frame[]): string[] {
  return events.filter((frame) => frame.event === "diagnostic").map((frame) => (frame.data as { code: string }).code);
}

const started = closedAfterAll();

async function startWith(runtime: Runtime, definitions: McpServerDefinition[], settings: Record<string, unknown> = {}): Promise<TurnServer> {
  const server = await startTurnServer("openai-chat", {
    processes: runtime,
    fetch: runtime.fetch,
    env: { PATH: process.env.PATH ?? "" },
    mcpServers: () => Promise.resolve(definitions),
    settings,
  });
  started.push(server);
  return server;
}

for (const [runtimeName, runtime] of spawningRuntimes()) {
  describe(`MCP tools in turns on ${runtimeName}`, () => {
    it("an approved call reaches server-everything; its result is in the next request; activity and history name server and tool", async () => {
      const server = await startWith(runtime, [everythingStdio("everything", root)]);
      const args = { message: "hi from the model" };
      server.provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", name: "mcp__everything__echo", args }] }));
      server.provider.enqueue(reply("openai-chat", { text: ["It echoed."] }));
      const { sessionId, runId } = await startTurn(server, "Echo something");
      const approval = (await nextEvent(server, runId, "approval.requested")).data as { approval_id: string; summary: string };
      assert.equal(approval.summary, 'Call MCP tool "echo" of server "everything" with arguments {"message":"hi from the model"}');
      await request(server, "allow", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: approval.approval_id, allow: true });
      const events = await runEvents(server, runId);
      const finished = events.at(-1)!.data as { outcome: string; revision: string };
      assert.equal(finished.outcome, "completed");

      const tools = sent(server, 0).tools!.map((tool) => tool.function);
      const echo = tools.find((tool) => tool.name === "mcp__everything__echo");
      assert.ok(echo, tools.map((tool) => tool.name).join(", "));
      assert.equal(echo.parameters.type, "object");
      assert.ok(tools.some((tool) => tool.name === "read_file"), "built-in tools are still offered");
      assert.match(toolResult(server, 1, "call_1"), /hi from the model/);

      const states = activities(events);
      assert.deepEqual(states.map((entry) => [entry.name, entry.state]), [["mcp__everything__echo", "started"], ["mcp__everything__echo", "completed"]]);
      assert.equal(states[0]!.summary, 'MCP server "everything", tool "echo"');
      assert.match(states[1]!.summary, /^everything "echo": completed \(\d+ bytes of text\)$/);
      for (const entry of states) assert.doesNotMatch(entry.summary, /hi from the model/, "no arguments or result in activity summaries");

      const page = await request(server, "page", "history.page", { session_id: sessionId, revision: finished.revision });
      const entries = (page.result as { entries: { kind: string; text: string }[] }).entries;
      const shown = entries.filter((entry) => entry.kind === "activity").map((entry) => entry.text);
      assert.ok(shown.some((text) => /everything "echo": completed/.test(text)), shown.join(" | "));
      assert.ok(entries.every((entry) => !/Echo: hi from the model/.test(entry.text)), "the result is not in history");
      assert.equal(await stopTurnServer(server), 0);
    });

    it("a denied call never reaches the server; the model is told it was denied", async () => {
      const record = join(root, `denied-${runtimeName}.txt`);
      const server = await startWith(runtime, [faultServer("fault", "well", root, record)]);
      server.provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", name: "mcp__fault__echo", args: { text: "no" } }] }));
      server.provider.enqueue(reply("openai-chat", { text: ["Understood."] }));
      const { sessionId, runId } = await startTurn(server, "Try it");
      const approval = (await nextEvent(server, runId, "approval.requested")).data as { approval_id: string };
      await request(server, "deny", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: approval.approval_id, allow: false });
      const events = await runEvents(server, runId);
      assert.equal((events.at(-1)!.data as { outcome: string }).outcome, "completed");
      assert.equal(toolResult(server, 1, "call_1"), "The user denied this tool call.");
      assert.deepEqual(activities(events).map((entry) => entry.state), ["failed"]);
      assert.ok(!readFileSync(record, "utf8").includes("tools/call"), "the server never saw the call");
      assert.equal(await stopTurnServer(server), 0);
    });

    it("the server's tool policies apply, and the top-level tools map does not", async () => {
      const directory = realpathSync(mkdtempSync(join(root, "fs-")));
      writeFileSync(join(directory, "plan.md"), "step one\n");
      const server = await startWith(
        runtime,
        [filesystemStdio("files", directory, { toolPolicies: { read_text_file: "allow", write_file: "deny" } })],
        { tools: { "mcp__files__list_directory": "allow" } },
      );
      server.provider.enqueue(reply("openai-chat", {
        calls: [
          { id: "call_1", name: "mcp__files__read_text_file", args: { path: join(directory, "plan.md") } },
          { id: "call_2", name: "mcp__files__write_file", args: { path: join(directory, "x.md"), content: "x" } },
          { id: "call_3", name: "mcp__files__list_directory", args: { path: directory } },
        ],
      }));
      server.provider.enqueue(reply("openai-chat", { text: ["Read it."] }));
      const { sessionId, runId } = await startTurn(server, "Read the plan");
      // Only list_directory asks: its server policy is the default, whatever the top-level map says.
      const approval = (await nextEvent(server, runId, "approval.requested")).data as { approval_id: string; summary: string };
      assert.match(approval.summary, /^Call MCP tool "list_directory" of server "files"/);
      await request(server, "deny", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: approval.approval_id, allow: false });
      const events = await runEvents(server, runId);
      assert.equal(events.filter((frame) => frame.event === "approval.requested").length, 1);
      assert.match(toolResult(server, 1, "call_1"), /step one/);
      assert.match(toolResult(server, 1, "call_2"), /denied by the user's settings/);
      assert.equal(existsSync(join(directory, "x.md")), false);
      assert.equal(await stopTurnServer(server), 0);
    });

    it("arguments too long to show whole are refused without asking", async () => {
      const server = await startWith(runtime, [faultServer("fault", "well", root)]);
      server.provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", name: "mcp__fault__echo", args: { text: "z".repeat(2000) } }] }));
      server.provider.enqueue(reply("openai-chat", { text: ["Too long."] }));
      const { runId } = await startTurn(server, "Echo a lot");
      const events = await runEvents(server, runId);
      assert.equal(events.filter((frame) => frame.event === "approval.requested").length, 0);
      assert.equal(toolResult(server, 1, "call_1"), ARGUMENTS_TOO_LONG);
      assert.deepEqual(activities(events).map((entry) => entry.state), ["failed"]);
      assert.equal(await stopTurnServer(server), 0);
    });

    it("Streamable HTTP: an allowed call to server-everything runs without asking", async () => {
      const http = await startEverythingHttp();
      try {
        const server = await startWith(runtime, [httpServer("remote", http.url, { toolPolicies: { echo: "allow" } })]);
        server.provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", name: "mcp__remote__echo", args: { message: "via http" } }] }));
        server.provider.enqueue(reply("openai-chat", { text: ["Done."] }));
        const { runId } = await startTurn(server, "Echo over http");
        const events = await runEvents(server, runId);
        assert.equal(events.filter((frame) => frame.event === "approval.requested").length, 0);
        assert.match(toolResult(server, 1, "call_1"), /via http/);
        assert.equal(await stopTurnServer(server), 0);
      } finally {
        await http.stop();
      }
    });

    it("a server dying mid-call fails the call, one diagnostic says so, and later requests no longer offer its tools", async () => {
      const record = join(root, `dying-${runtimeName}.txt`);
      const server = await startWith(runtime, [faultServer("fragile", "well", root, record, { toolPolicies: { crash: "allow" } })]);
      server.provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", name: "mcp__fragile__crash", args: {} }] }));
      server.provider.enqueue(reply("openai-chat", { text: ["It crashed."] }));
      const first = await startTurn(server, "Crash it");
      const events = await runEvents(server, first.runId);
      assert.equal((events.at(-1)!.data as { outcome: string }).outcome, "completed");
      assert.deepEqual(diagnostics(events), ["mcp_server_stopped"]);
      assert.match(toolResult(server, 1, "call_1"), /has stopped/);
      assert.ok(!sent(server, 1).tools!.some((tool) => tool.function.name.startsWith("mcp__fragile__")));
      server.provider.enqueue(reply("openai-chat", { text: ["Still here."] }));
      const second = await startTurn(server, "Again", first.sessionId);
      assert.deepEqual(diagnostics(await runEvents(server, second.runId)), [], "reported once");
      assert.equal(await stopTurnServer(server), 0);
    });

    it("a server that died between runs is reported once, at the start of the next run", async () => {
      const record = join(root, `between-${runtimeName}.txt`);
      const server = await startWith(runtime, [faultServer("fragile", "well", root, record)]);
      server.provider.enqueue(reply("openai-chat", { text: ["Hello."] }));
      const first = await startTurn(server, "Hello");
      await runEvents(server, first.runId);
      const pid = Number(readFileSync(record, "utf8").split("\n")[0]!.slice(4));
      process.kill(pid, "SIGKILL");
      // Dead and reaped by the runtime (a zombie still counts as alive there).
      await eventually(() => !isRunning(pid) && !runtime.isProcessAlive(pid), "the server to die");
      server.provider.enqueue(reply("openai-chat", { text: ["Hello again."] }));
      const second = await startTurn(server, "Hello again", first.sessionId);
      const events = await runEvents(server, second.runId);
      assert.deepEqual(diagnostics(events), ["mcp_server_stopped"]);
      assert.ok(events.findIndex((frame) => frame.event === "diagnostic") < events.findIndex((frame) => frame.event === "message.reconcile"));
      assert.ok(!sent(server, 1).tools!.some((tool) => tool.function.name.startsWith("mcp__fragile__")));
      assert.equal(await stopTurnServer(server), 0);
    });

    it("turn.cancel during a call cancels it on the server (notifications/cancelled) and the run ends cancelled", async () => {
      const record = join(root, `cancel-${runtimeName}.txt`);
      const server = await startWith(runtime, [faultServer("slowpoke", "well", root, record, { toolPolicies: { slow: "allow" } })]);
      server.provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", name: "mcp__slowpoke__slow", args: {} }] }));
      const { sessionId, runId } = await startTurn(server, "Be slow");
      await eventually(() => existsSync(record) && readFileSync(record, "utf8").includes("tools/call"), "the call to reach the server");
      await request(server, "cancel", "turn.cancel", { session_id: sessionId, run_id: runId });
      const events = await runEvents(server, runId);
      assert.equal((events.at(-1)!.data as { outcome: string }).outcome, "cancelled");
      await eventually(() => readFileSync(record, "utf8").includes("notifications/cancelled"), "the cancellation to reach the server");
      assert.equal(await stopTurnServer(server), 0);
    });

    it("a secret of the server's definition (an env value) is redacted from the next provider request, message.delta and history", async () => {
      // Not credential-shaped, so only the known-secrets list can catch it.
      const secret = "plain tangerine hunter";
      const server = await startWith(runtime, [faultServer("leaky", "well", root, undefined, { env: { SECRET: secret }, toolPolicies: { env: "allow" } })]);
      server.provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", name: "mcp__leaky__env", args: { name: "SECRET" } }] }));
      server.provider.enqueue(reply("openai-chat", { text: [`The value is ${secret}.`] }));
      const { sessionId, runId } = await startTurn(server, "Show me SECRET");
      const events = await runEvents(server, runId);
      const finished = events.at(-1)!.data as { outcome: string; revision: string };
      assert.equal(finished.outcome, "completed");
      assert.equal(toolResult(server, 1, "call_1"), "value: [redacted]");
      const deltas = events.filter((frame) => frame.event === "message.delta").map((frame) => (frame.data as { text: string }).text).join("");
      assert.equal(deltas, "The value is [redacted].");
      const page = await request(server, "page", "history.page", { session_id: sessionId, revision: finished.revision });
      assert.match(JSON.stringify(page.result), /The value is \[redacted\]/);
      assert.ok(!JSON.stringify(server.frames()).includes(secret), "nothing on stdout carries the secret");
      assert.ok(!JSON.stringify(server.provider.log).includes(secret), "no provider request carries the secret");
      assert.equal(await stopTurnServer(server), 0);
    });

    it("notifications/tools/list_changed: the next model request offers the new list", async () => {
      const server = await startWith(runtime, [faultServer("growing", "well", root, undefined, { toolPolicies: { grow: "allow" } })]);
      server.provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", name: "mcp__growing__grow", args: {} }] }));
      server.provider.enqueue(reply("openai-chat", { text: ["Grown."] }));
      const { runId } = await startTurn(server, "Grow");
      await runEvents(server, runId);
      const names = (index: number) => sent(server, index).tools!.map((tool) => tool.function.name);
      assert.ok(!names(0).includes("mcp__growing__grown"));
      assert.ok(names(1).includes("mcp__growing__grown"), names(1).join(", "));
      assert.equal(await stopTurnServer(server), 0);
    });
  });
}
