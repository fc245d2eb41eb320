#!/usr/bin/env node
// Turn latency, delta throughput and memory of a real child against a
// loopback fake provider. Prints figures; never asserts a timing. See
// bench/README.md.
//
//   node bench/turns.mjs [--runs N] [--warm N] [--deltas N] [--big-turns N] [--settle MS] [--per-write]
//                        [--runtimes node,deno] [--no-keys] [--quick] [--cpu-prof DIR] [--node-flags="F …"] [--deno-flags="F …"]
//                        [--history 8MiB] [--history-turns N] [--node-entry PATH] [--deno-entry PATH] [--json FILE]
//
// The fake provider is a node:http server in this process on 127.0.0.1
// speaking OpenAI chat-completions SSE (the `ollama` endpoint, pointed at it
// by a temp MC_HOME/settings.jsonc). Every answer is prebuilt and written in
// one `end()`, so the provider streams instantly. With --per-write it writes
// one SSE event per write instead, as a real provider does (see
// writePerEvent below). A prompt "one" gets a
// one-word answer; "many" gets --deltas (20,000) content deltas of one word
// and a space each (the stream redactor releases text only at whitespace).
//
// Per run and runtime, two children (fresh temp MC_HOME and cwd each):
//   immediate: initialize, then session.create + turn.start at once (the
//              first turn pays for loading the run module, which the child
//              otherwise warms in the background after initialize);
//   main:      initialize, VmRSS; --settle ms idle, VmRSS (idle RSS); one
//              first turn, --warm one-word turns in the same session
//              (warm = median); --big-turns turns of --deltas deltas; VmHWM.
//   history:   (only with --history SIZE) a session seeded with SIZE of history
//              by scripts/seed-session.mjs, session.open, --history-turns
//              one-word turns: what a turn costs in a long session.
// Times are from writing turn.start to the arrival of the chunk holding
// run.finished. Runs go round-robin across runtimes.
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
  sleep,
  spawnChild,
  table,
  within,
} from "./lib.mjs";
import { sseChunk as chunk, sseProvider, SSE_USAGE_DONE } from "./support/openai-sse.mjs";

const flags = parseFlags(process.argv.slice(2), ["quick", "no-keys", "per-write"]);
const quick = flags.quick === true;
const perWrite = flags["per-write"] === true;
const runs = Number(flags.runs ?? (quick ? 1 : 3));
const warmTurns = Number(flags.warm ?? (quick ? 10 : 30));
const deltaCount = Number(flags.deltas ?? 20_000);
const bigTurns = Number(flags["big-turns"] ?? (quick ? 1 : 3));
const settleMs = Number(flags.settle ?? 1_000);
const historyBytes = typeof flags.history === "string" ? flags.history : null;
const historyTurns = Number(flags["history-turns"] ?? 5);
const only = typeof flags.runtimes === "string" ? new Set(flags.runtimes.split(",")) : null;
const cpuProfDir = typeof flags["cpu-prof"] === "string" ? resolve(flags["cpu-prof"]) : null;
/** Extra flags for the Node children (e.g. V8 heap flags), space-separated, given as `--node-flags="--a --b"`; for experiments. */
if (flags["node-flags"] === true) throw new Error('--node-flags takes its value after "=": --node-flags="--max-semi-space-size=2"');
const nodeFlags = typeof flags["node-flags"] === "string" ? flags["node-flags"].split(" ").filter(Boolean) : [];
const TIMEOUT_MS = 60_000;
// The issue states memory in MB (10^6 bytes); comparing in MiB would be 5 % more lenient.
const MB = 1_000_000;
const TARGETS = { warmMs: 20, deltasPerSecond: 25_000, idleMB: 60, peakMB: 100 };
/** Issue 13 item 7, for --per-write: Node's deltas/s over Deno's, and Deno's peak in a fresh child. */
const PER_WRITE_TARGETS = { ratio: 1.3, peakMiB: 90 };
const CAPABILITIES = ["session.create", "session.open", "turn.start", "status", "shutdown"];

