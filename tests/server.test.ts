import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ManualClock } from "../runtime/memory.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { initLine, line, responses, runToEnd, startServer } from "./support/harness.ts";

/** Every limit but those of `session.discover`, an extension a base-only client never sees a field of. */
const BASE_LIMITS = Object.fromEntries(Object.entries(LIMITS).filter(([name]) => !name.startsWith("discover_")));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("server lifecycle", () => {
  it("status before initialize answers not_initialized", async () => {
    const { code, frames } = await runToEnd([line("s1", "status")]);
    assert.equal(code, 0);
    assert.deepEqual(frames.map((f) => [f.id, f.error?.code]), [["s1", "not_initialized"]]);
  });

  it("initialize on a fresh MC_HOME is ready on ollama with every base limit published", async () => {
    const run = startServer();
    run.runtime.input.push(initLine("i1"));
    const [frame] = await run.waitFrames(1);
    assert.equal(frame!.id, "i1");
    const result = frame!.result as { capabilities: string[]; limits: unknown; status: Record<string, unknown> };
    assert.deepEqual(result.capabilities, ["approval.answer", "history.page", "initialize", "model.catalog", "model.catalog.status", "model.refresh", "operation.cancel", "selection.set", "session.create", "session.discover", "session.list", "session.open", "shutdown", "status", "turn.cancel", "turn.start"]);
    assert.deepEqual(result.limits, BASE_LIMITS);
    assert.equal(result.status.state, "idle");
    assert.equal(result.status.readiness, "ready");
    assert.equal(result.status.provider, "ollama");
    assert.equal(typeof result.status.model, "string");
    assert.match(result.status.context_id as string, /^[0-9a-f]{64}$/);
    assert.equal(result.status.session_id, null);
    assert.equal(result.status.run_id, null);
    assert.ok(run.runtime.fs.exists("/home/user/.magi-code/sessions"));
    run.runtime.input.end();
    assert.equal(await run.exit, 0);
  });

  it("initialize publishes the discover_* limits only to a client that negotiated session.discover", async () => {
    const negotiations: [string[], boolean][] = [
      [["status"], false],
      [["status", "session.list", "model.refresh", "model.catalog.status", "operation.cancel"], false],
      [["status", "session.discover"], true],
    ];
    for (const [required, discover] of negotiations) {
      const run = startServer();
      run.runtime.input.push(initLine("i1", required));
      const [frame] = await run.waitFrames(1);
      assert.deepEqual(frame!.result!.limits, discover ? LIMITS : BASE_LIMITS, required.join(", "));
      run.runtime.input.end();
      assert.equal(await run.exit, 0);
    }
  });

  it("status while startup is pending reports starting with null selection", async () => {
    const run = startServer();
    run.runtime.input.push(initLine("i1") + line("s1", "status"));
    const frames = await run.waitFrames(2);
    const status = frames.find((f) => f.id === "s1")!.result!;
    assert.deepEqual(status, {
      state: "starting",
      readiness: "initializing",
      provider: null,
      model: null,
      context_id: null,
      session_id: null,
      run_id: null,
      selection: null,
    });
    run.runtime.input.end();
    await run.exit;
  });

  it("a second initialize answers already_initialized", async () => {
    const run = startServer();
    run.runtime.input.push(initLine("i1"));
    await run.waitFrames(1);
    run.runtime.input.push(initLine("i2"));
    const frames = await run.waitFrames(2);
    assert.equal(frames[1]!.error?.code, "already_initialized");
    run.runtime.input.end();
    await run.exit;
  });

  it("initialize with an unknown capability has no effect and a corrected retry works", async () => {
    const run = startServer();
    run.runtime.input.push(initLine("i1", ["status", "no.such.capability"]));
    const [rejected] = await run.waitFrames(1);
    assert.equal(rejected!.error?.code, "unsupported_capability");
    assert.equal(run.runtime.fs.exists("/home/user/.magi-code"), false);
    run.runtime.input.push(line("s0", "status"));
    run.runtime.input.push(initLine("i2", ["status"]));
    const frames = await run.waitFrames(3);
    assert.equal(frames[1]!.error?.code, "not_initialized");
    assert.equal((frames[2]!.result!.status as Record<string, unknown>).readiness, "ready");
    run.runtime.input.end();
    await run.exit;
  });

  it("initialize rejects 17 capabilities and duplicates with invalid_params", async () => {
    const names = Array.from({ length: 17 }, (_, i) => `cap${i}`);
    const { frames } = await runToEnd([
      initLine("i1", names),
      initLine("i2", ["status", "status"]),
      line("i3", "initialize", {}),
      line("i4", "initialize", { required_capabilities: [], extra: true }),
    ]);
    assert.deepEqual(frames.map((f) => f.error?.code), Array(4).fill("invalid_params"));
  });

  it("shutdown answers stopping, cancels a pending startup and exits 0", async () => {
    const { code, frames } = await runToEnd([initLine("i1") + line("x1", "shutdown") + line("late", "status")]);
    assert.equal(code, 0);
    assert.deepEqual(frames.map((f) => [f.id, f.result?.state ?? f.error?.code]), [
      ["x1", "stopping"],
      ["i1", "startup_cancelled"],
    ]);
  });

  it("shutdown before initialize is allowed", async () => {
    const { code, frames } = await runToEnd([line("x1", "shutdown")]);
    assert.equal(code, 0);
    assert.deepEqual(frames[0]!.result, { state: "stopping" });
  });

  it("every frame carries the envelope, one instance id and seq from 1", async () => {
    const { frames } = await runToEnd([line("a", "status") + line("b", "status") + "\n" + line("c", "bogus")]);
    assert.equal(frames.length, 4);
    const instance = frames[0]!.instance_id as string;
    assert.match(instance, UUID);
    frames.forEach((frame, index) => {
      assert.equal(frame.protocol, "magi-code.local-agent");
      assert.equal(frame.version, 1);
      assert.equal(frame.type, "response");
      assert.equal(frame.instance_id, instance);
      assert.equal(frame.seq, index + 1);
      assert.equal(("result" in frame ? 1 : 0) + ("error" in frame ? 1 : 0), 1);
    });
    assert.deepEqual(frames.map((f) => f.error?.code), ["not_initialized", "not_initialized", "invalid_frame", "unsupported_method"]);
  });
});

