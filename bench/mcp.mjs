#!/usr/bin/env node
// MCP servers (issue 20): ready time with 0, 1 and 3 approved stdio
// server-everything servers, the servers' own start time, and an MCP tool call
// inside a turn against a built-in read. Prints figures; never asserts a
// timing. See bench/README.md.
//
//   node bench/mcp.mjs [--runs N] [--turns N] [--runtimes node,deno] [--quick]
//                      [--node-entry PATH] [--deno-entry PATH] [--base-node-entry PATH] [--base-deno-entry PATH] [--json FILE]
//
// Variants, round-robin with a rotating start so load drifts hit all alike:
//   ready-N:   spawn → complete `initialize` answer of `serve --stdio`, N = 0, 1, 3
//              servers in the global settings of a MC_HOME of its own (made
//              once per variant and reused across runs), each approved with
//              `magi-code mcp approve <name> --yes` by the same entry; the run
//              checks that exactly N server processes run under the child
//              when it answers and that none is left after its exit;
//   base-0:    (with --base-*-entry) ready with no server of another build, e.g.
//              the tree before MCP, in the same pass;
//   alone-N:   the servers' own start: this process spawns N server-everything
//              processes at once (same command, environment allowlist and cwd
//              as magi-code gives them) and times spawn → the answer to
//              `initialize`, `notifications/initialized` and `tools/list` (all
//              pages) of the last of them, as magi-code's startup does;
//   turn:      one child with one server: pairs of turns where a loopback fake
//              provider (OpenAI chat SSE) asks for `mcp__everything__get-sum`
//              (policy allow in settings) or the built-in `read_file` of a
//              small file, then answers "Done." after the tool result.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import {
  childEnv,
  foreignCpu,
  foreignCpuNote,
  freshDirs,
  INITIALIZE,
  launchers,
  machineHeader,
  median,
  ms,
  parseFlags,
  readLines,
  requestLine,
  ROOT,
  SHUTDOWN,
  spawnChild,
  summarize,
  table,
  within,
} from "./lib.mjs";
import { sseChunk as chunk, sseProvider, SSE_USAGE_DONE as usage } from "./support/openai-sse.mjs";

const { SERVE_FLAGS } = await import(join(ROOT, "dist", "runtime", "permissions.js"));
const { serverEnvironment } = await import(join(ROOT, "dist", "src", "mcp", "server-env.js"));

const flags = parseFlags(process.argv.slice(2), ["quick"]);
const quick = flags.quick === true;
const runs = Number(flags.runs ?? (quick ? 5 : 10));
const turnPairs = Number(flags.turns ?? (quick ? 3 : 5));
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(turnPairs) || turnPairs < 1) throw new Error("--runs and --turns take positive integers");
const only = typeof flags.runtimes === "string" ? new Set(flags.runtimes.split(",")) : null;
const WARMUP = 2;
const COUNTS = [0, 1, 3];
const TIMEOUT_MS = 60_000;
const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const SERVER_NAMES = ["everything", "everything-2", "everything-3"];
const TURN_CAPABILITIES = ["session.create", "turn.start", "status", "shutdown"];
const env = childEnv({ keepProviderKeys: false });

/** The Deno entry runs with the narrow permission set a client is told to use, not --allow-all. */
const narrow = (launcher) => (launcher.name === "deno" ? { ...launcher, prefix: ["run", ...SERVE_FLAGS, ...launcher.prefix.slice(2)] } : launcher);
const selected = launchers(flags).filter((launcher) => only === null || only.has(launcher.name)).map(narrow);
const baseEntries = { "node-entry": flags["base-node-entry"], "deno-entry": flags["base-deno-entry"] };
const bases = launchers(baseEntries).filter((launcher) => typeof baseEntries[`${launcher.name}-entry`] === "string" && selected.some((s) => s.name === launcher.name)).map(narrow);

// ---------------------------------------------------------------- fake provider

const CALLS = { sum: { name: "mcp__everything__get-sum", args: { a: 2, b: 3 } }, read: { name: "read_file", args: { path: "note.txt" } } };
let callIds = 0;
const toolCallAnswer = ({ name, args }) =>
  chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: `call_${++callIds}`, type: "function", function: { name, arguments: JSON.stringify(args) } }] }) +
  chunk({}, "tool_calls") + usage;
