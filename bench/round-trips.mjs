#!/usr/bin/env node
// Pipelined `status` round trips per second, per runtime and window. Prints
// figures; never asserts a timing. See bench/README.md.
//
//   node bench/round-trips.mjs [--requests N] [--seconds S] [--windows 1,8,16]
//                              [--repeats R] [--quick] [--json FILE]
//
// A reading client keeps W `status` requests in flight over socketpairs and
// times each one from its write to the arrival of its response (matched by
// id). The protocol caps request ids at 4096 per child (request_limit closes
// the connection), so one run of N requests uses a new child every 4094
// statuses (initialize + 4094 status + shutdown = 4096 ids); only the
// pipelined phase after `initialize` is timed, never spawn or shutdown.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import {
  childEnv,
  denoBinary,
  describeTree,
  freshDirs,
  INITIALIZE,
  launchers,
  median,
  mib,
  parseFlags,
  percentile,
  PROTOCOL,
  procMemory,
  SHUTDOWN,
  spawnChild,
  table,
  within,
  foreignCpu,
  foreignCpuNote,
  processCpuMs,
} from "./lib.mjs";

const flags = parseFlags(process.argv.slice(2), ["quick"]);
const quick = flags.quick === true;
const totalRequests = Number(flags.requests ?? (quick ? 12_000 : 50_000));
const maxSeconds = Number(flags.seconds ?? (quick ? 2 : 5));
const windows = String(flags.windows ?? "1,8,16").split(",").map(Number);
const repeats = Number(flags.repeats ?? 3);
const only = typeof flags.runtimes === "string" ? new Set(flags.runtimes.split(",")) : null;
/** Status requests per child: 4096 ids minus initialize and shutdown. */
const PER_CHILD = 4094;
const TIMEOUT_MS = 30_000;

const env = childEnv();
const us = (value) => (value === null || !Number.isFinite(value) ? "n/a" : `${value.toFixed(1)} µs`);
const statusLine = (id) => `{"protocol":"${PROTOCOL}","version":1,"id":"${id}","method":"status","params":{}}\n`;

/**
 * One child: initialize, then `count` pipelined statuses with window `window`.
 * Latencies go into `latencies` from `offset`. Returns the timed span.
 */
