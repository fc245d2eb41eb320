#!/usr/bin/env node
// A small interactive client for `magi-code serve --stdio`: it spawns the
// server the way an editor would, attaches a session and runs turns, showing
// streamed replies, tool activity and approval prompts. Run from the repository
// after `npm run build`:
//
//   node examples/agent.mjs "explain src/cli.ts"      # one turn, then exit
//   node examples/agent.mjs                            # prompt loop
//
// Assistant text goes to stdout; everything else goes to stderr.
import { spawn, spawnSync } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const HELP = `Usage: node examples/agent.mjs [options] [--] [prompt words...]

With prompt words, runs one turn and exits. Without, reads prompts from the
terminal, one turn at a time (Ctrl-D, or Ctrl-C at the prompt, quits).

Options:
  --cwd <dir>      workspace directory for the server (default: current directory)
  --session <id>   resume a saved session instead of creating a new one
  --yes            allow every approval request without asking
  --no             deny every approval request without asking
  --bin <path>     run this magi-code executable instead of <repo>/dist/magi-code.mjs
  -h, --help       show this help

Ctrl-C during a turn asks the server to cancel it; a second Ctrl-C quits.
Exit status: 0; 1 if the server fails or breaks the protocol, or a one-shot
turn is rejected or fails; 2 for bad usage; 130 when quit with Ctrl-C.`;

let opts, words;
try {
  ({ values: opts, positionals: words } = parseArgs({
    allowPositionals: true,
    options: {
      cwd: { type: "string" }, session: { type: "string" }, bin: { type: "string" },
      yes: { type: "boolean" }, no: { type: "boolean" }, help: { type: "boolean", short: "h" },
    },
  }));
  if (opts.yes && opts.no) throw new Error("--yes and --no exclude each other");
} catch (error) {
  console.error(`${error.message}; see --help`);
  process.exit(2);
}
if (opts.help) {
  console.log(HELP);
  process.exit(0);
}

const PROTOCOL = "magi-code.local-agent";
// Fail closed: a code, event or enum value this client does not know may mean
// something it cannot honour, so it stops instead of guessing.
const ERRORS = new Set(`invalid_frame invalid_request invalid_params protocol_mismatch unsupported_method
  unsupported_capability not_initialized already_initialized duplicate_id request_limit frame_too_large
  incomplete_frame configuration_invalid provider_unavailable profile_invalid mcp_unavailable startup_cancelled
  startup_failed busy stale_session session_missing session_busy session_invalid cwd_mismatch history_limit
  stale_revision content_limit operation_cancelled stale_run stale_approval execution_failed persistence_failed
  output_unavailable discovery_limit discovery_unavailable stale_operation catalog_limit catalog_unavailable
  stale_catalog stale_selection selection_invalid effort_unsupported`.split(/\s+/));
const EVENTS = new Set(["input.persisted", "message.delta", "message.reconcile", "activity", "approval.requested", "diagnostic", "run.finished"]);
const KINDS = new Set(["tool", "subagent", "compaction"]), STATES = new Set(["started", "completed", "failed"]);
const OUTCOMES = new Set(["completed", "cancelled", "failed"]), PERSISTENCE = new Set(["durable", "degraded", "not_started"]);
const HINTS = {
  provider_unavailable: "The selected provider's API key variable (e.g. OPENAI_API_KEY, ANTHROPIC_API_KEY) is not set here; export it, or select the keyless ollama provider (see docs/settings.md).",
  unsupported_capability: "This magi-code does not implement everything this client needs (turns, approvals).",
  session_missing: "No saved session has that id in this storage root.",
  session_busy: "Another magi-code child has that session open.",
  cwd_mismatch: "That session belongs to another workspace; pass its directory with --cwd.",
};

/**
 * The wire error is a bare code; `magi-code config check`, run with the same
 * executable, cwd and environment, says which file and JSON path are wrong.
 */
function configProblem() {
  const args = opts.bin ? ["config", "check"] : [script, "config", "check"];
  const checked = spawnSync(opts.bin ?? process.execPath, args, { cwd: opts.cwd ?? process.cwd(), encoding: "utf8" });
  const first = checked.status === 1 ? checked.stdout.split("\n")[0] : "";
  return first ? `${first}\n(magi-code config check lists every problem)` : "Run magi-code config check to see what is wrong.";
}

