/**
 * A client tool called from a subagent's run (docs/features/local-agent-client-tools.md,
 * "a subagent may call it only where its profile's policy for `client__<name>` allows"):
 * the `client.tool.call` the client sees is in the delegating run's scope, and a result
 * naming that scope is the call's.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BUILTIN_PROFILES } from "../src/config/agent-settings.ts";
import { API, clientToolsChild, messagesOf } from "./support/client-tools-child.ts";
import type { LoggedRequest, Script } from "./support/fake-provider.ts";
import { reply } from "./support/provider-scripts.ts";
import { nextEvent, request, runEvents, startTurn, terminalData } from "./support/turns.ts";

const GENERAL = BUILTIN_PROFILES.get("general")!.body;
const isGeneral = (logged: LoggedRequest) => String(messagesOf(logged)[0]!.content).includes(GENERAL);
const resultsIn = (logged: LoggedRequest) => messagesOf(logged).filter((message) => message.role === "tool").length;

describe("client tools in a subagent", () => {
  it("a subagent's client tool call takes the result the client sends in the call event's scope", async () => {
    const tool = { name: "open_editors", description: "The open files.", input_schema: { type: "object" }, timeout_ms: 1_000 };
    const { run, provider } = await clientToolsChild(tool);
    provider.handler = (logged): Script => {
      if (isGeneral(logged)) {
        return resultsIn(logged) === 0 ? reply(API, { calls: [{ id: "c1", name: "client__open_editors", args: {} }] }) : reply(API, { text: ["a.ts is open."] });
      }
      return resultsIn(logged) === 0
        ? reply(API, { calls: [{ id: "t1", name: "task", args: { profile: "general", description: "Look", prompt: "What is open?" } }] })
        : reply(API, { text: ["Done."] });
    };
    const { runId } = await startTurn(run, "What is open?");
    const call = await nextEvent(run, runId, "client.tool.call");
    const { session_id, run_id, call_id } = call.data as Record<string, string>;
    const answered = await request(run, "r1", "client.tool.result", { session_id, run_id, call_id, ok: true, output: "a.ts" });
    assert.deepEqual(answered.result, { accepted: true }, JSON.stringify(answered.error));
    const events = await runEvents(run, runId);
    assert.equal(terminalData(events).outcome, "completed");
    assert.equal(session_id, (events[0]!.data as { session_id: string }).session_id, "the call is in the delegating run's scope");
    const second = provider.log.filter(isGeneral)[1]!;
    assert.deepEqual(messagesOf(second).filter((message) => message.role === "tool").map((message) => message.content), ["a.ts"]);
    run.runtime.input.end();
    assert.equal(await run.exit, 0);
    await provider.close();
  });
});