// Realistically long keys (an OpenAI project key is 164 characters, an Anthropic key 108): every
// configured key is a secret the stream redactor holds back text for, so its cost scales with them.
const fakeKey = (prefix, length) => (prefix + "x".repeat(length)).slice(0, length);
const keys = flags["no-keys"] === true ? {} : { OPENAI_API_KEY: fakeKey("sk-proj-bench-", 164), ANTHROPIC_API_KEY: fakeKey("sk-ant-api03-bench-", 108) };
const env = childEnv({ keepProviderKeys: false });
Object.assign(env, keys);
/** Extra `deno run` flags, e.g. `--deno-flags="--v8-flags=--max-semi-space-size=2"`; for experiments. */
if (flags["deno-flags"] === true) throw new Error('--deno-flags takes its value after "=": --deno-flags="--v8-flags=--max-semi-space-size=2"');
const denoFlags = typeof flags["deno-flags"] === "string" ? flags["deno-flags"].split(" ").filter(Boolean) : [];
const selected = launchers(flags)
  .filter((launcher) => only === null || only.has(launcher.name))
  .map((launcher) => (launcher.name === "deno" ? { ...launcher, prefix: [launcher.prefix[0], ...denoFlags, ...launcher.prefix.slice(1)] } : launcher));

// ---------------------------------------------------------------- fake provider

const closing = `${chunk({}, "stop")}${SSE_USAGE_DONE}`;
const closingEvents = closing.split(/(?<=\n\n)/);
const ONE_WORD = "Done.";
const oneWordEvents = [chunk({ role: "assistant", content: "" }), chunk({ content: ONE_WORD }), ...closingEvents];
const oneWordBody = Buffer.from(oneWordEvents.join(""));
const bigWords = Array.from({ length: deltaCount }, (_, index) => `w${index} `);
const BIG_TEXT = bigWords.join("");
const BIG_TEXT_OR_WORD = (prompt) => (prompt === "many" ? BIG_TEXT : ONE_WORD);
const bigEvents = [chunk({ role: "assistant", content: "" }), ...bigWords.map((word) => chunk({ content: word })), ...closingEvents];
const bigBody = Buffer.from(bigEvents.join(""));
const eventBuffers = perWrite ? new Map([[oneWordBody, oneWordEvents.map((event) => Buffer.from(event))], [bigBody, bigEvents.map((event) => Buffer.from(event))]]) : null;

/**
 * --per-write: one SSE event per `response.write()`, each its own HTTP/1.1
 * chunk and (with Nagle off) its own TCP segment, as a provider streaming
 * tokens sends them. Between two writes the loop yields to the event loop
 * (`setImmediate`), so Node's socket never batches several events into one
 * writev; when the socket buffer is full it waits for `drain`. The child may
 * still read several segments in one read when it falls behind, as it would
 * from a real provider.
 */
async function writePerEvent(response, events) {
  response.socket?.setNoDelay(true);
  response.flushHeaders();
  for (const event of events) {
    // cork/uncork: the chunk-size line, the event and the CRLF leave in one writev, one segment.
    response.cork();
    const more = response.write(event);
    response.uncork();
    if (!more) await new Promise((resolvePromise) => response.once("drain", resolvePromise));
    else await new Promise((resolvePromise) => setImmediate(resolvePromise));
  }
}

/** Provider requests, in arrival order: arrival time, which answer, when the response was fully written. */
const providerLog = [];
const { server: provider, baseUrl } = await sseProvider((raw, response, arrived) => {
  // The last user message picks the answer. Found by string search, not JSON.parse, so a
  // multi-MiB request (a long replayed history) costs this process little before it answers.
  const body = raw.toString("utf8");
  const big = body.lastIndexOf('{"role":"user","content":"many"}') > body.lastIndexOf('{"role":"user","content":"one"}');
  const entry = { arrived, big, written: null, bytes: raw.length };
  providerLog.push(entry);
  const answer = entry.big ? bigBody : oneWordBody;
  if (eventBuffers === null) response.end(answer, () => (entry.written = performance.now()));
  else {
    writePerEvent(response, eventBuffers.get(answer)).then(
      () => response.end(() => (entry.written = performance.now())),
      () => response.destroy(),
    );
  }
});