const FINAL_ANSWER = chunk({ role: "assistant", content: "Done." }) + chunk({}, "stop") + usage;

/** Provider requests in arrival order: arrival, when the answer was fully written, the tool result it carried. */
const providerLog = [];
const { server: provider, baseUrl } = await sseProvider((body, response, arrived) => {
  const last = JSON.parse(body.toString("utf8")).messages.at(-1);
  const entry = { arrived, written: null, toolResult: last.role === "tool" ? String(last.content) : null };
  providerLog.push(entry);
  response.end(last.role === "tool" ? FINAL_ANSWER : toolCallAnswer(CALLS[last.content]), () => (entry.written = performance.now()));
});

// ---------------------------------------------------------------- homes

/** A MC_HOME of its own with `count` approved servers (approved by `launcher`'s own `mcp approve`), and a workspace. */
function prepareHome(launcher, count) {
  const dirs = freshDirs(`magi-mcp-${launcher.name}-${count}-`);
  mkdirSync(dirs.home, { mode: 0o700 });
  writeFileSync(join(dirs.work, "note.txt"), "A short note for the read tool.\n");
  const servers = Object.fromEntries(SERVER_NAMES.slice(0, count).map((name) => [name, { command: process.execPath, args: [EVERYTHING, "stdio"], tools: { "get-sum": "allow" } }]));
  const settings = {
    model: { provider: "ollama", model: "bench-model" },
    providers: { endpoints: { ollama: { base_url: baseUrl } } },
    // A titling request after the first turn would reach the fake provider, which answers only the two tool prompts.
    agent: { titles: { enabled: false } },
    ...(count === 0 ? {} : { mcp: { servers } }),
  };
  writeFileSync(join(dirs.home, "settings.jsonc"), JSON.stringify(settings, null, 2), { mode: 0o600 });
  for (const name of Object.keys(servers)) {
    const argv = [...launcher.prefix, "mcp", "approve", name, "--yes"];
    const result = spawnSync(launcher.command, argv, { cwd: dirs.work, env: { ...env, MC_HOME: dirs.home }, encoding: "utf8", input: "", timeout: TIMEOUT_MS });
    if (result.status !== 0) throw new Error(`${launcher.name}: mcp approve ${name} exited ${result.status}: ${(result.stderr || result.stdout).trim().slice(0, 300)}`);
  }
  return dirs;
}

/** The live descendants of `pid` whose command line runs server-everything, from the process table. */
function serverProcesses(pid) {
  const parents = new Map();
  const commands = new Map();
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] === "Z") continue;
      parents.set(Number(entry), Number(fields[1]));
      commands.set(Number(entry), readFileSync(`/proc/${entry}/cmdline`, "utf8"));
    } catch {
      // Gone meanwhile.
    }
  }
  const below = (candidate) => {
    for (let at = parents.get(candidate); at !== undefined && at > 1; at = parents.get(at)) if (at === pid) return true;
    return false;
  };
  return [...commands].filter(([candidate, command]) => command.includes(EVERYTHING) && below(candidate)).map(([candidate]) => candidate);
}

const alive = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
};

// ---------------------------------------------------------------- ready

/** Spawn → the `initialize` answer of a child in `dirs`; checks `count` servers run under it and none outlives it. */
async function readyOnce(launcher, dirs, count) {
  const t0 = performance.now();
  const { child, exited, closed, stderr } = spawnChild(launcher, ["serve", "--stdio"], { cwd: dirs.work, env: { ...env, MC_HOME: dirs.home } });
  child.stdin.write(INITIALIZE());
  let timer;
  try {
    const first = await new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no initialize answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
      readLines(child.stdout, (line, now) => resolve({ line, now }));
      exited.then((status) => reject(new Error(`exited (${status.code ?? status.signal}) before answering: ${stderr().trim().slice(0, 300)}`)));
    });
    const answer = JSON.parse(first.line);
    if (answer.error !== undefined) throw new Error(`initialize answered ${answer.error.code}: ${stderr().trim().slice(0, 300)}`);
    const servers = serverProcesses(child.pid);
    if (servers.length !== count) throw new Error(`${servers.length} server processes under the child, expected ${count}`);
    child.stdin.write(SHUTDOWN());
    if ((await within(exited, TIMEOUT_MS)) === null) throw new Error("no exit after shutdown");
    await within(closed, 1_000);
    const left = servers.filter(alive);
    if (left.length > 0) throw new Error(`server processes left after exit: ${left.join(", ")}`);
    return first.now - t0;
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}

