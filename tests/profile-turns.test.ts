// What the primary agent profile changes in a turn, over the protocol on the
// memory runtime against a loopback provider: the system prompt, the step
// bound, the tool policies (which a project cannot loosen), and the model a new
// session starts with (while a session's saved selection still wins on open).
import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { reply } from "./support/provider-scripts.ts";
import { CWD, HOME, nextEvent, request, runEvents, startTurn, startTurnServer, stopTurnServer, terminalData, type TurnServer } from "./support/turns.ts";
import { builtinsAt, CATALOG_CAPABILITIES, ok, seedCache, selectionOf, startCatalogServer, stopCatalogServer } from "./support/catalog.ts";
import { startFakeProvider } from "./support/fake-provider.ts";
import { everythingStdio } from "./support/mcp-servers.ts";
import { sha256Hex } from "../src/util/digest.ts";
import { spawningRuntimes } from "./support/tools.ts";

const API = "openai-chat";
const profile = (frontmatter: string, body = "") => `---\n${frontmatter}\n---\n${body}`;

/** A memory filesystem holding profile files: `global` under `$MC_HOME/agents`, `project` under the cwd. */
function withProfiles(global: Record<string, string>, project: Record<string, string> = {}, projectSettings?: unknown): MemoryFileSystem {
  const fs = new MemoryFileSystem();
  for (const [name, text] of Object.entries(global)) fs.writeFile(`${HOME}/agents/${name}`, text);
  for (const [name, text] of Object.entries(project)) fs.writeFile(`${CWD}/.magi-code/agents/${name}`, text);
  if (projectSettings !== undefined) fs.writeFile(`${CWD}/.magi-code/settings.jsonc`, JSON.stringify(projectSettings));
  return fs;
}

/** The `context` of each `turn_started` record of a session. */
function turnContexts(server: TurnServer, sessionId: string): Record<string, unknown>[] {
  const text = new TextDecoder().decode(server.runtime.fs.contents(`${HOME}/sessions/${sessionId}.jsonl`));
  return text.trim().split("\n").map((line) => JSON.parse(line)).filter((record) => record.type === "turn_started").map((record) => record.context);
}

/** The messages of the provider request `index` (chat format). */
function sentMessages(server: TurnServer, index: number): { role: string; content?: unknown }[] {
  return (server.provider.log[index]!.body as { messages: { role: string; content?: unknown }[] }).messages;
}