// ---------------------------------------------------------------- client

/** A spawned, initialized child with request/response and run-event helpers. */
async function startChild(launcher, label, index, prepare = () => null) {
  const dirs = freshDirs("magi-turns-");
  mkdirSync(dirs.home, { mode: 0o700 });
  // Titles off: a titling request after each session's first turn is no part of a turn's cost.
  const settings = { model: { provider: "ollama", model: "bench-model" }, providers: { endpoints: { ollama: { base_url: baseUrl } } }, agent: { titles: { enabled: false } } };
  writeFileSync(join(dirs.home, "settings.jsonc"), JSON.stringify(settings), { mode: 0o600 });
  let prepared;
  try {
    prepared = prepare(dirs);
  } catch (error) {
    dirs.remove();
    throw error;
  }
  const extraNodeArgs = [
    ...nodeFlags,
    ...(cpuProfDir !== null && launcher.name === "node" ? ["--cpu-prof", "--cpu-prof-dir", cpuProfDir, "--cpu-prof-name", `turns-${label}-${index}.cpuprofile`] : []),
  ];
  // Deno takes the same profiling flags after `run` (they are hidden from `deno run --help`).
  const profiled = cpuProfDir !== null && launcher.name === "deno"
    ? { ...launcher, prefix: [launcher.prefix[0], "--cpu-prof", `--cpu-prof-dir=${cpuProfDir}`, `--cpu-prof-name=turns-${label}-${index}-deno.cpuprofile`, ...launcher.prefix.slice(1)] }
    : launcher;
  const { child, exited, closed, stderr } = spawnChild(profiled, ["serve", "--stdio"], { cwd: dirs.work, env: { ...env, MC_HOME: dirs.home }, extraNodeArgs });
  const pending = new Map();
  const runs = new Map(); // run id → { frames: [[frame, at]], done }
  let ids = 0;
  let fatal = null;
  const failAll = (error) => {
    fatal ??= error;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
    for (const run of runs.values()) run.reject?.(error);
  };
  exited.then((status) => failAll(new Error(`child exited (${status.code ?? status.signal}): ${stderr().trim().slice(0, 400)}`)));
  const runOf = (runId) => {
    let run = runs.get(runId);
    if (run === undefined) {
      run = { frames: [], finished: null };
      run.done = new Promise((resolvePromise, reject) => Object.assign(run, { resolve: resolvePromise, reject }));
      runs.set(runId, run);
    }
    return run;
  };
  readLines(child.stdout, (line, now) => {
    let frame;
    try {
      frame = JSON.parse(line);
    } catch {
      return failAll(new Error(`unparsable output line: ${line.slice(0, 200)}`));
    }
    if (frame.type === "event") {
      const run = runOf(frame.data.run_id);
      run.frames.push([frame, now]);
      if (frame.event === "run.finished") run.resolve({ frames: run.frames, at: now });
      return;
    }
    const waiter = pending.get(frame.id);
    if (waiter === undefined) return;
    pending.delete(frame.id);
    waiter.resolve({ frame, at: now });
  });
  const request = (method, params = {}) => {
    if (fatal !== null) return Promise.reject(fatal);
    const id = `${method}-${++ids}`;
    const promise = new Promise((resolvePromise, reject) => pending.set(id, { resolve: resolvePromise, reject }));
    const sent = performance.now();
    child.stdin.write(requestLine(id, method, params));
    return within(promise, TIMEOUT_MS, { timeout: true }).then((response) => {
      if (response.timeout) throw new Error(`${method} not answered within ${TIMEOUT_MS} ms`);
      if (response.frame.error !== undefined) throw new Error(`${method} answered ${response.frame.error.code}`);
      return { ...response, sent };
    });
  };
  const close = async () => {
    try {
      if (fatal === null) {
        const bye = request("shutdown").catch(() => {});
        const status = await within(exited, 10_000);
        await bye;
        if (status === null) child.kill("SIGKILL");
        await within(closed, 1_000);
      }
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      dirs.remove();
    }
  };
  try {
    await request("initialize", { required_capabilities: CAPABILITIES });
  } catch (error) {
    await close();
    throw error;
  }
  /** One turn: timings from the turn.start write, and what the client saw. */
  const turn = async (sessionId, prompt) => {
    const providerIndex = providerLog.length;
    const started = await request("turn.start", { session_id: sessionId, prompt });
    const run = runOf(started.frame.result.run_id);
    const finished = await within(run.done, TIMEOUT_MS, null);
    if (finished === null) throw new Error(`run.finished not seen within ${TIMEOUT_MS} ms`);
    const t0 = started.sent;
    const at = (name) => finished.frames.find(([frame]) => frame.event === name)?.[1] ?? null;
    const deltas = finished.frames.filter(([frame]) => frame.event === "message.delta").map(([frame]) => frame.data);
    const reconciled = finished.frames.filter(([frame]) => frame.event === "message.reconcile").map(([frame]) => frame.data.text).join("");
    const terminal = finished.frames.at(-1)[0].data;
    const providerEntry = providerLog[providerIndex];
    // Dropped parts leave gaps in the part numbers; every delivered part must still be the next
    // stretch of the answer (right after the previous one unless a gap precedes it).
    let gaps = 0;
    let position = 0;
    let deltasInOrder = true;
    let expectedPart = 0;
    for (const delta of deltas) {
      const gap = delta.part !== expectedPart;
      if (gap) gaps += delta.part - expectedPart;
      expectedPart = delta.part + 1;
      const found = gap ? BIG_TEXT_OR_WORD(prompt).indexOf(delta.text, position) : position;
      if (found < 0 || !BIG_TEXT_OR_WORD(prompt).startsWith(delta.text, found)) deltasInOrder = false;
      else position = found + delta.text.length;
    }
    runs.delete(started.frame.result.run_id);
    return {
      totalMs: finished.at - t0,
      admitMs: started.at - t0,
      persistedMs: at("input.persisted") - t0,
      requestMs: providerEntry === undefined ? null : providerEntry.arrived - t0,
      firstDeltaMs: at("message.delta") === null ? null : at("message.delta") - t0,
      reconcileMs: at("message.reconcile") === null ? null : at("message.reconcile") - t0,
      providerWrittenMs: providerEntry?.written == null ? null : providerEntry.written - t0,
      outcome: terminal.outcome,
      deltaFrames: deltas.length,
      deltaText: deltas.map((delta) => delta.text).join(""),
      gaps,
      deltasInOrder,
      reconciled,
    };
  };
  return { child, request, turn, close, prepared };
}