let exiting = false;
function die(message) {
  console.error(`agent: ${message}`);
  process.exit(1); // closes the child's stdin: EOF makes it cancel its work and exit
}

const script = fileURLToPath(new URL("../dist/magi-code.mjs", import.meta.url));
// detached: the child gets its own process group, so a terminal Ctrl-C reaches
// only this client, which turns it into turn.cancel instead of killing the server.
const child = spawn(opts.bin ?? process.execPath, opts.bin ? ["serve", "--stdio"] : [script, "serve", "--stdio"], {
  cwd: opts.cwd ?? process.cwd(), stdio: ["pipe", "pipe", "inherit"], detached: true,
});
const closed = new Promise((resolve) => child.once("close", resolve));
child.once("error", (error) => die(`cannot start the server (${error.code ?? error.message})`));
child.once("close", (code, signal) => exiting || die(`server exited unexpectedly (${signal ?? `code ${code}`})`));
child.stdin.on("error", () => {}); // a dead child is reported by "close"

let instance = null, lastSeq = 0, nextId = 0;
const pending = new Map();
// Keep reading stdout at all times: a child whose output stalls for 2 s exits 1.
createInterface({ input: child.stdout }).on("line", (line) => {
  let frame;
  try { frame = JSON.parse(line); } catch { die("the server sent a line that is not JSON"); }
  if (frame?.protocol !== PROTOCOL || frame.version !== 1) die("protocol mismatch (expected magi-code.local-agent version 1)");
  // seq strictly increases across all frames of one instance; anything else is lost or foreign output.
  if ((instance ?? frame.instance_id) !== frame.instance_id || !(frame.seq > lastSeq)) die("frame out of sequence");
  instance = frame.instance_id;
  lastSeq = frame.seq;
  if (frame.type === "response") onResponse(frame);
  else if (frame.type === "event") onEvent(frame.event, frame.data);
  else die("unknown frame type");
});

/** Sends one request; resolves with its result or rejects with an Error carrying `code`. */
function call(method, params = {}) {
  const id = `r${++nextId}`; // never reused: the child remembers every id of its lifetime
  child.stdin.write(`${JSON.stringify({ protocol: PROTOCOL, version: 1, id, method, params })}\n`);
  return new Promise((resolve, reject) => pending.set(id, { method, resolve, reject }));
}

function onResponse(frame) {
  if (frame.error && !ERRORS.has(frame.error.code)) die("unknown error code");
  const entry = pending.get(frame.id);
  if (!entry) die(frame.error ? `the server rejected a frame: ${frame.error.code}` : "response to an unknown request");
  pending.delete(frame.id);
  // The run's first events can arrive in the same read as this response, before
  // any promise continuation runs, so the run id is recorded right here.
  if (entry.method === "turn.start" && frame.result && run) run.id = frame.result.run_id;
  if (frame.error) entry.reject(Object.assign(new Error(`${entry.method}: ${frame.error.code}`), { code: frame.error.code }));
  else entry.resolve(frame.result);
}

// --- Terminal output -------------------------------------------------------
let atLineStart = true, shown = null; // shown: the message whose deltas stdout is showing
function out(text) {
  if (text === "") return;
  process.stdout.write(text);
  atLineStart = text.endsWith("\n");
}
function note(line) {
  if (!atLineStart && process.stdout.isTTY) out("\n"); // keep stderr notes off a half-printed reply
  console.error(line);
}

// --- Terminal input: prompts and approval answers ----------------------------
let rl = null, waiter = null, inputClosed = false;
const typed = []; // lines piped in while no one was asking (interactive mode from a pipe)
/** Reads one line; null at end of input, after `ms`, or when cancelled by `waiter(null)`. */
function ask(question, ms) {
  if (!rl) {
    rl = createInterface({ input: process.stdin, output: process.stderr, terminal: process.stdin.isTTY });
    rl.on("line", (line) => (waiter ? waiter(line) : process.stdin.isTTY || typed.push(line)));
    rl.on("close", () => { inputClosed = true; waiter?.(null); });
    rl.on("SIGINT", onInterrupt); // in raw mode Ctrl-C is a keystroke, not a signal
  }
  if (typed.length > 0) return Promise.resolve(typed.shift());
  if (inputClosed) return Promise.resolve(null);
  if (process.stdin.isTTY) { rl.setPrompt(question); rl.prompt(); }
  return new Promise((resolve) => {
    const timer = ms === undefined ? null : setTimeout(() => waiter?.(null), ms);
    waiter = (line) => {
      clearTimeout(timer);
      waiter = null;
      if (line === null && !inputClosed && process.stdin.isTTY) process.stderr.write("\n"); // end the abandoned question's line
      resolve(line);
    };
  });
}

