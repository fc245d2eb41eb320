/**
 * Checkpoint retention through the real entry points (the Node bundle and
 * the Deno entry) over real pipes: once a session's writes pass its 256
 * checkpoints, the oldest turn's are evicted whole; a rewind to the newest
 * turn still restores its files, and one over the evicted turn is answered
 * `checkpoints_evicted` (preview and restoring rewind alike) with nothing
 * changed, while rewinding the conversation alone still works
 * (docs/features/local-agent-extensions.md, "Checkpoint retention"). A
 * child's first checkpoint starts the sweep that removes the checkpoints of
 * a session whose history is gone.
 */

import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { startFakeProvider } from "./support/fake-provider.ts";
import { eventually } from "./support/hang-guard.ts";
import { launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { rewindSession } from "./support/rewind-turns.ts";
import { WireClient, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-rewind-retention-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** A step that creates `count` files named `<prefix><n>.txt`. */
function writes(prefix: string, count: number) {
  return Array.from({ length: count }, (_, index) => ({ id: `call_${prefix}${index}`, name: "write_file", args: { path: `${prefix}${index}.txt`, content: `${prefix} ${index}\n` } }));
}

for (const launcher of launchers()) {
  describe(`${launcher.name}: checkpoint retention over real pipes`, () => {
    it("past 256 checkpoints a rewind to the newest turn restores its files, one over the evicted turn is checkpoints_evicted and changes nothing, and the conversation alone still rewinds", async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `evict-${launcher.name}`, provider, { tools: { write_file: "allow" } });
      for (const [prefix, count] of [["f", 200], ["g", 100]] as const) {
        provider.enqueue(reply("openai-chat", { text: ["Writing."], calls: writes(prefix, count) }));
        provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      }
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        const { sessionId, revision } = await rewindSession(client, ["first", "second"]);
        const users: string[] = [];
        let cursor: string | null = null;
        do {
          const page = await client.ok("history.page", { session_id: sessionId, revision, cursor });
          users.push(...(page.entries as { kind: string; message_id: string }[]).filter((entry) => entry.kind === "user").map((entry) => entry.message_id));
          cursor = page.next_cursor as string | null;
        } while (cursor !== null);
        assert.equal(users.length, 2);
        const [first, second] = users as [string, string];

        for (const [method, extra] of [["session.rewind.preview", {}], ["session.rewind", { restore_files: true }]] as const) {
          const refused = await client.call(method, { session_id: sessionId, revision, message_id: first, ...extra });
          assert.equal((refused.error as { code: string }).code, "checkpoints_evicted");
        }
        assert.equal(readdirSync(ws.cwd).filter((name) => /^[fg]\d+\.txt$/u.test(name)).length, 300);

        const preview = await client.ok("session.rewind.preview", { session_id: sessionId, revision, message_id: second });
        assert.equal((preview.files as { state: string }[]).filter((file) => file.state === "restorable").length, 100);
        const applied = await client.ok("session.rewind", { session_id: sessionId, revision, message_id: second, restore_files: true });
        assert.equal((applied.files as { state: string }[]).filter((file) => file.state === "restored").length, 100);
        assert.equal(existsSync(join(ws.cwd, "g0.txt")), false);
        assert.equal(existsSync(join(ws.cwd, "f0.txt")), true);

        const kept = await client.ok("session.rewind", { session_id: sessionId, revision: applied.revision, message_id: first, restore_files: false });
        assert.deepEqual(kept.files, []);
        assert.equal(kept.dropped_turns, 1);
        assert.equal(existsSync(join(ws.cwd, "f199.txt")), true);
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
        await provider.close();
      }
    });

    it("a child's first checkpoint sweeps away the checkpoints of a session whose history is gone, and keeps a present one's", async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `sweep-${launcher.name}`, provider, { tools: { write_file: "allow" } });
      const gone = join(ws.home, "checkpoints", "01890000-0000-7000-8000-00000000aaaa");
      const present = join(ws.home, "checkpoints", "01890000-0000-7000-8000-00000000bbbb");
      for (const directory of [gone, present]) {
        mkdirSync(directory, { recursive: true, mode: 0o700 });
        writeFileSync(join(directory, "01890000-0000-7000-8000-000000000001.checkpoint"), "{}\n", { mode: 0o600 });
      }
      mkdirSync(join(ws.home, "sessions"), { recursive: true, mode: 0o700 });
      writeFileSync(join(ws.home, "sessions", "01890000-0000-7000-8000-00000000bbbb.jsonl"), "", { mode: 0o600 });
      provider.enqueue(reply("openai-chat", { text: ["Writing."], calls: writes("a", 1) }));
      provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        await rewindSession(client, ["write"]);
        await eventually(() => !existsSync(gone), "the gone session's checkpoint directory removed");
        assert.deepEqual(readdirSync(present), ["01890000-0000-7000-8000-000000000001.checkpoint"]);
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
        await provider.close();
      }
    });
  });
}