describe("server startup failures", () => {
  it("invalid settings fail startup with configuration_invalid and status reports it", async () => {
    const run = startServer();
    run.runtime.fs.writeFile("/home/user/.magi-code/settings.jsonc", '{ "model": { "provider": 7 } }');
    run.runtime.input.push(initLine("i1"));
    await run.waitFrames(1);
    run.runtime.input.push(line("s1", "status") + initLine("i2"));
    const frames = await run.waitFrames(3);
    assert.equal(frames[0]!.error?.code, "configuration_invalid");
    assert.equal(frames[1]!.result!.state, "failed");
    assert.equal(frames[1]!.result!.readiness, "configuration_invalid");
    assert.match(frames[1]!.result!.context_id as string, /^[0-9a-f]{64}$/);
    assert.equal(frames[2]!.error?.code, "already_initialized");
    run.runtime.input.end();
    await run.exit;
  });

  it("a selected provider whose key variable is unset fails with provider_unavailable", async () => {
    const run = startServer({ cwd: "/work/p" });
    run.runtime.fs.writeFile("/work/p/.magi-code/settings.jsonc", '{ "model": { "provider": "openai" } }');
    run.runtime.input.push(initLine("i1"));
    const [frame] = await run.waitFrames(1);
    assert.equal(frame!.error?.code, "provider_unavailable");
    run.runtime.input.end();
    await run.exit;
  });

  it("a relative MC_HOME is refused with configuration_invalid", async () => {
    const run = startServer({ env: { MC_HOME: "relative/home" } });
    run.runtime.input.push(initLine("i1"));
    const [frame] = await run.waitFrames(1);
    assert.equal(frame!.error?.code, "configuration_invalid");
    run.runtime.input.end();
    await run.exit;
  });

  it("an unwritable MC_HOME fails with startup_failed", async () => {
    const run = startServer({ env: { MC_HOME: "/ro/home" } });
    run.runtime.fs.faults.set("/ro/home", "permission");
    run.runtime.input.push(initLine("i1"));
    const [frame] = await run.waitFrames(1);
    assert.equal(frame!.error?.code, "startup_failed");
    run.runtime.input.end();
    await run.exit;
  });

  it("the context id is equal for storage-root aliases and differs for distinct roots", async () => {
    const contextOf = async (home: string, prepare: (run: ReturnType<typeof startServer>) => void) => {
      const run = startServer({ env: { MC_HOME: home } });
      prepare(run);
      run.runtime.input.push(initLine("i1"));
      const [frame] = await run.waitFrames(1);
      run.runtime.input.end();
      await run.exit;
      return (frame!.result!.status as Record<string, unknown>).context_id;
    };
    const real = await contextOf("/data/mc", () => {});
    const alias = await contextOf("/alias/mc", (run) => {
      void run.runtime.fs.mkdir("/data/mc", 0o700);
      run.runtime.fs.symlink("/data/mc", "/alias/mc");
    });
    const other = await contextOf("/data/other", () => {});
    assert.equal(alias, real);
    assert.notEqual(other, real);
  });
});

