// Shared helpers for the bench scripts: locating binaries, spawning magi-code
// over socketpairs, reading response lines, /proc peak RSS and statistics.
// Plain Node ESM so the scripts run with no build step of their own.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** ANSI colour escapes, stripped from tool output before it is quoted. */
export const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const PROTOCOL = "magi-code.local-agent";

/** The Deno binary that `npm ci` installed (not the npm package's Node wrapper). */
export function denoBinary() {
  const candidates = [
    join(ROOT, "node_modules", "deno", "deno"),
    join(ROOT, "node_modules", "@deno", `${process.platform}-${process.arch === "arm64" ? "arm64" : "x64"}-glibc`, "deno"),
  ];
  const found = candidates.find((path) => existsSync(path));
  if (found === undefined) throw new Error("The deno binary from the deno npm package is missing; run npm ci");
  return found;
}

// The Deno spawn line's launch flags and environment, as runtime/deno-launch.ts has them (this file
// runs without a build, so it cannot import the TypeScript).
const DENO_LAUNCH_FLAGS = ["--unstable-lazy-dynamic-imports"];
const DENO_LAUNCH_ENV = { DENO_NO_UPDATE_CHECK: "1" };

/**
 * The launchers measured: Node on the compiled bin, `deno run` on the Deno
 * entry with the documented launch flags and environment (`env`, merged
 * into the child's by {@link spawnChild}). `flags["node-entry"]` /
 * `flags["deno-entry"]` swap in another entry file (for A/B runs of a
 * candidate build kept outside the tree).
 */
export function launchers(flags = {}) {
  const nodeEntry = typeof flags["node-entry"] === "string" ? resolve(flags["node-entry"]) : join(ROOT, "dist", "magi-code.mjs");
  const denoEntry = typeof flags["deno-entry"] === "string" ? resolve(flags["deno-entry"]) : join(ROOT, "runtime", "deno.ts");
  return [
    { name: "node", command: process.execPath, prefix: [nodeEntry] },
    { name: "deno", command: denoBinary(), prefix: ["run", "--allow-all", "--quiet", ...DENO_LAUNCH_FLAGS, denoEntry], env: DENO_LAUNCH_ENV },
  ];
}

/**
 * Tries `deno compile` into `directory`; returns a launcher for the binary, or
 * `{ error }` with the first meaningful line of why it failed (it downloads
 * `denort` on first use, which needs the network unless DENORT_BIN is set).
 */
export function compileDeno(directory) {
  const output = join(directory, "magi-code");
  const result = spawnSync(denoBinary(), ["compile", "--no-check", "--allow-all", "--quiet", "--output", output, join(ROOT, "runtime", "deno.ts")], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 180_000,
  });
  if (result.status === 0 && existsSync(output)) return { name: "deno-compiled", command: output, prefix: [] };
  const text = `${result.stderr ?? ""}\n${result.stdout ?? ""}`.replace(ANSI_COLOUR, "");
  if (/denort/.test(text) && /dns error|Connect|error sending request/i.test(text)) {
    return { error: "it downloads denort from dl.deno.land, which this machine cannot reach (dns error); set DENORT_BIN to a local denort to include it" };
  }
  const lines = text.split("\n").map((line) => line.trim()).filter((line) => line !== "" && !/^\d+: <unknown>$/.test(line));
  return { error: (lines.find((line) => /^error:/i.test(line)) ?? lines[0] ?? `exit ${result.status}`).slice(0, 300) };
}

/**
 * The child environment: the parent's, minus NODE_EXTRA_CA_CERTS unless
 * `keepCa` (this machine sets it, and it costs Node a certificate-bundle parse
 * at every start), plus `extra`.
 */
export function childEnv({ keepCa = false, keepProviderKeys = true, extra = {} } = {}) {
  const env = { ...process.env };
  if (!keepCa) delete env.NODE_EXTRA_CA_CERTS;
  // A bench against a loopback fake provider must not be shaped by (or send) the caller's real keys.
  if (!keepProviderKeys) {
    delete env.OPENAI_API_KEY;
    delete env.ANTHROPIC_API_KEY;
  }
  return { ...env, ...extra };
}