/** Child 1: the first turn sent right after initialize. */
async function immediateOnce(launcher, index) {
  const child = await startChild(launcher, "immediate", index);
  try {
    const created = await child.request("session.create");
    const first = await child.turn(created.frame.result.session_id, "one");
    if (first.outcome !== "completed" || first.reconciled !== ONE_WORD) throw new Error(`immediate turn: ${first.outcome}, ${JSON.stringify(first.reconciled)}`);
    // The "peak RSS during" a 20,000-delta answer: one such answer in a fresh child,
    // apart from the main child's long run of turns, whose garbage V8 collects lazily.
    const big = await child.turn(created.frame.result.session_id, "many");
    if (big.outcome !== "completed" || big.reconciled !== BIG_TEXT) throw new Error(`immediate big turn: ${big.outcome}`);
    return { ...first, bigPeakKiB: procMemory(child.child.pid).hwmKiB };
  } finally {
    await child.close();
  }
}

/** Child 2: idle RSS, first turn after idling, warm turns, big turns, peak RSS. */
async function mainOnce(launcher, index) {
  const child = await startChild(launcher, "main", index);
  try {
    const pid = child.child.pid;
    const afterInit = procMemory(pid);
    await sleep(settleMs);
    const idle = procMemory(pid);
    const created = await child.request("session.create");
    const sessionId = created.frame.result.session_id;
    const first = await child.turn(sessionId, "one");
    const warm = [];
    for (let i = 0; i < warmTurns; i++) {
      const result = await child.turn(sessionId, "one");
      if (result.outcome !== "completed" || result.reconciled !== ONE_WORD) throw new Error(`warm turn: ${result.outcome}, ${JSON.stringify(result.reconciled)}`);
      warm.push(result);
    }
    await sleep(200);
    const afterWarm = procMemory(pid);
    const big = [];
    for (let i = 0; i < bigTurns; i++) {
      const cpuBefore = processCpuMs(pid);
      const result = await child.turn(sessionId, "many");
      const cpuAfter = processCpuMs(pid);
      if (result.outcome !== "completed") throw new Error(`big turn: ${result.outcome}`);
      big.push({
        ...result,
        cpuMs: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore,
        textMatches: result.reconciled === BIG_TEXT,
        deltaTextShare: result.deltaText.length / BIG_TEXT.length,
        deltaText: undefined,
        reconciled: undefined,
      });
    }
    const peak = procMemory(pid);
    return {
      runtime: launcher.name,
      initRssKiB: afterInit.rssKiB,
      initHwmKiB: afterInit.hwmKiB,
      idleRssKiB: idle.rssKiB,
      warmRssKiB: afterWarm.rssKiB,
      warmHwmKiB: afterWarm.hwmKiB,
      peakKiB: peak.hwmKiB,
      first,
      warm: warm.map(({ deltaText: _d, reconciled: _r, ...rest }) => rest),
      big,
    };
  } finally {
    await child.close();
  }
}