describe("a turn under an agent profile", () => {
  it("the profile's body ends the system prompt, build adds nothing, and each turn records the profile and its files", async () => {
    const build = await startTurnServer(API);
    build.provider.enqueue(reply(API, { text: ["Hi."] }));
    const plainTurn = await startTurn(build, "Hello");
    await runEvents(build, plainTurn.runId);
    const plain = String(sentMessages(build, 0)[0]!.content);
    assert.doesNotMatch(plain, /agent profile/);
    assert.deepEqual(turnContexts(build, plainTurn.sessionId).map((context) => context.profile), [{ name: "build" }]);
    assert.equal(await stopTurnServer(build), 0);

    const text = profile("description: Reviews\nmode: primary", "\nReview, do not rewrite.\n");
    const fs = withProfiles({ "reviewer.md": text });
    const server = await startTurnServer(API, { fs, settings: { agent: { primary: "reviewer" } } });
    server.provider.enqueue(reply(API, { text: ["Hi."] }));
    const turn = await startTurn(server, "Hello");
    await runEvents(server, turn.runId);
    assert.equal(String(sentMessages(server, 0)[0]!.content), `${plain}\n\nThe "reviewer" agent profile this window runs as:\n\nReview, do not rewrite.`);
    const bytes = new TextEncoder().encode(text);
    assert.deepEqual(turnContexts(server, turn.sessionId).map((context) => context.profile), [
      { name: "reviewer", files: [{ path: `${HOME}/agents/reviewer.md`, sha256: await sha256Hex(bytes), bytes: bytes.length }] },
    ]);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("max_steps: the profile's bound stops the turn, and can only lower the settings' bound", async () => {
    for (const [settingsBound, profileBound, expected] of [[undefined, 2, 2], [1, 5, 1]] as const) {
      const fs = withProfiles({ "short.md": profile(`description: Short\nmode: primary\nmax_steps: ${profileBound}`) });
      const server = await startTurnServer(API, { fs, settings: { agent: { primary: "short", ...settingsBound === undefined ? {} : { max_steps: settingsBound } } } });
      server.runtime.fs.writeFile(`${CWD}/a.txt`, "a");
      server.provider.handler = () => reply(API, { calls: [{ id: `c${server.provider.log.length}`, name: "read_file", args: { path: "a.txt" } }] });
      const events = await runEvents(server, (await startTurn(server, "Loop")).runId);
      assert.equal(server.provider.log.length, expected);
      assert.equal((events.findLast((frame) => frame.event === "diagnostic")!.data as { code: string }).code, "step_limit");
      assert.equal(terminalData(events).outcome, "failed");
      assert.equal(await stopTurnServer(server), 0);
    }
  });

  it("a project cannot loosen: the profile it picks runs under the user's plan, and settings still apply", async () => {
    // The user runs plan and asks before grep; the project picks a profile of its own that allows everything.
    const fs = withProfiles({}, {
      "yolo.md": profile("description: Anything goes\nmode: primary\ntools:\n  shell: allow\n  write_file: allow\n  grep: allow"),
    }, { agent: { primary: "yolo" } });
    const server = await startTurnServer(API, { fs, settings: { agent: { primary: "plan" }, tools: { grep: "ask" } } });
    server.provider.enqueue(reply(API, {
      calls: [
        { id: "s", name: "shell", args: { command: "echo hi" } },
        { id: "w", name: "write_file", args: { path: "x.txt", content: "x" } },
        { id: "g", name: "grep", args: { pattern: "x" } },
      ],
    }));
    server.provider.enqueue(reply(API, { text: ["Done."] }));
    const { runId, sessionId } = await startTurn(server, "Do it");
    // grep still asks (settings): the profile's allow does not loosen it.
    const approval = (await nextEvent(server, runId, "approval.requested")).data as { approval_id: string; summary: string };
    assert.match(approval.summary, /^Search for "x"/);
    await request(server, "no", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: approval.approval_id, allow: false });
    const events = await runEvents(server, runId);
    const activities = events.filter((frame) => frame.event === "activity").map((frame) => (frame.data as { summary: string }).summary);
    assert.deepEqual(activities.slice(0, 2), ["shell (denied by the yolo profile)", "write_file (denied by the yolo profile)"]);
    assert.equal(server.runtime.fs.exists(`${CWD}/x.txt`), false);
    assert.equal(await stopTurnServer(server), 0);
  });
});

describe("a profile's tools and MCP tools", () => {
  for (const [runtimeName, runtime] of spawningRuntimes()) {
    it(`on ${runtimeName}: a profile entry by the exposed name tightens an MCP tool's server policy`, async () => {
      const fs = withProfiles({ "quiet.md": profile("description: No echo\nmode: primary\ntools:\n  mcp__everything__echo: deny") });
      const server = await startTurnServer(API, {
        fs,
        processes: runtime,
        fetch: runtime.fetch,
        env: { PATH: process.env.PATH ?? "" },
        mcpServers: () => Promise.resolve([everythingStdio("everything", tmpdir(), { toolPolicies: { echo: "allow" } })]),
        settings: { agent: { primary: "quiet" } },
      });
      server.provider.enqueue(reply(API, { calls: [{ id: "e", name: "mcp__everything__echo", args: { message: "hi" } }] }));
      server.provider.enqueue(reply(API, { text: ["No echo then."] }));
      const events = await runEvents(server, (await startTurn(server, "Echo")).runId);
      const activity = events.find((frame) => frame.event === "activity")!.data as { summary: string };
      assert.equal(activity.summary, "mcp__everything__echo (denied by the quiet profile)");
      assert.match(String(sentMessages(server, 1).find((message) => message.role === "tool")!.content), /"quiet" agent profile, which does not allow mcp__everything__echo/);
      assert.equal(await stopTurnServer(server), 0);
    });
  }
});

describe("a profile's model and effort", () => {
  it("are the new-session default at startup and on session.create; a session's saved selection wins on open", async () => {
    const provider = await startFakeProvider();
    const fs = withProfiles({ "thinker.md": profile("description: Thinks\nmode: primary\nmodel: deep\neffort: high") });
    const url = `${provider.url}/v1`;
    await seedCache(fs, "ollama", "openai-chat", url, [{ id: "qwen" }, { id: "deep", reasoning: true }]);
    await seedCache(fs, "openai", "openai-responses", url, [{ id: "gpt-5.2" }]);
    const settings = builtinsAt(provider, { agent: { primary: "thinker" }, providers: { catalog: { enabled: ["ollama/qwen", "ollama/deep", "openai/gpt-5.2"] } } });
    const first = await startCatalogServer({ provider, fs, settings, capabilities: CATALOG_CAPABILITIES });
    const pick = (selection: Record<string, unknown>) => [selection.provider, selection.model, selection.requested_effort];
    let session: string;
    try {
      assert.deepEqual(pick(await selectionOf(first)), ["ollama", "deep", "high"]);
      session = (await ok(first, "session.create")).session_id as string;
      assert.deepEqual(pick(await selectionOf(first)), ["ollama", "deep", "high"]);
      const catalog = (await ok(first, "model.catalog")).revision;
      await ok(first, "selection.set", {
        session_id: session,
        selection_revision: (await selectionOf(first)).revision,
        catalog_revision: catalog,
        provider: "openai",
        model: "gpt-5.2",
        effort: { mode: "default" },
      });
    } finally {
      await stopCatalogServer(first, false);
    }
    const second = await startCatalogServer({ provider, fs, settings, capabilities: CATALOG_CAPABILITIES });
    try {
      assert.deepEqual(pick(await selectionOf(second)), ["ollama", "deep", "high"]);
      await ok(second, "session.open", { session_id: session });
      assert.deepEqual(pick(await selectionOf(second)), ["openai", "gpt-5.2", "default"]);
      await ok(second, "session.create");
      assert.deepEqual(pick(await selectionOf(second)), ["ollama", "deep", "high"]);
    } finally {
      await stopCatalogServer(second);
    }
  });
});