// --- Runs ------------------------------------------------------------------
let sessionId = null, announced = false, run = null, interrupts = 0, approvals = Promise.resolve();

function onEvent(name, data) {
  if (!EVENTS.has(name)) die(`unknown event ${name}`);
  // Events belong to the one active run: turn.start's response precedes them and nothing follows run.finished.
  if (!run?.id || data?.session_id !== sessionId || data.run_id !== run.id) die(`event ${name} outside the active run`);
  if (name === "input.persisted" && !announced) {
    // Only now is the session on disk; a session id saved earlier could not be reopened.
    announced = true;
    note(`session ${sessionId} saved; resume with --session ${sessionId}`);
  } else if (name === "message.delta") onDelta(data);
  else if (name === "message.reconcile") onReconcile(data);
  else if (name === "activity") {
    if (!KINDS.has(data.kind) || !STATES.has(data.state)) die("unknown activity kind or state");
    note(`[${data.kind} ${data.name} ${data.state}] ${data.summary}`);
  } else if (name === "approval.requested") onApproval(data);
  else if (name === "diagnostic") note(`[diagnostic ${data.code}] ${data.summary}`);
  else if (name === "run.finished") onFinished(data);
}

function message(id) {
  if (!run.messages.has(id)) run.messages.set(id, { next: 0, text: "", gap: false, parts: [] });
  return run.messages.get(id);
}

function onDelta({ message_id, part, text }) {
  const m = message(message_id);
  // Deltas are best effort: a skipped part is dropped text that only reconciliation
  // can repair, but a repeated or earlier part means a broken stream.
  if (part < m.next) die("message.delta part went backwards");
  if (part > m.next) m.gap = true;
  m.next = part + 1;
  m.text += text;
  if (shown !== message_id && !atLineStart) out("\n"); // tool-separated segments have their own ids
  shown = message_id;
  out(text);
}

function onReconcile({ message_id, part, text, last_part, partial }) {
  const m = message(message_id);
  // Reconciliation is authoritative and never dropped, so its parts must be contiguous.
  if (part !== m.parts.length) die("message.reconcile parts out of order");
  m.parts.push(text);
  if (!last_part) return; // never show an incomplete authoritative text
  const full = m.parts.join("");
  m.parts = [];
  // Reconciliation replaces what the deltas showed; it is not appended to it. When the
  // stream showed an unbroken prefix of it and is still on screen, finishing the line is
  // the same replacement.
  if (full !== m.text && !m.gap && m.text !== "" && shown === message_id && full.startsWith(m.text)) {
    out(full.slice(m.text.length));
    if (partial) note(`[message ${message_id} is partial]`);
  } else if (full !== m.text) {
    if (m.text !== "") note(`[message ${message_id} ${m.gap ? "lost streamed text" : "differs from the stream"}; authoritative${partial ? " partial" : ""} text follows]`);
    if (!atLineStart) out("\n");
    out(full);
    shown = null;
  } else if (partial) note(`[message ${message_id} is partial]`);
  m.text = full;
  m.gap = false;
}

function onApproval({ run_id, approval_id, summary, expires_in_ms }) {
  const deadline = Date.now() + expires_in_ms;
  approvals = approvals.then(async () => {
    if (run?.id !== run_id) return note("approval withdrawn: the run finished");
    let allow = opts.yes ? true : opts.no ? false : null;
    if (allow === null && !process.stdin.isTTY) {
      note(`[approval denied: stdin is not a terminal; pass --yes or --no] ${summary}`);
      allow = false;
    }
    if (allow === null) {
      const answer = await ask(`Allow ${summary}? [y/N] `, Math.max(0, deadline - Date.now()));
      // No answer in time: the server already denied it (default deny), so send nothing.
      if (answer === null && !inputClosed) return note(run?.id === run_id ? "approval expired" : "approval withdrawn: the run finished");
      allow = answer !== null && /^y(es)?$/i.test(answer.trim());
    }
    try {
      await call("approval.answer", { session_id: sessionId, run_id, approval_id, allow });
      note(allow ? "[allowed]" : "[denied]");
    } catch (error) {
      note(error.code === "stale_approval" ? "approval expired" : error.message);
    }
  });
}

