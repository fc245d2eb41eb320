#!/usr/bin/env node
// `session.discover` at 1,000 and 10,000 sessions: first-page time, a whole
// pass (walk and verify), and the child's peak RSS. Prints figures; never
// asserts a timing. See bench/README.md.
//
//   node bench/session-discover.mjs [--runs N] [--counts 1000,10000] [--bytes 4096] [--runtimes node,deno]
//
// Per runtime and count: one temp MC_HOME seeded with realistic histories of
// about --bytes each (tests/support/seed.ts, compiled), one child, --runs
// fresh passes' first pages (limit 100), then one whole pass paged to
// `complete`. Peak RSS is the child's VmHWM (Linux /proc) after the pass:
// the design keeps a pass's memory bounded by its window (16,000 ids as
// bytes, and their lease names) and one directory batch, so what it retains
// does not grow with the count; the peak still includes V8's young-generation
// sizing, which grows with the bytes surviving scavenges over all the work a
// child has done, and on Deno old-generation garbage no mark-compact collected
// yet (bench/README.md).
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { childEnv, freshDirs, launchers, median, ms, parseFlags, readLines, requestLine, ROOT, spawnChild, table, within } from "./lib.mjs";
import { foreignCpu, foreignCpuNote } from "./lib.mjs";

const flags = parseFlags(process.argv.slice(2), []);
const runs = Number(flags.runs ?? 5);
const counts = String(flags.counts ?? "1000,10000").split(",").map(Number);
const sessionBytes = Number(flags.bytes ?? 4096);
const only = typeof flags.runtimes === "string" ? new Set(flags.runtimes.split(",")) : null;
const { generateSession } = await import(join(ROOT, "dist", "tests", "support", "seed.js"));

function seed(dirs, count) {
  const directory = join(dirs.home, "sessions");
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  for (let n = 0; n < count; n++) {
    const session = generateSession({ cwd: dirs.work, seed: n + 1, targetBytes: sessionBytes, maxLines: 40 });
    writeFileSync(join(directory, `${session.sessionId}.jsonl`), session.bytes, { mode: 0o600 });
  }
}

const peakRss = (pid) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) * 1024;

async function bench(launcher, count) {
  const dirs = freshDirs("magi-discover-");
  seed(dirs, count);
  const { child, exited } = spawnChild(launcher, ["serve", "--stdio"], { cwd: dirs.work, env: { ...childEnv(), MC_HOME: dirs.realHome ?? dirs.home } });
  const pending = new Map();
  readLines(child.stdout, (line, now) => {
    const frame = JSON.parse(line);
    pending.get(frame.id)?.({ frame, at: now });
  });
  let ids = 0;
  const call = async (method, params) => {
    const id = `${method}-${++ids}`;
    const answered = new Promise((resolve) => pending.set(id, resolve));
    const sent = performance.now();
    child.stdin.write(requestLine(id, method, params));
    const reply = await within(answered, 60_000, { frame: { error: { code: "timeout" } }, at: NaN });
    if (reply.frame.error) throw new Error(`${method}: ${reply.frame.error.code}`);
    return { result: reply.frame.result, ms: reply.at - sent };
  };
  await call("initialize", { required_capabilities: ["session.discover", "status", "shutdown"] });
  const firstPages = [];
  for (let run = 0; run < runs; run++) firstPages.push((await call("session.discover", { limit: 100 })).ms);
  const started = performance.now();
  let page = (await call("session.discover", { limit: 100 })).result;
  let pages = 1;
  let verified = 0;
  while (!page.complete) {
    page = (await call("session.discover", { revision: page.revision, cursor: page.next_cursor, limit: 100 })).result;
    pages++;
    if (page.phase === "verify") verified += page.sessions.length;
  }
  const passMs = performance.now() - started;
  const rss = peakRss(child.pid);
  child.stdin.write(requestLine("bye", "shutdown", {}));
  await within(exited, 5_000);
  dirs.remove();
  return { firstPages, passMs, pages, verified, rss };
}

const monitor = foreignCpu();
const rows = [["runtime", "sessions", "first page median", "min", "max", "whole pass", "pages", "verified", "peak RSS"]];
for (const launcher of launchers(flags).filter((candidate) => only === null || only.has(candidate.name))) {
  for (const count of counts) {
    const result = await bench(launcher, count);
    rows.push([
      launcher.name,
      String(count),
      ms(median(result.firstPages)),
      ms(Math.min(...result.firstPages)),
      ms(Math.max(...result.firstPages)),
      ms(result.passMs),
      String(result.pages),
      String(result.verified),
      `${(result.rss / 1_048_576).toFixed(1)} MiB`,
    ]);
  }
}
console.log(table(rows));
console.log(foreignCpuNote(monitor.stop()));
console.log("target: peak RSS at 10,000 sessions within 1.2× of 1,000");