/** A fresh temporary directory with `home/` (MC_HOME) and `work/` (the child's cwd, a project without settings). */
export function freshDirs(label = "magi-bench-") {
  const base = mkdtempSync(join(tmpdir(), label));
  const home = join(base, "home");
  const work = join(base, "work");
  mkdirSync(work);
  return { base, home, work, remove: () => rmSync(base, { recursive: true, force: true }) };
}

/** One request line as bytes-ready text. */
export function requestLine(id, method, params = {}) {
  return `${JSON.stringify({ protocol: PROTOCOL, version: 1, id, method, params })}\n`;
}

export const INITIALIZE = (id = "init") => requestLine(id, "initialize", { required_capabilities: ["status", "shutdown"] });
export const SHUTDOWN = (id = "bye") => requestLine(id, "shutdown", {});

/**
 * Spawns `launcher` with `args` over socketpairs (Node's child stdio on Unix).
 * Returns the child plus a line reader: `onLine(callback)` receives each
 * complete stdout line as a string (without LF) and the arrival time.
 */
export function spawnChild(launcher, args, { env, cwd, extraNodeArgs = [] } = {}) {
  const command = launcher.command;
  const argv = launcher.name === "node" ? [...extraNodeArgs, ...launcher.prefix, ...args] : [...launcher.prefix, ...args];
  const child = spawn(command, argv, { cwd, env: { ...env, ...launcher.env }, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    if (stderr.length < 8192) stderr += chunk;
  });
  const exited = new Promise((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    child.once("error", (error) => resolve({ code: null, signal: null, error }));
  });
  const closed = new Promise((resolve) => child.once("close", resolve));
  child.stdin.on("error", () => {});
  return { child, exited, closed, stderr: () => stderr };
}

/** Calls `callback(line, now)` for every complete LF-terminated line on `stream`. */
export function readLines(stream, callback) {
  let rest = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    const now = performance.now();
    const text = rest + chunk;
    let newline = text.indexOf("\n");
    let start = 0;
    while (newline !== -1) {
      callback(text.slice(start, newline), now);
      start = newline + 1;
      newline = text.indexOf("\n", start);
    }
    rest = text.slice(start);
  });
}

/** Peak (VmHWM) and current (VmRSS) resident set of `pid` in KiB, from /proc; null where unavailable. */
export function procMemory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const field = (name) => {
      const match = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status);
      return match === null ? null : Number(match[1]);
    };
    return { hwmKiB: field("VmHWM"), rssKiB: field("VmRSS") };
  } catch {
    return { hwmKiB: null, rssKiB: null };
  }
}

/** Percentile by nearest rank on a copy of `values` (p in 0..100). */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** Median (mean of the two middle values for even counts). */
export function median(values) {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function summarize(values) {
  return {
    n: values.length,
    median: median(values),
    p90: percentile(values, 90),
    min: values.length === 0 ? NaN : Math.min(...values),
    max: values.length === 0 ? NaN : Math.max(...values),
  };
}

/** Minimal flag parser: `--name value`, `--name=value`, bare `--flag` = true. */
export function parseFlags(argv, booleans = []) {
  const flags = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith("--")) continue;
    const eq = arg.indexOf("=");
    if (eq !== -1) flags[arg.slice(2, eq)] = arg.slice(eq + 1);
    else if (booleans.includes(arg.slice(2)) || i + 1 >= argv.length || argv[i + 1].startsWith("--")) flags[arg.slice(2)] = true;
    else flags[arg.slice(2)] = argv[++i];
  }
  return flags;
}

export const ms = (value) => (Number.isFinite(value) ? `${value.toFixed(1)} ms` : "n/a");
export const mib = (kib) => (kib === null || !Number.isFinite(kib) ? "n/a" : `${(kib / 1024).toFixed(1)} MiB`);

/** Right-pads cells into an aligned text table. */
export function table(rows) {
  const widths = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, String(cell).length)));
  return rows.map((row) => row.map((cell, i) => String(cell).padEnd(widths[i])).join("  ").trimEnd()).join("\n");
}

/**
 * The two header lines that say where figures were measured: date, CPUs and
 * load; Node, Deno and the tree, with `more` appended (e.g. a server's version).
 */
export function machineHeader(more = "") {
  const denoVersion = spawnSync(denoBinary(), ["--version"], { encoding: "utf8" }).stdout?.split("\n")[0] ?? "deno ?";
  return `date ${new Date().toISOString()}, ${cpus().length} cpu (${cpus()[0]?.model ?? "?"}), load avg ${loadavg().map((l) => l.toFixed(2)).join(" ")}\n` +
    `node ${process.version}, ${denoVersion}, tree ${describeTree()}${more}`;
}

