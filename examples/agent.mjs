#!/usr/bin/env node
// A small interactive client for `magi-code serve --stdio`, built on the
// client library (`magi-code/client`; in this repository and in the package
// it is ../dist/runtime/node-client.js): it spawns the server the way an
// editor would, attaches a session and runs turns, showing streamed replies,
// tool activity and approval prompts. Run from the repository after
// `npm run build`, or from an installed package:
//
//   node examples/agent.mjs "explain src/cli.ts"      # one turn, then exit
//   node examples/agent.mjs                            # prompt loop
//
// Assistant text goes to stdout; everything else goes to stderr.
import { spawnSync } from "node:child_process";
import { clearLine, createInterface, cursorTo } from "node:readline";
import { parseArgs } from "node:util";
import { binPath, isProtocolError, ProtocolViolation, spawnAgent } from "../dist/runtime/node-client.js";

const HELP = `Usage: node examples/agent.mjs [options] [--] [prompt words...]

With prompt words, runs one turn and exits. Without, reads prompts from the
terminal, one turn at a time (Ctrl-D, or Ctrl-C at the prompt, quits).

Options:
  --cwd <dir>      workspace directory for the server (default: current directory)
  --session <id>   resume a saved session instead of creating a new one
  --yes            allow every approval request without asking
  --no             deny every approval request without asking
  --bin <path>     run this magi-code executable instead of the package's own bin
  -h, --help       show this help

Ctrl-C during a turn asks the server to cancel it; a second Ctrl-C quits.
Exit status: 0 when the one-shot turn completed (or the prompt loop ended at
end of input); 1 when the server could not start, failed or broke the
protocol, or the one-shot turn was rejected or failed; 2 for bad usage; 130
when interrupted with Ctrl-C (the one-shot turn was cancelled, or you quit).`;

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

const HINTS = {
  provider_unavailable: "The selected provider has no API key here; export its key variable, or select the keyless ollama provider (see docs/settings.md).",
  unsupported_capability: "This magi-code does not implement everything this client needs (turns, approvals).",
  session_missing: "No saved session has that id in this storage root.",
  session_busy: "Another magi-code child has that session open.",
  cwd_mismatch: "That session belongs to another workspace; pass its directory with --cwd.",
};
const cwd = opts.cwd ?? process.cwd();

/**
 * The wire error is a bare code; `magi-code config check` (same executable,
 * cwd, environment) names the settings or profile file and JSON path, or the
 * exact key variable a provider lacks. Null when it finds nothing.
 */
function configProblem() {
  const [command, args] = opts.bin ? [opts.bin, ["config", "check"]] : [process.execPath, [binPath, "config", "check"]];
  const checked = spawnSync(command, args, { cwd, encoding: "utf8" });
  const first = checked.status === 1 ? checked.stdout.split("\n")[0] : "";
  return first ? `${first}\n(magi-code config check lists every problem)` : null;
}

// detached: the server gets its own process group, so a terminal Ctrl-C reaches
// only this client, which turns it into turn.cancel instead of killing the server.
const agent = spawnAgent({ cwd, stderr: "inherit", detached: true, ...(opts.bin ? { command: opts.bin, args: [] } : {}) });
let exiting = false;
agent.closed.then(() => {
  if (exiting) return;
  // The client failed closed (a violation), the server could not start or died: nothing more can be done.
  // The library's error says which (a SpawnError names a missing command, a bad --cwd, an early exit's stderr).
  note(`agent: ${agent.failure instanceof ProtocolViolation ? "" : "server: "}${agent.failure?.message ?? "connection closed"}`);
  process.exit(1);
});

// --- Terminal output -------------------------------------------------------
let atLineStart = true, shown = null; // shown: the message whose deltas stdout is showing
function out(text) {
  if (text === "") return;
  process.stdout.write(text);
  atLineStart = text.endsWith("\n");
}
function note(line) {
  if (asking) {
    // A question is on the terminal: print above it, then draw it again with what was typed so far.
    clearLine(process.stderr, 0);
    cursorTo(process.stderr, 0);
    console.error(line);
    rl.prompt(true);
    return;
  }
  if (!atLineStart && process.stdout.isTTY) out("\n"); // keep stderr notes off a half-printed reply
  console.error(line);
}

// --- Terminal input: prompts and approval answers ----------------------------
let rl = null, waiter = null, inputClosed = false, asking = false; // asking: a question is drawn on the terminal
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
  if (process.stdin.isTTY) { rl.setPrompt(question); rl.prompt(); asking = true; }
  return new Promise((resolve) => {
    const timer = ms === undefined ? null : setTimeout(() => waiter?.(null), ms);
    waiter = (line) => {
      clearTimeout(timer);
      waiter = null;
      if (asking && line === null && !inputClosed) {
        // Abandoned (expired, or its run ended): erase the question and anything half-typed, so the next note starts clean.
        rl.write(null, { ctrl: true, name: "e" });
        rl.write(null, { ctrl: true, name: "u" });
        clearLine(process.stderr, 0);
        cursorTo(process.stderr, 0);
      }
      asking = false;
      resolve(line);
    };
  });
}

// --- Runs: the library assembles them; this only renders ----------------------
let sessionId = null, announced = false, active = null, interrupts = 0, cancelWanted = false, approvals = Promise.resolve();
// "<run id> <message id>" → the streamed text stdout shows. Message ids are run-scoped: the next
// run's first message is a1 again, so an id alone would compare a new answer with an old one.
const printed = new Map();
const key = (run, messageId) => `${run.runId} ${messageId}`;

