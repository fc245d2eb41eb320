import assert from "node:assert/strict";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { after, describe, it } from "node:test";
import { collect, type Launcher, launchers, type Spawned, spawnDirect, spawnFifo, spawnPipeline } from "./support/processes.ts";
import { guarded } from "./support/hang-guard.ts";
import { withoutChildScope } from "./support/child-scope.ts";

const home = mkdtempSync(join(tmpdir(), "magi-e2e-"));
after(() => rmSync(home, { recursive: true, force: true }));

const env = { ...process.env, MC_HOME: join(home, "mc") };
const line = (id: string, method: string, params: Record<string, unknown> = {}) =>
  `${JSON.stringify({ protocol: "magi-code.local-agent", version: 1, id, method, params })}\n`;
const init = line("i1", "initialize", { required_capabilities: ["status", "shutdown"] });
const serve = ["serve", "--stdio"];
const spawners = [["socketpair", spawnDirect], ["named FIFOs", spawnFifo]] as const;

type Frame = { id: string | null; seq: number; instance_id: string; result?: Record<string, unknown>; error?: { code: string } };

function parseFrames(text: string): Frame[] {
  assert.ok(text === "" || text.endsWith("\n"), "stdout ends with a complete frame");
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}


/**
 * Sends `count` status requests as a bounded client does (the spec leaves
 * bounding in-flight requests to the client): windows of 16, each after the
 * previous window was answered. EOF follows right behind the last window,
 * unanswered. Resolves with everything on stdout. (Unbounded pipelining is
 * tests/e2e-pipelining.test.ts.)
 */
async function burst(child: Spawned, prefix: string, count: number): Promise<string> {
  const window = 16;
  let text = "";
  let lines = 0;
  let closed = false;
  let wake: (() => void) | null = null;
  const ended = once(child.stdout, "end").then(() => {
    closed = true;
    wake?.();
  });
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    text += chunk;
    for (const char of chunk) if (char === "\n") lines++;
    wake?.();
  });
  for (let sent = 0; sent < count; sent += window) {
    while (lines < sent) {
      assert.ok(!closed, `stdout ended after ${lines} of ${sent} answers`);
      await guarded(new Promise<void>((resolve) => (wake = resolve)), `answers to ${sent} requests`);
    }
    const requests = Array.from({ length: Math.min(window, count - sent) }, (_, i) => line(`${prefix}${sent + i}`, "status")).join("");
    if (sent + window >= count) child.stdin.end(requests);
    else child.stdin.write(requests);
  }
  await guarded(ended, "the end of stdout");
  return text;
}

async function conversation(launcher: Launcher, spawner: typeof spawnDirect): Promise<{ code: number | null; frames: Frame[]; stderr: string }> {
  const child = spawner(launcher, serve, { env });
  const stdout = collect(child.stdout);
  const stderr = collect(child.stderr);
  child.stdin.write(line("s0", "status") + init);
  let buffer = "";
  await guarded(new Promise<void>((resolve) => {
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      if (buffer.includes('"id":"i1"')) resolve();
    });
  }), "the initialize response");
  child.stdin.write(line("s1", "status") + line("i2", "initialize", { required_capabilities: [] }) + line("x1", "shutdown"));
  child.stdin.end();
  const [code, text, errors] = await guarded(Promise.all([child.exited, stdout, stderr]), "the child to exit");
  return { code, frames: parseFrames(text), stderr: errors };
}