/** The servers' own start: `count` server-everything processes at once, spawn → the last `tools/list` answer. */
async function aloneOnce(dirs, count) {
  const serverEnv = serverEnvironment(env, {});
  const t0 = performance.now();
  const started = Array.from({ length: count }, async () => {
    const child = spawn(process.execPath, [EVERYTHING, "stdio"], { cwd: dirs.work, env: serverEnv, stdio: ["pipe", "pipe", "ignore"] });
    child.stdin.on("error", () => {});
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const waiting = new Map();
    readLines(child.stdout, (line) => {
      const message = JSON.parse(line);
      waiting.get(message.id)?.(message);
    });
    const call = (id, method, params) => {
      const answered = new Promise((resolve) => waiting.set(id, resolve));
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
      return within(answered, TIMEOUT_MS).then((message) => {
        if (message === null || message.error !== undefined) throw new Error(`server-everything: ${method} ${message === null ? "not answered" : "failed"}`);
        return message.result;
      });
    };
    try {
      await call(1, "initialize", { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "magi-bench", version: "1" } });
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      let cursor;
      let id = 2;
      do cursor = (await call(id++, "tools/list", cursor === undefined ? {} : { cursor })).nextCursor;
      while (cursor !== undefined);
      return performance.now();
    } finally {
      child.stdin.end();
      if ((await within(exited, 2_000)) === null) child.kill("SIGKILL");
    }
  });
  return Math.max(...(await Promise.all(started))) - t0;
}

// ---------------------------------------------------------------- turns

/** One child with one server: `turnPairs` pairs of an MCP turn and a read turn (alternating order), after one warm pair. */
async function turnsOnce(launcher, dirs, round) {
  const { child, exited, stderr } = spawnChild(launcher, ["serve", "--stdio"], { cwd: dirs.work, env: { ...env, MC_HOME: dirs.home } });
  const pending = new Map();
  const runs = new Map();
  let ids = 0;
  readLines(child.stdout, (line, now) => {
    const frame = JSON.parse(line);
    if (frame.type === "event") {
      const run = runs.get(frame.data.run_id) ?? { frames: [] };
      runs.set(frame.data.run_id, run);
      run.frames.push([frame, now]);
      if (frame.event === "run.finished") run.finished?.(now);
      return;
    }
    pending.get(frame.id)?.({ frame, now });
  });
  const request = async (method, params = {}) => {
    const id = `${method}-${++ids}`;
    const answered = new Promise((resolve) => pending.set(id, resolve));
    const sent = performance.now();
    child.stdin.write(requestLine(id, method, params));
    const answer = await within(Promise.race([answered, exited.then(() => null)]), TIMEOUT_MS);
    if (answer === null) throw new Error(`${method}: no answer (${stderr().trim().slice(0, 300)})`);
    if (answer.frame.error !== undefined) throw new Error(`${method} answered ${answer.frame.error.code}`);
    return { result: answer.frame.result, sent };
  };
  const turn = async (sessionId, prompt) => {
    const before = providerLog.length;
    const { result, sent } = await request("turn.start", { session_id: sessionId, prompt });
    const run = runs.get(result.run_id) ?? { frames: [] };
    runs.set(result.run_id, run);
    const finished = run.frames.find(([frame]) => frame.event === "run.finished")?.[1] ?? (await within(new Promise((resolve) => (run.finished = resolve)), TIMEOUT_MS));
    if (finished === null) throw new Error(`${prompt} turn: run.finished not seen`);
    const at = (state) => run.frames.find(([frame]) => frame.event === "activity" && frame.data.kind === "tool" && frame.data.state === state)?.[1];
    const outcome = run.frames.at(-1)[0].data.outcome;
    const [first, second] = providerLog.slice(before);
    const expected = prompt === "sum" ? /\b5\b/ : /short note/;
    if (outcome !== "completed" || at("completed") === undefined || second === undefined || !expected.test(second.toolResult ?? "")) {
      throw new Error(`${prompt} turn: ${outcome}, activity completed ${at("completed") !== undefined}, tool result ${JSON.stringify(second?.toolResult?.slice(0, 120))}`);
    }
    runs.delete(result.run_id);
    return { prompt, totalMs: finished - sent, activityMs: at("completed") - at("started"), toolStepMs: second.arrived - first.written };
  };
  try {
    await request("initialize", { required_capabilities: TURN_CAPABILITIES });
    const { result } = await request("session.create");
    const turns = [];
    for (let i = 0; i <= turnPairs; i++) {
      const order = (i + round) % 2 === 0 ? ["sum", "read"] : ["read", "sum"];
      for (const prompt of order) {
        const measured = await turn(result.session_id, prompt);
        if (i > 0) turns.push(measured);
      }
    }
    return turns;
  } finally {
    child.stdin.write(SHUTDOWN());
    if ((await within(exited, TIMEOUT_MS)) === null) child.kill("SIGKILL");
  }
}

