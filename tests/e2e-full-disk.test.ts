/**
 * A real full disk, end to end: each real entry point runs in its own mount
 * namespace (`unshare -m`) with a 1 MiB tmpfs as `$MC_HOME/sessions`, and the
 * test fills and frees that tmpfs through `/proc/<pid>/root` while the child
 * serves. Needs root (or mount rights in a user namespace); skipped where the
 * machine cannot mount a tmpfs. The same faults through the runtime contract,
 * everywhere, are in `storage-faults.test.ts`.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { Gate, startFakeProvider } from "./support/fake-provider.ts";
import { INTERRUPTED, pagedHistory } from "./support/kill-turns.ts";
import { type Launcher, launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { guarded, WireClient, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-full-disk-"));
after(() => rmSync(root, { recursive: true, force: true }));

const MOUNT = 'mount -t tmpfs -o size=1m,mode=0700 tmpfs "$MC_HOME/sessions" && exec "$@"';
const probe = spawnSync("unshare", ["-m", "--propagation", "private", "sh", "-c", 'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs "$d"'], { encoding: "utf8" });
const skip = probe.status === 0 ? false : `cannot mount a tmpfs here (${(probe.stderr || probe.error?.message || "").trim()})`;

/** `launcher`, run inside a private mount namespace whose `$MC_HOME/sessions` is a fresh 1 MiB tmpfs. */
function onTmpfs(launcher: Launcher): Launcher {
  return { ...launcher, command: "unshare", prefix: ["-m", "--propagation", "private", "sh", "-c", MOUNT, "on-tmpfs", launcher.command, ...launcher.prefix] };
}

/** Fills the child's tmpfs through its own view of the mounts; returns the filler's path there. */
function fill(client: WireClient, home: string): string {
  const filler = `/proc/${client.pid}/root${home}/sessions/filler`;
  try {
    writeFileSync(filler, new Uint8Array(2 * 1024 * 1024));
    assert.fail("a 2 MiB file fits on a 1 MiB tmpfs");
  } catch (error) {
    assert.equal((error as NodeJS.ErrnoException).code, "ENOSPC");
  }
  return filler;
}

type Turn = [string, unknown, unknown];

describe("a real full disk (tmpfs)", { skip }, () => {
  for (const launcher of launchers()) {
    it(`${launcher.name}: a full disk ends runs not_started / degraded truthfully, the child keeps serving, and with space back the history is consistent`, async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `full-${launcher.name}`, provider);
      mkdirSync(join(ws.home, "sessions"), { mode: 0o700 });
      const client = new WireClient(onTmpfs(launcher), ws.cwd, ws.env);
      const gate = new Gate();
      const outcome = async (runId: string): Promise<Turn> => {
        const data = (await client.event(runId, "run.finished")).data!;
        return [String(data.outcome), data.persistence, data.error_code];
      };
      try {
        await client.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
        const sessionId = (await client.ok("session.create")).session_id as string;
        provider.enqueue(reply("openai-chat", { text: ["First answer."] }));
        const first = (await client.ok("turn.start", { session_id: sessionId, prompt: "first" })).run_id as string;
        assert.deepEqual(await outcome(first), ["completed", "durable", null]);

        // No space at all: the input cannot be stored, no provider request is made.
        let filler = fill(client, ws.home);
        const refused = (await client.ok("turn.start", { session_id: sessionId, prompt: "refused" })).run_id as string;
        assert.deepEqual(await outcome(refused), ["failed", "not_started", "persistence_failed"]);
        assert.equal(provider.log.length, 1, "nothing was sent to the provider");
        assert.equal((await client.ok("status")).state, "idle", "the child keeps serving");

        // The disk fills while the reply streams: the run goes on and ends degraded, never durable.
        unlinkSync(filler);
        // Over a tmpfs page (4 KiB), so its record cannot fit in the slack of the file's last page.
        const long = "A reply that arrives after the disk filled up, long enough to need new pages. ".repeat(120);
        provider.enqueue(reply("openai-chat", { text: [long, "The end."], gates: new Map([[0, gate]]) }));
        const middle = (await client.ok("turn.start", { session_id: sessionId, prompt: "middle" })).run_id as string;
        assert.equal((await client.event(middle, "input.persisted")).data!.durable, true);
        await guarded(gate.whenReached(), "the provider stream reaching its gate");
        filler = fill(client, ws.home);
        gate.release();
        assert.deepEqual(await outcome(middle), ["completed", "degraded", null]);
        const codes = client.eventsOf(middle).filter((frame) => frame.event === "diagnostic").map((frame) => frame.data!.code);
        assert.deepEqual(codes, ["persistence_degraded"], "the client is told once");

        // Space returns: the same child takes a complete turn, and a reopen shows a consistent history.
        unlinkSync(filler);
        provider.enqueue(reply("openai-chat", { text: ["Back again."] }));
        const last = (await client.ok("turn.start", { session_id: sessionId, prompt: "last" })).run_id as string;
        assert.deepEqual(await outcome(last), ["completed", "durable", null]);
        const opened = await client.ok("session.open", { session_id: sessionId });
        assert.equal(opened.durable, true);
        const { entries } = await pagedHistory(client, sessionId, opened.revision as string);
        const text = JSON.stringify(entries);
        assert.deepEqual(entries.slice(0, 3), [["user", "first", false], ["assistant", "First answer.", false], ["user", "middle", false]], text);
        assert.deepEqual(entries.slice(-2), [["user", "last", false], ["assistant", "Back again.", false]], text);
        for (const [kind, body, partial] of entries.slice(3, -2)) {
          if (kind === "assistant") assert.ok(partial && (long + "The end.").startsWith(body), `a stored reply is a partial prefix: ${text}`);
          else assert.ok(kind === "diagnostic" && (body === INTERRUPTED || partial === false), `only diagnostics: ${text}`);
        }
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        gate.release();
        client.abandon();
        await provider.close();
      }
    });
  }
});
