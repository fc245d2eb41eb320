/**
 * An MCP login's tokens are redacted from the moment they exist: a server
 * on the in-memory runtime (subprocesses and HTTP the real runtime's) starts
 * with a login stored for a loopback OAuth-protected MCP server; the server
 * then expires it, so the turn's call makes the SDK refresh it mid-call. The
 * call's result, which carries the new access token, reaches the provider
 * redacted, as does a later tool result quoting it. The tokens are plain
 * words, so only the list of known secrets can catch them, not a rule of
 * shape.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { REDACTION_MARKER } from "../src/util/redaction.ts";
import { httpServer } from "./support/mcp-servers.ts";
import { startOAuthMcpServer } from "./support/oauth-mcp-server.ts";
import { reply } from "./support/provider-scripts.ts";
import { spawningRuntimes } from "./support/tools.ts";
import { closedAfterAll, HOME, runEvents, startTurn, startTurnServer, stopTurnServer, type TurnServer } from "./support/turns.ts";

const started = closedAfterAll();

/** The tool result message answering `callId` in the provider's `index`-th request. */
function toolResult(server: TurnServer, index: number, callId: string): string {
  const body = server.provider.log[index]!.body as { messages: { role: string; content: string | null; tool_call_id?: string }[] };
  const message = body.messages.find((entry) => entry.role === "tool" && entry.tool_call_id === callId);
  assert.ok(message, `request ${index} carries the result of ${callId}`);
  return message.content ?? "";
}

for (const [runtimeName, runtime] of spawningRuntimes()) {
  describe(`MCP OAuth tokens redacted on ${runtimeName}`, () => {
    it("an access token refreshed during a call is redacted from that call's result and every later one", async () => {
      const oauth = await startOAuthMcpServer("words");
      try {
        const stored = oauth.issue();
        const fs = new MemoryFileSystem();
        const entry = { url: oauth.url, client: { client_id: "client-test" }, tokens: { ...stored, token_type: "Bearer" } };
        fs.writeFile(`${HOME}/mcp-tokens.json`, JSON.stringify({ v: 1, servers: { remote: entry } }), 0o600);
        const server = await startTurnServer("openai-chat", {
          processes: runtime,
          fetch: runtime.fetch,
          fs,
          env: { PATH: process.env.PATH ?? "", NO_PROXY: "127.0.0.1", no_proxy: "127.0.0.1" },
          mcpServers: () => Promise.resolve([httpServer("remote", oauth.url, { toolPolicies: { whoami: "allow" } })]),
        });
        started.push(server);
        oauth.expireAccessTokens();
        server.provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", name: "mcp__remote__whoami", args: {} }] }));
        server.provider.enqueue(reply("openai-chat", { calls: [{ id: "call_2", name: "mcp__remote__whoami", args: {} }] }));
        server.provider.enqueue(reply("openai-chat", { text: ["Done."] }));
        const { runId } = await startTurn(server, "Who am I?");
        const events = await runEvents(server, runId);
        assert.equal((events.at(-1)!.data as { outcome: string }).outcome, "completed");
        assert.deepEqual(oauth.grants, ["refresh_token ok"], "the first call refreshed the expired token");
        const refreshed = oauth.issued.at(-1)!;
        assert.notEqual(refreshed, stored.access_token);
        for (const [index, callId] of [[1, "call_1"], [2, "call_2"]] as const) {
          assert.equal(toolResult(server, index, callId), `Logged in with ${REDACTION_MARKER}.`);
        }
        assert.ok(!JSON.stringify(server.provider.log).includes(refreshed), "the refreshed token never reaches the provider");
        assert.ok(!server.frames().some((frame) => JSON.stringify(frame).includes(refreshed)), "nor the client");
        assert.equal(await stopTurnServer(server), 0);
      } finally {
        await oauth.close();
      }
    });
  });
}
