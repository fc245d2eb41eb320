/**
 * Shutdown during a stubborn shell command, through the real entry points:
 * the command ignores SIGTERM and a process it started left the group with
 * the output pipes, so the run's cleanup takes the whole SIGTERM→SIGKILL
 * grace and then the drain grace. Both must fit inside the 2,000 ms closing
 * deadline with room for the run's closing appends and its terminal event:
 * exit 0, `run.finished` cancelled after the shutdown answer.
 */

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { LIMITS } from "../src/protocol/limits.ts";
import { DRAIN_GRACE_MS, KILL_GRACE_MS } from "../src/util/process-group.ts";
import { startFakeProvider } from "./support/fake-provider.ts";
import { launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { guarded, WireClient, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-shutdown-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** Resolves once `path` exists (hang-guarded; the command writes it when it runs). */
function fileAppears(path: string): Promise<void> {
  return guarded((async () => {
    while (!existsSync(path) || readFileSync(path, "utf8").trim() === "") await new Promise((resolve) => setTimeout(resolve, 5));
  })(), `${path} to appear`);
}

describe("shutdown during a stubborn shell command", () => {
  it("the kill grace and the drain grace together take at most half the closing deadline", () => {
    assert.ok(KILL_GRACE_MS + DRAIN_GRACE_MS <= LIMITS.closing_deadline_ms / 2, `${KILL_GRACE_MS} + ${DRAIN_GRACE_MS} ms`);
  });

  for (const launcher of launchers()) {
    it(`${launcher.name}: exits 0 with the run's cancelled terminal after the shutdown answer`, async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, launcher.name, provider, { tools: { shell: "allow" } });
      const escaped = join(ws.cwd, "escaped.pid");
      const running = join(ws.cwd, "running");
      // sh ignores SIGTERM (and so does everything it starts); the setsid child leaves the group holding the pipes.
      const command = `trap '' TERM; setsid sh -c 'echo $$ > ${escaped}; exec sleep 30' & echo up > ${running}; sleep 30`;
      provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", name: "shell", args: { command } }] }));
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        await client.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
        const { session_id } = await client.ok("session.create") as { session_id: string };
        const { run_id } = await client.ok("turn.start", { session_id, prompt: "run it" }) as { run_id: string };
        await Promise.all([fileAppears(running), fileAppears(escaped)]);
        const { code, response } = await client.shutdown();
        const finished = client.eventsOf(run_id).find((frame) => frame.event === "run.finished");
        assert.ok(finished, "the run's terminal event was delivered");
        assert.ok(response.seq < finished.seq, "the shutdown answer leads what drains");
        assert.equal(finished.data!.outcome, "cancelled");
        assert.equal(code, 0);
      } finally {
        client.abandon();
        if (existsSync(escaped)) {
          try {
            process.kill(Number(readFileSync(escaped, "utf8")), "SIGKILL");
          } catch { /* already gone */ }
        }
        await provider.close();
      }
    });
  }
});
