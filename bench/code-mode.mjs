#!/usr/bin/env node
// Code Mode against direct tool calls, through a real child and a loopback
// fake provider (OpenAI chat-completions SSE, the `ollama` endpoint pointed
// at it). Prints figures; never asserts a timing. See bench/README.md and
// docs/features/code-mode.md.
//
//   node bench/code-mode.mjs [--runs N] [--runtimes node,deno] [--quick]
//
// Per runtime, one child with `code_mode.enabled`, a workspace of ten 2 KiB
// files, and per run, each turn in a fresh session:
//   plain:   a one-word answer (no tool): the turn's floor;
//   host:    one `code` call whose program is `return 1`, then an answer:
//            what starting the sandbox host adds;
//   direct:  ten model requests, each calling read_file once, then an answer
//            (eleven requests, each resending the earlier results);
//   program: one `code` call whose program reads the ten files and returns
//            their sizes, then an answer (two requests).
// For each: wall time from writing turn.start to the run.finished line, the
// child's CPU time over the turn (utime+stime of the child and of the
// sandbox hosts it reaped, from /proc/<pid>/stat), and the bytes of the
// request bodies the provider received. Medians over --runs.
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { childEnv, freshDirs, launchers, median, ms, parseFlags, readLines, requestLine, spawnChild, table } from "./lib.mjs";

const flags = parseFlags(process.argv.slice(2), ["quick"]);
const runs = Number(flags.runs ?? (flags.quick === true ? 2 : 5));
const only = typeof flags.runtimes === "string" ? new Set(flags.runtimes.split(",")) : null;
const TIMEOUT_MS = 60_000;
const FILES = Array.from({ length: 10 }, (_, index) => `f${index}.txt`);
const TICK_MS = 10; // USER_HZ is 100 on Linux

const PROGRAM = `const sizes = {};
for (const path of ${JSON.stringify(FILES)}) sizes[path] = (await tools.read_file({ path })).length;
return sizes;`;

// ---------------------------------------------------------------- fake provider

const chunk = (delta, finish = null) => `data: ${JSON.stringify({ id: "b", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const usage = `data: ${JSON.stringify({ id: "b", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 10, completion_tokens: 10 } })}\n\ndata: [DONE]\n\n`;
const answer = () => `${chunk({ content: "Done." })}${chunk({}, "stop")}${usage}`;
const calling = (name, args) =>
  `${chunk({ tool_calls: [{ index: 0, id: `c${Math.random().toString(36).slice(2, 8)}`, type: "function", function: { name, arguments: JSON.stringify(args) } }] })}${chunk({}, "tool_calls")}${usage}`;

let script = [];
let received = 0;
const server = createServer((request, response) => {
  let body = 0;
  request.on("data", (part) => (body += part.length));
  request.on("end", () => {
    received += body;
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.end(script.shift() ?? answer());
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${server.address().port}/v1`;

const SCRIPTS = {
  plain: () => [answer()],
  host: () => [calling("code", { source: "return 1" }), answer()],
  direct: () => [...FILES.map((path) => calling("read_file", { path })), answer()],
  program: () => [calling("code", { source: PROGRAM }), answer()],
};

// ---------------------------------------------------------------- child

function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  // utime, stime, cutime, cstime: fields 14-17 of stat, 12-15 after the command.
  return [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0) * TICK_MS;
}

async function measure(launcher) {
  const dirs = freshDirs("magi-bench-code-");
  const { mkdirSync } = await import("node:fs");
  mkdirSync(dirs.home, { recursive: true });
  writeFileSync(join(dirs.home, "settings.jsonc"), JSON.stringify({
    model: { provider: "ollama", model: "bench" },
    providers: { endpoints: { ollama: { base_url: url } } },
    agent: { titles: { enabled: false } },
    code_mode: { enabled: true },
  }));
  for (const [index, name] of FILES.entries()) writeFileSync(join(dirs.work, name), `${String(index).repeat(2047)}\n`);
  const env = childEnv({ keepProviderKeys: false, extra: { MC_HOME: dirs.home, NO_PROXY: "127.0.0.1" } });
  const { child, exited } = spawnChild(launcher, ["serve", "--stdio"], { cwd: dirs.work, env });
  const waiting = new Map();
  readLines(child.stdout, (line, now) => {
    const frame = JSON.parse(line);
    const key = frame.type === "response" ? frame.id : frame.event === "run.finished" ? `finished:${frame.data.run_id}` : null;
    const resolve = key === null ? undefined : waiting.get(key);
    if (resolve !== undefined) {
      waiting.delete(key);
      resolve({ frame, now });
    }
  });
  const expect = (key) => new Promise((resolve, reject) => {
    waiting.set(key, resolve);
    setTimeout(() => reject(new Error(`${launcher.name}: no ${key} within ${TIMEOUT_MS} ms`)), TIMEOUT_MS).unref();
  });
  let next = 0;
  const call = async (method, params) => {
    const id = `r${next++}`;
    const answered = expect(id);
    child.stdin.write(requestLine(id, method, params));
    const { frame } = await answered;
    if (frame.error !== undefined) throw new Error(`${launcher.name}: ${method} failed: ${JSON.stringify(frame.error)}`);
    return frame.result;
  };
  await call("initialize", { required_capabilities: ["session.create", "turn.start", "status", "shutdown"] });
  const results = Object.fromEntries(Object.keys(SCRIPTS).map((name) => [name, { wall: [], cpu: [], bytes: [] }]));
  for (let run = -1; run < runs; run++) {
    for (const [name, make] of Object.entries(SCRIPTS)) {
      const session = (await call("session.create", {})).session_id;
      script = make();
      received = 0;
      const cpu0 = cpuMs(child.pid);
      const t0 = performance.now();
      const runId = (await call("turn.start", { session_id: session, prompt: "Go" })).run_id;
      const { frame, now } = await expect(`finished:${runId}`);
      if (frame.data.outcome !== "completed") throw new Error(`${launcher.name} ${name}: the turn ended ${frame.data.outcome}`);
      // Run -1 warms the run module and the host's first start; it is not counted.
      if (run < 0) continue;
      results[name].wall.push(now - t0);
      results[name].cpu.push(cpuMs(child.pid) - cpu0);
      results[name].bytes.push(received);
    }
  }
  child.stdin.write(requestLine("bye", "shutdown", {}));
  child.stdin.end();
  await exited;
  dirs.remove();
  return results;
}

const rows = [["runtime", "turn", "wall (median)", "child CPU (median)", "bytes to provider (median)"]];
for (const launcher of launchers(flags).filter((entry) => entry.name !== "sea" && (only === null || only.has(entry.name)))) {
  const results = await measure(launcher);
  for (const [name, figures] of Object.entries(results)) {
    rows.push([launcher.name, name, ms(median(figures.wall)), ms(median(figures.cpu)), String(median(figures.bytes))]);
  }
}
server.close();
console.log(`Code Mode vs direct calls, ${runs} runs each (after one warm-up), medians:`);
console.log(table(rows));
