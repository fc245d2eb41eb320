/**
 * The read-only built-in profiles (`plan`, `explore`) and the tools that are
 * not built in (docs/features/runner.md, "Built-in profiles"): a real
 * `server-everything` over stdio and a client tool, both allowed by
 * settings, are neither offered to the model nor run when it calls them
 * anyway: directly, from a Code Mode program (a real sandbox host), or from
 * an `explore` subagent. A global `plan.md` naming an MCP tool lets that one
 * tool through. A subagent whose ceiling denies `code` (through a `*`) is
 * not offered it.
 */

import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { Runtime } from "../src/host/runtime.ts";
import { BUILTIN_PROFILES } from "../src/config/agent-settings.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { Frame } from "./support/harness.ts";
import { startServer } from "./support/harness.ts";
import { type LoggedRequest, type Script, startFakeProvider } from "./support/fake-provider.ts";
import { everythingStdio, nodeCommand } from "./support/mcp-servers.ts";
import { repoRoot } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { spawningRuntimes } from "./support/tools.ts";
import { closedAfterAll, HOME, request, runEvents, startTurn, stopTurnServer, terminalData, TURN_CAPABILITIES, type TurnServer } from "./support/turns.ts";

const API = "openai-chat";
const ECHO = "mcp__everything__echo";
const EDITORS = "client__open_editors";
const EXPLORE = BUILTIN_PROFILES.get("explore")!.body;
const READER = "You read files for the task and report.";
const CLIENT_TOOL = { name: "open_editors", description: "The open files.", input_schema: { type: "object" }, timeout_ms: 60_000 };

type ChatMessage = { role: string; content?: unknown; tool_call_id?: string };
type Body = { messages: ChatMessage[]; tools?: { function: { name: string } }[] };
const bodyOf = (logged: LoggedRequest) => logged.body as Body;
const offered = (logged: LoggedRequest) => (bodyOf(logged).tools ?? []).map((tool) => tool.function.name);
const results = (logged: LoggedRequest) => bodyOf(logged).messages.filter((message) => message.role === "tool").map((message) => String(message.content));
const isExplore = (logged: LoggedRequest) => String(bodyOf(logged).messages[0]!.content).includes(EXPLORE);
const activities = (events: readonly Frame[]) =>
  events.filter((frame) => frame.event === "activity").map((frame) => (frame.data as { summary: string }).summary);

const started = closedAfterAll();
const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-readonly-tools-")));
after(() => rmSync(root, { recursive: true, force: true }));

/**
 * A server on the memory runtime whose subprocesses (the MCP server, the
 * Code Mode host) are `runtime`'s, with `server-everything` (its `echo`
 * allowed), the client tool `open_editors` (allowed) registered and Code
 * Mode on with both allowed for programs: whatever refuses them is the profile.
 */
async function startWith(runtime: Runtime, settings: Record<string, unknown>, fs = new MemoryFileSystem()): Promise<TurnServer> {
  const provider = await startFakeProvider();
  fs.writeFile(`${HOME}/settings.jsonc`, JSON.stringify({
    model: { provider: "ollama", model: "qwen" },
    providers: { endpoints: { ollama: { base_url: `${provider.url}/v1` } } },
    client_tools: { open_editors: "allow" },
    code_mode: { enabled: true, tools: { [ECHO]: "allow", [EDITORS]: "allow" } },
    ...settings,
    agent: { titles: { enabled: false }, ...settings.agent as Record<string, unknown> },
  }), 0o600);
  const run = startServer({
    fs,
    // A real directory: the Code Mode host and the MCP server are real processes started in it.
    cwd: root,
    processes: runtime,
    fetch: runtime.fetch,
    env: { HOME: "/home/user", PATH: process.env.PATH ?? "" },
    self: { command: nodeCommand(), args: [join(repoRoot(), "dist", "magi-code.mjs")] },
    mcpServers: () => Promise.resolve([everythingStdio("everything", root, { toolPolicies: { echo: "allow" } })]),
  });
  const server = { ...run, provider };
  started.push(server);
  const init = await request(run, "init", "initialize", { required_capabilities: [...TURN_CAPABILITIES, "client.tools"], client_tools: [CLIENT_TOOL] });
  assert.ok(init.result, JSON.stringify(init.error));
  return server;
}

const PROGRAM = [
  "const said = [];",
  `for (const call of [() => tools.${ECHO}({ message: 'hi' }), () => tools.${EDITORS}({})]) {`,
  "  try { said.push('ran: ' + JSON.stringify(await call())); } catch (error) { said.push('refused: ' + error.message); }",
  "}",
  "return said.join(' | ');",
].join("\n");

