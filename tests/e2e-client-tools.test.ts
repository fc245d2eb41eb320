/**
 * The `client.tools` extension through the real entry points (the Node
 * bundle and the Deno entry) over real pipes, against a loopback provider
 * (docs/features/local-agent-client-tools.md): a scripted turn that calls
 * two registered tools (one allowed by settings, one asked and allowed,
 * then denied, and once with invalid arguments that never reach the
 * client), every output in the provider's next request; and the ways a
 * call ends without its result: a timeout, `turn.cancel`, `shutdown`, EOF,
 * each with `client.tool.cancel` before `run.finished`, and late, duplicate
 * and foreign results refused with `stale_tool_call`.
 */

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type FakeProvider, startFakeProvider } from "./support/fake-provider.ts";
import { guarded } from "./support/hang-guard.ts";
import { type Launcher, launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { WireClient, type WireFrame, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-ctools-"));
after(() => rmSync(root, { recursive: true, force: true }));

const OPEN_EDITORS = {
  name: "open_editors",
  description: "The files open in the editor, one path a line.",
  input_schema: { type: "object", properties: {}, additionalProperties: false },
};
const DIAGNOSTICS = {
  name: "diagnostics",
  description: "The language server's diagnostics of one file.",
  input_schema: { type: "object", properties: { path: { type: "string", minLength: 1 } }, required: ["path"], additionalProperties: false },
  timeout_ms: 1_000,
};
const CAPABILITIES = [...TURN_CAPABILITIES, "client.tools"];

/** The tool messages' contents of the provider request `index` (Chat Completions), in order. */
function toolOutputs(provider: FakeProvider, index: number): string[] {
  const body = provider.log[index]!.body as { messages: { role: string; content: string }[] };
  return body.messages.filter((message) => message.role === "tool").map((message) => message.content);
}

/** A child with the two client tools registered and a session; the provider's first step calls `calls`. */
async function started(launcher: Launcher, name: string, calls: { id: string; name: string; args: unknown }[], settings: Record<string, unknown> = {}) {
  const provider = await startFakeProvider();
  const ws = workspace(root, `${name}-${launcher.name}`, provider, settings);
  provider.enqueue(reply("openai-chat", { text: ["Looking."], calls }));
  provider.enqueue(reply("openai-chat", { text: ["Done."] }));
  const client = new WireClient(launcher, ws.cwd, ws.env);
  const init = await client.ok("initialize", { required_capabilities: CAPABILITIES, client_tools: [OPEN_EDITORS, DIAGNOSTICS] });
  const sessionId = (await client.ok("session.create")).session_id as string;
  const runId = (await client.ok("turn.start", { session_id: sessionId, prompt: "What is open?" })).run_id as string;
  return { provider, client, init, sessionId, runId };
}

/** The names of `runId`'s events so far, deltas left out. */
function eventNames(client: WireClient, runId: string): string[] {
  return client.eventsOf(runId).map((frame) => frame.event!).filter((event) => event !== "message.delta");
}

/** The result params answering `call`. */
function answer(call: WireFrame, output: string, ok = true): Record<string, unknown> {
  const { session_id, run_id, call_id } = call.data!;
  return { session_id, run_id, call_id, ok, output };
}

for (const launcher of launchers()) {
  describe(`${launcher.name}: client.tools over real pipes`, () => {
    it("two client tools through a turn: calls, results in the next request, approval allow and deny, invalid arguments never sent", async () => {
      const { provider, client, init, runId } = await started(launcher, "turn", [
        { id: "call_1", name: "client__open_editors", args: {} },
        { id: "call_2", name: "client__diagnostics", args: { path: 5 } },
        { id: "call_3", name: "client__diagnostics", args: { path: "a.ts" } },
        { id: "call_4", name: "client__diagnostics", args: { path: "b.ts" } },
      ], { client_tools: { open_editors: "allow" } });
      try {
        assert.ok((init.capabilities as string[]).includes("client.tools"));
        assert.deepEqual(init.extensions, {
          "client.tools": {
            tools: [
              { name: "open_editors", model_name: "client__open_editors", timeout_ms: 120_000 },
              { name: "diagnostics", model_name: "client__diagnostics", timeout_ms: 1_000 },
            ],
            max_output_bytes: 61_440,
          },
        });
        const first = await client.event(runId, "client.tool.call");
        const offered = (provider.log[0]!.body as { tools: { function: { name: string } }[] }).tools.map((tool) => tool.function.name);
        assert.ok(offered.includes("client__open_editors") && offered.includes("client__diagnostics"));
        assert.deepEqual({ name: first.data!.name, arguments: first.data!.arguments }, { name: "open_editors", arguments: {} });
        assert.deepEqual((await client.ok("client.tool.result", answer(first, "src/a.ts\nsrc/b.ts"))), { accepted: true });
        // The first valid result won: the same call again is stale.
        assert.equal((await client.call("client.tool.result", answer(first, "again"))).error?.code, "stale_tool_call");
        const asked = await client.event(runId, "approval.requested");
        assert.equal(asked.data!.summary, 'Call client tool "diagnostics" with arguments {"path":"a.ts"}');
        await client.ok("approval.answer", { session_id: asked.data!.session_id, run_id: runId, approval_id: asked.data!.approval_id, allow: true });
        const second = await client.waitFor((frame) => frame.event === "client.tool.call" && frame !== first, "the second call");
        assert.deepEqual(second.data!.arguments, { path: "a.ts" });
        await client.ok("client.tool.result", answer(second, "a.ts:1: unused import", false));
        const denied = await client.waitFor((frame) => frame.event === "approval.requested" && frame !== asked, "the second approval");
        await client.ok("approval.answer", { session_id: denied.data!.session_id, run_id: runId, approval_id: denied.data!.approval_id, allow: false });
        const events = await client.runEvents(runId);
        assert.equal(events.at(-1)!.data!.outcome, "completed");
        assert.equal(events.filter((frame) => frame.event === "client.tool.call").length, 2);
        assert.equal(events.filter((frame) => frame.event === "client.tool.cancel").length, 0);
        const outputs = toolOutputs(provider, 1);
        assert.equal(outputs[0], "src/a.ts\nsrc/b.ts");
        assert.match(outputs[1]!, /^Invalid arguments for client__diagnostics: arguments\.path: expected string/u);
        assert.equal(outputs[2], "a.ts:1: unused import");
        assert.equal(outputs[3], "The user denied this tool call.");
        assert.equal((await client.shutdown()).code, 0);
        assert.equal(await client.stderr, "");
      } finally {
        client.abandon();
        await provider.close();
      }
    });

    it("a call nobody answers times out: client.tool.cancel, the model told, a late result stale", async () => {
      const { provider, client, runId } = await started(launcher, "timeout", [{ id: "call_1", name: "client__diagnostics", args: { path: "a.ts" } }], {
        client_tools: { diagnostics: "allow" },
      });
      try {
        const call = await client.event(runId, "client.tool.call");
        const cancel = await client.event(runId, "client.tool.cancel");
        assert.equal(cancel.data!.call_id, call.data!.call_id);
        await client.runEvents(runId);
        assert.deepEqual(toolOutputs(provider, 1), ["The client did not answer the tool call within 1000 ms."]);
        assert.equal((await client.call("client.tool.result", answer(call, "late"))).error?.code, "stale_tool_call");
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
        await provider.close();
      }
    });

    it("a foreign result is stale and the call's own is then accepted; unknown calls are stale", async () => {
      const { provider, client, runId } = await started(launcher, "foreign", [{ id: "call_1", name: "client__open_editors", args: {} }], {
        client_tools: { open_editors: "allow" },
      });
      try {
        const call = await client.event(runId, "client.tool.call");
        assert.equal((await client.call("client.tool.result", { ...answer(call, "x"), run_id: "another-run" })).error?.code, "stale_tool_call");
        assert.equal((await client.call("client.tool.result", { ...answer(call, "x"), session_id: "another-session" })).error?.code, "stale_tool_call");
        assert.equal((await client.call("client.tool.result", { ...answer(call, "x"), call_id: "ct999" })).error?.code, "stale_tool_call");
        assert.equal((await client.call("client.tool.result", { ...answer(call, "x"), extra: 1 })).error?.code, "invalid_params");
        assert.equal((await client.call("client.tool.result", answer(call, "x".repeat(61_441)))).error?.code, "invalid_params");
        await client.ok("client.tool.result", answer(call, "x".repeat(61_440)));
        assert.equal((await client.runEvents(runId)).at(-1)!.data!.outcome, "completed");
        assert.equal(toolOutputs(provider, 1)[0], "x".repeat(61_440));
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
        await provider.close();
      }
    });

    for (const ending of ["turn.cancel", "shutdown", "EOF"] as const) {
      it(`${ending} while a call is pending: client.tool.cancel before run.finished, a later result stale`, async () => {
        const { provider, client, sessionId, runId } = await started(launcher, `end-${ending}`, [{ id: "call_1", name: "client__open_editors", args: {} }], {
          client_tools: { open_editors: "allow" },
        });
        try {
          const call = await client.event(runId, "client.tool.call");
          if (ending === "turn.cancel") await client.ok("turn.cancel", { session_id: sessionId, run_id: runId });
          if (ending === "shutdown") client.send("shutdown");
          if (ending === "EOF") client.closeInput();
          const events = await client.runEvents(runId);
          // The call's activity ends after its cancel, then the run.
          assert.deepEqual(eventNames(client, runId).slice(-3), ["client.tool.cancel", "activity", "run.finished"]);
          assert.equal(events.at(-3)!.data!.call_id, call.data!.call_id);
          assert.equal(events.at(-2)!.data!.state, "failed");
          assert.equal(events.at(-1)!.data!.outcome, "cancelled");
          if (ending === "turn.cancel") {
            assert.equal((await client.call("client.tool.result", answer(call, "late"))).error?.code, "stale_tool_call");
            assert.equal((await client.shutdown()).code, 0);
          } else {
            assert.equal(await guarded(client.exited, "exit"), 0);
          }
          assert.equal(provider.log.length, 1);
        } finally {
          client.abandon();
          await provider.close();
        }
      });
    }

    it("a base client sees nothing new: client.tool.result is unsupported_method, no extensions field", async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `base-${launcher.name}`, provider);
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        const init = await client.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
        assert.equal("extensions" in init, false);
        assert.equal((init.capabilities as string[]).includes("client.tools"), false);
        const params = { session_id: "s", run_id: "r", call_id: "c", ok: true, output: "" };
        assert.equal((await client.call("client.tool.result", params)).error?.code, "unsupported_method");
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
        await provider.close();
      }
    });

    it("registration is preflight: refused registries touch nothing, 18 names with client.tools pass, 19 do not", async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `reg-${launcher.name}`, provider);
      const home = join(root, `reg-${launcher.name}-fresh-home`);
      const client = new WireClient(launcher, ws.cwd, { ...ws.env, MC_HOME: home });
      const methods = ["initialize", "status", "shutdown", "session.create", "session.open", "session.list", "session.discover", "history.page", "turn.start", "turn.cancel", "approval.answer", "model.catalog", "model.catalog.status", "model.refresh", "selection.set", "operation.cancel"];
      const all = [...methods, "run.usage", "client.tools"];
      try {
        const refused = [
          { required_capabilities: [...all, "zz.extra"], client_tools: [OPEN_EDITORS] },
          { required_capabilities: all.filter((name) => name !== "client.tools") },
          { required_capabilities: ["client.tools"] },
          { required_capabilities: ["turn.start"], client_tools: [OPEN_EDITORS] },
          { required_capabilities: ["client.tools"], client_tools: [OPEN_EDITORS, OPEN_EDITORS] },
          { required_capabilities: ["client.tools"], client_tools: [{ ...OPEN_EDITORS, input_schema: { type: "object", properties: { a: { type: "string", pattern: "x" } } } }] },
          { required_capabilities: ["client.tools"], client_tools: [{ ...OPEN_EDITORS, name: "client__x".toUpperCase() }] },
        ];
        for (const params of refused) assert.equal((await client.call("initialize", params)).error?.code, "invalid_params", JSON.stringify(params).slice(0, 200));
        assert.equal(existsSync(home), false);
        assert.equal(all.length, 18);
        const init = await client.ok("initialize", { required_capabilities: all, client_tools: [OPEN_EDITORS] });
        assert.ok((init.capabilities as string[]).includes("client.tools"));
        assert.equal((await client.call("initialize", { required_capabilities: ["client.tools"], client_tools: [OPEN_EDITORS] })).error?.code, "already_initialized");
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
        await provider.close();
      }
    });
  });
}
