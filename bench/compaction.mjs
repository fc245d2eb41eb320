#!/usr/bin/env node
// Replay cost of a turn in a 5,000-record session, before and after compaction, and what a
// compaction itself costs, per runtime (Node bundle, Deno entry), against a loopback chat
// provider that answers "ok" at once. Prints medians; asserts nothing.
//
//   node bench/compaction.mjs [--runs N] [--records N] [--runtimes node,deno] [--quick]
//
//   plain:      a turn in the seeded session: bytes of the request sent, the child's CPU
//               from turn.start to run.finished (/proc schedstat, all threads)
//   compacted:  the same session with a compaction record at its end: the same figures
//   compacting: the same session with a context window the replay is over, so the turn
//               compacts before its first request: two provider round trips; the child's
//               CPU minus the plain turn's is what the compaction cost us
import { createServer } from "node:http";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { childEnv, freshDirs, launchers, median, parseFlags, processCpuMs, readLines, requestLine, spawnChild, table, within } from "./lib.mjs";

const flags = parseFlags(process.argv.slice(2), ["quick"]);
const runs = Number(flags.runs ?? (flags.quick ? 1 : 3));
const records = Number(flags.records ?? 5_000);
const wanted = (typeof flags.runtimes === "string" ? flags.runtimes : "node,deno").split(",");
const SESSION = "01900000-0000-7000-8000-0000000b3c4e";

// ---------------------------------------------------------------- provider

const sse = (events) => events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join("") + "data: [DONE]\n\n";
const chunk = (delta, finish = null) => ({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] });
const answer = (text) => sse([chunk({ content: text }), chunk({}, "stop"), { id: "c", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 1_000, completion_tokens: 1 } }]);
const log = [];
const provider = createServer((request, response) => {
  const parts = [];
  request.on("data", (part) => parts.push(part));
  request.on("end", () => {
    const body = Buffer.concat(parts);
    const summary = body.includes("Summarise this conversation");
    log.push({ bytes: body.length, summary });
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.end(answer(summary ? "Goal: keep benchmarking. Open work: none." : "ok"));
  });
});
await new Promise((resolve) => provider.listen(0, "127.0.0.1", resolve));
const baseUrl = `http://127.0.0.1:${provider.address().port}/v1`;

// ---------------------------------------------------------------- session

/** The seeded history: whole turns of seven records each (input, a tool activity, a reply, usage). */
function seed(dirs, compacted) {
  const lines = [{ v: 1, type: "session", session_id: SESSION, at: "2026-01-01T00:00:00.000Z", cwd: dirs.work, created_at: "2026-01-01T00:00:00.000Z" }];
  let turn = 0;
  while (lines.length + 7 <= records) {
    const common = { session_id: SESSION, at: new Date(Date.UTC(2026, 0, 1) + lines.length * 1_000).toISOString(), turn_id: `turn-${turn}` };
    lines.push(
      { v: 1, type: "turn_started", ...common, run_id: `run-${turn}` },
      { v: 1, type: "user_input", ...common, message_id: "input", text: `Question ${turn}: what does module ${turn} do, and is it tested?` },
      { v: 1, type: "activity", ...common, activity_id: "t1", kind: "tool", name: "read_file", state: "started", summary: `Reading src/module-${turn}.ts` },
      { v: 1, type: "activity", ...common, activity_id: "t1", kind: "tool", name: "read_file", state: "completed", summary: `Read src/module-${turn}.ts (120 lines)` },
      { v: 1, type: "assistant_message", ...common, message_id: "a2", text: `Module ${turn} parses the configuration and is covered by tests/module-${turn}.test.ts. `.repeat(4), partial: false },
      { v: 1, type: "usage", ...common, input_tokens: 1_000, output_tokens: 100 },
      { v: 1, type: "turn_finished", ...common, outcome: "completed", error_code: null },
    );
    turn++;
  }
  if (compacted) {
    const at = new Date(Date.UTC(2026, 0, 2)).toISOString();
    lines.push({ v: 2, type: "compaction", session_id: SESSION, at, turn_id: `turn-${turn - 1}`, summary: "Goal: review every module. State: all reviewed. Open work: none.", through_turn: `turn-${turn - 1}` });
  }
  mkdirSync(join(dirs.home, "sessions"), { recursive: true, mode: 0o700 });
  writeFileSync(join(dirs.home, "sessions", `${SESSION}.jsonl`), `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`, { mode: 0o600 });
}

// ---------------------------------------------------------------- one run

/** Opens the seeded session in a fresh child, takes one turn, and measures it. */
async function once(launcher, scenario) {
  const dirs = freshDirs("magi-compaction-");
  mkdirSync(dirs.home, { recursive: true, mode: 0o700 });
  const endpoint = { base_url: baseUrl, ...(scenario === "compacting" ? { context_window: 20_000 } : {}) };
  writeFileSync(join(dirs.home, "settings.jsonc"), JSON.stringify({ model: { provider: "ollama", model: "bench" }, providers: { endpoints: { ollama: endpoint } } }), { mode: 0o600 });
  seed(dirs, scenario === "compacted");
  const { child, exited } = spawnChild(launcher, ["serve", "--stdio"], { cwd: dirs.work, env: childEnv({ extra: { MC_HOME: dirs.home } }) });
  const waiting = new Map();
  const events = [];
  readLines(child.stdout, (line) => {
    const frame = JSON.parse(line);
    if (frame.type === "response") waiting.get(frame.id)?.(frame);
    else if (frame.type === "event") events.push(frame);
  });
  let next = 0;
  const call = (method, params) =>
    new Promise((resolve) => {
      const id = `r${++next}`;
      waiting.set(id, resolve);
      child.stdin.write(requestLine(id, method, params));
    });
  try {
    await call("initialize", { required_capabilities: ["session.open", "turn.start", "shutdown"] });
    await call("session.open", { session_id: SESSION });
    const before = log.length;
    const cpu = processCpuMs(child.pid);
    await call("turn.start", { session_id: SESSION, prompt: "One more question." });
    for (;;) {
      if (events.some((frame) => frame.event === "run.finished")) break;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const spent = processCpuMs(child.pid) - cpu;
    const finished = events.find((frame) => frame.event === "run.finished").data;
    if (finished.outcome !== "completed") throw new Error(`${scenario}: ${JSON.stringify(finished)}`);
    const requests = log.slice(before);
    return { cpuMs: spent, bytes: requests.filter((entry) => !entry.summary).at(-1).bytes, trips: requests.length };
  } finally {
    child.stdin.write(requestLine("bye", "shutdown", {}));
    if ((await within(exited, 5_000)) === null) child.kill("SIGKILL");
    dirs.remove();
  }
}

// ---------------------------------------------------------------- main

const rows = [["runtime", "scenario", "provider round trips", "bytes sent (last request)", "child CPU (median)"]];
for (const launcher of launchers(flags).filter((entry) => wanted.includes(entry.name))) {
  const medians = {};
  for (const scenario of ["plain", "compacted", "compacting"]) {
    const results = [];
    for (let run = 0; run < runs; run++) results.push(await once(launcher, scenario));
    medians[scenario] = median(results.map((result) => result.cpuMs));
    rows.push([launcher.name, scenario, String(results[0].trips), String(median(results.map((result) => result.bytes))), `${medians[scenario].toFixed(1)} ms`]);
  }
  rows.push([launcher.name, "compaction's own CPU", "", "", `${(medians.compacting - medians.plain).toFixed(1)} ms (compacting − plain)`]);
}
console.log(`A turn in a ${records}-record session, ${runs} run(s) per row:\n`);
console.log(table(rows));
provider.close();
