#!/usr/bin/env node
// `session.list` first page over 256 sessions totalling ~60 MiB (inside the
// 64 MiB scan bound), with `status` sent every --interval ms throughout.
// Prints figures; never asserts a timing. See bench/README.md.
//
//   node bench/session-list.mjs [--runs N] [--sessions 256] [--bytes 60MiB] [--interval MS] [--runtimes node,deno]
//
// One temp MC_HOME per runtime, seeded once with realistic histories
// (tests/support/seed.ts, compiled) recorded for the child's cwd; one child;
// then --runs fresh listings (limit 100), one after another, each a full
// bounded scan. The child's first listing (cold code, as a client's first
// listing meets it) is reported apart from the median of the later ones.
// Times are from `session.list` written to the arrival of its response;
// child CPU is the child's (all threads, status pings included) over the
// same span, which other load disturbs far less; status latency is per
// ping, over all runs.
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { childEnv, freshDirs, launchers, median, ms, parseFlags, readLines, requestLine, ROOT, spawnChild, table, within } from "./lib.mjs";
import { foreignCpu, foreignCpuNote, processCpuMs } from "./lib.mjs";

const flags = parseFlags(process.argv.slice(2), []);
const runs = Number(flags.runs ?? 7);
const count = Number(flags.sessions ?? 256);
const totalBytes = Number(String(flags.bytes ?? "60MiB").replace(/MiB$/i, "")) * 1_048_576;
const intervalMs = Number(flags.interval ?? 5);
const only = typeof flags.runtimes === "string" ? new Set(flags.runtimes.split(",")) : null;
const TARGETS = { firstPageMs: 500, statusMs: 50 };
const { generateSession } = await import(join(ROOT, "dist", "tests", "support", "seed.js"));

function seed(dirs) {
  const directory = join(dirs.home, "sessions");
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  let bytes = 0;
  let lines = 0;
  for (let n = 0; n < count; n++) {
    // Realistic small histories carry more lines per byte; the scan reads at most 100,000 lines.
    const session = generateSession({ cwd: dirs.work, seed: n + 1, targetBytes: Math.floor(totalBytes / count), maxLines: Math.floor(99_000 / count) });
    writeFileSync(join(directory, `${session.sessionId}.jsonl`), session.bytes, { mode: 0o600 });
    bytes += session.bytes.length;
    lines += session.lines;
  }
  return { bytes, lines };
}

async function bench(launcher) {
  const dirs = freshDirs("magi-list-");
  const seeded = seed(dirs);
  const { child, exited } = spawnChild(launcher, ["serve", "--stdio"], { cwd: dirs.work, env: { ...childEnv(), MC_HOME: dirs.realHome ?? dirs.home } });
  const pending = new Map();
  const pings = new Map();
  readLines(child.stdout, (line, now) => {
    const frame = JSON.parse(line);
    const ping = pings.get(frame.id);
    if (ping !== undefined) ping.at = now;
    pending.get(frame.id)?.({ frame, at: now });
  });
  let ids = 0;
  const call = (method, params) => {
    const id = `${method}-${++ids}`;
    const answered = new Promise((resolve) => pending.set(id, resolve));
    const sent = performance.now();
    child.stdin.write(requestLine(id, method, params));
    return within(answered, 30_000, { frame: { error: { code: "timeout" } }, at: NaN }).then((reply) => ({ ...reply, ms: reply.at - sent }));
  };
  const init = await call("initialize", { required_capabilities: ["session.list", "status", "shutdown"] });
  if (init.frame.error) throw new Error(`initialize: ${init.frame.error.code}`);
  const timer = setInterval(() => {
    const id = `ping-${++ids}`;
    pings.set(id, { sent: performance.now(), at: null });
    child.stdin.write(requestLine(id, "status", {}));
  }, intervalMs);
  const times = [];
  const cpu = [];
  let listed = null;
  for (let run = 0; run < runs; run++) {
    const before = processCpuMs(child.pid);
    const reply = await call("session.list", { limit: 100 });
    cpu.push(processCpuMs(child.pid) - before);
    if (reply.frame.error) throw new Error(`session.list: ${reply.frame.error.code} after ${reply.ms.toFixed(0)} ms (${seeded.bytes} bytes, ${seeded.lines} lines)`);
    listed = reply.frame.result.sessions.length;
    times.push(reply.ms);
  }
  clearInterval(timer);
  await new Promise((resolve) => setTimeout(resolve, 100));
  const latencies = [...pings.values()].filter((ping) => ping.at !== null).map((ping) => ping.at - ping.sent);
  child.stdin.write(requestLine("bye", "shutdown", {}));
  await within(exited, 5_000);
  dirs.remove();
  return { runtime: launcher.name, ...seeded, listed, times, cpu, statuses: latencies.length, statusWorst: Math.max(...latencies) };
}

const monitor = foreignCpu();
const rows = [["runtime", "sessions", "MiB", "lines", "first listing", "later median", "min", "max", "child CPU first / later", "status worst", "pings"]];
for (const launcher of launchers(flags).filter((candidate) => only === null || only.has(candidate.name))) {
  const result = await bench(launcher);
  rows.push([
    result.runtime,
    `${count} (${result.listed} on page 1)`,
    (result.bytes / 1_048_576).toFixed(1),
    String(result.lines),
    ms(result.times[0]),
    ms(median(result.times.slice(1))),
    ms(Math.min(...result.times.slice(1))),
    ms(Math.max(...result.times.slice(1))),
    `${ms(result.cpu[0])} / ${ms(median(result.cpu.slice(1)))}`,
    ms(result.statusWorst),
    String(result.statuses),
  ]);
}
console.log(table(rows));
console.log(foreignCpuNote(monitor.stop()));
console.log(`targets: first page ≤ ${TARGETS.firstPageMs} ms (claimed on the first listing), status ≤ ${TARGETS.statusMs} ms throughout`);
