#!/usr/bin/env node
// model.catalog first page and selection.set latency, with the catalog at
// its bounds: 32 providers (3 built-ins, 29 configured endpoints) caching 64
// models each, 2,048 in all, every one enabled. Prints figures; never asserts
// a timing. See bench/README.md.
//
//   node bench/catalog.mjs [--runs N] [--pages N] [--selects N] [--per-provider N] [--runtimes node,deno] [--quick] [--json FILE]
//
// Per run: a fresh MC_HOME with the settings and the 32 cache files (written
// in the cache format through dist/src/catalog/cache-format.js, so run
// `npm run build` first); the real child is spawned and initialized; then
// --pages fresh `model.catalog` requests (limit 100), one at a time, each
// timed from write to response (the cold one, the child's first, is shown
// apart: it decodes every cache; later fresh pages reuse unchanged ones); then a session is created and --selects
// `selection.set` requests are timed, each after a fresh catalog page and
// status (not timed). RSS growth is the child's VmHWM after the pages, and
// after the last request, over its VmRSS one second after `initialize` (after the background warm-up;
// that VmRSS is the "idle RSS" column); "after 1st page" is what pages 2..N added to the first page's
// peak, the per-page retention. Targets (issue 10): first page
// <= 100 ms median, RSS growth <= 10 MiB. --json writes every run's figures (times in ms, memory
// in KiB) and the other-processes load, for medians over several interleaved invocations.
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { childEnv, foreignCpu, foreignCpuNote, freshDirs, launchers, median, mib, ms, parseFlags, procMemory, readLines, requestLine, spawnChild, table } from "./lib.mjs";
import { encodeCache, endpointFingerprint } from "../dist/src/catalog/cache-format.js";

const flags = parseFlags(process.argv.slice(2), ["quick"]);
const quick = flags.quick === true;
const runs = Number(flags.runs ?? (quick ? 1 : 3));
const pages = Number(flags.pages ?? (quick ? 5 : 20));
const selects = Number(flags.selects ?? (quick ? 5 : 20));
const wanted = new Set(String(flags.runtimes ?? "node,deno").split(","));
const PROVIDERS = 32;
const PER_PROVIDER = Number(flags["per-provider"] ?? 64);
const BASE = "http://127.0.0.1:9/v1"; // never contacted: model.catalog is cache-only

async function seed(home) {
  const names = ["openai", "anthropic", "ollama", ...Array.from({ length: PROVIDERS - 3 }, (_, i) => `custom-${String(i).padStart(2, "0")}`)];
  const apis = { openai: "openai-responses", anthropic: "anthropic-messages" };
  const endpoints = Object.fromEntries(names.map((name) => [name, name.startsWith("custom-") ? { api: "openai-chat", base_url: BASE } : { base_url: BASE }]));
  const enabled = [];
  mkdirSync(join(home, "catalog"), { recursive: true, mode: 0o700 });
  for (const name of names) {
    const api = apis[name] ?? "openai-chat";
    const models = Array.from({ length: PER_PROVIDER }, (_, i) => ({ id: `model-${String(i).padStart(3, "0")}-instruct`, name: `Model ${i}`, reasoning: null }));
    for (const model of models) enabled.push(`${name}/${model.id}`);
    const bytes = encodeCache({ provider: name, endpoint: await endpointFingerprint(api, BASE), refreshedAt: new Date().toISOString(), models });
    writeFileSync(join(home, "catalog", `${name}.json`), bytes, { mode: 0o600 });
  }
  const settings = { model: { provider: "ollama", model: "model-000-instruct" }, providers: { endpoints, catalog: { enabled } } };
  writeFileSync(join(home, "settings.jsonc"), JSON.stringify(settings), { mode: 0o600 });
}

