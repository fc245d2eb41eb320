#!/usr/bin/env node
// `npm run bench`: builds dist/ (tsc and the bundle), runs bench/cold-start.mjs and
// bench/round-trips.mjs in sequence (flags such as --runs N and --quick pass
// through to both), then prints a compact summary next to the targets.
// --breakdown also runs bench/startup-breakdown.mjs (phases and what-ifs).
// Prints figures only: the exit code never depends on a timing.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { foreignCpuNote, mib, ms, ROOT, table } from "./lib.mjs";

const breakdown = process.argv.includes("--breakdown");
const passThrough = process.argv.slice(2).filter((arg) => arg !== "--breakdown");
const TARGETS = { node: 70, deno: 60, "deno-compiled": 60, roundTrips: 20_000 };

function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: "inherit" });
    child.once("exit", (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

const scratch = mkdtempSync(join(tmpdir(), "magi-bench-run-"));
try {
  console.log("== build: npm run build (tsc, then the dist/magi-code.mjs bundle)");
  const built = await run("npm", ["run", "--silent", "build"]);
  if (built !== 0 || !existsSync(join(ROOT, "dist", "magi-code.mjs"))) {
    console.log(`the build exited ${built}; cannot bench the Node entry point`);
    process.exit(1);
  }

  const coldJson = join(scratch, "cold.json");
  const tripsJson = join(scratch, "trips.json");
  console.log("");
  const coldCode = await run(process.execPath, [join(ROOT, "bench", "cold-start.mjs"), ...passThrough, "--json", coldJson]);
  console.log("");
  const tripsCode = await run(process.execPath, [join(ROOT, "bench", "round-trips.mjs"), ...passThrough, "--json", tripsJson]);

  let breakdownCode = 0;
  if (breakdown) {
    console.log("");
    breakdownCode = await run(process.execPath, [join(ROOT, "bench", "startup-breakdown.mjs"), ...passThrough]);
  }

  const cold = existsSync(coldJson) ? JSON.parse(readFileSync(coldJson, "utf8")) : null;
  const trips = existsSync(tripsJson) ? JSON.parse(readFileSync(tripsJson, "utf8")) : null;

  console.log("");
  console.log("== summary (medians; targets are informational, never asserted)");
  const rows = [["runtime", "cold start", "p90", "peak RSS", "start target", "rt/s W=1", "rt/s W=8", "p50/p99 W=8", "rt/s W=16", "rt target"]];
  for (const key of ["node", "deno", "deno-compiled"]) {
    const c = cold?.summary?.[key];
    const tripKey = key === "deno-compiled" ? null : key;
    const t = (window) => (tripKey === null ? undefined : trips?.summary?.[`${tripKey}/${window}`]);
    if (c === undefined && t(8) === undefined) continue;
    const rate = (entry) => (entry === undefined ? "-" : Math.round(entry.throughput).toLocaleString("en-US"));
    const verdict = (value, limit, lowerIsBetter) =>
      value === undefined || !Number.isFinite(value) ? "-" : (lowerIsBetter ? value <= limit : value >= limit) ? "met" : "MISSED";
    rows.push([
      key,
      c === undefined ? "-" : ms(c.median),
      c === undefined ? "-" : ms(c.p90),
      c === undefined ? "-" : mib(c.hwmKiB),
      `≤ ${TARGETS[key]} ms: ${verdict(c?.median, TARGETS[key], true)}`,
      rate(t(1)),
      rate(t(8)),
      t(8) === undefined ? "-" : `${t(8).p50.toFixed(3)} / ${t(8).p99.toFixed(3)} ms`,
      rate(t(16)),
      tripKey === null ? "-" : `≥ 20,000: ${verdict(t(8)?.throughput, TARGETS.roundTrips, false)}`,
    ]);
  }
  console.log(table(rows));
  if (cold !== null) {
    const s = cold.summary;
    const base = [
      s["node-empty"] && `node -e "" ${ms(s["node-empty"].median)}`,
      s["deno-empty"] && `deno eval "" ${ms(s["deno-empty"].median)}`,
      s["node-ca"] && `node with NODE_EXTRA_CA_CERTS set ${ms(s["node-ca"].median)}`,
    ].filter(Boolean);
    console.log(`baselines: ${base.join(", ")}`);
    console.log(`compiled Deno binary: ${cold.compileNote}`);
    const mods = cold.modules ?? {};
    for (const name of ["node", "deno"]) {
      const m = mods[name];
      if (m !== undefined) console.log(`${name} packages at initialize: ${m.packages.join(", ") || "(none)"}; MCP/provider SDK loaded: ${m.forbidden.length === 0 ? "no" : m.forbidden.join(", ")}`);
    }
  }
  if (cold !== null && cold.foreignCores !== undefined) console.log(`cold start: ${foreignCpuNote(cold.foreignCores)}`);
  if (trips !== null && trips.foreignCores !== undefined) console.log(`round trips: ${foreignCpuNote(trips.foreignCores)}`);
  if (coldCode !== 0 || tripsCode !== 0 || breakdownCode !== 0) {
    console.log(`a bench script failed (cold-start exit ${coldCode}, round-trips exit ${tripsCode}, breakdown exit ${breakdownCode})`);
    process.exitCode = 1;
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
