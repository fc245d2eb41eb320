/**
 * `approval.scope` session grants of MCP tools against a real server: a
 * grant covers the server's tool the user saw, by its own name, and no other
 * tool that a changed list (`notifications/tools/list_changed`) later exposes
 * under the same provider-safe name (`a.b` and `a_b` are both `mcp__…__a_b`).
 */

import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { Frame } from "./support/harness.ts";
import { guarded } from "./support/hang-guard.ts";
import { faultServer } from "./support/mcp-servers.ts";
import { reply } from "./support/provider-scripts.ts";
import { spawningRuntimes } from "./support/tools.ts";
import { closedAfterAll, nextEvent, request, runEvents, startTurn, startTurnServer, stopTurnServer, TURN_CAPABILITIES, type TurnServer } from "./support/turns.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-mcp-scope-")));
after(() => rmSync(root, { recursive: true, force: true }));
const started = closedAfterAll();

/** The run's second `approval.requested`, or its `run.finished` should the run end without one. */
function secondRequestOrEnd(server: TurnServer, runId: string): Promise<Frame> {
  return guarded((async () => {
    for (let seen = 1;;) {
      const frames = await server.waitFrames(seen);
      seen = frames.length + 1;
      const ours = frames.filter((frame) => frame.type === "event" && (frame.data as { run_id?: string }).run_id === runId);
      const found = ours.filter((frame) => frame.event === "approval.requested")[1] ?? ours.find((frame) => frame.event === "run.finished");
      if (found !== undefined) return found;
    }
  })(), `the second approval.requested or run.finished of ${runId}`);
}

for (const [runtimeName, runtime] of spawningRuntimes()) {
  describe(`approval.scope with MCP tools on ${runtimeName}`, () => {
    it("a session grant of MCP tool \"a.b\" does not cover \"a_b\", which a changed list exposes under the same name", async () => {
      const server = await startTurnServer("openai-chat", {
        processes: runtime,
        fetch: runtime.fetch,
        env: { PATH: process.env.PATH ?? "" },
        mcpServers: () => Promise.resolve([faultServer("ren", "rename", root)]),
        capabilities: [...TURN_CAPABILITIES, "approval.scope"],
      });
      started.push(server);
      const call = (id: string) => reply("openai-chat", { calls: [{ id, name: "mcp__ren__a_b", args: {} }] });
      server.provider.enqueue(call("call_1"));
      server.provider.enqueue(call("call_2"));
      server.provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      const { sessionId, runId } = await startTurn(server, "Call it twice");
      const answer = async (id: string, requested: Frame, allow: boolean, scope?: string) => {
        const data = requested.data as { approval_id: string };
        return await request(server, id, "approval.answer", { session_id: sessionId, run_id: runId, approval_id: data.approval_id, allow, ...(scope === undefined ? {} : { scope }) });
      };
      const first = await nextEvent(server, runId, "approval.requested");
      const shown = first.data as { summary: string; scope_key: string };
      assert.equal(shown.summary, 'Call MCP tool "a.b" of server "ren" with arguments {}');
      assert.equal(shown.scope_key, 'mcp__ren__a_b "a.b"');
      assert.deepEqual((await answer("a1", first, true, "session")).result, { recorded: true });
      // Calling `a.b` replaced it with `a_b`: the same exposed name now reaches a tool nobody approved.
      const second = await secondRequestOrEnd(server, runId);
      assert.equal(second.event, "approval.requested", "the call of a_b ran under the grant given for a.b");
      const asked = second.data as { summary: string; scope_key: string };
      assert.equal(asked.summary, 'Call MCP tool "a_b" of server "ren" with arguments {}');
      assert.equal(asked.scope_key, 'mcp__ren__a_b "a_b"');
      await answer("a2", second, false);
      const events = await runEvents(server, runId);
      const resolved = events.filter((frame) => frame.event === "approval.resolved").map((frame) => (frame.data as { outcome: string }).outcome);
      assert.deepEqual(resolved, ["allowed", "denied"]);
      assert.equal(await stopTurnServer(server), 0);
    });
  });
}
