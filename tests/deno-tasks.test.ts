/**
 * Every task in deno.json, run the way the README says (`npx deno task …`
 * after `npm ci`, which is `node_modules/.bin/deno`, the native binary).
 * `deno task` puts node_modules/.bin on PATH and runs a bare `deno` found
 * there as a JavaScript file, so each task names the binary by path; this
 * file fails when a task is added that it does not run.
 *
 * `test` is the Deno half of `npm test`: scripts/test.mjs runs it through
 * the task, so it is run in full there rather than again here. The compile
 * tasks need a `denort` for their target, which `deno compile` would
 * download; this machine reaches no download host, so a compile runs only
 * when `DENORT_BIN` (for this host's target) or a cached denort is present,
 * and otherwise prints plainly that it was skipped and why.
 */

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { collect, denoBinary, repoRoot, spawnDirect } from "./support/processes.ts";
import { guarded } from "./support/wire-client.ts";

const root = repoRoot();
const scratch = mkdtempSync(join(tmpdir(), "magi-deno-tasks-"));
after(() => rmSync(scratch, { recursive: true, force: true }));
const tasks: Record<string, string> = JSON.parse(readFileSync(join(root, "deno.json"), "utf8")).tasks;
const deno = { name: "deno" as const, command: denoBinary(), prefix: ["task", "--quiet"] };
const COMPILE_TARGETS: Record<string, string> = {
  "compile:linux-x64": "x86_64-unknown-linux-gnu",
  "compile:linux-arm64": "aarch64-unknown-linux-gnu",
  "compile:macos-x64": "x86_64-apple-darwin",
  "compile:macos-arm64": "aarch64-apple-darwin",
};
const HOST_TARGET = `${process.arch === "arm64" ? "aarch64" : "x86_64"}-${process.platform === "darwin" ? "apple-darwin" : "unknown-linux-gnu"}`;
const line = (id: string, method: string, params: unknown = {}) =>
  `${JSON.stringify({ protocol: "magi-code.local-agent", version: 1, id, method, params })}\n`;

/** Runs `command args` in the repository; resolves with its exit code and output. */
async function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawnDirect({ name: "deno", command, prefix: [] }, args, { cwd: root, env });
  child.stdin.end();
  const [stdout, stderr, code] = await Promise.all([collect(child.stdout), collect(child.stderr), guarded(child.exited, command)]);
  return { stdout, stderr, code };
}

/** Serves initialize, then (once answered) shutdown, through `command args` over pipes; resolves with the exit code and frames. */
async function serveOnce(command: string, args: readonly string[]) {
  const home = mkdtempSync(join(scratch, "home-"));
  const child = spawnDirect({ name: "deno", command, prefix: [] }, args, { cwd: root, env: { ...process.env, MC_HOME: home } });
  let text = "";
  child.stdout.on("data", (chunk: Uint8Array) => {
    const first = !text.includes("\n");
    text += new TextDecoder().decode(chunk);
    // A shutdown sent before initialize is answered would cancel its startup.
    if (first && text.includes("\n")) child.stdin.end(line("s", "shutdown"));
  });
  child.stdin.write(line("i", "initialize", { required_capabilities: ["status"] }));
  const code = await guarded(child.exited, `${args.join(" ")} exit`);
  const frames = text.trim().split("\n").map((frame) => JSON.parse(frame));
  return { code, frames };
}

/** Where a denort for `target` is, or why there is none. */
function denortFor(target: string): { path: string } | { skip: string } {
  const fromEnv = process.env.DENORT_BIN;
  if (fromEnv !== undefined && fromEnv !== "") {
    if (target !== HOST_TARGET) return { skip: `DENORT_BIN is set, but it is for this host (${HOST_TARGET}), not ${target}` };
    return existsSync(fromEnv) ? { path: fromEnv } : { skip: `DENORT_BIN=${fromEnv} does not exist` };
  }
  const version: string = JSON.parse(readFileSync(join(root, "node_modules", "deno", "package.json"), "utf8")).version;
  const denoDir = process.env.DENO_DIR ?? join(homedir(), ".cache", "deno");
  const cached = join(denoDir, "dl", "release", `v${version}`, `denort-${target}.zip`);
  if (existsSync(cached)) return { path: cached };
  return { skip: `no denort for ${target}: set DENORT_BIN to one (deno compile would download it, and this machine reaches no download host); looked for ${cached}` };
}

describe("deno.json tasks after npm ci", () => {
  it("names the deno binary by path in every task, never a bare `deno` that node_modules/.bin shadows", () => {
    for (const [name, command] of Object.entries(tasks)) {
      assert.ok(!/(^|[;&|]\s*)deno\s/.test(command), `task ${name} runs a bare deno: ${command}`);
    }
  });

  it("every task is run by the test command", () => {
    const covered = ["serve", "check", "test", "compile", ...Object.keys(COMPILE_TARGETS)].sort();
    assert.deepEqual(Object.keys(tasks).sort(), covered);
    assert.match(readFileSync(join(root, "scripts", "test.mjs"), "utf8"), /\["task", "test"/, "scripts/test.mjs runs the Deno suite through `deno task test`");
  });

  it("check: type-checks the Deno entry and mod.ts", async () => {
    const result = await run(deno.command, ["task", "check"]);
    assert.equal(result.code, 0, result.stderr);
  });

  it("serve: serves initialize and shutdown over pipes with the narrow permissions", async () => {
    const { code, frames } = await serveOnce(deno.command, [...deno.prefix, "serve"]);
    assert.equal(code, 0);
    assert.deepEqual(frames.map((frame) => [frame.id, frame.error?.code ?? null]).sort(), [["i", null], ["s", null]]);
  });

  for (const task of ["compile", ...Object.keys(COMPILE_TARGETS)]) {
    const target = COMPILE_TARGETS[task] ?? HOST_TARGET;
    it(`${task}: builds a single binary for ${target} when a denort is available`, async () => {
      const denort = denortFor(target);
      if ("skip" in denort) {
        console.log(`SKIPPED ${task}: ${denort.skip}`);
        return;
      }
      const output = task === "compile" ? "magi-code-deno" : `magi-code-${task.slice("compile:".length)}`;
      const env = { ...process.env };
      // A cached denort is found by deno compile itself; DENORT_BIN is passed on only when it was given.
      if (denort.path.endsWith(".zip")) delete env.DENORT_BIN;
      const result = await run(deno.command, ["task", task], env);
      assert.equal(result.code, 0, result.stderr);
      const binary = join(root, "dist", output);
      assert.ok(existsSync(binary));
      if (target !== HOST_TARGET) return;
      const { code, frames } = await serveOnce(binary, ["serve", "--stdio"]);
      assert.equal(code, 0);
      assert.equal(frames.length, 2);
    });
  }
});
