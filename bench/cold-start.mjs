#!/usr/bin/env node
// Cold start to the `initialize` result, per runtime. Prints figures; never
// asserts a timing. See bench/README.md.
//
//   node bench/cold-start.mjs [--runs N] [--quick] [--no-compile] [--json FILE]
//
// Each run spawns a fresh child over socketpairs (Node's child stdio) with a
// fresh MC_HOME and a fresh, settings-free cwd, writes one `initialize` line at
// once, and times spawn() → the complete response line. Just before sending
// `shutdown` it reads VmHWM (peak RSS) from /proc/<pid>/status, then waits for
// exit. Variants run round-robin so machine noise spreads evenly over them.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus as cpuList, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import {
  childEnv,
  compileDeno,
  denoBinary,
  describeTree,
  freshDirs,
  INITIALIZE,
  launchers,
  mib,
  median,
  ms,
  parseFlags,
  readLines,
  ROOT,
  SHUTDOWN,
  spawnChild,
  startOnce,
  summarize,
  table,
  foreignCpu,
  foreignCpuNote,
} from "./lib.mjs";

const flags = parseFlags(process.argv.slice(2), ["quick", "no-compile"]);
const quick = flags.quick === true;
const runs = Number(flags.runs ?? (quick ? 10 : 15));
if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs takes a positive integer");
const WARMUP = 2;

const caPath = process.env.NODE_EXTRA_CA_CERTS;

/** One timed empty start: spawn → exit. */
async function emptyOnce(command, args, env) {
  const t0 = performance.now();
  const child = spawn(command, args, { env, stdio: ["ignore", "ignore", "ignore"], cwd: tmpdir() });
  const code = await new Promise((resolve) => child.once("exit", resolve));
  const t1 = performance.now();
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} exited ${code}`);
  return { ms: t1 - t0, hwmKiB: null };
}

// ---------------------------------------------------------------- variants

const envNoCa = childEnv();
const envCa = childEnv({ keepCa: true });
const [nodeLauncher, denoLauncher] = launchers(flags);

const variants = [
  { key: "node", label: "node dist/magi-code.mjs", run: () => startOnce(nodeLauncher, envNoCa), main: true },
  { key: "deno", label: "deno run runtime/deno.ts", run: () => startOnce(denoLauncher, envNoCa), main: true },
];

let compileDir = null;
let compileNote = "skipped (--no-compile)";
if (flags["no-compile"] !== true) {
  compileDir = mkdtempSync(join(tmpdir(), "magi-compile-"));
  const compiled = compileDeno(compileDir);
  if ("error" in compiled) {
    compileNote = `not measured: deno compile failed: ${compiled.error}`;
  } else {
    compileNote = "measured";
    variants.push({ key: "deno-compiled", label: "deno compile binary", run: () => startOnce(compiled, envNoCa), main: true });
  }
}
if (caPath !== undefined) {
  variants.push({
    key: "node-ca",
    label: "node, NODE_EXTRA_CA_CERTS set",
    run: () => startOnce(nodeLauncher, envCa),
    main: false,
  });
}
variants.push(
  { key: "node-empty", label: 'baseline: node -e ""', run: () => emptyOnce(process.execPath, ["-e", ""], envNoCa), main: false },
  { key: "deno-empty", label: 'baseline: deno eval ""', run: () => emptyOnce(denoBinary(), ["eval", ""], envNoCa), main: false },
);
if (caPath !== undefined) {
  variants.push({
    key: "node-empty-ca",
    label: 'baseline: node -e "", CA set',
    run: () => emptyOnce(process.execPath, ["-e", ""], envCa),
    main: false,
  });
}

// ---------------------------------------------------------------- header

const cpuModel = cpuList()[0]?.model ?? "unknown cpu";
const denoVersion = spawnSync(denoBinary(), ["--version"], { encoding: "utf8" }).stdout?.split("\n")[0] ?? "deno ?";

console.log("== cold start: spawn → initialize result");
console.log(`date ${new Date().toISOString()}, ${cpuList().length} cpu (${cpuModel}), load avg ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log(`node ${process.version}, ${denoVersion}, tree ${describeTree()}`);
console.log(
  caPath === undefined
    ? "NODE_EXTRA_CA_CERTS is not set in this environment; all runs measured without it"
    : `measured with NODE_EXTRA_CA_CERTS UNSET in the child env (this environment sets it to ${caPath}); one comparison row keeps it set`,
);
if (process.env.NODE_OPTIONS) console.log(`NOTE: NODE_OPTIONS is set (${process.env.NODE_OPTIONS}) and reaches the Node children`);
if (runs < 10) console.log(`NOTE: only ${runs} runs per variant; use at least 10 (default 15) for figures worth quoting`);
console.log(`${runs} measured runs per variant after ${WARMUP} warm-up runs, round-robin; fresh MC_HOME and cwd per run; compiled Deno binary: ${compileNote}`);

