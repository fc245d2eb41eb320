#!/usr/bin/env node
// Opening and paging a large session while `status` keeps being answered.
// Prints figures; never asserts a timing. See bench/README.md.
//
//   node bench/session-open.mjs [--runs N] [--bytes 64MiB] [--seed N] [--runtimes node,deno]
//                               [--interval MS] [--quick] [--cpu-prof DIR] [--keep] [--json FILE]
//
// Per run: a fresh temp MC_HOME and cwd; scripts/seed-session.mjs seeds an
// untorn history of --bytes (default 64 MiB, ≤ 100,000 lines) recorded for
// that cwd; the real child is spawned in the cwd and initialized; then
// `session.open` is sent and, from the same moment, a `status` with a fresh
// id every --interval ms (default 10) until the last page has arrived.
// After the open answers, `history.page` is requested from the null cursor,
// each next page as soon as the previous one arrives, until `next_cursor` is
// null. Times are from `session.open` written to the arrival of the chunk
// holding the response. Peak RSS is the child's VmHWM after the last page;
// growth is over its VmRSS right after `initialize`.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  childEnv,
  foreignCpu,
  foreignCpuNote,
  freshDirs,
  launchers,
  machineHeader,
  median,
  mib,
  ms,
  parseFlags,
  percentile,
  processCpuMs,
  procMemory,
  readLines,
  requestLine,
  ROOT,
  spawnChild,
  table,
  within,
} from "./lib.mjs";

const flags = parseFlags(process.argv.slice(2), ["quick", "keep"]);
const quick = flags.quick === true;
const runs = Number(flags.runs ?? (quick ? 1 : 3));
const bytesFlag = String(flags.bytes ?? "64MiB");
const seed = String(flags.seed ?? "1");
const intervalMs = Number(flags.interval ?? 10);
const only = typeof flags.runtimes === "string" ? new Set(flags.runtimes.split(",")) : null;
const cpuProfDir = typeof flags["cpu-prof"] === "string" ? resolve(flags["cpu-prof"]) : null;
const TIMEOUT_MS = 60_000;
/** Ids a child admits (4,096) minus initialize, open, shutdown and headroom for pages. */
const MAX_IDS = 3_800;
const TARGETS = { firstPageMs: 1_500, growthFactor: 4, statusMs: 50 };

const env = childEnv();
const selected = launchers(flags).filter((launcher) => only === null || only.has(launcher.name));

