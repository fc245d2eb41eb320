import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { after, describe, it } from "node:test";
import { createMemoryRuntime } from "../runtime/memory.ts";
import type { Runtime } from "../src/host/runtime.ts";
import { OUTPUT_HEAD_BYTES, shellEnvironment, shellTool } from "../src/runner/tools/shell.ts";
import { MAX_OUTPUT_BYTES, MAX_SUMMARY_BYTES, type AnyTool, type ToolResult } from "../src/runner/tools/tool.ts";
import { eventually, HANG_GUARD_MS } from "./support/hang-guard.ts";
import { bytesOf, diskWorld, invokeTool, removeWorlds, spawningRuntimes, type World } from "./support/tools.ts";

after(removeWorlds);

const SECRET = "magi-shell-secret-0123456789abcdef";

/** Whether `pid` is still a live (non-zombie) process: zombies are dead already, reaping them is init's business. */
function running(pid: number): boolean {
  const state = spawnSync("ps", ["-o", "stat=", "-p", String(pid)]).stdout.toString().trim();
  return state !== "" && !state.startsWith("Z");
}

/**
 * Resolves once `pid` is gone, within a generous hang guard that claims nothing about speed. The
 * processes waited for sleep for {@link LINGER_S}, far longer than the guard, so only a kill explains
 * one going away; a process still there when the guard gives up is killed so no test leaves it behind.
 */
async function gone(pid: number, what: string): Promise<void> {
  try {
    await eventually(() => !running(pid), what, { intervalMs: 20 });
  } finally {
    if (running(pid)) process.kill(pid, "SIGKILL");
  }
}

/** How long the grandchildren sleep: longer than any hang guard. */
const LINGER_S = 10 * HANG_GUARD_MS / 1000;

async function waitForFile(path: string): Promise<string> {
  let text = "";
  await eventually(() => {
    try {
      text = readFileSync(path, "utf8");
    } catch {
      return false; // Not written yet.
    }
    return text.endsWith("\n");
  }, `${path} to be written`, { intervalMs: 20 });
  return text.trim();
}

function check(result: ToolResult): ToolResult {
  assert.ok(bytesOf(result.output) <= MAX_OUTPUT_BYTES);
  assert.ok(bytesOf(result.summary) <= MAX_SUMMARY_BYTES);
  return result;
}