for (const [runtimeName, runtime] of spawningRuntimes()) {
  describe(`read-only profiles and external tools on ${runtimeName}`, () => {
    it("plan offers no MCP or client tool and refuses them called directly and from a Code Mode program", async () => {
      const server = await startWith(runtime, { agent: { primary: "plan" } });
      server.provider.enqueue(reply(API, {
        calls: [
          { id: "e", name: ECHO, args: { message: "hi" } },
          { id: "o", name: EDITORS, args: {} },
          { id: "c", name: "code", args: { source: PROGRAM } },
        ],
      }));
      server.provider.enqueue(reply(API, { text: ["Nothing ran."] }));
      const events = await runEvents(server, (await startTurn(server, "Echo and look")).runId);
      assert.equal(terminalData(events).outcome, "completed");
      const tools = offered(server.provider.log[0]!);
      assert.ok(tools.includes("read_file") && tools.includes("code"), tools.join(","));
      assert.deepEqual(tools.filter((name) => name.startsWith("mcp__") || name.startsWith("client__")), []);
      assert.deepEqual(events.filter((frame) => frame.event === "client.tool.call"), [], "the client was never asked to run its tool");
      assert.deepEqual(activities(events).filter((summary) => summary.includes("denied")), [
        `${ECHO} (denied by the plan profile)`,
        `${EDITORS} (denied by the plan profile)`,
        `Code Mode: ${ECHO} (denied by the plan profile)`,
        `Code Mode: ${EDITORS} (denied by the plan profile)`,
      ]);
      const [echo, editors, program] = results(server.provider.log[1]!);
      assert.match(echo!, /"plan" agent profile, which does not allow mcp__everything__echo/);
      assert.match(editors!, /"plan" agent profile, which does not allow client__open_editors/);
      assert.match(program!, /^The program returned:\nrefused: .*does not allow mcp__everything__echo.* \| refused: .*does not allow client__open_editors/);
      assert.equal(await stopTurnServer(server), 0);
    });

    it("an explore subagent is offered no MCP or client tool and its calls to them are refused naming explore", async () => {
      const server = await startWith(runtime, {});
      server.provider.handler = (logged): Script => {
        if (isExplore(logged)) {
          return results(logged).length === 0
            ? reply(API, { calls: [{ id: "e", name: ECHO, args: { message: "hi" } }, { id: "o", name: EDITORS, args: {} }] })
            : reply(API, { text: ["Could not."] });
        }
        return results(logged).length === 0
          ? reply(API, { calls: [{ id: "t", name: "task", args: { profile: "explore", description: "Look around", prompt: "Echo and look." } }] })
          : reply(API, { text: ["Done."] });
      };
      const events = await runEvents(server, (await startTurn(server, "Delegate")).runId);
      assert.equal(terminalData(events).outcome, "completed");
      const child = server.provider.log.filter(isExplore);
      assert.equal(child.length, 2);
      assert.deepEqual(offered(child[0]!).filter((name) => name.startsWith("mcp__") || name.startsWith("client__")), []);
      assert.ok(offered(server.provider.log[0]!).includes(ECHO), "build itself is offered the MCP tool");
      assert.deepEqual(events.filter((frame) => frame.event === "client.tool.call"), []);
      assert.deepEqual(activities(events).filter((summary) => summary.includes("denied")), [
        `[explore t1] ${ECHO} (denied by the explore profile)`,
        `[explore t1] ${EDITORS} (denied by the explore profile)`,
      ]);
      assert.equal(await stopTurnServer(server), 0);
    });

    it("a subagent whose ceiling denies code through its * is not offered code, only the tool it names", async () => {
      const fs = new MemoryFileSystem();
      fs.writeFile(`${HOME}/agents/reader.md`, `---\ndescription: Reads\nmode: subagent\ntools:\n  "*": deny\n  read_file: allow\n---\n${READER}\n`);
      const server = await startWith(runtime, {}, fs);
      const isReader = (logged: LoggedRequest) => String(bodyOf(logged).messages[0]!.content).includes(READER);
      server.provider.handler = (logged): Script => {
        if (isReader(logged)) return reply(API, { text: ["Read."] });
        return results(logged).length === 0
          ? reply(API, { calls: [{ id: "t", name: "task", args: { profile: "reader", description: "Read around", prompt: "Read." } }] })
          : reply(API, { text: ["Done."] });
      };
      const events = await runEvents(server, (await startTurn(server, "Delegate")).runId);
      assert.equal(terminalData(events).outcome, "completed");
      assert.ok(offered(server.provider.log[0]!).includes("code"), "build itself is offered code");
      const child = server.provider.log.filter(isReader);
      assert.equal(child.length, 1);
      // Its ceiling denies code like any other tool it does not name: offering it would only cost the subagent a step.
      assert.deepEqual(offered(child[0]!), ["read_file"]);
      assert.equal(await stopTurnServer(server), 0);
    });

    it("a global plan.md naming the MCP tool next to its * deny lets that tool run and nothing else", async () => {
      const fs = new MemoryFileSystem();
      fs.writeFile(`${HOME}/agents/plan.md`, `---\ndescription: Plans\nmode: primary\ntools:\n  "*": deny\n  read_file: allow\n  ${ECHO}: allow\n---\n`);
      const server = await startWith(runtime, { agent: { primary: "plan" } }, fs);
      server.provider.enqueue(reply(API, { calls: [{ id: "e", name: ECHO, args: { message: "hi" } }, { id: "o", name: EDITORS, args: {} }] }));
      server.provider.enqueue(reply(API, { text: ["Echoed."] }));
      const events = await runEvents(server, (await startTurn(server, "Echo")).runId);
      assert.equal(terminalData(events).outcome, "completed");
      assert.deepEqual(offered(server.provider.log[0]!).filter((name) => name.includes("__")), [ECHO]);
      const [echo, editors] = results(server.provider.log[1]!);
      assert.match(echo!, /Echo: hi/);
      assert.match(editors!, /"plan" agent profile, which does not allow client__open_editors/);
      assert.equal(await stopTurnServer(server), 0);
    });
  });
}
