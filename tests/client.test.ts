/**
 * The client library against the real backend: `spawnAgent()` (the Node
 * helper of `magi-code/client`) drives both entry points, the Node bundle and
 * the Deno entry, through initialize, a turn with a tool call and its
 * approval, history and shutdown, against a loopback fake provider. Runs
 * under Node and under Deno (whose node:child_process serves the helper).
 */

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ProtocolError, RequestRefused, type WireEvent } from "../src/client/mod.ts";
import { binPath, spawnAgent } from "../runtime/node-client.ts";
import { type FakeProvider, startFakeProvider } from "./support/fake-provider.ts";
import { launchers, repoRoot } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { guarded, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-client-"));
let provider: FakeProvider | null = null;
after(async () => {
  await provider?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("the client library against the real backend", () => {
  it("binPath is the built npm bin, resolved from the package rather than PATH", () => {
    assert.equal(binPath, join(repoRoot(), "dist", "magi-code.cjs"));
  });

  for (const launcher of launchers()) {
    it(`${launcher.name}: a turn with an approved tool call, history and shutdown`, async () => {
      provider ??= await startFakeProvider();
      const ws = workspace(root, `client-${launcher.name}`, provider);
      provider.enqueue(reply("openai-chat", {
        text: ["Writing ", "it."],
        calls: [{ id: "call_1", name: "write_file", args: { path: "hi.txt", content: "hi\n" } }],
      }));
      provider.enqueue(reply("openai-chat", { text: ["Done: ", "hi.txt ", "says hi."] }));
      const agent = spawnAgent({ command: launcher.command, args: launcher.prefix, cwd: ws.cwd, env: ws.env });
      const init = await guarded(agent.initialize(["session.create", "turn.start", "approval.answer", "history.page", "shutdown"]), "initialize");
      assert.equal(init.status.readiness, "ready");
      assert.equal(agent.limits.prompt_bytes, init.limits.prompt_bytes);
      assert.ok(agent.supports("turn.cancel"));

      const session = await agent.request("session.create", {});
      const seen: WireEvent["event"][] = [];
      const run = await agent.startTurn(session.session_id, "write hi.txt", {
        onEvent: (event) => seen.push(event.event),
        onApproval: (approval) => void approval.answer(true),
      });
      const finished = await guarded(run.finished, "run.finished");
      assert.deepEqual([finished.outcome, finished.persistence, finished.error_code], ["completed", "durable", null]);
      assert.equal(seen[0], "input.persisted");
      assert.equal(seen.at(-1), "run.finished");
      assert.ok(seen.includes("approval.requested"));
      assert.equal(run.persisted?.durable, true);
      assert.deepEqual([...run.messages.values()].map((m) => [m.text, m.complete, m.partial]), [
        ["Writing it.", true, false],
        ["Done: hi.txt says hi.", true, false],
      ]);
      assert.equal(run.text(), "Writing it.\n\nDone: hi.txt says hi.");
      assert.deepEqual([...run.activities.values()].map((a) => [a.name, a.state]), [["write_file", "completed"]]);
      assert.equal(run.approvals.size, 0);
      assert.equal(readFileSync(join(ws.cwd, "hi.txt"), "utf8"), "hi\n");

      const page = await agent.request("history.page", { session_id: session.session_id, revision: finished.revision! });
      assert.deepEqual(page.entries.map((entry) => entry.kind), ["user", "assistant", "activity", "assistant"]);
      assert.equal(page.complete, true);

      // A wire error is a ProtocolError with the code, and the connection stays usable.
      await assert.rejects(agent.request("history.page", { session_id: session.session_id, revision: "r0-stale" }), (error: unknown) => {
        return error instanceof ProtocolError && error.code === "stale_revision" && error.method === "history.page";
      });
      assert.equal((await agent.request("status", {})).state, "idle");
      assert.equal(await guarded(agent.shutdown(), "exit"), 0);
      assert.equal(agent.failure?.name, "ConnectionClosed");
      await assert.rejects(agent.request("status", {}), { name: "ConnectionClosed" });
    });
  }

  it("a run cancelled with run.cancel() still resolves once, at run.finished, with cancelled", async () => {
    provider ??= await startFakeProvider();
    const ws = workspace(root, "client-cancel", provider);
    provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", name: "write_file", args: { path: "x.txt", content: "x" } }] }));
    const launcher = launchers()[0]!;
    const agent = spawnAgent({ command: launcher.command, args: launcher.prefix, cwd: ws.cwd, env: ws.env });
    await agent.initialize(["session.create", "turn.start", "turn.cancel", "shutdown"]);
    const session = await agent.request("session.create", {});
    // The approval is left pending: cancelling denies it, and the run reconciles and finishes.
    const run = await agent.startTurn(session.session_id, "write x.txt", { onApproval: (_approval, self) => void self.cancel() });
    const finished = await guarded(run.finished, "run.finished");
    assert.equal(finished.outcome, "cancelled");
    await run.cancel(); // stale_run after the end is not an error
    assert.equal(await agent.shutdown(), 0);
  });

  it("refuses locally what the child did not advertise or the client did not require, without spending the connection", async () => {
    provider ??= await startFakeProvider();
    const ws = workspace(root, "client-refuse", provider);
    const launcher = launchers()[0]!;
    const agent = spawnAgent({ command: launcher.command, args: launcher.prefix, cwd: ws.cwd, env: ws.env });
    try {
      await assert.rejects(agent.initialize(["model.frobnicate" as never]), { name: "ProtocolError", code: "unsupported_capability" });
      await agent.initialize(["shutdown"]);
      await assert.rejects(agent.request("model.frobnicate" as never, {} as never), (error: unknown) => error instanceof RequestRefused);
      // operation.cancel is advertised but negotiated: only a client that required it may call it.
      assert.ok(agent.supports("operation.cancel"));
      await assert.rejects(agent.request("operation.cancel", { id: "c1" }), (error: unknown) => error instanceof RequestRefused);
      await assert.rejects(agent.startTurn("s", "x".repeat(70_000)), (error: unknown) => error instanceof RequestRefused);
      assert.equal((await agent.request("status", {})).readiness, "ready");
      assert.equal(await agent.shutdown(), 0);
    } finally {
      await agent.close();
    }
  });
});
