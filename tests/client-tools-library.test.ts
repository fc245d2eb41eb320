/**
 * The client library's `client.tools` handler path end to end: `spawnAgent`
 * with handlers against the real child and a loopback provider. The
 * registry goes out in `initialize`, each call reaches its handler with the
 * validated arguments, the handler's answer (a string, an explicit failure,
 * a thrown error) is the tool's result in the provider's next request, and
 * a call that times out aborts its handler's signal; then the shipped
 * example lends its tool the same way.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { spawnAgent } from "../runtime/node-client.ts";
import type { ClientToolDefinition } from "../src/client/mod.ts";
import { startFakeProvider } from "./support/fake-provider.ts";
import { guarded } from "./support/hang-guard.ts";
import { collect, nodeBinary, repoRoot } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-client-tools-"));
after(() => rmSync(root, { recursive: true, force: true }));

const OBJECT = { type: "object", properties: {}, additionalProperties: false };

describe("AgentClient clientTools", () => {
  it("routes calls to handlers, sends their answers and aborts a handler whose call timed out", async () => {
    const provider = await startFakeProvider();
    const ws = workspace(root, "library", provider, { client_tools: { open_editors: "allow", lint: "allow", slow: "allow" } });
    provider.enqueue(reply("openai-chat", {
      text: ["Checking."],
      calls: [
        { id: "c1", name: "client__open_editors", args: {} },
        { id: "c2", name: "client__lint", args: { path: "a.ts" } },
        { id: "c3", name: "client__slow", args: {} },
      ],
    }));
    provider.enqueue(reply("openai-chat", { text: ["Done."] }));
    const seen: unknown[] = [];
    let slowSignal: AbortSignal | null = null;
    const tools: ClientToolDefinition[] = [
      { name: "open_editors", description: "Open files.", input_schema: OBJECT, handler: () => "src/a.ts" },
      {
        name: "lint",
        description: "Lint one file.",
        input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
        handler: (args) => {
          seen.push(args);
          throw new Error("linter crashed");
        },
      },
      {
        name: "slow",
        description: "Never answers in time.",
        input_schema: OBJECT,
        timeout_ms: 1_000,
        handler: (_, { signal }) => {
          slowSignal = signal;
          return new Promise((resolve) => signal.addEventListener("abort", () => resolve("too late")));
        },
      },
    ];
    const agent = spawnAgent({ cwd: ws.cwd, env: ws.env, clientTools: tools });
    try {
      const init = await agent.initialize(["session.create", "turn.start"]);
      assert.ok(init.capabilities.includes("client.tools"));
      assert.deepEqual(init.extensions?.["client.tools"]?.tools.map((tool) => tool.model_name), ["client__open_editors", "client__lint", "client__slow"]);
      const { session_id } = await agent.request("session.create", {});
      const run = await agent.startTurn(session_id, "Check my files.");
      assert.equal((await guarded(run.finished, "run.finished")).outcome, "completed");
      // The client's strict parser hands over null-prototype objects.
      assert.deepEqual(seen.map((args) => ({ ...(args as object) })), [{ path: "a.ts" }]);
      assert.equal((slowSignal as AbortSignal | null)?.aborted, true);
      const messages = (provider.log[1]!.body as { messages: { role: string; content: string }[] }).messages;
      assert.deepEqual(messages.filter((message) => message.role === "tool").map((message) => message.content), [
        "src/a.ts",
        "The client tool failed: linter crashed",
        "The client did not answer the tool call within 1000 ms.",
      ]);
      assert.equal(agent.failure, null);
      assert.equal(await agent.shutdown(), 0);
    } finally {
      await agent.close();
      await provider.close();
    }
  });

  it("refuses a registry the child would refuse before spawning anything", () => {
    assert.throws(() => spawnAgent({ clientTools: [{ name: "Bad-Name", description: "x", input_schema: OBJECT, handler: () => "" }] }), TypeError);
  });

  it("examples/client-tools.mjs lends its tool and prints the answer", async () => {
    const provider = await startFakeProvider();
    const ws = workspace(root, "example", provider, { client_tools: { open_editors: "allow" } });
    provider.enqueue(reply("openai-chat", { text: ["Looking."], calls: [{ id: "c1", name: "client__open_editors", args: {} }] }));
    provider.enqueue(reply("openai-chat", { text: ["You have README.md open."] }));
    try {
      const example = join(repoRoot(), "examples", "client-tools.mjs");
      // Spawned, not run synchronously: the fake provider answers from this process.
      const child = spawn(nodeBinary(), [example, "Which files are open?", "README.md"], { cwd: ws.cwd, env: ws.env });
      const [stdout, stderr] = [collect(child.stdout), collect(child.stderr)];
      const status = await guarded(new Promise<number | null>((resolve) => child.once("close", resolve)), "the example's exit");
      assert.equal(status, 0, await stderr);
      assert.equal(await stdout, "Looking.\n\nYou have README.md open.\n");
      const messages = (provider.log[1]!.body as { messages: { role: string; content: string }[] }).messages;
      assert.equal(messages.find((message) => message.role === "tool")?.content, "README.md");
    } finally {
      await provider.close();
    }
  });
});