for (const [name, runtime] of spawningRuntimes()) {
  describe(`shell tool: ${name}`, () => {
    const world = (): World => diskWorld(runtime);
    const shell = (w: World, args: Record<string, unknown>, options: Parameters<World["context"]>[0] = {}) =>
      invokeTool(shellTool as AnyTool, args, w.context(options)).then(check);

    it("reports the exit code, combines stdout and stderr, and runs in the workspace", async () => {
      const w = world();
      const ok = await shell(w, { command: "pwd; echo oops >&2" });
      assert.equal(ok.ok, true);
      assert.match(ok.output, new RegExp(`^${w.workspace}\\noops\\n\\[Exit code 0; ran \\d+\\.\\d s; \\d+ bytes of output\\.\\]$`));
      assert.match(ok.summary, /^shell "pwd; echo oops >&2": exit code 0 after \d+\.\d s, \d+ bytes of output$/);
      const failed = await shell(w, { command: "printf 'SENTINEL-%s' OUTPUT; exit 3" });
      assert.equal(failed.ok, false);
      assert.match(failed.summary, /: exit code 3 after/);
      assert.ok(!failed.summary.includes("SENTINEL-OUTPUT"), "the summary never carries output");
      const quiet = await shell(w, { command: "true" });
      assert.match(quiet.output, /^\(no output\)\n\[Exit code 0;/);
      const signalled = await shell(w, { command: "kill -9 $$" });
      assert.match(signalled.summary, /: killed by SIGKILL after/);
      const long = await shell(w, { command: `true ${"#".repeat(30_000)}\necho two` });
      assert.match(long.summary, /^shell "true #+…": exit code 0 after/);
    });

    it("a timeout kills the whole process group, grandchildren included", async () => {
      const w = world();
      const pidFile = `${w.workspace}/grandchild.pid`;
      const result = await shell(w, { command: `sleep ${LINGER_S} & echo $! > ${pidFile}; wait`, timeout_seconds: 1 });
      assert.equal(result.ok, false);
      assert.match(result.summary, /: timed out after 1 s \(process group sent SIGTERM\)/);
      await gone(Number(await waitForFile(pidFile)), "the grandchild sleep to be gone");
    });

    it("cancel via the signal kills the group with SIGKILL when it ignores SIGTERM", async () => {
      const w = world();
      const pidFile = `${w.workspace}/stubborn.pid`;
      const controller = new AbortController();
      const pending = shell(w, { command: `trap '' TERM; sleep ${LINGER_S} & echo $! > ${pidFile}; wait; wait; wait` }, { signal: controller.signal });
      const grandchild = Number(await waitForFile(pidFile));
      controller.abort();
      const result = await pending;
      assert.equal(result.ok, false);
      assert.match(result.summary, /: cancelled \(process group sent SIGTERM, then SIGKILL\)/);
      await gone(grandchild, "the stubborn grandchild to be gone");
    });

    it("does not start when already cancelled, and does not wait for a background job with redirected output", async () => {
      const w = world();
      const controller = new AbortController();
      controller.abort();
      const cancelled = await shell(w, { command: `touch ${w.workspace}/ran` }, { signal: controller.signal });
      assert.equal(cancelled.summary, 'shell "touch ' + w.workspace + '/ran": cancelled before it started');
      assert.throws(() => readFileSync(`${w.workspace}/ran`));
      const detached = await shell(w, { command: "sleep 30 >/dev/null 2>&1 & echo $!" });
      const pid = Number(detached.output.split("\n")[0]);
      // Still running: the call returned without waiting for the detached sleep.
      assert.ok(running(pid));
      process.kill(pid, "SIGKILL");
    });

    it("caps output at 64 KiB keeping head and tail, with a note", async () => {
      const w = world();
      const result = await shell(w, { command: "echo FIRST; i=0; while [ $i -lt 4000 ]; do echo 'line of some forty characters of text.....'; i=$((i+1)); done; echo LAST" });
      assert.equal(result.ok, true);
      assert.ok(result.output.startsWith("FIRST\n"));
      assert.match(result.output, /\n\[… [\d.]+ KiB of output omitted …\]\n/);
      assert.match(result.output, /\nLAST\n\[Exit code 0; ran [\d.]+ s; [\d.]+ KiB of output\.\]$/);
      assert.ok(bytesOf(result.output) > 60_000);
    });

    it("redacts secrets in output, even across the head/tail cut, and keeps credential variables from the command", async () => {
      const w = world();
      const withEnv: Runtime = { ...runtime, envAll: () => ({ ...runtime.envAll(), MY_API_KEY: "visible?", PLAIN: SECRET, KEEP: "kept" }) };
      const context = { ...w.context({ secrets: [SECRET] }), runtime: withEnv };
      const env = await invokeTool(shellTool as AnyTool, { command: 'echo "key=$MY_API_KEY plain=$PLAIN keep=$KEEP"' }, context);
      assert.match(env.output, /^key= plain= keep=kept\n/);
      // Place the secret so that it straddles the head cut, then at the end.
      const pad = OUTPUT_HEAD_BYTES - 10;
      const printed = await invokeTool(shellTool as AnyTool, {
        command: `head -c ${pad} /dev/zero | tr '\\0' 'p'; echo '${SECRET}'; head -c 100000 /dev/zero | tr '\\0' 'q'; echo; echo 'bye ${SECRET}'`,
      }, context);
      check(printed);
      for (let cut = 8; cut <= SECRET.length; cut++) {
        assert.ok(!printed.output.includes(SECRET.slice(0, cut)) && !printed.output.includes(SECRET.slice(-cut)), `no ${cut}-character fragment`);
      }
      assert.match(printed.output, /bye \[redacted\]\n/);
    });

    it("a runtime that cannot spawn yields a result, not an exception", async () => {
      const memory = createMemoryRuntime();
      const result = await invokeTool(shellTool as AnyTool, { command: "true" }, {
        runtime: memory,
        workspace: "/work/project",
        home: "/home/user/.magi-code",
        signal: new AbortController().signal,
        secrets: [],
      });
      assert.deepEqual(result, {
        ok: false,
        output: "The shell could not be started: not found.",
        summary: 'shell "true": could not start',
        // What its tool card states: the command never ran.
        facts: { kind: "shell", ending: "not_started", exitCode: null, signal: null, durationMs: null, output: null },
      });
    });
  });
}

describe("shellEnvironment()", () => {
  it("drops credential-named variables and any variable holding a known secret", () => {
    const { env, removed } = shellEnvironment(
      { PATH: "/bin", GITHUB_TOKEN: "t", aws_secret_access_key: "k", DB_PASSWORD: "p", URL: `https://x/?k=${SECRET}`, HOME: "/h" },
      [SECRET, "short"],
    );
    assert.deepEqual(env, { PATH: "/bin", HOME: "/h" });
    assert.deepEqual(removed, ["DB_PASSWORD", "GITHUB_TOKEN", "URL", "aws_secret_access_key"]);
  });
});
