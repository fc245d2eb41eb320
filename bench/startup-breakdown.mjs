#!/usr/bin/env node
// Where cold-start time goes, and what two packaging changes would buy.
// Prints figures; never asserts a timing. Not part of `npm run bench` (it
// takes a minute and builds throwaway candidates); run it when cold start
// misses its target. See bench/README.md.
//
//   node bench/startup-breakdown.mjs [--runs N] [--quick] [--no-what-if]
//
// 1. Phases: bench/support/timed-entry-{node,deno}.mjs stand in for the entry
//    point, import the same modules group by group and stamp performance.now()
//    after each group, around the context digest and at the initialize
//    response; medians of N fresh children are printed as increments.
// 2. What-if (unless --no-what-if), built in a temp dir, src/ untouched:
//    - "jsonc ESM": the tree with `jsonc-parser` (loaded as CommonJS today)
//      replaced by its own ESM build, bundled to one file by `deno bundle`;
//    - "bundle": runtime/node.ts and runtime/deno.ts as one-file ESM bundles
//      (`deno bundle`, which tree-shakes valibot and takes jsonc-parser's ESM).
//    Each is timed like bench/cold-start.mjs, interleaved with the current build.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ANSI_COLOUR,
  childEnv,
  denoBinary,
  describeTree,
  foreignCpu,
  foreignCpuNote,
  launchers,
  median,
  mib,
  ms,
  parseFlags,
  ROOT,
  startOnce,
  summarize,
  table,
} from "./lib.mjs";

const flags = parseFlags(process.argv.slice(2), ["quick", "no-what-if"]);
const runs = Number(flags.runs ?? (flags.quick === true ? 10 : 15));
const env = childEnv();
const [nodeLauncher, denoLauncher] = launchers(flags);
const monitor = foreignCpu();

console.log("== startup breakdown");
console.log(`date ${new Date().toISOString()}, node ${process.version}, tree ${describeTree()}, ${runs} runs per variant, NODE_EXTRA_CA_CERTS unset in child env`);

// ---------------------------------------------------------------- phases

const timedNode = { ...nodeLauncher, prefix: [join(ROOT, "bench", "support", "timed-entry-node.mjs")] };
const timedDeno = { ...denoLauncher, prefix: ["run", "--allow-all", "--quiet", join(ROOT, "bench", "support", "timed-entry-deno.mjs")] };

const PHASES = {
  node: [
    ["bootstrap", "node bootstrap (process start → bootstrapComplete)", null],
    ["entry", "ESM loader start, entry module evaluated", "bootstrap"],
    ["builtins", "node:child_process, fs/promises, net, tty", "entry"],
    ["valibot", "valibot (ESM, 206 KB)", "builtins"],
    ["jsonc", "jsonc-parser (CommonJS UMD via ESM interop)", "valibot"],
    ["own", "own modules (dist/src, 25 files)", "jsonc"],
    ["adapter", "runtime adapter module", "own"],
    ["runtimeCreated", "createNodeRuntime()", "adapter"],
    ["digestStart", "serve → stdio check, read, mkdir, realpath", "runtimeCreated"],
    ["digestEnd", "SHA-256 context digest (WebCrypto)", "digestStart"],
    ["response", "settings, selection, encode → response written", "digestEnd"],
  ],
  deno: [
    ["entry", "deno run until entry module evaluates (from time origin)", null],
    ["valibot", "valibot", "entry"],
    ["jsonc", "jsonc-parser (CommonJS: boots Deno's Node compat layer)", "valibot"],
    ["own", "own modules (src/*.ts, code-cached)", "jsonc"],
    ["adapter", "runtime adapter module", "own"],
    ["runtimeCreated", "createDenoRuntime()", "adapter"],
    ["digestStart", "serve → stdio check, read, mkdir, realpath", "runtimeCreated"],
    ["digestEnd", "SHA-256 context digest (WebCrypto)", "digestStart"],
    ["response", "settings, selection, encode → response written", "digestEnd"],
  ],
};

async function phases(name, launcher) {
  const samples = [];
  for (let i = 0; i < runs + 2; i++) {
    const result = await startOnce(launcher, env);
    const line = result.stderr.split("\n").find((text) => text.startsWith("{"));
    if (line === undefined) throw new Error(`${name}: timed entry printed no stamps: ${result.stderr.slice(0, 300)}`);
    if (i >= 2) samples.push({ wall: result.ms, stamps: JSON.parse(line) });
  }
  const rows = [["phase", "median Δ", "median at"]];
  for (const [key, label, from] of PHASES[name]) {
    const at = median(samples.map((s) => s.stamps[key]));
    const delta = median(samples.map((s) => s.stamps[key] - (from === null ? 0 : s.stamps[from])));
    rows.push([label, ms(delta), ms(at)]);
  }
  const wall = median(samples.map((s) => s.wall));
  const origin = median(samples.map((s) => s.wall - s.stamps.response));
  rows.push(["parent's wall time spawn → response line", "", ms(wall)]);
  rows.push(["  of which before the child's time origin, plus pipe delivery", ms(origin), ""]);
  console.log("");
  console.log(`${name} (timed stand-in entry; dynamic imports in dependency order, so each row is that group's increment):`);
  console.log(table(rows));
}

