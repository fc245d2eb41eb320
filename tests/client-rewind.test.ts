/**
 * The client library's `session.rewind.preview` and `session.rewind`
 * against the real backend (both entry points): typed and validated
 * results when the client required them, and a local refusal, nothing sent,
 * when it did not (the child would answer as for an unknown method).
 */

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { RequestRefused } from "../src/client/mod.ts";
import { spawnAgent } from "../runtime/node-client.ts";
import { type FakeProvider, startFakeProvider } from "./support/fake-provider.ts";
import { launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { guarded, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-client-rewind-"));
let provider: FakeProvider | null = null;
after(async () => {
  await provider?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("the client library's session.rewind", () => {
  for (const launcher of launchers()) {
    it(`${launcher.name}: preview, then a rewind restoring the file the dropped turn created`, async () => {
      provider ??= await startFakeProvider();
      const ws = workspace(root, `rewind-${launcher.name}`, provider, { tools: { write_file: "allow" } });
      provider.enqueue(reply("openai-chat", { text: ["Writing."], calls: [{ id: "call_1", name: "write_file", args: { path: "hi.txt", content: "hi\n" } }] }));
      provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      const agent = spawnAgent({ command: launcher.command, args: launcher.prefix, cwd: ws.cwd, env: ws.env });
      await guarded(agent.initialize(["session.create", "turn.start", "history.page", "session.rewind.preview", "session.rewind"]), "initialize");
      assert.ok(agent.supports("session.rewind"));
      const session = await agent.request("session.create", {});
      const run = await agent.startTurn(session.session_id, "write hi.txt");
      const finished = await guarded(run.finished, "run.finished");
      const revision = finished.revision!;
      const page = await agent.request("history.page", { session_id: session.session_id, revision });
      const target = page.entries.find((entry) => entry.kind === "user")!.message_id;
      const preview = await agent.request("session.rewind.preview", { session_id: session.session_id, revision, message_id: target });
      assert.deepEqual(preview.files, [{ path: "hi.txt", created: true, state: "restorable" }]);
      assert.deepEqual(preview.unrestorable, [{ tool: "write_file", calls: 1 }]);
      const applied = await agent.request("session.rewind", { session_id: session.session_id, revision, message_id: target, restore_files: true });
      assert.deepEqual(applied.files, [{ path: "hi.txt", created: true, state: "restored" }]);
      assert.equal(existsSync(join(ws.cwd, "hi.txt")), false);
      const after = await agent.request("history.page", { session_id: session.session_id, revision: applied.revision! });
      assert.deepEqual(after.entries, []);
      assert.equal(await guarded(agent.shutdown(), "exit"), 0);
    });
  }

  it("a client that did not require session.rewind refuses it locally: the child does not advertise it", async () => {
    provider ??= await startFakeProvider();
    const launcher = launchers()[0]!;
    const ws = workspace(root, "base", provider);
    const agent = spawnAgent({ command: launcher.command, args: launcher.prefix, cwd: ws.cwd, env: ws.env });
    await guarded(agent.initialize(["session.create"]), "initialize");
    assert.equal(agent.supports("session.rewind"), false);
    await assert.rejects(agent.request("session.rewind.preview", { session_id: "s", revision: "r", message_id: "m0" }), (error: unknown) => error instanceof RequestRefused);
    assert.equal(await guarded(agent.shutdown(), "exit"), 0);
  });
});