function onEvent({ event, data }, run) {
  if (event === "input.persisted" && !announced) {
    // Only now is the session on disk; a session id saved earlier could not be reopened.
    announced = true;
    note(`session ${sessionId} saved; resume with --session ${sessionId}`);
  } else if (event === "message.delta") {
    const id = key(run, data.message_id);
    if (shown !== id && !atLineStart) out("\n"); // tool-separated segments have their own ids
    shown = id;
    printed.set(id, (printed.get(id) ?? "") + data.text);
    out(data.text);
  } else if (event === "message.reconcile" && data.last_part) {
    showReconciled(key(run, data.message_id), run.messages.get(data.message_id), printed.get(key(run, data.message_id)) ?? "");
  } else if (event === "activity") note(`[${data.kind} ${data.name} ${data.state}] ${data.summary}`);
  else if (event === "diagnostic") note(`[diagnostic ${data.code}] ${data.summary}`);
}

/** The reconciled text replaces what the deltas showed; finishing an unbroken prefix on screen is the same replacement. */
function showReconciled(id, message, streamed) {
  const { messageId, text, partial } = message;
  if (text !== streamed && streamed !== "" && shown === id && text.startsWith(streamed)) {
    out(text.slice(streamed.length));
    if (partial) note(`[message ${messageId} is partial]`);
  } else if (text !== streamed) {
    if (streamed !== "") note(`[message ${messageId} differs from the stream; authoritative${partial ? " partial" : ""} text follows]`);
    if (!atLineStart) out("\n");
    out(text);
    shown = null;
  } else if (partial) note(`[message ${messageId} is partial]`);
  printed.set(id, text);
}

function onApproval(approval, run) {
  const deadline = Date.now() + approval.expiresInMs;
  approvals = approvals.then(async () => {
    if (run.result) return note("approval withdrawn: the run finished");
    let allow = opts.yes ? true : opts.no ? false : null;
    if (allow === null && !process.stdin.isTTY) {
      note(`[approval denied: stdin is not a terminal; pass --yes or --no] ${approval.summary}`);
      allow = false;
    }
    if (allow === null) {
      const answer = await ask(`Allow ${approval.summary}? [y/N] `, Math.max(0, deadline - Date.now()));
      // No answer in time: the server denies it by default on its own, so send nothing.
      if (answer === null && !inputClosed) {
        return note(run.result ? "approval withdrawn: the run finished" : `[approval expired: denied by default] ${approval.summary}`);
      }
      allow = answer !== null && /^y(es)?$/i.test(answer.trim());
    }
    try {
      note((await approval.answer(allow)) ? (allow ? "[allowed]" : "[denied]") : `[approval expired: denied by default] ${approval.summary}`);
    } catch (error) {
      note(error.message);
    }
  });
}

let interrupted = false; // Ctrl-C ended the prompt loop: exit 130, not 0
function onInterrupt() {
  if (!active) {
    interrupted = true;
    return rl && !inputClosed ? rl.close() : process.exit(130);
  }
  if (++interrupts > 1) {
    note("[quit]");
    process.exit(130);
  }
  // Cancelling is a request: the run still ends with run.finished after cleanup.
  note("[cancelling; press Ctrl-C again to quit]");
  if (active === true) cancelWanted = true;
  else active.cancel().catch((error) => note(error.message));
}
process.on("SIGINT", onInterrupt);

/** Runs one turn; resolves with run.finished data, or null when the turn was rejected. */
async function runTurn(prompt) {
  interrupts = 0;
  active = true; // admitted soon; Ctrl-C before then cancels right after admission
  let run;
  try {
    run = await agent.startTurn(sessionId, prompt, { onEvent, onApproval }); // admission only, not success
  } catch (error) {
    active = null;
    note(error.message);
    return null;
  }
  active = run;
  if (cancelWanted) run.cancel().catch(() => {});
  cancelWanted = false;
  const data = await run.finished;
  active = null;
  shown = null;
  waiter?.(null); // only an approval question can be waiting during a run
  if (!atLineStart) out("\n");
  for (const message of run.messages.values()) {
    if (!message.complete) note(`[message ${message.messageId} is incomplete on screen; reopen the session to read it from history]`);
  }
  note(`[run ${data.outcome}; history ${data.persistence}${data.revision ? ` at revision ${data.revision}` : ""}${data.error_code ? `; error ${data.error_code}` : ""}]`);
  return data;
}

let exitCode = 0;
try {
  const init = await agent.initialize(["session.create", "session.open", "turn.start", "turn.cancel", "approval.answer", "history.page", "shutdown"]);
  note(`ready: ${init.status.provider ?? "?"} / ${init.status.model ?? "?"}`);
  const attached = await (opts.session ? agent.request("session.open", { session_id: opts.session }) : agent.request("session.create", {}));
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
    if (blank || Buffer.byteLength(prompt) > agent.limits.prompt_bytes) {
      note(blank ? "the prompt is blank" : `the prompt is over ${agent.limits.prompt_bytes} bytes`);
      if (!oneShot) continue;
      exitCode = 1;
      break;
    }
    const result = await runTurn(prompt);
    if (oneShot) {
      // Cancelled is only ever our Ctrl-C's doing: report it as the interrupt it was.
      exitCode = result === null || result.outcome === "failed" ? 1 : result.outcome === "cancelled" ? 130 : 0;
      break;
    }
  }
  if (interrupted) exitCode = 130;
} catch (error) {
  const explained = isProtocolError(error, "configuration_invalid") || isProtocolError(error, "profile_invalid") || isProtocolError(error, "provider_unavailable");
  const checked = explained ? configProblem() : null;
  const hint = checked ?? HINTS[error.code];
  note(hint ? `${error.message}\n${hint}` : error.message);
  exitCode = 1;
}

exiting = true;
rl?.close();
await agent.shutdown();
process.exit(exitCode);
