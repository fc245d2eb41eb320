/**
 * A client tool call whose arguments hold a credential never reaches the
 * client (docs/features/local-agent-client-tools.md, "Calls"): the arguments
 * would leave on stdout as they are, so the call is refused as an approval
 * prompt would refuse it, whatever the policy, `allow` included.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { API, clientToolsChild, messagesOf } from "./support/client-tools-child.ts";
import type { Script } from "./support/fake-provider.ts";
import { reply } from "./support/provider-scripts.ts";
import { runEvents, startTurn, terminalData } from "./support/turns.ts";

// Token-shaped (a GitHub personal access token), so pattern redaction knows it without being told.
const TOKEN = `ghp_${"A1b2C3d4E5".repeat(3)}abcdef`;

describe("client tools and credentials", () => {
  it("an allowed client tool call whose arguments hold a token is refused and never sent to the client", async () => {
    const tool = { name: "open_file", description: "Opens a file.", input_schema: { type: "object", properties: { path: { type: "string" } } }, timeout_ms: 1_000 };
    const { run, provider } = await clientToolsChild(tool);
    try {
      provider.handler = (logged): Script =>
        messagesOf(logged).some((message) => message.role === "tool")
          ? reply(API, { text: ["Done."] })
          : reply(API, { calls: [{ id: "c1", name: "client__open_file", args: { path: TOKEN } }] });
      const { runId } = await startTurn(run, "Open it");
      const events = await runEvents(run, runId);
      assert.equal(terminalData(events).outcome, "completed");
      assert.deepEqual(events.filter((event) => event.event === "client.tool.call"), []);
      const stdout = run.frames().map((frame) => JSON.stringify(frame)).join("\n");
      assert.ok(!stdout.includes(TOKEN), "the token never reaches stdout");
      const results = messagesOf(provider.log[1]!).filter((message) => message.role === "tool").map((message) => String(message.content));
      assert.equal(results.length, 1);
      assert.match(results[0]!, /hold a credential/);
    } finally {
      run.runtime.input.end();
      await provider.close();
    }
    assert.equal(await run.exit, 0);
  });
});
