#!/usr/bin/env node
// The speed claims the tests no longer make (a test proves *what* is answered and bounds
// its waits only by hang guards): how long hostile inputs and stuck peers take. Prints the
// median (and min / max) of each case over --runs runs; never asserts, and the exit code
// never depends on a figure. Runs the compiled tree (dist/, from `npx tsc -p tsconfig.json`;
// `node scripts/bundle.mjs` for the spawned Node child) in this process, and spawns both
// runtimes' entry points for the stuck-client case.
//
//   node bench/hostile-inputs.mjs [--runs N] [--quick] [--no-children] [--json FILE]
import { spawnSync } from "node:child_process";
import { chmodSync, closeSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { childEnv, describeTree, launchers, median, ms, parseFlags, ROOT, spawnChild, table } from "./lib.mjs";

const flags = parseFlags(process.argv.slice(2), ["quick", "no-children"]);
const runs = Number(flags.runs ?? (flags.quick ? 3 : 9));
const dist = (path) => import(pathToFileURL(join(ROOT, "dist", path)).href);

const { parseFrame } = await dist("src/protocol/json.js");
const { redactSecrets } = await dist("src/util/redaction.js");
const { compileGlob } = await dist("src/runner/tools/glob-match.js");
const { grepTool } = await dist("src/runner/tools/grep.js");
const { shellTool } = await dist("src/runner/tools/shell.js");
const { readSessionFile } = await dist("src/store/session-file.js");
const { main } = await dist("src/cli.js");
const { createServer } = await dist("src/server.js");
const { createMemoryRuntime } = await dist("runtime/memory.js");
const { createNodeRuntime, nodeFileSystem } = await dist("runtime/node-runtime.js");
const { memoryWorld, diskWorld, invokeTool, removeWorlds } = await dist("tests/support/tools.js");

const encoder = new TextEncoder();
const rows = [["case", "median", "min", "max", "what the test proves instead"]];
const results = {};

async function measure(name, proves, body) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await body();
    times.push(performance.now() - started);
  }
  results[name] = { median: median(times), min: Math.min(...times), max: Math.max(...times) };
  rows.push([name, ms(results[name].median), ms(results[name].min), ms(results[name].max), proves]);
}

// --- In-process cases. ---
const deepArrays = encoder.encode("[".repeat(100_000) + "]".repeat(100_000));
await measure("parseFrame, 100,000-deep array", "json.test.ts: invalid_frame whatever follows the 33rd [", () => parseFrame(deepArrays));

const deepFrames = [
  `{"protocol":"magi-code.local-agent","version":1,"id":"deep","method":"status","params":{"x":${"[".repeat(32_000)}}}`,
  "[".repeat(65_535),
  `{"a":`.repeat(13_000),
].map((frame) => `${frame}\n`).join("");
await measure("server, 3 frames of 32,000-deep nesting + status", "framing.property.test.ts: answers and order", async () => {
  const runtime = createMemoryRuntime();
  const exit = createServer(runtime).serve();
  runtime.input.push(deepFrames);
  runtime.input.end();
  await exit;
});

for (const unit of ["eyJ", "sk-", "a1", "Bearer ", "xoxb-"]) {
  const text = unit.repeat(20_000);
  await measure(`redactSecrets, ${JSON.stringify(unit)} x 20,000`, "redaction.test.ts: exact answers", () => redactSecrets(text, []));
}

const stars = compileGlob("*a*a*a*a*a*a*a*a*b").matcher;
const globstars = compileGlob(`${"**/".repeat(40)}z`).matcher;
const aaa = "a".repeat(255);
const deepPath = `${"a/".repeat(60)}y`;
await measure("glob, *a*a*a*a*a*a*a*a*b and 40 x **/ on hostile paths", "tools-files.test.ts: answers, bounded state", () => {
  stars.matchPath(aaa);
  globstars.matchPath(deepPath);
});

const grepWorld = memoryWorld();
grepWorld.file("ws/long.txt", `${"a".repeat(100_000)}\n`.repeat(5));
await measure("grep, 4 ReDoS patterns over 5 x 100,000 a", "tools-files.test.ts: complete search, 0 matches", async () => {
  for (const pattern of ["(a*)*b", "a*a*a*a*a*b", "(a|aa)+b$", ".*a.*a.*a.*b"]) await invokeTool(grepTool, { pattern }, grepWorld.context());
});