async function once(launcher) {
  const dirs = freshDirs("magi-bench-catalog-");
  await seed(dirs.home);
  const env = childEnv({ extra: { MC_HOME: dirs.home, OPENAI_API_KEY: "bench-key-openai", ANTHROPIC_API_KEY: "bench-key-anthropic" } });
  const { child, exited } = spawnChild(launcher, ["serve", "--stdio"], { env, cwd: dirs.work });
  const waiting = new Map();
  readLines(child.stdout, (line, now) => {
    const frame = JSON.parse(line);
    waiting.get(frame.id)?.({ frame, now });
  });
  let next = 0;
  const call = (method, params = {}) => {
    const id = `b${++next}`;
    return new Promise((resolve) => {
      waiting.set(id, resolve);
      const start = performance.now();
      child.stdin.write(requestLine(id, method, params));
      waiting.set(id, ({ frame, now }) => resolve({ frame, elapsed: now - start }));
    });
  };
  const init = await call("initialize", { required_capabilities: ["model.catalog", "selection.set", "session.create", "status", "shutdown"] });
  if (init.frame.error) throw new Error(`initialize failed: ${init.frame.error.code}`);
  // The run module loads in the background after initialize (warm-up); let it settle before the baseline.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const base = procMemory(child.pid);
  const pageTimes = [];
  let first = null;
  let afterFirst = null;
  for (let i = 0; i < pages; i++) {
    const page = await call("model.catalog", { limit: 100 });
    if (page.frame.error) throw new Error(`model.catalog failed: ${page.frame.error.code}`);
    first ??= page.frame.result;
    afterFirst ??= procMemory(child.pid);
    pageTimes.push(page.elapsed);
  }
  const afterPages = procMemory(child.pid);
  const session = (await call("session.create")).frame.result.session_id;
  const selectTimes = [];
  for (let i = 0; i < selects; i++) {
    const catalog = (await call("model.catalog", { limit: 1 })).frame.result.revision;
    const revision = (await call("status")).frame.result.selection.revision;
    const model = `model-${String(i % PER_PROVIDER).padStart(3, "0")}-instruct`;
    const set = await call("selection.set", { session_id: session, selection_revision: revision, catalog_revision: catalog, provider: "openai", model });
    if (set.frame.error) throw new Error(`selection.set failed: ${set.frame.error.code}`);
    selectTimes.push(set.elapsed);
  }
  const peak = procMemory(child.pid);
  await call("shutdown");
  child.stdin.end();
  await exited;
  dirs.remove();
  return {
    cold: pageTimes[0],
    firstPage: median(pageTimes),
    select: median(selectTimes),
    entries: first.choices.length,
    growth: base && afterPages ? afterPages.hwmKiB - base.rssKiB : null,
    // What pages 2..N added on top of the first page's peak: retention per page and snapshot.
    later: afterFirst && afterPages ? afterPages.hwmKiB - afterFirst.hwmKiB : null,
    idle: base?.rssKiB ?? null,
    total: base && peak ? peak.hwmKiB - base.rssKiB : null,
  };
}

const rows = [["runtime", "cold first page", "first page (median)", "entries", "selection.set (median)", "idle RSS", "RSS growth (pages)", "after 1st page", "RSS growth (all)"]];
const ranges = [];
const perRun = {};
const monitor = foreignCpu();
for (const launcher of launchers(flags).filter((entry) => wanted.has(entry.name))) {
  const results = [];
  for (let i = 0; i < runs; i++) results.push(await once(launcher));
  perRun[launcher.name] = results;
  rows.push([
    launcher.name,
    ms(median(results.map((result) => result.cold))),
    ms(median(results.map((result) => result.firstPage))),
    String(results[0].entries),
    ms(median(results.map((result) => result.select))),
    mib(median(results.map((result) => result.idle))),
    mib(median(results.map((result) => result.growth))),
    mib(median(results.map((result) => result.later))),
    mib(median(results.map((result) => result.total))),
  ]);
  const growths = results.map((result) => result.growth).filter((value) => value !== null).sort((a, b) => a - b);
  if (growths.length > 0) ranges.push(`${launcher.name}: page growth per run ${growths.map((kib) => mib(kib)).join(", ")}`);
}
const foreignCores = monitor.stop();
process.stdout.write(`model.catalog with ${PROVIDERS * PER_PROVIDER} cached models across ${PROVIDERS} providers\n${table(rows)}\n${ranges.join("\n")}\n${foreignCpuNote(foreignCores)}\n`);
if (typeof flags.json === "string") writeFileSync(flags.json, JSON.stringify({ models: PROVIDERS * PER_PROVIDER, pages, selects, foreignCores, runs: perRun }, null, 2));