await phases("node", timedNode);
await phases("deno", timedDeno);

// ---------------------------------------------------------------- what-if

if (flags["no-what-if"] !== true) {
  const scratch = mkdtempSync(join(tmpdir(), "magi-whatif-"));
  try {
    const deno = denoBinary();
    const bundle = (entry, output, cwd = ROOT) =>
      spawnSync(deno, ["bundle", "--quiet", "--platform", "deno", "-o", output, entry], { cwd, encoding: "utf8", timeout: 180_000 });
    const firstError = (result) =>
      `${result.stderr ?? ""}`.replace(ANSI_COLOUR, "").split("\n").map((line) => line.trim()).find((line) => /error/i.test(line)) ?? `exit ${result.status}`;
    const variants = [
      { key: "node", label: "node dist/magi-code.cjs (current)", launcher: nodeLauncher },
      { key: "deno", label: "deno run runtime/deno.ts (current)", launcher: denoLauncher },
    ];
    const notes = [];

    // jsonc-parser as ESM: its ESM build bundled to one file (inside a copy of
    // the tree, so node_modules resolves), imported by the copied settings.{js,ts}.
    const tree = join(scratch, "tree");
    for (const part of ["dist", "src", "runtime", "deno.json", "package.json"]) cpSync(join(ROOT, part), join(tree, part), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"));
    writeFileSync(join(tree, "jsonc-entry.ts"), 'export * from "jsonc-parser";\n');
    const jsoncBuilt = bundle(join(tree, "jsonc-entry.ts"), join(tree, "jsonc-esm.js"), tree);
    if (jsoncBuilt.status === 0) {
      let patched = 0;
      for (const file of ["dist/src/config/settings.js", "src/config/settings.ts"]) {
        const path = join(tree, file);
        const text = readFileSync(path, "utf8");
        if (!text.includes('from "jsonc-parser"')) continue;
        writeFileSync(path, text.replace('from "jsonc-parser"', 'from "./jsonc-esm.js"'));
        cpSync(join(tree, "jsonc-esm.js"), join(path, "..", "jsonc-esm.js"));
        patched++;
      }
      if (patched === 2) {
        variants.push(
          { key: "node-jsonc", label: "node, jsonc-parser as ESM", launcher: { ...nodeLauncher, prefix: [join(tree, "dist", "runtime", "node.js")] } },
          { key: "deno-jsonc", label: "deno run, jsonc-parser as ESM", launcher: { ...denoLauncher, prefix: ["run", "--allow-all", "--quiet", join(tree, "runtime", "deno.ts")] } },
        );
      } else {
        notes.push('jsonc ESM variant skipped: settings no longer imports from "jsonc-parser"');
      }
    } else {
      notes.push(`jsonc ESM variant skipped: deno bundle failed: ${firstError(jsoncBuilt)}`);
    }

    // Whole-program bundles.
    for (const [name, entry, launcher] of [["node", "runtime/node.ts", nodeLauncher], ["deno", "runtime/deno.ts", denoLauncher]]) {
      const output = join(scratch, `${name}-bundle.mjs`);
      const built = bundle(entry, output);
      if (built.status !== 0 || !existsSync(output)) {
        notes.push(`${name} bundle skipped: deno bundle failed: ${firstError(built)}`);
        continue;
      }
      const size = readFileSync(output).length;
      const prefix = name === "node" ? [output] : ["run", "--allow-all", "--quiet", output];
      variants.push({ key: `${name}-bundle`, label: `${name}, one-file bundle (${Math.round(size / 1024)} KB)`, launcher: { ...launcher, prefix } });
    }

    const samples = new Map(variants.map((variant) => [variant.key, []]));
    for (let i = 0; i < runs + 2; i++) {
      for (let j = 0; j < variants.length; j++) {
        const variant = variants[(i + j) % variants.length];
        const result = await startOnce(variant.launcher, env);
        if (i >= 2) samples.get(variant.key).push(result);
      }
    }
    const rows = [["variant", "median", "p90", "min", "Δ median vs current", "peak RSS"]];
    for (const variant of [...variants].sort((a, b) => a.key.localeCompare(b.key))) {
      const list = samples.get(variant.key);
      const stats = summarize(list.map((s) => s.ms));
      const base = summarize(samples.get(variant.key.split("-")[0]).map((s) => s.ms)).median;
      rows.push([variant.label, ms(stats.median), ms(stats.p90), ms(stats.min), variant.key.includes("-") ? ms(stats.median - base) : "", mib(median(list.map((s) => s.hwmKiB)))]);
    }
    console.log("");
    console.log("what-if (candidates built in a temp dir; src/ untouched):");
    console.log(table(rows));
    for (const note of notes) console.log(note);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
console.log(foreignCpuNote(monitor.stop()));
