#!/usr/bin/env node
// Idle memory against the runtime floor (issue 19: idle RSS ≤ floor + 10 MiB
// on both runtimes). Prints figures; never asserts one. See bench/README.md.
//
//   node bench/idle-rss.mjs [--runs N] [--settle MS] [--base-node-entry PATH] [--base-deno-entry PATH]
//
// Per run, round-robin over the variants: a magi-code child per runtime
// (fresh MC_HOME and cwd; Deno with the documented narrow permission set and
// launch flags) is spawned and initialized, then left idle for --settle ms
// (default 1,000, as turns.mjs's idle figure); VmRSS then is its idle RSS,
// VmHWM its peak, and its CPU so far (all threads) is printed too. The
// floors are each runtime running a one-line file that only keeps a timer
// (`setTimeout(() => {}, …)`), read the same way: what any program that
// idles on that runtime costs. With --base-*-entry, another build's entries
// run in the same rotation (an A/B within one pass).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  childEnv,
  denoBinary,
  describeTree,
  freshDirs,
  INITIALIZE,
  launchers,
  median,
  mib,
  ms,
  parseFlags,
  processCpuMs,
  procMemory,
  readLines,
  SHUTDOWN,
  spawnChild,
  table,
  within,
} from "./lib.mjs";

const flags = parseFlags(process.argv.slice(2));
const runs = Number(flags.runs ?? 10);
const settleMs = Number(flags.settle ?? 1000);
const NARROW = ["--allow-read", "--allow-write", "--allow-env", "--allow-net", "--allow-run", "--allow-sys=hostname"];
const env = childEnv();
const sleep = (time) => new Promise((resolve) => setTimeout(resolve, time));

const floorDir = mkdtempSync(join(tmpdir(), "magi-idle-floor-"));
const floorFile = join(floorDir, "idle.mjs");
writeFileSync(floorFile, `setTimeout(() => {}, ${settleMs + 2000});\n`);

// The narrow permission set replaces --allow-all (launchers() measures as cold-start.mjs does).
const narrowDeno = (launcher) => ({ ...launcher, prefix: launcher.prefix.map((arg) => arg === "--allow-all" ? NARROW : [arg]).flat() });
const [node, deno] = launchers(flags);
const [baseNode, baseDeno] = launchers({ "node-entry": flags["base-node-entry"], "deno-entry": flags["base-deno-entry"] });
const variants = [
  { label: "magi-code, node", launcher: node, serve: true },
  { label: "magi-code, deno", launcher: narrowDeno(deno), serve: true },
  { label: 'floor: node one-line file', launcher: { name: "node", command: process.execPath, prefix: [floorFile] }, serve: false },
  { label: 'floor: deno run one-line file', launcher: { name: "deno", command: denoBinary(), prefix: ["run", floorFile], env: { DENO_NO_UPDATE_CHECK: "1" } }, serve: false },
];
if (typeof flags["base-node-entry"] === "string") variants.push({ label: `base node: ${flags["base-node-entry"]}`, launcher: baseNode, serve: true });
if (typeof flags["base-deno-entry"] === "string") variants.push({ label: `base deno: ${flags["base-deno-entry"]}`, launcher: narrowDeno(baseDeno), serve: true });

async function once({ launcher, serve }) {
  const dirs = freshDirs("magi-idle-");
  const { child, exited } = spawnChild(launcher, serve ? ["serve", "--stdio"] : [], { cwd: dirs.work, env: { ...env, MC_HOME: dirs.home } });
  try {
    if (serve) {
      child.stdin.write(INITIALIZE());
      const answered = await within(new Promise((resolve) => readLines(child.stdout, resolve)), 15_000, "timeout");
      if (answered === "timeout") throw new Error(`${launcher.command}: no initialize answer`);
    }
    await sleep(settleMs);
    const memory = procMemory(child.pid);
    const cpu = processCpuMs(child.pid);
    if (serve) child.stdin.write(SHUTDOWN());
    else child.kill("SIGTERM");
    await within(exited, 5000);
    return { rss: memory.rssKiB, hwm: memory.hwmKiB, cpu };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    dirs.remove();
  }
}

console.log(`== idle RSS (${settleMs} ms after the initialize answer) against the runtime floor`);
console.log(`tree ${describeTree()}, ${runs} runs per variant, round-robin`);
const samples = variants.map(() => []);
for (let i = 0; i < runs + 1; i++) {
  for (let j = 0; j < variants.length; j++) {
    const k = (i + j) % variants.length;
    const sample = await once(variants[k]);
    if (i > 0) samples[k].push(sample);
  }
}
rmSync(floorDir, { recursive: true, force: true });

const medianOf = (k, key) => median(samples[k].map((sample) => sample[key]).filter((value) => typeof value === "number"));
const floorOf = (name) => medianOf(variants.findIndex((variant) => !variant.serve && variant.launcher.name === name), "rss");
const rows = [["variant", "idle RSS", "over its floor", "peak RSS", "CPU to idle"]];
variants.forEach((variant, k) => {
  const rss = medianOf(k, "rss");
  rows.push([variant.label, mib(rss), variant.serve ? `+${mib(rss - floorOf(variant.launcher.name))}` : "", mib(medianOf(k, "hwm")), ms(medianOf(k, "cpu"))]);
});
console.log(table(rows));
