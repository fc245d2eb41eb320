/**
 * The turn worker owns terminal delivery. When the run's channel gives up on
 * `run.finished` (no writer room within the 2,000 ms critical wait), the
 * client can never learn that the run ended: that is the spec's output
 * failure, so the worker closes the connection (exit 1) and releases the run
 * instead of leaving `status` at `running` and everything `busy` for good.
 *
 * The worker runs over its real parts (store on the memory filesystem, the
 * protocol output, a loopback provider); its event sink is the port's
 * hand-driven test implementation, held full, as a writer kept busy by
 * responses would be.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ManualClock, createMemoryRuntime } from "../runtime/memory.ts";
import { BUILTIN_PROVIDERS } from "../src/config/providers.ts";
import { TurnWorker } from "../src/operations/turns/turn-worker.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { SessionStore } from "../src/store/sessions.ts";
import { ProtocolOutput } from "../src/transport/output.ts";
import { HeldSink } from "./support/event-sink.ts";
import { startFakeProvider } from "./support/fake-provider.ts";
import { reply } from "./support/provider-scripts.ts";
import { CWD, HOME } from "./support/turns.ts";

/** How long the test may take before it fails instead of hanging: a hang guard, not a speed claim. */
const HANG_GUARD_MS = 20_000;

describe("terminal delivery", () => {
  it("a run.finished the channel gives up on closes the connection as an output failure and releases the run", async () => {
    const provider = await startFakeProvider();
    const clock = new ManualClock();
    const runtime = createMemoryRuntime({ clock });
    await runtime.fs.mkdir(HOME, 0o700);
    await runtime.fs.mkdir(`${HOME}/sessions`, 0o700);
    const output = new ProtocolOutput(runtime, () => {});
    const store = new SessionStore({ runtime, home: HOME, cwd: CWD, instanceId: output.instanceId, secrets: [] });
    const created = await store.create();
    assert.ok(created.ok);
    // A writer that never has room for run events: every event waits in the run's channel.
    const sink = new HeldSink(0);
    let outputFailures = 0;
    const turns = new TurnWorker({
      runtime,
      store,
      sessionsBusy: () => false,
      replies: output,
      sink,
      config: {
        runtime,
        endpoint: { ...BUILTIN_PROVIDERS.ollama, baseUrl: `${provider.url}/v1` },
        model: "qwen",
        effort: "default",
        apiKey: null,
        instructions: "test",
        context: { instructions: [] },
        policies: {},
        profile: { name: "build", tools: {} },
        maxSteps: 2,
        contextWindow: null,
        compaction: { enabled: true, threshold: 0.8 },
        compactionTitle: null,
        secrets: [],
        workspace: CWD,
        home: HOME,
        skills: [],
        external: null,
      },
      outputFailed: () => outputFailures++,
    });
    // More text parts than the channel holds, so its 32 slots fill and the critical events must wait.
    provider.enqueue(reply("openai-chat", { text: Array.from({ length: 40 }, (_, i) => `${"w".repeat(2_100)} ${i} `) }));
    turns.start("t1", { session_id: store.sessionId!, prompt: "go" });
    const runId = turns.runId;
    assert.ok(runId !== null);
    // Let time pass only through the manual clock: delta patience, then the reconciliation's and the
    // terminal's critical waits run out.
    const giveUp = Date.now() + HANG_GUARD_MS;
    while (outputFailures === 0 && Date.now() < giveUp) {
      clock.advance(50);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    assert.equal(outputFailures, 1, "the connection is closed as an output failure");
    assert.equal(turns.runId, null, "the run is released");
    await turns.idle();
    assert.ok(sink.sent.every((event) => event.event !== "run.finished"), "the terminal was never handed over");
    assert.ok(clock.now() >= 2 * LIMITS.critical_event_wait_ms);
    await store.close();
    await provider.close();
  });
});