function onFinished(data) {
  if (!OUTCOMES.has(data.outcome) || !PERSISTENCE.has(data.persistence)) die("unknown run.finished outcome or persistence");
  if (data.error_code !== null && !ERRORS.has(data.error_code)) die("unknown error code");
  if (!atLineStart) out("\n");
  for (const [id, m] of run.messages) {
    if (m.gap || m.parts.length > 0) note(`[message ${id} is incomplete on screen; reopen the session to read it from history]`);
  }
  note(`[run ${data.outcome}; history ${data.persistence}${data.revision ? ` at revision ${data.revision}` : ""}${data.error_code ? `; error ${data.error_code}` : ""}]`);
  const done = run.done;
  run = null;
  shown = null;
  waiter?.(null); // only an approval question can be waiting during a run
  done(data);
}

function sendCancel() {
  call("turn.cancel", { session_id: sessionId, run_id: run.id }).catch((error) => {
    // stale_run: the run ended before the request arrived; run.finished tells how.
    if (error.code !== "stale_run") note(error.message);
  });
}

function onInterrupt() {
  if (!run) return rl && !inputClosed ? rl.close() : process.exit(130);
  if (++interrupts > 1) {
    note("[quit]");
    process.exit(130);
  }
  // Cancelling is a request: the run still ends with run.finished after cleanup.
  note("[cancelling; press Ctrl-C again to quit]");
  if (run.id) sendCancel();
  else run.cancelWanted = true;
}
process.on("SIGINT", onInterrupt);

/** Runs one turn; resolves with run.finished data, or null when the turn was rejected. */
async function runTurn(prompt) {
  interrupts = 0;
  const finished = new Promise((done) => (run = { id: null, done, messages: new Map(), cancelWanted: false }));
  try {
    await call("turn.start", { session_id: sessionId, prompt }); // admission only, not success
  } catch (error) {
    run = null;
    note(error.message);
    return null;
  }
  if (run?.cancelWanted) sendCancel();
  return finished;
}

let exitCode = 0;
try {
  const init = await call("initialize", {
    required_capabilities: ["session.create", "session.open", "turn.start", "turn.cancel", "approval.answer", "history.page", "shutdown"],
  });
  note(`ready: ${init.status.provider ?? "?"} / ${init.status.model ?? "?"}`);
  const attached = await (opts.session ? call("session.open", { session_id: opts.session }) : call("session.create"));
  sessionId = attached.session_id;
  if (opts.session) note(`session ${sessionId} opened${attached.durable ? "" : " (not saved yet)"}`);
  for (const notice of attached.notices) note(`[notice ${notice}]`);
  const oneShot = words.length > 0;
  for (;;) {
    const prompt = oneShot ? words.join(" ") : await ask("> ");
    if (prompt === null) break;
    const blank = prompt.trim() === "";
    if (blank && !oneShot) continue;
    // Limits come from initialize at run time, never from a copied table.
    if (blank || Buffer.byteLength(prompt) > init.limits.prompt_bytes) {
      note(blank ? "the prompt is blank" : `the prompt is over ${init.limits.prompt_bytes} bytes`);
      if (!oneShot) continue;
      exitCode = 1;
      break;
    }
    const result = await runTurn(prompt);
    if (oneShot) {
      exitCode = result === null || result.outcome === "failed" ? 1 : 0;
      break;
    }
  }
} catch (error) {
  const hint = error.code === "configuration_invalid" ? configProblem() : HINTS[error.code];
  note(hint ? `${error.message}\n${hint}` : error.message);
  exitCode = 1;
}

exiting = true;
rl?.close();
await Promise.race([call("shutdown").catch(() => {}), closed]);
await closed;
process.exit(exitCode);
