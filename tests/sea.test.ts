/**
 * The Node single executable, dist/magi-code-linux-x64 (scripts/build-sea.mjs):
 * built when missing or older than its sources, its script checked for
 * import() calls (which its code cache breaks on Node 20), then run as a
 * client runs it, with no Node on PATH: initialize, status and shutdown over a
 * socketpair, named FIFOs and anonymous pipes (the stdio kind detection
 * inside the executable), refused launches (exit 2), `--version`, and a full
 * turn with an approved tool call through the client library against the
 * loopback fake provider. In the Node test run every end-to-end test also
 * runs against it (tests/support/processes.ts `launchers()`); the Deno run
 * spawns it here only. Elsewhere than Linux x64 it says plainly it skipped.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { spawnAgent } from "../runtime/node-client.ts";
import { type FakeProvider, startFakeProvider } from "./support/fake-provider.ts";
import { collect, type Launcher, nodeBinary, repoRoot, seaBinary, seaHost, spawnDirect, spawnFifo, spawnPipeline } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { guarded, workspace } from "./support/wire-client.ts";

const root = repoRoot();
const scratch = mkdtempSync(join(tmpdir(), "magi-sea-"));
// No node on PATH, only the bash and cat that the FIFO and pipeline launchers run: the executable carries its own runtime.
const toolsOnlyPath = mkdtempSync(join(scratch, "path-"));
for (const tool of ["bash", "cat"]) {
  const found = spawnSync("bash", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
  if (found !== "") symlinkSync(found, join(toolsOnlyPath, tool));
}
let provider: FakeProvider | null = null;
after(async () => {
  await provider?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const sea: Launcher = { name: "sea", command: seaBinary(), prefix: [] };
const line = (id: string, method: string, params: Record<string, unknown> = {}) =>
  `${JSON.stringify({ protocol: "magi-code.local-agent", version: 1, id, method, params })}\n`;
const envFor = (name: string) => ({ ...process.env, PATH: toolsOnlyPath, MC_HOME: join(scratch, name) });

describe("the Node single executable (dist/magi-code-linux-x64)", () => {
  if (!seaHost) {
    it("is built and tested on Linux x64 only", () => {
      console.log(`SKIPPED the Node single executable tests: it is built for Linux x64 only, and this host is ${process.platform}-${process.arch}`);
    });
    return;
  }

  it("builds (or is already fresh) as one executable file", () => {
    const built = spawnSync(nodeBinary(), [join(root, "scripts", "build-sea.mjs"), "--if-stale"], { cwd: root, encoding: "utf8" });
    assert.equal(built.status, 0, built.stderr);
    assert.ok(existsSync(seaBinary()));
    assert.equal(readFileSync(seaBinary()).subarray(0, 4).toString("latin1"), "\x7fELF");
  });

  it("the script inside calls no import(): V8's code cache in a Node 20 executable has no loader to serve one", () => {
    // The script build-sea.mjs packed, kept beside the executable; esbuild prints the comments it keeps
    // (JSDoc types spell `import(…)`) on lines of their own, so any other line naming import() with an
    // argument calls it (an empty `import()` is only text in QuickJS's embedded error messages).
    const calls = readFileSync(`${seaBinary()}.cjs`, "utf8").split("\n")
      .filter((text) => /\bimport\s*\((?!\s*\))/.test(text) && !/^\s*(\*|\/\/|\/\*)/.test(text));
    assert.deepEqual(calls, []);
  });

  it("--version prints the package version and exits 0", async () => {
    const child = spawnDirect(sea, ["--version"], { env: envFor("version") });
    const [code, stdout] = await guarded(Promise.all([child.exited, collect(child.stdout)]), "the executable to exit");
    assert.equal(code, 0);
    const version: string = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
    assert.equal(stdout, `magi-code ${version}\n`);
  });

  for (const args of [[], ["serve"], ["bogus"]]) {
    it(`magi-code ${args.join(" ") || "(no arguments)"} exits 2 with one stderr line and no effects`, async () => {
      const env = envFor(`invalid-${args.join("_")}`);
      const child = spawnDirect(sea, args, { env });
      child.stdin.end();
      const [code, stdout, stderr] = await guarded(Promise.all([child.exited, collect(child.stdout), collect(child.stderr)]), "the executable to exit");
      assert.equal(code, 2);
      assert.equal(stdout, "");
      assert.equal(stderr.split("\n").filter((l) => l !== "").length, 1);
      assert.equal(existsSync(env.MC_HOME), false);
    });
  }

  it("a regular file or /dev/null as stdin is refused with exit 2 (the stdio kind is detected)", async () => {
    const file = join(scratch, "input.jsonl");
    writeFileSync(file, line("i", "initialize"));
    for (const path of [file, "/dev/null"]) {
      const fd = openSync(path, "r");
      const child = spawnDirect(sea, ["serve", "--stdio"], { env: envFor("stdio-kind"), stdio: [fd, "pipe", "pipe"] });
      const [code, stdout, stderr] = await guarded(Promise.all([child.exited, collect(child.stdout), collect(child.stderr)]), "the executable to exit");
      closeSync(fd);
      assert.equal(code, 2, path);
      assert.equal(stdout, "");
      assert.match(stderr, /must be pipes/);
    }
  });

  for (const [transport, spawner] of [["a socketpair", spawnDirect], ["named FIFOs", spawnFifo], ["anonymous pipes", spawnPipeline]] as const) {
    it(`serve --stdio over ${transport}: initialize, status and shutdown, exit 0, nothing on stderr`, async () => {
      const child = spawner(sea, ["serve", "--stdio"], { env: envFor(`serve-${transport}`) });
      const stdout = collect(child.stdout);
      const stderr = collect(child.stderr);
      let text = "";
      child.stdout.on("data", (chunk: Uint8Array) => {
        const first = !text.includes("\n");
        text += new TextDecoder().decode(chunk);
        // A shutdown sent before initialize is answered would cancel its startup.
        if (first && text.includes("\n")) child.stdin.end(line("s", "status") + line("x", "shutdown"));
      });
      child.stdin.write(line("i", "initialize", { required_capabilities: ["status", "shutdown"] }));
      const [code, output, errors] = await guarded(Promise.all([child.exited, stdout, stderr]), "the executable to exit");
      assert.equal(code, 0);
      assert.equal(errors, "");
      const frames = output.trim().split("\n").map((frame) => JSON.parse(frame));
      assert.deepEqual(frames.map((f) => [f.id, f.error?.code ?? f.result?.state ?? "ok"]), [["i", "ok"], ["s", "idle"], ["x", "stopping"]]);
    });
  }

  it("a turn with an approved tool call through the client library against the loopback provider", async () => {
    provider ??= await startFakeProvider();
    const ws = workspace(scratch, "turn", provider);
    provider.enqueue(reply("openai-chat", {
      text: ["Writing ", "it."],
      calls: [{ id: "call_1", name: "write_file", args: { path: "hi.txt", content: "hi\n" } }],
    }));
    provider.enqueue(reply("openai-chat", { text: ["Done."] }));
    const agent = spawnAgent({ command: sea.command, args: [], cwd: ws.cwd, env: { ...ws.env, PATH: toolsOnlyPath } });
    const init = await guarded(agent.initialize(["session.create", "turn.start", "approval.answer", "history.page", "shutdown"]), "initialize");
    assert.equal(init.status.readiness, "ready");
    const session = await agent.request("session.create", {});
    const run = await agent.startTurn(session.session_id, "write hi.txt", { onApproval: (approval) => void approval.answer(true) });
    const finished = await guarded(run.finished, "run.finished");
    assert.deepEqual([finished.outcome, finished.persistence, finished.error_code], ["completed", "durable", null]);
    assert.equal(run.text(), "Writing it.\n\nDone.");
    assert.equal(readFileSync(join(ws.cwd, "hi.txt"), "utf8"), "hi\n");
    const page = await agent.request("history.page", { session_id: session.session_id, revision: finished.revision! });
    assert.deepEqual(page.entries.map((entry) => entry.kind), ["user", "assistant", "activity", "assistant"]);
    assert.equal(await guarded(agent.shutdown(), "exit"), 0);
  });
});