// ---------------------------------------------------------------- runs

const samples = new Map(variants.map((variant) => [variant.key, []]));
const monitor = foreignCpu();
for (let i = 0; i < WARMUP + runs; i++) {
  // Rotate the starting variant so no variant always runs right after another.
  for (let j = 0; j < variants.length; j++) {
    const variant = variants[(i + j) % variants.length];
    const result = await variant.run();
    if (i >= WARMUP) samples.get(variant.key).push(result);
  }
}

const foreignCores = monitor.stop();
const rows = [["variant", "median", "p90", "min", "max", "peak RSS (median)", "shutdown→exit", "readiness"]];
const summary = {};
for (const variant of variants) {
  const list = samples.get(variant.key);
  const stats = summarize(list.map((sample) => sample.ms));
  const hwm = list.map((sample) => sample.hwmKiB).filter((value) => value !== null);
  const exits = list.map((sample) => sample.exitMs).filter((value) => value !== undefined);
  const readiness = [...new Set(list.map((sample) => sample.readiness).filter(Boolean))].join(",");
  summary[variant.key] = { label: variant.label, ...stats, hwmKiB: hwm.length > 0 ? median(hwm) : null, exitMs: exits.length > 0 ? median(exits) : null };
  rows.push([
    variant.label,
    ms(stats.median),
    ms(stats.p90),
    ms(stats.min),
    ms(stats.max),
    hwm.length > 0 ? mib(median(hwm)) : "-",
    exits.length > 0 ? ms(median(exits)) : "-",
    readiness || "-",
  ]);
}
console.log("");
console.log(table(rows));
const overhead = (key, base) =>
  summary[key] !== undefined && summary[base] !== undefined ? ms(summary[key].median - summary[base].median) : "n/a";
console.log(foreignCpuNote(foreignCores));
console.log("");
console.log(`magi-code overhead over the empty runtime (medians): node ${overhead("node", "node-empty")}, deno ${overhead("deno", "deno-empty")}`);
if (summary["node-ca"] !== undefined) {
  console.log(`NODE_EXTRA_CA_CERTS cost per Node start (medians): ${overhead("node-ca", "node")} on magi-code, ${overhead("node-empty-ca", "node-empty")} on node -e ""`);
}

// ---------------------------------------------------------------- loaded modules

const EXPECTED = new Set(["valibot", "jsonc-parser"]);
const FORBIDDEN = /^(@modelcontextprotocol\/|openai$|@anthropic-ai\/|@google\/(genai|generative-ai)|@ai-sdk\/|ai$|ollama$|@aws-sdk\/|@mistralai\/|groq-sdk$|cohere-ai$|@azure\/openai)/;

function packageOf(location) {
  const marker = "/node_modules/";
  const at = location.lastIndexOf(marker);
  if (at === -1) return null;
  const parts = location.slice(at + marker.length).split("/");
  return parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0];
}

function describePackages(locations) {
  const packages = [...new Set(locations.map(packageOf).filter((name) => name !== null))].sort();
  const forbidden = packages.filter((name) => FORBIDDEN.test(name));
  const unexpected = packages.filter((name) => !EXPECTED.has(name) && !FORBIDDEN.test(name));
  return { packages, forbidden, unexpected };
}