for (const [transport, spawner] of spawners) {
  describe(`end to end over ${transport}`, () => {
    it("initialize, status and shutdown behave identically under every launcher", async () => {
      const transcripts = [];
      for (const launcher of launchers()) {
        const { code, frames, stderr } = await conversation(launcher, spawner);
        assert.equal(code, 0, `${launcher.name} exits 0`);
        assert.equal(stderr, "");
        assert.deepEqual(frames.map((f) => f.seq), [1, 2, 3, 4, 5]);
        assert.deepEqual(frames.map((f) => [f.id, f.error?.code ?? f.result?.state ?? "ok"]), [
          ["s0", "not_initialized"],
          ["i1", "ok"],
          ["s1", "idle"],
          ["i2", "already_initialized"],
          ["x1", "stopping"],
        ]);
        assert.equal(new Set(frames.map((f) => f.instance_id)).size, 1);
        transcripts.push(withoutChildScope(frames));
      }
      for (const transcript of transcripts.slice(1)) assert.deepEqual(transcript, transcripts[0]);
    });

    for (const launcher of launchers()) {
      it(`${launcher.name}: EOF after a burst delivers every byte, then exit 0`, async () => {
        const count = 700;
        const child = spawner(launcher, serve, { env });
        const stderr = collect(child.stderr);
        const [code, text, errors] = await guarded(Promise.all([child.exited, burst(child, "b", count), stderr]), "the child to exit");
        assert.equal(code, 0);
        assert.equal(errors, "");
        assert.ok(text.length > 64 * 1024, `more than 64 KiB of output (${text.length})`);
        const frames = parseFrames(text);
        assert.deepEqual(frames.map((f) => f.id), Array.from({ length: count }, (_, i) => `b${i}`));
        assert.deepEqual(frames.map((f) => f.seq), Array.from({ length: count }, (_, i) => i + 1));
      });

      // How soon the child gives up is the writer's business (its output deadline and queue bound, proven
      // under a ManualClock in writer.schedule.test.ts); here only that it does, with exit 1 and nothing on
      // stderr. The wait is a hang guard, not a speed claim.
      it(`${launcher.name}: a client that stops reading sees exit 1, silently`, async () => {
        const child = spawner(launcher, serve, { env });
        child.stdout.pause();
        const stderr = collect(child.stderr);
        child.stdin.on("error", () => {});
        let sent = 0;
        const feed = () => {
          while (sent < 40_000 && !child.done()) {
            sent++;
            if (!child.stdin.write(line(`p${sent}`, "status"))) return void child.stdin.once("drain", feed);
          }
        };
        feed();
        const code = await guarded(child.exited, `${launcher.name} exit after its client stopped reading`);
        assert.equal(code, 1);
        assert.equal(await guarded(stderr, "stderr end"), "");
        child.stdout.destroy();
        child.stdin.destroy();
      });

      it(`${launcher.name}: a client that closes its read end sees exit 1, silently`, async () => {
        const child = spawner(launcher, serve, { env });
        const stderr = collect(child.stderr);
        // A named FIFO's reader must have opened before closing means anything to the writer.
        if ("pending" in child.stdout && child.stdout.pending) await guarded(once(child.stdout, "ready"), "the FIFO reader to open");
        child.stdout.destroy();
        child.stdin.on("error", () => {});
        child.stdin.write(line("c1", "status") + line("c2", "status"));
        assert.equal(await guarded(child.exited, "the child to exit"), 1);
        assert.equal(await guarded(stderr, "stderr end"), "");
        child.stdin.destroy();
      });
    }
  });
}

describe("end to end through a shell pipeline (cat | magi-code | cat)", () => {
  it("initialize, status and shutdown behave identically under every launcher", async () => {
    const transcripts = [];
    for (const launcher of launchers()) {
      const { code, frames, stderr } = await conversation(launcher, spawnPipeline);
      assert.equal(code, 0, `${launcher.name} exits 0`);
      assert.equal(stderr, "");
      assert.deepEqual(frames.map((f) => f.seq), [1, 2, 3, 4, 5]);
      transcripts.push(withoutChildScope(frames));
    }
    for (const transcript of transcripts.slice(1)) assert.deepEqual(transcript, transcripts[0]);
  });

  for (const launcher of launchers()) {
    it(`${launcher.name}: EOF after a burst delivers every byte through the pipeline, then exit 0`, async () => {
      const count = 700;
      const child = spawnPipeline(launcher, serve, { env });
      const [code, text] = await guarded(Promise.all([child.exited, burst(child, "q", count)]), "the child to exit");
      assert.equal(code, 0);
      assert.ok(text.length > 64 * 1024);
      assert.deepEqual(parseFrames(text).map((f) => f.id), Array.from({ length: count }, (_, i) => `q${i}`));
    });
  }
});