// ---------------------------------------------------------------- header

const everythingVersion = JSON.parse(readFileSync(join(EVERYTHING, "..", "..", "package.json"), "utf8")).version;
console.log("== mcp: ready time with 0, 1 and 3 stdio servers, the servers' own start, an MCP tool call inside a turn");
console.log(machineHeader(`, server-everything ${everythingVersion} (node <its bin> stdio)`));
console.log(`${runs} measured runs per variant after ${WARMUP} warm-up runs, round-robin; Deno with ${SERVE_FLAGS.join(" ")}; NODE_EXTRA_CA_CERTS unset in the child`);
console.log(`turns: ${turnPairs} measured pairs (get-sum, read_file) per child after one warm pair, one child per runtime and run`);

const variants = [];
for (const launcher of selected) {
  for (const count of COUNTS) {
    const dirs = prepareHome(launcher, count);
    variants.push({ key: `${launcher.name}-ready-${count}`, label: `${launcher.name}, ${count} server${count === 1 ? "" : "s"}`, dirs, run: () => readyOnce(launcher, dirs, count) });
  }
}
for (const launcher of bases) {
  const dirs = prepareHome(launcher, 0);
  variants.push({ key: `${launcher.name}-base-0`, label: `${launcher.name}, 0 servers, base entry`, dirs, run: () => readyOnce(launcher, dirs, 0) });
}
for (const count of [1, 3]) {
  const dirs = freshDirs("magi-mcp-alone-");
  variants.push({ key: `alone-${count}`, label: `server-everything alone, ${count} at once`, dirs, run: () => aloneOnce(dirs, count) });
}
for (const launcher of selected) {
  const dirs = variants.find((variant) => variant.key === `${launcher.name}-ready-1`).dirs;
  variants.push({ key: `${launcher.name}-turns`, dirs: null, turns: true, run: (round) => turnsOnce(launcher, dirs, round) });
}

// ---------------------------------------------------------------- runs

const samples = new Map(variants.map((variant) => [variant.key, []]));
const monitor = foreignCpu();
let failures = 0;
try {
  for (let i = 0; i < WARMUP + runs; i++) {
    for (let j = 0; j < variants.length; j++) {
      const variant = variants[(i + j) % variants.length];
      try {
        const result = await variant.run(i);
        if (i >= WARMUP) samples.get(variant.key).push(result);
      } catch (error) {
        failures++;
        console.log(`  run ${i + 1} ${variant.key}: FAILED: ${error.message}`);
      }
    }
  }
} finally {
  for (const variant of variants) variant.dirs?.remove();
  await new Promise((resolve) => provider.close(resolve));
}
const foreignCores = monitor.stop();

// ---------------------------------------------------------------- summary