const scratch = mkdtempSync(join(tmpdir(), "magi-bench-hostile-"));
const SID = "bench";
const refusals = {
  symlink: () => {
    const dir = mkdtempSync(join(scratch, "l-"));
    writeFileSync(join(dir, "target"), "{}\n", { mode: 0o600 });
    symlinkSync(join(dir, "target"), join(dir, `${SID}.jsonl`));
    return join(dir, `${SID}.jsonl`);
  },
  "world-writable": () => {
    const path = join(mkdtempSync(join(scratch, "w-")), `${SID}.jsonl`);
    writeFileSync(path, "{}\n");
    chmodSync(path, 0o666);
    return path;
  },
  FIFO: () => {
    const path = join(mkdtempSync(join(scratch, "f-")), `${SID}.jsonl`);
    spawnSync("mkfifo", ["-m", "600", path]);
    return path;
  },
  "sparse 65 MiB": () => {
    const path = join(mkdtempSync(join(scratch, "s-")), `${SID}.jsonl`);
    const fd = openSync(path, "w", 0o600);
    ftruncateSync(fd, 65 * 1_048_576);
    closeSync(fd);
    return path;
  },
};
const { createSha256 } = await dist("runtime/memory.js");
const readOptions = { maxBytes: 64 * 1_048_576, maxLines: 100_000, signal: new AbortController().signal, createSha256 };
for (const [name, make] of Object.entries(refusals)) {
  const path = make();
  await measure(`readSessionFile refuses a ${name} file (node fs)`, "session-file.test.ts: refusal code, nothing written", () =>
    readSessionFile(nodeFileSystem, path, SID, readOptions));
}

await measure("invalid launch, stderr never drains", "startup-edges.test.ts: exits after 100 ms of a ManualClock", async () => {
  const runtime = createMemoryRuntime({ args: ["bogus"] });
  runtime.errors.stall();
  await main(runtime);
});

const node = createNodeRuntime();
const shellWorld = diskWorld(node);
await measure("shell timeout_seconds 1 with a background sleep: call returns", "tools-shell.test.ts: the grandchild is gone", async () => {
  await invokeTool(shellTool, { command: "sleep 60 & wait", timeout_seconds: 1 }, shellWorld.context());
});

// --- Spawned children: a client that stops reading. ---
if (!flags["no-children"]) {
  for (const launcher of launchers(flags)) {
    const times = [];
    for (let i = 0; i < Math.min(runs, 3); i++) {
      const home = mkdtempSync(join(scratch, "home-"));
      mkdirSync(join(home, "mc"), { recursive: true });
      const { child, exited } = spawnChild(launcher, ["serve", "--stdio"], { env: childEnv({ extra: { MC_HOME: join(home, "mc") } }), cwd: home });
      child.stdout.pause();
      child.stdin.on("error", () => {});
      let stalledAt = null;
      let sent = 0;
      let done = false;
      exited.then(() => (done = true));
      const feed = () => {
        while (sent < 40_000 && !done) {
          sent++;
          const ok = child.stdin.write(`${JSON.stringify({ protocol: "magi-code.local-agent", version: 1, id: `p${sent}`, method: "status", params: {} })}\n`);
          if (!ok) {
            stalledAt ??= performance.now();
            return void child.stdin.once("drain", feed);
          }
        }
      };
      feed();
      await exited;
      times.push(performance.now() - (stalledAt ?? performance.now()));
      child.stdout.destroy();
    }
    const name = `${launcher.name}: client stops reading -> exit 1, after stdin backed up`;
    results[name] = { median: median(times), min: Math.min(...times), max: Math.max(...times) };
    rows.push([name, ms(results[name].median), ms(results[name].min), ms(results[name].max), "e2e.test.ts: exit 1, empty stderr"]);
  }
}

removeWorlds();
rmSync(scratch, { recursive: true, force: true });
process.stdout.write(`hostile inputs and stuck peers, ${runs} runs each, tree ${describeTree()}, ${process.version}\n\n${table(rows)}\n`);
if (typeof flags.json === "string") writeFileSync(flags.json, `${JSON.stringify({ runs, results }, null, 2)}\n`);