describe("settings through the real entry points", () => {
  for (const launcher of launchers()) {
    it(`${launcher.name}: a JSONC settings file with comments selects a custom provider`, async () => {
      const mcHome = join(home, `settings-${launcher.name}`);
      mkdirSync(mcHome, { recursive: true });
      writeFileSync(
        join(mcHome, "settings.jsonc"),
        `// global settings
{
  "model": { "provider": "local-vllm", "model": "qwen-coder", },
  "providers": { "endpoints": { "local-vllm": { "api": "openai-chat", "base_url": "http://127.0.0.1:8000/v1" } } },
}
`,
      );
      const child = spawnDirect(launcher, serve, { env: { ...process.env, MC_HOME: mcHome } });
      const stdout = collect(child.stdout);
      child.stdin.write(init);
      await guarded(new Promise<void>((resolve) => child.stdout.once("data", () => resolve())), "the first output");
      child.stdin.end();
      const [code, text] = await guarded(Promise.all([child.exited, stdout]), "the child to exit");
      assert.equal(code, 0);
      const status = parseFrames(text)[0]!.result!.status as Record<string, unknown>;
      assert.deepEqual([status.readiness, status.provider, status.model], ["ready", "local-vllm", "qwen-coder"]);
    });
  }
});

describe("invalid launches", () => {
  for (const launcher of launchers()) {
    for (const args of [[], ["serve"], ["serve", "--stdio", "--verbose"], ["serve", "--tcp"], ["bogus"], ["--stdio"], ["--help", "extra"]]) {
      it(`${launcher.name}: magi-code ${args.join(" ") || "(no arguments)"} exits 2 with one stderr line and no effects`, async () => {
        const mcHome = join(home, `untouched-${launcher.name}-${args.join("_")}`);
        const child = spawnDirect(launcher, args, { env: { ...process.env, MC_HOME: mcHome } });
        child.stdin.end();
        const [code, stdout, stderr] = await guarded(Promise.all([child.exited, collect(child.stdout), collect(child.stderr)]), "the child to exit");
        assert.equal(code, 2);
        assert.equal(stdout, "");
        assert.equal(stderr.split("\n").filter((l) => l !== "").length, 1);
        assert.ok(!stderr.includes("bogus") && !stderr.includes("--tcp"), "the launch error does not echo input");
        assert.equal(existsSync(mcHome), false);
      });
    }

    it(`${launcher.name}: --help and --version print and exit 0`, async () => {
      for (const flag of ["--help", "--version"]) {
        const child = spawnDirect(launcher, [flag], { env });
        const [code, stdout] = await guarded(Promise.all([child.exited, collect(child.stdout)]), "the child to exit");
        assert.equal(code, 0);
        assert.match(stdout, /^magi-code \d+\.\d+\.\d+/);
      }
    });

    it(`${launcher.name}: a regular file or /dev/null as stdin is refused with exit 2`, async () => {
      const file = join(home, "input.jsonl");
      writeFileSync(file, init);
      for (const path of [file, "/dev/null"]) {
        const fd = openSync(path, "r");
        const mcHome = join(home, `untouched-stdio-${launcher.name}`);
        const child = spawnDirect(launcher, serve, { env: { ...process.env, MC_HOME: mcHome }, stdio: [fd, "pipe", "pipe"] });
        const [code, stdout, stderr] = await guarded(Promise.all([child.exited, collect(child.stdout), collect(child.stderr)]), "the child to exit");
        closeSync(fd);
        assert.equal(code, 2, path);
        assert.equal(stdout, "");
        assert.equal(stderr.split("\n").filter((l) => l !== "").length, 1);
        assert.equal(existsSync(mcHome), false);
      }
    });

    it(`${launcher.name}: a TCP socket as stdin is refused with exit 2`, async () => {
      const server = createServer((socket) => socket.on("error", () => {}));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const port = (server.address() as { port: number }).port;
        const mcHome = join(home, `untouched-tcp-${launcher.name}`);
        const script = `exec 3<>/dev/tcp/127.0.0.1/${port}; exec "$@" <&3`;
        const child = spawn("bash", ["-c", script, "bash", launcher.command, ...launcher.prefix, ...serve], { env: { ...process.env, MC_HOME: mcHome } });
        const [code, stdout, stderr] = await guarded(Promise.all([once(child, "exit").then(([exit]) => exit), collect(child.stdout), collect(child.stderr)]), "the child to exit");
        assert.equal(code, 2);
        assert.equal(stdout, "");
        assert.match(stderr, /must be pipes/);
        assert.equal(existsSync(mcHome), false);
      } finally {
        server.close();
      }
    });
  }
});