/** Seeds a history of `historyBytes` for the child's cwd with the real seeding script. */
function seedHistory(dirs) {
  const args = [join(ROOT, "scripts", "seed-session.mjs"), "--home", dirs.home, "--cwd", dirs.work, "--bytes", historyBytes, "--seed", "1"];
  const result = spawnSync(process.execPath, args, { encoding: "utf8", env });
  const match = /^(\S+): ([\d,]+) bytes, ([\d,]+) lines, ([\d,]+) turns.*\(session ([A-Za-z0-9_-]+),/m.exec(result.stdout ?? "");
  if (result.status !== 0 || match === null) throw new Error(`seeding failed (exit ${result.status}): ${(result.stderr || result.stdout).trim()}`);
  return { bytes: Number(match[2].replaceAll(",", "")), sessionId: match[5] };
}

/** Child 3 (with --history): one-word turns in an opened session that already holds `historyBytes`. */
async function historyOnce(launcher, index) {
  const child = await startChild(launcher, "history", index, seedHistory);
  try {
    const { sessionId, bytes } = child.prepared;
    const opened = await child.request("session.open", { session_id: sessionId });
    const turns = [];
    for (let i = 0; i < historyTurns; i++) {
      const before = providerLog.length;
      const result = await child.turn(sessionId, "one");
      if (result.outcome !== "completed" || result.reconciled !== ONE_WORD) throw new Error(`history turn: ${result.outcome}, ${JSON.stringify(result.reconciled)}`);
      turns.push({ ...result, requestBytes: providerLog[before]?.bytes ?? null, deltaText: undefined, reconciled: undefined });
    }
    return { runtime: launcher.name, bytes, openMs: opened.at - opened.sent, turns, peakKiB: procMemory(child.child.pid).hwmKiB };
  } finally {
    await child.close();
  }
}

// ---------------------------------------------------------------- header

console.log("== turns: turn latency, delta throughput and RSS against a loopback fake provider (openai-chat SSE)");
console.log(machineHeader());
console.log(
  `${runs} run(s) per runtime, round-robin; per run: one immediate-first-turn child, and one child with ${settleMs} ms idle, 1 first + ${warmTurns} warm one-word turns, ` +
    `${bigTurns} turn(s) of ${deltaCount.toLocaleString("en-US")} deltas (${BIG_TEXT.length.toLocaleString("en-US")} chars); ` +
    `${Object.keys(keys).length === 0 ? "no API keys set" : "OPENAI_API_KEY (164 chars) and ANTHROPIC_API_KEY (108 chars) set to fakes"}; NODE_EXTRA_CA_CERTS unset in the child`,
);
console.log(perWrite
  ? "provider: --per-write, one SSE event per response.write() (own HTTP chunk, Nagle off, setImmediate between writes)"
  : "provider: whole answer in one response.end() (--per-write: one event per write)");
if (nodeFlags.length > 0) console.log(`Node children run with ${nodeFlags.join(" ")}`);
if (denoFlags.length > 0) console.log(`Deno children run with ${denoFlags.join(" ")}`);
if (cpuProfDir !== null) {
  mkdirSync(cpuProfDir, { recursive: true });
  console.log(`Node and Deno children write CPU profiles to ${cpuProfDir} (profiling slows them: figures are not comparable)`);
}

// ---------------------------------------------------------------- runs

const results = [];
const immediates = [];
const histories = [];
const monitor = foreignCpu();
let failures = 0;
for (let i = 0; i < runs; i++) {
  for (let j = 0; j < selected.length; j++) {
    const launcher = selected[(i + j) % selected.length];
    try {
      const immediate = await immediateOnce(launcher, i);
      immediates.push({ runtime: launcher.name, ...immediate, deltaText: undefined, reconciled: undefined });
      const result = await mainOnce(launcher, i);
      results.push(result);
      const warmTotals = result.warm.map((turn) => turn.totalMs);
      const bigLine = result.big.map((turn) => `${ms(turn.totalMs)} (${turn.deltaFrames} delta frames)`).join(", ");
      console.log(
        `  run ${i + 1} ${launcher.name}: immediate first turn ${ms(immediate.totalMs)}, first turn after idle ${ms(result.first.totalMs)}, ` +
          `warm median ${ms(median(warmTotals))} (min ${ms(Math.min(...warmTotals))}, p90 ${ms(percentile(warmTotals, 90))}); ` +
          `big: ${bigLine}; RSS init ${mib(result.initRssKiB)}, idle ${mib(result.idleRssKiB)}, after warm ${mib(result.warmRssKiB)}, peak ${mib(result.peakKiB)}`,
      );
    } catch (error) {
      failures++;
      console.log(`  run ${i + 1} ${launcher.name}: FAILED: ${error.message}`);
    }
    if (historyBytes === null) continue;
    try {
      const result = await historyOnce(launcher, i);
      histories.push(result);
      const totals = result.turns.map((turn) => turn.totalMs);
      console.log(
        `  run ${i + 1} ${launcher.name} with a ${mib(result.bytes / 1024)} history: session.open ${ms(result.openMs)}, one-word turns ${totals.map((t) => ms(t)).join(", ")} ` +
          `(reconcile → run.finished ${result.turns.map((turn) => ms(turn.totalMs - turn.reconcileMs)).join(", ")}), provider request ${mib((result.turns[0]?.requestBytes ?? NaN) / 1024)}, peak RSS ${mib(result.peakKiB)}`,
      );
    } catch (error) {
      failures++;
      console.log(`  run ${i + 1} ${launcher.name} with a history: FAILED: ${error.message}`);
    }
  }
}
const foreignCores = monitor.stop();
await new Promise((resolvePromise) => provider.close(resolvePromise));

// ---------------------------------------------------------------- summary

const summary = {};
const verdict = (ok) => (ok ? "met" : "MISSED");
const pick = (list, key) => list.map((item) => item[key]).filter((value) => value !== null && value !== undefined && Number.isFinite(value));
for (const launcher of selected) {
  const list = results.filter((result) => result.runtime === launcher.name);
  if (list.length === 0) continue;
  const warm = list.flatMap((result) => result.warm);
  const big = list.flatMap((result) => result.big);
  const imm = immediates.filter((result) => result.runtime === launcher.name);
  const firsts = list.map((result) => result.first);
  const bigTotals = pick(big, "totalMs");
  const streamMs = big.map((turn) => turn.totalMs - turn.requestMs);
  summary[launcher.name] = {
    runs: list.length,
    immediateFirstMs: median(pick(imm, "totalMs")),
    firstAfterIdleMs: median(pick(firsts, "totalMs")),
    warmMs: median(pick(warm, "totalMs")),
    warmP90Ms: percentile(pick(warm, "totalMs"), 90),
    warmMinMs: Math.min(...pick(warm, "totalMs")),
    warmAdmitMs: median(pick(warm, "admitMs")),
    warmPersistedMs: median(pick(warm, "persistedMs")),
    warmRequestMs: median(pick(warm, "requestMs")),
    warmProviderWrittenMs: median(pick(warm, "providerWrittenMs")),
    warmReconcileMs: median(pick(warm, "reconcileMs")),
    bigMs: median(bigTotals),
    bigStreamMs: median(streamMs),
    deltasPerSecond: deltaCount / (median(bigTotals) / 1000),
    deltasPerSecondStream: deltaCount / (median(streamMs) / 1000),
    bigRequestMs: median(pick(big, "requestMs")),
    bigFirstDeltaMs: median(pick(big, "firstDeltaMs")),
    bigReconcileMs: median(pick(big, "reconcileMs")),
    deltaFrames: median(pick(big, "deltaFrames")),
    deltasPerFrame: deltaCount / median(pick(big, "deltaFrames")),
    droppedParts: median(pick(big, "gaps")),
    deltaTextShare: median(pick(big, "deltaTextShare")),
    textMatches: big.every((turn) => turn.textMatches && turn.deltasInOrder),
    bigCpuMs: median(pick(big, "cpuMs")),
    initRssKiB: median(pick(list, "initRssKiB")),
    idleRssKiB: median(pick(list, "idleRssKiB")),
    warmRssKiB: median(pick(list, "warmRssKiB")),
    warmHwmKiB: median(pick(list, "warmHwmKiB")),
    peakKiB: median(pick(list, "peakKiB")),
    freshPeakKiB: median(pick(imm, "bigPeakKiB")),
  };
}

console.log("");
console.log("turn latency, medians (turn.start written → chunk holding run.finished):");
const latencyRows = [["runtime", "immediate 1st", "1st after idle", "warm", "warm min / p90", "admitted", "input.persisted", "provider request", "reconcile", "run.finished"]];
for (const [name, s] of Object.entries(summary)) {
  latencyRows.push([
    name,
    ms(s.immediateFirstMs),
    ms(s.firstAfterIdleMs),
    ms(s.warmMs),
    `${ms(s.warmMinMs)} / ${ms(s.warmP90Ms)}`,
    ms(s.warmAdmitMs),
    ms(s.warmPersistedMs),
    ms(s.warmRequestMs),
    ms(s.warmReconcileMs),
    ms(s.warmMs),
  ]);
}
console.log(table(latencyRows));
console.log("(admitted … run.finished: the warm turns' milestones, each from turn.start written)");
console.log("");
console.log(`${deltaCount.toLocaleString("en-US")}-delta answer, medians:`);
const deltaRows = [["runtime", "turn", "deltas/s (turn)", "request → finished", "deltas/s (stream)", "delta frames", "deltas per frame", "dropped parts", "live text share", "child CPU", "text ok"]];
for (const [name, s] of Object.entries(summary)) {
  deltaRows.push([
    name,
    ms(s.bigMs),
    Math.round(s.deltasPerSecond).toLocaleString("en-US"),
    ms(s.bigStreamMs),
    Math.round(s.deltasPerSecondStream).toLocaleString("en-US"),
    String(Math.round(s.deltaFrames)),
    s.deltasPerFrame.toFixed(2),
    String(Math.round(s.droppedParts)),
    `${(s.deltaTextShare * 100).toFixed(1)} %`,
    ms(s.bigCpuMs),
    s.textMatches ? "yes" : "NO",
  ]);
}
console.log(table(deltaRows));
console.log("");
console.log("RSS, medians:");
const rssRows = [["runtime", "after initialize", `idle (+${settleMs} ms)`, "after warm turns", "peak before big turns", "peak (VmHWM) after big turns", "peak, fresh child, one big turn"]];
for (const [name, s] of Object.entries(summary)) {
  rssRows.push([name, mib(s.initRssKiB), mib(s.idleRssKiB), mib(s.warmRssKiB), mib(s.warmHwmKiB), mib(s.peakKiB), mib(s.freshPeakKiB)]);
}
console.log(table(rssRows));
if (histories.length > 0) {
  console.log("");
  console.log(`one-word turns in a session opened with a ${historyBytes} history, medians:`);
  const historyRows = [["runtime", "history", "session.open", "turn", "input.persisted", "provider request", "reconcile", "run.finished", "request body", "peak RSS"]];
  for (const launcher of selected) {
    const list = histories.filter((result) => result.runtime === launcher.name);
    if (list.length === 0) continue;
    const turns = list.flatMap((result) => result.turns);
    const h = {
      bytes: median(pick(list, "bytes")),
      openMs: median(pick(list, "openMs")),
      turnMs: median(pick(turns, "totalMs")),
      persistedMs: median(pick(turns, "persistedMs")),
      requestMs: median(pick(turns, "requestMs")),
      reconcileMs: median(pick(turns, "reconcileMs")),
      requestBytes: median(pick(turns, "requestBytes")),
      peakKiB: median(pick(list, "peakKiB")),
    };
    summary[launcher.name].history = h;
    historyRows.push([launcher.name, mib(h.bytes / 1024), ms(h.openMs), ms(h.turnMs), ms(h.persistedMs), ms(h.requestMs), ms(h.reconcileMs), ms(h.turnMs), mib(h.requestBytes / 1024), mib(h.peakKiB)]);
  }
  console.log(table(historyRows));
}
console.log("");
for (const [name, s] of Object.entries(summary)) {
  console.log(
    `${name} targets: warm one-word turn ≤ ${TARGETS.warmMs} ms: ${verdict(s.warmMs <= TARGETS.warmMs)}; ` +
      `≥ ${TARGETS.deltasPerSecond.toLocaleString("en-US")} deltas/s (whole turn): ${verdict(s.deltasPerSecond >= TARGETS.deltasPerSecond)}; ` +
      `idle RSS ≤ ${TARGETS.idleMB} MB: ${verdict((s.idleRssKiB * 1024) / MB <= TARGETS.idleMB)} (${((s.idleRssKiB * 1024) / MB).toFixed(1)} MB); ` +
      `peak RSS during a ${deltaCount.toLocaleString("en-US")}-delta answer (fresh child) ≤ ${TARGETS.peakMB} MB: ${verdict((s.freshPeakKiB * 1024) / MB <= TARGETS.peakMB)} (${((s.freshPeakKiB * 1024) / MB).toFixed(1)} MB); ` +
      `after ${warmTurns} warm and ${bigTurns} big turns: ${mib(s.peakKiB)}` +
      `${s.textMatches ? "" : "; WARNING: a reconciled text differed from the answer"}`,
  );
}
if (summary.node !== undefined && summary.deno !== undefined) {
  const ratio = summary.node.deltasPerSecond / summary.deno.deltasPerSecond;
  const denoPeakMiB = summary.deno.freshPeakKiB / 1024;
  console.log(
    `node ÷ deno deltas/s (same run): ${ratio.toFixed(2)}×` +
      (perWrite ? `; issue 13 item 7 (--per-write): Deno within ${PER_WRITE_TARGETS.ratio}× of Node: ${verdict(ratio <= PER_WRITE_TARGETS.ratio)}, ` +
        `Deno peak (fresh child) < ${PER_WRITE_TARGETS.peakMiB} MiB: ${verdict(denoPeakMiB < PER_WRITE_TARGETS.peakMiB)} (${denoPeakMiB.toFixed(1)} MiB)` : ""),
  );
}
console.log(foreignCpuNote(foreignCores));

if (typeof flags.json === "string") {
  writeFileSync(flags.json, JSON.stringify({ perWrite, runs, warmTurns, deltaCount, bigTurns, settleMs, keys: Object.keys(keys), foreignCores, summary, results, immediates, histories, failures }, null, 2));
}
if (failures > 0) process.exitCode = 1;