async function segment(launcher, window, count, latencies, offset) {
  const dirs = freshDirs("magi-rt-");
  const { child, exited, stderr } = spawnChild(launcher, ["serve", "--stdio"], { cwd: dirs.work, env: { ...env, MC_HOME: dirs.home } });
  const sentAt = new Float64Array(count);
  let sent = 0;
  let received = 0;
  let errors = 0;
  let phase = "init";
  let start = 0;
  let end = 0;
  let rest = "";
  let hwmKiB = null;
  const childCpu = [null, null];
  let clientCpu = null;
  let timer;
  const done = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${launcher.name}: stalled (${received}/${count} answered)`)), TIMEOUT_MS);
    exited.then((status) => {
      if (phase !== "shutdown") reject(new Error(`${launcher.name}: exited (${status.code ?? status.signal}) during ${phase}: ${stderr().trim()}`));
    });

    const pump = () => {
      if (sent >= count || sent - received >= window) return;
      let text = "";
      const now = performance.now();
      while (sent < count && sent - received < window) {
        sentAt[sent] = now;
        text += statusLine(`q${sent}`);
        sent++;
      }
      child.stdin.write(text);
    };

    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      const now = performance.now();
      const text = rest + chunk;
      let from = 0;
      for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", from)) {
        const frame = JSON.parse(text.slice(from, newline));
        from = newline + 1;
        if (phase === "init") {
          if (frame.id !== "init" || frame.result === undefined) return reject(new Error(`${launcher.name}: initialize failed: ${JSON.stringify(frame)}`));
          phase = "run";
          childCpu[0] = processCpuMs(child.pid);
          clientCpu = process.cpuUsage();
          start = performance.now();
          pump();
          continue;
        }
        if (phase !== "run") continue;
        const id = frame.id;
        const index = typeof id === "string" && id.startsWith("q") ? Number(id.slice(1)) : -1;
        if (!(index >= 0 && index < sent)) return reject(new Error(`${launcher.name}: unexpected frame ${JSON.stringify(frame)}`));
        if (frame.result?.readiness !== "ready") errors++;
        latencies[offset + index] = now - sentAt[index];
        received++;
      }
      rest = text.slice(from);
      if (phase !== "run") return;
      if (received === count) {
        end = now;
        childCpu[1] = processCpuMs(child.pid);
        clientCpu = process.cpuUsage(clientCpu);
        hwmKiB = procMemory(child.pid).hwmKiB;
        phase = "shutdown";
        child.stdin.write(SHUTDOWN());
        resolve();
        return;
      }
      pump();
    });
    child.stdin.write(INITIALIZE());
  });
  try {
    await done;
    await within(exited, TIMEOUT_MS);
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    dirs.remove();
  }
  const childCpuMs = childCpu[0] === null || childCpu[1] === null ? null : childCpu[1] - childCpu[0];
  const clientCpuMs = (clientCpu.user + clientCpu.system) / 1000;
  return { elapsedMs: end - start, completed: count, errors, hwmKiB, childCpuMs, clientCpuMs };
}

/** One run: up to `totalRequests` round trips (or `maxSeconds` of timed work) over as many children as needed. */
async function runOnce(launcher, window) {
  const latencies = new Float64Array(totalRequests);
  let done = 0;
  let elapsedMs = 0;
  let children = 0;
  let errors = 0;
  let childCpuMs = 0;
  let clientCpuMs = 0;
  const hwm = [];
  while (done < totalRequests && elapsedMs < maxSeconds * 1000) {
    const count = Math.min(PER_CHILD, totalRequests - done);
    const result = await segment(launcher, window, count, latencies, done);
    done += result.completed;
    elapsedMs += result.elapsedMs;
    errors += result.errors;
    childCpuMs = result.childCpuMs === null || childCpuMs === null ? null : childCpuMs + result.childCpuMs;
    clientCpuMs += result.clientCpuMs;
    children++;
    if (result.hwmKiB !== null) hwm.push(result.hwmKiB);
  }
  const measured = latencies.subarray(0, done);
  return {
    requests: done,
    children,
    errors,
    throughput: done / (elapsedMs / 1000),
    p50: percentile(measured, 50),
    p99: percentile(measured, 99),
    hwmKiB: hwm.length > 0 ? median(hwm) : null,
    childUsPerRequest: childCpuMs === null ? null : (childCpuMs * 1000) / done,
    clientUsPerRequest: (clientCpuMs * 1000) / done,
  };
}

// ---------------------------------------------------------------- main

const selected = launchers(flags).filter((launcher) => only === null || only.has(launcher.name));
const denoVersion = spawnSync(denoBinary(), ["--version"], { encoding: "utf8" }).stdout?.split("\n")[0] ?? "deno ?";
console.log("== round trips: pipelined status over socketpairs");
console.log(`date ${new Date().toISOString()}, ${cpus().length} cpu, load avg ${loadavg().map((l) => l.toFixed(2)).join(" ")}, node ${process.version}, ${denoVersion}, tree ${describeTree()}`);
console.log(
  `${totalRequests} requests (or ${maxSeconds} s of timed work) per run, windows ${windows.join("/")}, ${repeats} runs each, median reported; ` +
    `new child every ${PER_CHILD} statuses (4096-id limit); NODE_EXTRA_CA_CERTS ${process.env.NODE_EXTRA_CA_CERTS === undefined ? "not set" : "unset in child env"}`,
);

const results = new Map();
const monitor = foreignCpu();
for (let repeat = 0; repeat < repeats; repeat++) {
  for (const launcher of selected) {
    for (const window of windows) {
      const key = `${launcher.name}/${window}`;
      const result = await runOnce(launcher, window);
      if (!results.has(key)) results.set(key, []);
      results.get(key).push(result);
      console.log(
        `  run ${repeat + 1}: ${launcher.name.padEnd(4)} W=${String(window).padEnd(2)}  ${Math.round(result.throughput).toLocaleString("en-US").padStart(7)} rt/s  ` +
          `p50 ${result.p50.toFixed(3)} ms  p99 ${result.p99.toFixed(3)} ms  CPU/req child ${us(result.childUsPerRequest)} client ${us(result.clientUsPerRequest)}  (${result.requests} req, ${result.children} children${result.errors > 0 ? `, ${result.errors} not ready` : ""})`,
      );
    }
  }
}

const foreignCores = monitor.stop();
const rows = [["runtime", "window", "round trips/s", "p50", "p99", "child CPU/req", "client CPU/req", "peak RSS", "runs (rt/s)"]];
const summary = {};
for (const launcher of selected) {
  for (const window of windows) {
    const list = results.get(`${launcher.name}/${window}`);
    const entry = {
      throughput: median(list.map((r) => r.throughput)),
      p50: median(list.map((r) => r.p50)),
      p99: median(list.map((r) => r.p99)),
      hwmKiB: median(list.map((r) => r.hwmKiB).filter((v) => v !== null)),
      childUsPerRequest: median(list.map((r) => r.childUsPerRequest).filter((v) => v !== null)),
      clientUsPerRequest: median(list.map((r) => r.clientUsPerRequest)),
      runs: list.map((r) => Math.round(r.throughput)),
    };
    summary[`${launcher.name}/${window}`] = entry;
    rows.push([
      launcher.name,
      String(window),
      Math.round(entry.throughput).toLocaleString("en-US"),
      `${entry.p50.toFixed(3)} ms`,
      `${entry.p99.toFixed(3)} ms`,
      us(entry.childUsPerRequest),
      us(entry.clientUsPerRequest),
      mib(entry.hwmKiB),
      entry.runs.map((value) => value.toLocaleString("en-US")).join(" / "),
    ]);
  }
}
console.log("");
console.log("median of runs:");
console.log(table(rows));
console.log(foreignCpuNote(foreignCores));

if (typeof flags.json === "string") {
  writeFileSync(flags.json, JSON.stringify({ foreignCores, totalRequests, maxSeconds, windows, repeats, summary }, null, 2));
}