/** Seeds the history with the real script (in its own process, so this client's heap stays small). */
function seedHistory(dirs) {
  const args = [join(ROOT, "scripts", "seed-session.mjs"), "--home", dirs.home, "--cwd", dirs.work, "--bytes", bytesFlag, "--seed", seed];
  const result = spawnSync(process.execPath, args, { encoding: "utf8", env });
  const match = /^(\S+): ([\d,]+) bytes, ([\d,]+) lines, ([\d,]+) turns.*\(session ([A-Za-z0-9_-]+),/m.exec(result.stdout ?? "");
  if (result.status !== 0 || match === null) throw new Error(`seeding failed (exit ${result.status}): ${(result.stderr || result.stdout).trim()}`);
  const number = (text) => Number(text.replaceAll(",", ""));
  return { path: match[1], bytes: number(match[2]), lines: number(match[3]), turns: number(match[4]), sessionId: match[5] };
}

/** One run against `launcher`: seed, spawn, initialize, open + page under status pings, shutdown. */
async function runOnce(launcher, index) {
  const dirs = freshDirs("magi-open-");
  const seeded = seedHistory(dirs);
  const extraNodeArgs = cpuProfDir !== null && launcher.name === "node" ? ["--cpu-prof", "--cpu-prof-dir", cpuProfDir, "--cpu-prof-name", `session-open-${index}.cpuprofile`] : [];
  const { child, exited, closed, stderr } = spawnChild(launcher, ["serve", "--stdio"], {
    cwd: dirs.work,
    env: { ...env, MC_HOME: dirs.home },
    extraNodeArgs,
  });
  const pending = new Map();
  const statuses = new Map(); // id → { sent, at }
  let ids = 0;
  let fatal = null;
  const failAll = (error) => {
    fatal ??= error;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  exited.then((status) => failAll(new Error(`child exited (${status.code ?? status.signal}): ${stderr().trim().slice(0, 400)}`)));

  readLines(child.stdout, (line, now) => {
    let frame;
    try {
      frame = JSON.parse(line);
    } catch {
      return failAll(new Error(`unparsable output line: ${line.slice(0, 200)}`));
    }
    const status = statuses.get(frame.id);
    if (status !== undefined) {
      status.at = now;
      status.ok = frame.result !== undefined;
      return;
    }
    const waiter = pending.get(frame.id);
    if (waiter === undefined) return;
    pending.delete(frame.id);
    waiter.resolve({ frame, at: now });
  });
  const request = (method, params) => {
    if (fatal !== null) return Promise.reject(fatal);
    const id = `${method}-${++ids}`;
    const promise = new Promise((resolvePromise, reject) => pending.set(id, { resolve: resolvePromise, reject }));
    child.stdin.write(requestLine(id, method, params));
    return within(promise, TIMEOUT_MS, { timeout: true, id });
  };
  const expect = async (method, params) => {
    const response = await request(method, params);
    if (response.timeout) throw new Error(`${method} not answered within ${TIMEOUT_MS} ms`);
    if (response.frame.error !== undefined) throw new Error(`${method} answered ${response.frame.error.code}`);
    return response;
  };

  let timer = null;
  try {
    await expect("initialize", { required_capabilities: ["status", "session.open", "history.page", "shutdown"] });
    const afterInit = procMemory(child.pid);
    const cpuBefore = processCpuMs(child.pid);

    const t0 = performance.now();
    const opening = expect("session.open", { session_id: seeded.sessionId });
    timer = setInterval(() => {
      if (ids >= MAX_IDS || fatal !== null) return;
      const id = `s${++ids}`;
      statuses.set(id, { sent: performance.now(), at: null, ok: false });
      child.stdin.write(requestLine(id, "status", {}));
    }, intervalMs);
    const opened = await opening;
    const openMs = opened.at - t0;
    const { revision } = opened.frame.result;
    const afterOpen = procMemory(child.pid);

    let cursor = null;
    let pages = 0;
    let entries = 0;
    let firstPageMs = null;
    let lastPageMs = null;
    let complete = null;
    for (;;) {
      const page = await expect("history.page", { session_id: seeded.sessionId, revision, cursor });
      pages++;
      entries += page.frame.result.entries.length;
      firstPageMs ??= page.at - t0;
      cursor = page.frame.result.next_cursor;
      if (cursor === null) {
        complete = page.frame.result.complete;
        lastPageMs = page.at - t0;
        break;
      }
    }
    clearInterval(timer);
    timer = null;
    const cpuAfter = processCpuMs(child.pid);
    const afterPages = procMemory(child.pid);
    // Every status sent during open and paging must be answered before it is counted.
    const deadline = performance.now() + 5_000;
    while ([...statuses.values()].some((status) => status.at === null) && performance.now() < deadline && fatal === null) {
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 5));
    }
    const answered = [...statuses.values()].filter((status) => status.at !== null);
    const latencies = answered.map((status) => status.at - status.sent);
    // [sent, latency] in ms from session.open written, for --json readers who want to see when the stalls were.
    const timeline = answered.map((status) => [Math.round((status.sent - t0) * 10) / 10, Math.round((status.at - status.sent) * 10) / 10]);
    const unanswered = statuses.size - latencies.length;

    const bye = request("shutdown", {});
    const status = await within(exited, 10_000);
    await bye.catch(() => {});
    if (status === null) child.kill("SIGKILL");
    await within(closed, 1_000);
    const peakKiB = Math.max(afterPages.hwmKiB ?? 0, afterOpen.hwmKiB ?? 0);
    return {
      runtime: launcher.name,
      fileBytes: seeded.bytes,
      lines: seeded.lines,
      turns: seeded.turns,
      openMs,
      firstPageMs,
      lastPageMs,
      pages,
      entries,
      complete,
      initRssKiB: afterInit.rssKiB,
      openRssKiB: afterOpen.rssKiB,
      peakKiB,
      growthKiB: peakKiB - afterInit.rssKiB,
      childCpuMs: cpuBefore !== null && cpuAfter !== null ? cpuAfter - cpuBefore : null,
      statusCount: latencies.length,
      unanswered,
      statusWorst: latencies.length === 0 ? NaN : Math.max(...latencies),
      statusP99: percentile(latencies, 99),
      statusP50: percentile(latencies, 50),
      phases: { openMs, firstPageMs, lastPageMs },
      timeline,
    };
  } finally {
    if (timer !== null) clearInterval(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    if (flags.keep === true) console.log(`  kept ${dirs.base}`);
    else dirs.remove();
  }
}

// ---------------------------------------------------------------- header

console.log("== session open: session.open + history.page of a large history, status pinged throughout");
console.log(machineHeader());
console.log(`seed: --bytes ${bytesFlag} --seed ${seed} (untorn); status every ${intervalMs} ms; ${runs} run(s) per runtime, round-robin; NODE_EXTRA_CA_CERTS unset in the child`);
if (cpuProfDir !== null) {
  mkdirSync(cpuProfDir, { recursive: true });
  console.log(`Node children write CPU profiles to ${cpuProfDir} (profiling slows them: figures are not comparable)`);
}
if (runs < 3) console.log(`NOTE: only ${runs} run(s) per runtime; use at least 3 for figures worth quoting`);

// ---------------------------------------------------------------- runs

const results = [];
const monitor = foreignCpu();
let failures = 0;
for (let i = 0; i < runs; i++) {
  for (let j = 0; j < selected.length; j++) {
    const launcher = selected[(i + j) % selected.length];
    try {
      const result = await runOnce(launcher, i);
      results.push(result);
      console.log(
        `  run ${i + 1} ${launcher.name}: open ${ms(result.openMs)}, first page ${ms(result.firstPageMs)}, last page ${ms(result.lastPageMs)}, ` +
          `${result.pages} pages / ${result.entries} entries${result.complete ? "" : " (INCOMPLETE)"}, peak RSS ${mib(result.peakKiB)} ` +
          `(+${mib(result.growthKiB)} over ${mib(result.initRssKiB)} after initialize), status worst ${ms(result.statusWorst)} / p99 ${ms(result.statusP99)} / p50 ${ms(result.statusP50)} ` +
          `over ${result.statusCount}${result.unanswered > 0 ? ` (${result.unanswered} UNANSWERED)` : ""}, child CPU ${ms(result.childCpuMs)}`,
      );
    } catch (error) {
      failures++;
      console.log(`  run ${i + 1} ${launcher.name}: FAILED: ${error.message}`);
    }
  }
}
const foreignCores = monitor.stop();

// ---------------------------------------------------------------- summary

const first = results[0];
if (first !== undefined) {
  console.log(`history: ${first.fileBytes.toLocaleString("en-US")} bytes (${mib(first.fileBytes / 1024)}), ${first.lines.toLocaleString("en-US")} lines, ${first.turns.toLocaleString("en-US")} turns`);
}
const summary = {};
const rows = [["runtime", "runs", "open", "first page", "last page", "pages", "peak RSS", "growth", "growth/file", "status worst", "status p99", "status p50", "child CPU"]];
const verdict = (ok) => (ok ? "met" : "MISSED");
for (const launcher of selected) {
  const list = results.filter((result) => result.runtime === launcher.name);
  if (list.length === 0) continue;
  const m = (key) => median(list.map((result) => result[key]).filter((value) => value !== null && Number.isFinite(value)));
  const s = {
    runs: list.length,
    fileBytes: m("fileBytes"),
    openMs: m("openMs"),
    firstPageMs: m("firstPageMs"),
    lastPageMs: m("lastPageMs"),
    pages: m("pages"),
    entries: m("entries"),
    peakKiB: m("peakKiB"),
    growthKiB: m("growthKiB"),
    initRssKiB: m("initRssKiB"),
    statusWorst: m("statusWorst"),
    statusP99: m("statusP99"),
    statusP50: m("statusP50"),
    childCpuMs: m("childCpuMs"),
    complete: list.every((result) => result.complete),
    unanswered: list.reduce((sum, result) => sum + result.unanswered, 0),
  };
  s.growthFactor = (s.growthKiB * 1024) / s.fileBytes;
  summary[launcher.name] = s;
  rows.push([
    launcher.name,
    String(s.runs),
    ms(s.openMs),
    ms(s.firstPageMs),
    ms(s.lastPageMs),
    String(s.pages),
    mib(s.peakKiB),
    mib(s.growthKiB),
    `${s.growthFactor.toFixed(2)}×`,
    ms(s.statusWorst),
    ms(s.statusP99),
    ms(s.statusP50),
    ms(s.childCpuMs),
  ]);
}
console.log("");
console.log("medians per runtime (times from session.open written):");
console.log(table(rows));
console.log("");
for (const [name, s] of Object.entries(summary)) {
  console.log(
    `${name} targets: first page ≤ ${TARGETS.firstPageMs} ms: ${verdict(s.firstPageMs <= TARGETS.firstPageMs)}; ` +
      `peak RSS growth < ${TARGETS.growthFactor}× file: ${verdict(s.growthFactor < TARGETS.growthFactor)}; ` +
      `status ≤ ${TARGETS.statusMs} ms throughout (worst): ${verdict(s.statusWorst <= TARGETS.statusMs && s.unanswered === 0)}` +
      `${s.complete ? "" : "; WARNING: a projection was incomplete"}`,
  );
}
console.log(foreignCpuNote(foreignCores));

if (typeof flags.json === "string") {
  writeFileSync(flags.json, JSON.stringify({ runs, bytes: bytesFlag, seed, intervalMs, foreignCores, summary, results, failures }, null, 2));
}
if (failures > 0) process.exitCode = 1;