const summary = {};
const rows = [["variant", "median", "p90", "min", "max", "n"]];
for (const variant of variants.filter((entry) => !entry.turns)) {
  const stats = summarize(samples.get(variant.key));
  summary[variant.key] = stats;
  rows.push([variant.label, ms(stats.median), ms(stats.p90), ms(stats.min), ms(stats.max), String(stats.n)]);
}
console.log("");
console.log("ready: spawn → complete initialize answer; alone: spawn → last tools/list answer");
console.log(table(rows));

const med = (key) => summary[key]?.median ?? NaN;
const verdict = (ok) => (Number.isNaN(ok) ? "n/a" : ok ? "met" : "MISSED");
console.log("");
for (const { name } of selected) {
  const zero = med(`${name}-ready-0`);
  for (const count of [1, 3]) {
    const added = med(`${name}-ready-${count}`) - zero;
    const alone = med(`alone-${count}`);
    const over = added - alone;
    summary[`${name}-added-${count}`] = { added, alone, over };
    console.log(
      `${name}, ${count} server${count === 1 ? "" : "s"}: ready − ready(0) = ${ms(added)}; minus their own start (${count} at once, ${ms(alone)}) = ${ms(over)}` +
        ` (target ≤ ${count * 10} ms: ${verdict(over <= count * 10)})` +
        (count > 1 ? `; per server ${ms(added / count)} against one alone + 10 ms = ${ms(med("alone-1") + 10)}: ${verdict(added / count <= med("alone-1") + 10)}` : ""),
    );
  }
  if (summary[`${name}-base-0`] !== undefined) {
    const base = med(`${name}-base-0`);
    console.log(`${name}, 0 servers against the base entry (same pass): ${ms(zero)} vs ${ms(base)}, ${ms(zero - base)} (${(zero / base).toFixed(2)}×)`);
  }
}

console.log("");
console.log("tool call inside a turn, medians (turn: turn.start written → run.finished; activity: tool activity started → completed, arrival times;");
console.log("tool step: provider answer with the call written → the request carrying the result arrived)");
const turnRows = [["runtime", "tool", "turn", "activity", "tool step", "n"]];
for (const { name } of selected) {
  const turns = samples.get(`${name}-turns`).flat();
  for (const prompt of ["sum", "read"]) {
    const list = turns.filter((turn) => turn.prompt === prompt);
    const figures = { totalMs: median(list.map((t) => t.totalMs)), activityMs: median(list.map((t) => t.activityMs)), toolStepMs: median(list.map((t) => t.toolStepMs)) };
    summary[`${name}-turn-${prompt}`] = figures;
    turnRows.push([name, CALLS[prompt].name, ms(figures.totalMs), ms(figures.activityMs), ms(figures.toolStepMs), String(list.length)]);
  }
  const mcp = summary[`${name}-turn-sum`];
  const read = summary[`${name}-turn-read`];
  turnRows.push([name, "MCP − read_file", ms(mcp.totalMs - read.totalMs), ms(mcp.activityMs - read.activityMs), ms(mcp.toolStepMs - read.toolStepMs), ""]);
  // Load drifts within seconds here; the two turns of a pair ran back to back, so their differences drift least.
  const pairs = samples.get(`${name}-turns`).flatMap((turns) => turns.flatMap((turn, index) => (index % 2 === 0 ? [[turn, turns[index + 1]]] : [])));
  const paired = (key) => median(pairs.map((pair) => pair.find((turn) => turn.prompt === "sum")[key] - pair.find((turn) => turn.prompt === "read")[key]));
  summary[`${name}-turn-paired`] = { totalMs: paired("totalMs"), activityMs: paired("activityMs"), toolStepMs: paired("toolStepMs") };
  const { totalMs, activityMs, toolStepMs } = summary[`${name}-turn-paired`];
  turnRows.push([name, "… median of the pairs' differences", ms(totalMs), ms(activityMs), ms(toolStepMs), String(pairs.length)]);
}
console.log(table(turnRows));
console.log(foreignCpuNote(foreignCores));
if (failures > 0) console.log(`${failures} run(s) FAILED (see above); their variants have fewer samples`);

if (typeof flags.json === "string") writeFileSync(flags.json, JSON.stringify({ runs, turnPairs, foreignCores, summary, samples: Object.fromEntries(samples) }, null, 2));
if (failures > 0) process.exitCode = 1;