/** Node: a --import preload records ESM (module.register load hook) and CJS (Module._load) loads. */
async function nodeModules() {
  const dirs = freshDirs("magi-modules-");
  const log = join(dirs.base, "modules.log");
  try {
    const env = { ...envNoCa, MAGI_BENCH_MODULE_LOG: log };
    const probe = join(ROOT, "bench", "support", "module-probe.mjs");
    const { child, exited } = spawnChild(nodeLauncher, ["serve", "--stdio"], { cwd: dirs.work, env: { ...env, MC_HOME: dirs.home }, extraNodeArgs: ["--import", probe] });
    child.stdin.write(INITIALIZE());
    await new Promise((resolve) => readLines(child.stdout, resolve));
    child.stdin.write(SHUTDOWN());
    await exited;
    const text = readFileSync(log, "utf8");
    const [before, after = ""] = text.split("--- initialize answered ---\n");
    const locations = (part) => part.split("\n").filter(Boolean).map((line) => line.replace(/^\S+ (\S+ )?/, ""));
    const own = locations(before).filter((location) => location.includes("/dist/") && !location.includes("/node_modules/")).length;
    const builtins = [...new Set(locations(before).filter((location) => location.startsWith("node:")))];
    return { ...describePackages(locations(before)), own, builtins, later: describePackages(locations(after)).packages, marked: text.includes("--- initialize answered ---") };
  } finally {
    dirs.remove();
  }
}

/** Deno: `--log-level=debug` logs every module it loads (code cache hit/miss lines) on stderr. */
async function denoModules() {
  const dirs = freshDirs("magi-modules-");
  try {
    const launcher = { ...denoLauncher, prefix: ["run", "--allow-all", "--log-level=debug", ...denoLauncher.prefix.slice(3)] };
    const child = spawn(launcher.command, [...launcher.prefix, "serve", "--stdio"], { cwd: dirs.work, env: { ...envNoCa, MC_HOME: dirs.home }, stdio: ["pipe", "pipe", "pipe"] });
    let log = "";
    let atInitialize = null;
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => (log += chunk));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.stdin.write(INITIALIZE());
    await new Promise((resolve) => readLines(child.stdout, resolve));
    atInitialize = log.length;
    child.stdin.write(SHUTDOWN());
    await exited;
    const pattern = /for (?:ES module|script): (\S+?),/g;
    const collect = (text) => [...text.matchAll(pattern)].map((match) => match[1]);
    const before = collect(log.slice(0, atInitialize));
    const all = collect(log);
    const own = before.filter((location) => location.startsWith("file://") && !location.includes("/node_modules/")).length;
    const nodeCompat = new Set(before.filter((location) => location.startsWith("ext:deno_node/") || location.startsWith("node:"))).size;
    return { ...describePackages(before), own, nodeCompat, later: describePackages(all.slice(before.length)).packages };
  } finally {
    dirs.remove();
  }
}

function printModules(name, result, extra) {
  console.log(`${name}: packages loaded when initialize answered: ${result.packages.join(", ") || "(none)"}; ${extra}`);
  console.log(`  @modelcontextprotocol/sdk or provider SDK loaded: ${result.forbidden.length === 0 ? "NO" : `YES: ${result.forbidden.join(", ")}`}; other unexpected packages: ${result.unexpected.join(", ") || "none"}; loaded after initialize: ${result.later.join(", ") || "none"}`);
}

console.log("");
console.log("== modules loaded at startup");
const modules = {};
try {
  modules.node = await nodeModules();
  printModules("node", modules.node, `${modules.node.own} own modules from dist/, builtins ${modules.node.builtins.join(" ")}${modules.node.marked ? "" : " (WARNING: initialize marker not seen)"}`);
} catch (error) {
  console.log(`node: module check failed: ${error.message}`);
}
try {
  modules.deno = await denoModules();
  printModules("deno", modules.deno, `${modules.deno.own} own modules, ${modules.deno.nodeCompat} Node-compat (ext:deno_node/, node:) modules`);
} catch (error) {
  console.log(`deno: module check failed: ${error.message}`);
}

if (compileDir !== null) rmSync(compileDir, { recursive: true, force: true });

if (typeof flags.json === "string") {
  writeFileSync(flags.json, JSON.stringify({ runs, foreignCores, caPath: caPath ?? null, compileNote, summary, modules }, null, 2));
}