describe("server closing paths", () => {
  it("EOF after a partial frame answers incomplete_frame and does not execute it", async () => {
    const partial = line("x1", "shutdown").trimEnd();
    const { code, frames } = await runToEnd([line("s1", "status"), partial]);
    assert.equal(code, 0);
    assert.deepEqual(frames.map((f) => [f.id, f.error?.code]), [["s1", "not_initialized"], [null, "incomplete_frame"]]);
  });

  it("a frame of exactly 65,536 bytes is served and byte 65,537 closes with frame_too_large", async () => {
    const base = line("big", "status").trimEnd();
    const exact = base.slice(0, -1) + " ".repeat(LIMITS.input_frame_bytes - base.length) + "}";
    assert.equal(new TextEncoder().encode(exact).length, LIMITS.input_frame_bytes);
    const over = "{" + " ".repeat(LIMITS.input_frame_bytes);
    const { code, frames, run } = await runToEnd([exact + "\n", over, "\n" + line("after", "status")]);
    assert.equal(code, 0);
    assert.deepEqual(frames.map((f) => [f.id, f.error?.code]), [["big", "not_initialized"], [null, "frame_too_large"]]);
    assert.equal(run.runtime.input.closed, true);
  });

  it("protocol_mismatch answers and closes", async () => {
    const foreign = JSON.stringify({ protocol: "magi-code.local-agent", version: 2, id: "v2", method: "status", params: {} });
    const { code, frames } = await runToEnd([foreign + "\n" + line("after", "status")]);
    assert.equal(code, 0);
    assert.deepEqual(frames.map((f) => [f.id, f.error?.code]), [["v2", "protocol_mismatch"]]);
  });

  it("a stalled reader makes the child exit 1 at the output deadline", async () => {
    const clock = new ManualClock();
    const run = startServer({ clock });
    run.runtime.output.stall();
    run.runtime.input.push(line("s1", "status"));
    await new Promise((resolve) => setTimeout(resolve, 5));
    clock.advance(LIMITS.output_deadline_ms - 1);
    let exited = false;
    void run.exit.then(() => (exited = true));
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(exited, false);
    clock.advance(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    clock.advance(LIMITS.cleanup_wait_ms);
    assert.equal(await run.exit, 1);
    assert.equal(run.runtime.errors.text(), "");
  });

  it("a client that pipelines more answers than 32 output frames hold, without reading, sees exit 1 (overflow, not the deadline), not a hang", async () => {
    // The manual clock never moves, so the output deadline cannot be what ends the child. One id over and over
    // (`duplicate_id` answers, so the 4,096-id limit does not close first); each answer is longer than its
    // request, and the requests alone exceed the writer's 32 slots of one output frame.
    const run = startServer({ clock: new ManualClock() });
    run.runtime.output.stall();
    const text = line("again", "status").repeat(40_000);
    assert.ok(text.length > LIMITS.pending_output_frames * LIMITS.output_frame_bytes);
    run.runtime.input.push(text);
    assert.equal(await run.exit, 1);
  });

  it("a broken stdout makes the child exit 1 with nothing on stderr", async () => {
    const run = startServer();
    run.runtime.output.break();
    run.runtime.input.push(line("s1", "status"));
    assert.equal(await run.exit, 1);
    assert.equal(run.runtime.errors.text(), "");
  });

  it("EOF drains every queued response before exiting 0", async () => {
    // The client keeps at most the writer's 32 frames in flight (the spec leaves bounding them to it)
    // and sends EOF right behind its last window, without waiting for those answers.
    const run = startServer();
    const window = LIMITS.pending_output_frames;
    for (let sent = 0; sent < 500; sent += window) {
      await run.waitFrames(sent);
      run.runtime.input.push(Array.from({ length: Math.min(window, 500 - sent) }, (_, i) => line(`r${sent + i}`, "status")).join(""));
    }
    run.runtime.input.end();
    assert.equal(await run.exit, 0);
    assert.deepEqual(responses(run.frames()).map((frame) => frame.id), Array.from({ length: 500 }, (_, i) => `r${i}`));
  });
});
