#!/usr/bin/env node
// Cold start to the `initialize` result, per runtime. Prints figures; never
// asserts a timing. See bench/README.md.
//
//   node bench/cold-start.mjs [--runs N] [--quick] [--no-compile] [--codex PATH] [--base-node-entry PATH] [--base-deno-entry PATH] [--json FILE]
//
// Each run spawns a fresh child over socketpairs (Node's child stdio) with a
// fresh MC_HOME and a fresh, settings-free cwd, writes one `initialize` line at
// once, and times spawn() → the complete response line. Just before sending
// `shutdown` it reads VmHWM (peak RSS) from /proc/<pid>/status and the child's
// CPU so far from /proc/<pid>/task/*/schedstat, then waits for exit. Variants run round-robin so machine noise spreads evenly over them.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus as cpuList, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import {
  childEnv,
  compileDeno,
  denoBinary,
  describeTree,
  launchers,
  mib,
  median,
  ms,
  parseFlags,
  ROOT,
  startOnce,
  summarize,
  table,
  foreignCpu,
  foreignCpuNote,
} from "./lib.mjs";
import { codexPeer } from "./support/codex-peer.mjs";

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
const floorDir = mkdtempSync(join(tmpdir(), "magi-floor-"));
const floorFile = join(floorDir, "zero.mjs");
writeFileSync(floorFile, "0;\n");
const envCa = childEnv({ keepCa: true });
const [nodeLauncher, denoLauncher] = launchers(flags);

const variants = [
  { key: "node", label: "node dist/magi-code.cjs", run: () => startOnce(nodeLauncher, envNoCa), main: true },
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
// Another build in the same rotation (--base-node-entry / --base-deno-entry): an A/B within one pass.
const [baseNode, baseDeno] = launchers({ "node-entry": flags["base-node-entry"], "deno-entry": flags["base-deno-entry"] });
if (typeof flags["base-node-entry"] === "string") variants.push({ key: "base-node", label: "base: node", run: () => startOnce(baseNode, envNoCa), main: false });
if (typeof flags["base-deno-entry"] === "string") variants.push({ key: "base-deno", label: "base: deno", run: () => startOnce(baseDeno, envNoCa), main: false });
let codex = null;
if (typeof flags.codex === "string") {
  codex = codexPeer(flags.codex, envNoCa);
  variants.push({ key: "codex", label: "peer: codex app-server (warm home)", run: codex.run, main: false });
}
variants.push(
  { key: "node-empty", label: 'baseline: node -e ""', run: () => emptyOnce(process.execPath, ["-e", ""], envNoCa), main: false },
  { key: "deno-empty", label: 'baseline: deno eval ""', run: () => emptyOnce(denoBinary(), ["eval", ""], envNoCa), main: false },
  // Issue 19's floor is "a one-line `deno run`": a file, as the entry is, with the spawn line's environment.
  { key: "deno-run-empty", label: "baseline: deno run one-line file", run: () => emptyOnce(denoBinary(), ["run", floorFile], { ...envNoCa, DENO_NO_UPDATE_CHECK: "1" }), main: false },
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
const rows = [["variant", "median", "p90", "min", "max", "peak RSS (median)", "child CPU (median)", "shutdown→exit", "readiness"]];
const summary = {};
for (const variant of variants) {
  const list = samples.get(variant.key);
  const stats = summarize(list.map((sample) => sample.ms));
  const hwm = list.map((sample) => sample.hwmKiB).filter((value) => value !== null);
  const exits = list.map((sample) => sample.exitMs).filter((value) => value !== undefined);
  // The child's own CPU up to its answer: other load stretches wall time far more than it.
  const cpu = list.map((sample) => sample.cpuMs).filter((value) => typeof value === "number");
  const readiness = [...new Set(list.map((sample) => sample.readiness).filter(Boolean))].join(",");
  summary[variant.key] = {
    label: variant.label,
    ...stats,
    hwmKiB: hwm.length > 0 ? median(hwm) : null,
    cpuMs: cpu.length > 0 ? median(cpu) : null,
    exitMs: exits.length > 0 ? median(exits) : null,
  };
  rows.push([
    variant.label,
    ms(stats.median),
    ms(stats.p90),
    ms(stats.min),
    ms(stats.max),
    hwm.length > 0 ? mib(median(hwm)) : "-",
    cpu.length > 0 ? ms(median(cpu)) : "-",
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
console.log(`magi-code overhead over the empty runtime (medians): node ${overhead("node", "node-empty")}, deno ${overhead("deno", "deno-empty")} (${overhead("deno", "deno-run-empty")} over a one-line deno run)`);
if (summary["base-node"] !== undefined || summary["base-deno"] !== undefined) {
  console.log(`base build over the empty runtime (medians): node ${overhead("base-node", "node-empty")}, deno ${overhead("base-deno", "deno-run-empty")} over a one-line deno run`);
}
if (summary.codex !== undefined) {
  const ratio = (key) => (summary[key].median / summary.codex.median).toFixed(2);
  console.log(`ready against the Codex app-server (medians): node ${ratio("node")}×, deno ${ratio("deno")}×`);
}
if (summary["node-ca"] !== undefined) {
  console.log(`NODE_EXTRA_CA_CERTS cost per Node start (medians): ${overhead("node-ca", "node")} on magi-code, ${overhead("node-empty-ca", "node-empty")} on node -e ""`);
}

// ---------------------------------------------------------------- loaded modules

// The same recorder and budget as tests/startup-budget.test.ts (compiled by `tsc`, as dist/ already is here).
const { modulesAtInitialize, STARTUP_BUDGET } = await import(join(ROOT, "dist", "tests", "support", "startup-modules.js"));
const FORBIDDEN = /^(@modelcontextprotocol\/|openai$|@anthropic-ai\/|@google\/(genai|generative-ai)|@ai-sdk\/|ai$|ollama$|@aws-sdk\/|@mistralai\/|groq-sdk$|cohere-ai$|@azure\/openai)/;

console.log("");
console.log("== modules loaded when the initialize answer is written (the start-up budget, docs/architecture.md)");
const modules = {};
for (const name of ["node", "deno"]) {
  try {
    const loaded = await modulesAtInitialize(name);
    const budget = STARTUP_BUDGET[name];
    modules[name] = { ...loaded, forbidden: loaded.packages.filter((pkg) => FORBIDDEN.test(pkg)) };
    const compat = name === "deno"
      ? `, ${loaded.compat} Node-compat modules (budget ${budget.compat}), ${loaded.read} source files read (budget ${budget.read})`
      : ` in ${loaded.files} bundle files (budget ${budget.files})`;
    console.log(`${name}: ${loaded.own.length} own modules (budget ${budget.own})${compat}; packages: ${loaded.packages.join(", ") || "(none)"}`);
    console.log(`  ${loaded.own.join(" ")}`);
  } catch (error) {
    console.log(`${name}: module check failed: ${error.message}`);
  }
}

codex?.remove();
rmSync(floorDir, { recursive: true, force: true });
if (compileDir !== null) rmSync(compileDir, { recursive: true, force: true });

if (typeof flags.json === "string") {
  writeFileSync(flags.json, JSON.stringify({ runs, foreignCores, caPath: caPath ?? null, compileNote, summary, modules }, null, 2));
}