/** Git revision and dirty paths, so printed figures name what they measured. */
export function describeTree() {
  const rev = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).stdout?.trim() || "unknown";
  const dirty = (spawnSync("git", ["status", "--porcelain", "--", "src", "runtime", "mod.ts"], { cwd: ROOT, encoding: "utf8" }).stdout ?? "")
    .split("\n").filter(Boolean).length;
  return dirty === 0 ? rev : `${rev} + ${dirty} uncommitted change(s) in src/runtime`;
}

export const sleep = (msValue) => new Promise((resolve) => setTimeout(resolve, msValue));

/** Resolves with `promise`'s value, or with `fallback` after `ms`; the timer never outlives it. */
export function within(promise, ms, fallback = null) {
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function readTicks() {
  try {
    const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal …: busy = all but idle and iowait.
    const busy = cpu.reduce((sum, value, index) => (index === 3 || index === 4 ? sum : sum + value), 0);
    // /proc/self/stat fields 14-17: utime stime cutime cstime (reaped children included).
    const self = readFileSync("/proc/self/stat", "utf8");
    const fields = self.slice(self.lastIndexOf(")") + 2).split(" ");
    const own = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    return { busy, own, at: performance.now() };
  } catch {
    return null;
  }
}

/**
 * Watches how much CPU other processes (not this one, not its reaped children)
 * use while a bench runs; `stop()` returns the average in cores, or null off
 * Linux. On a 2-core machine anything above ~0.1 core means noisy figures.
 */
export function foreignCpu() {
  const start = readTicks();
  return {
    stop() {
      const end = readTicks();
      if (start === null || end === null) return null;
      const seconds = (end.at - start.at) / 1000;
      const ticks = end.busy - start.busy - (end.own - start.own);
      return Math.max(0, ticks / 100 / seconds);
    },
  };
}

/** One line about other load, with a warning when it is high enough to skew figures. */
export function foreignCpuNote(cores) {
  if (cores === null) return "other processes' CPU: unknown (no /proc)";
  const text = `other processes used ${cores.toFixed(2)} cores on average during this bench (of ${cpus().length})`;
  return cores > 0.1 ? `${text}: WARNING, figures are disturbed by other load; rerun on a quiet machine` : text;
}

/** CPU time of all threads of `pid` in milliseconds (summed over /proc/<pid>/task/N/schedstat), or null. */
export function processCpuMs(pid) {
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    }
    return ns / 1e6;
  } catch {
    return null;
  }
}

/**
 * One timed start of magi-code: spawn → complete initialize response line,
 * VmHWM and the child's CPU so far (all threads) just before `shutdown`,
 * then shutdown → exit. Fresh MC_HOME and cwd.
 */
export async function startOnce(launcher, env, TIMEOUT_MS = 15_000) {
  const dirs = freshDirs("magi-cold-");
  const t0 = performance.now();
  const { child, exited, closed, stderr } = spawnChild(launcher, ["serve", "--stdio"], {
    cwd: dirs.work,
    env: { ...env, MC_HOME: dirs.home },
  });
  child.stdin.write(INITIALIZE());
  let timer;
  try {
    const first = await new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no initialize response within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
      readLines(child.stdout, (line, now) => resolve({ line, now }));
      exited.then((status) => reject(new Error(`exited (${status.code ?? status.signal}) before answering: ${stderr().trim()}`)));
    });
    const mem = procMemory(child.pid);
    const cpuMs = processCpuMs(child.pid);
    const response = JSON.parse(first.line);
    const t1 = first.now;
    const tShutdown = performance.now();
    child.stdin.write(SHUTDOWN());
    const status = await within(exited, TIMEOUT_MS);
    if (status === null) child.kill("SIGKILL");
    const tExit = performance.now();
    await within(closed, 1000);
    return {
      ms: t1 - t0,
      hwmKiB: mem.hwmKiB,
      cpuMs,
      exitMs: tExit - tShutdown,
      exitCode: status?.code ?? null,
      readiness: response.result?.status?.readiness ?? `error:${response.error?.code ?? "?"}`,
      stderr: stderr(),
    };
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    dirs.remove();
  }
}

