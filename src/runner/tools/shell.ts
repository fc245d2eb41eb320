/**
 * `shell`: run a command with `sh -c` in the workspace, through
 * `runtime.spawn`, in its own process group.
 *
 * Ending it: on timeout or when the call's signal aborts, SIGTERM goes to the
 * whole group, then SIGKILL `KILL_GRACE_MS` later if the command is still
 * running (a `trap '' TERM` cannot stop that: `util/process-group.ts`). The
 * call resolves only once the shell has exited and its output pipes are
 * closed, so after a timeout or cancel nothing of the group is left running;
 * should a process have left the group and kept the pipes open, the call
 * stops waiting `DRAIN_GRACE_MS` after SIGKILL. A command that exits by itself is
 * not chased further: a server started with `cmd >/dev/null 2>&1 &` keeps
 * running, while one started without redirecting its output holds the pipes
 * and runs into the timeout.
 *
 * The command gets the backend's environment without credential variables
 * ({@link shellEnvironment}), and `/dev/null` as stdin. stdout and stderr are
 * combined in arrival order and kept within 62 KiB (head and tail) by
 * `output-buffer.ts`, which redacts them.
 *
 * @module
 */

import * as v from "valibot";
import type { ByteReader, ExitStatus, Subprocess } from "../../host/runtime.ts";
import { exactObject } from "../../util/exact-object.ts";
import { GroupDeadline, type GroupEnding } from "../../util/process-group.ts";
import { MIN_KNOWN_SECRET_LENGTH } from "../../util/redaction.ts";
import { OutputCollector } from "./output-buffer.ts";
import { describeError, finishResult, formatBytes, quote, showExactly } from "./tool-text.ts";
import type { PreparedCall, Tool, ToolContext, ToolResult } from "./tool.ts";
import type { ResultFacts } from "../../cards/facts.ts";

const COMMAND_TEXT = "The command, run with sh -c in the workspace directory; stdin is empty.";
const TIMEOUT_TEXT = "Seconds before the command is killed (default 120, at most 600).";

/** Default `timeout_seconds`. */
export const DEFAULT_TIMEOUT_SECONDS = 120;
/** Largest `timeout_seconds`. */
export const MAX_TIMEOUT_SECONDS = 600;
/** Output bytes kept from the start and from the end. */
export const OUTPUT_HEAD_BYTES = 31 * 1024;
/** See {@link OUTPUT_HEAD_BYTES}. */
export const OUTPUT_TAIL_BYTES = 31 * 1024;

/** Parameters of `shell`. */
export const ShellParams = exactObject({
  command: v.pipe(v.string(), v.minLength(1), v.maxLength(32_768), v.description(COMMAND_TEXT)),
  timeout_seconds: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_TIMEOUT_SECONDS), v.description(TIMEOUT_TEXT)),
  ),
});

/** Parsed `shell` parameters. */
export type ShellParams = v.InferOutput<typeof ShellParams>;

/*
 * The environment a command runs with is the backend's own minus variables
 * that carry credentials. Output redaction alone cannot stop a command from
 * sending `$OPENAI_API_KEY` elsewhere or printing it base64-encoded, so keys
 * are not handed to commands at all. Two rules, after Codex's default
 * `shell_environment_policy`: names containing KEY, SECRET, TOKEN, PASSWORD
 * or CREDENTIAL (any case), and any variable whose value contains a known
 * secret.
 */

/** Variable names treated as credentials. */
export const SECRET_NAME = /KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL/i;

/** The filtered environment and the names taken out of it (names only, for diagnostics). */
export interface ShellEnvironment {
  /** What the command gets. */
  readonly env: Record<string, string>;
  /** Names removed, sorted. */
  readonly removed: readonly string[];
}

/** Filters `env` (a copy from `runtime.envAll()`) for a shell command. */
export function shellEnvironment(env: Readonly<Record<string, string>>, secrets: readonly string[]): ShellEnvironment {
  const known = secrets.filter((secret) => typeof secret === "string" && secret.length >= MIN_KNOWN_SECRET_LENGTH);
  const kept: Record<string, string> = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (SECRET_NAME.test(name) || known.some((secret) => value.includes(secret))) removed.push(name);
    else kept[name] = value;
  }
  return { env: kept, removed: removed.sort() };
}

/** Reads a pipe to its end into `collector`; a read error ends it like EOF. */
async function drain(reader: ByteReader | null, collector: OutputCollector): Promise<void> {
  if (reader === null) return;
  try {
    for (let chunk = await reader.read(); chunk !== null; chunk = await reader.read()) collector.push(chunk);
  } catch {
    // The pipe broke: what arrived is all there is.
  }
}

/** How the command ended, in words, for both the model and the summary; `status` is null when the wait was abandoned. */
function ending(status: ExitStatus | null, how: GroupEnding | null, killed: boolean, timeout: number): string {
  const abandoned = status === null ? "; its output stayed open, so the wait was abandoned" : "";
  const sent = `process group sent ${killed ? "SIGTERM, then SIGKILL" : "SIGTERM"}${abandoned}`;
  if (how === "timeout") return `timed out after ${timeout} s (${sent})`;
  if (how === "cancel") return `cancelled (${sent})`;
  if (status === null) return "failed while running";
  if (status.code !== null) return `exit code ${status.code}`;
  return status.signal !== null ? `killed by ${status.signal}` : "could not be started";
}

function firstLine(command: string): string {
  const newline = command.indexOf("\n");
  return newline === -1 ? command : `${command.slice(0, newline)} …`;
}

/** Why a command too long to show was refused, for the model. */
export const COMMAND_TOO_LONG =
  "The command is too long to show whole in the approval prompt (1,024 bytes), so it was not offered for approval. " +
  "Split it into shorter commands, or write a script with write_file and run that.";

/** The command is shown whole, escaped, or not offered at all: nothing of it may hide past a cut. */
function prepare(params: ShellParams, context: ToolContext): Promise<PreparedCall> {
  // The running command's collector, for its card's live updates (`tool.cards`); null until it starts.
  const live: { collector: OutputCollector | null } = { collector: null };
  return Promise.resolve({
    action: `Run ${showExactly(params.command)} in the workspace (timeout ${params.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS} s)`,
    tooLongToShow: COMMAND_TOO_LONG,
    mustAsk: false,
    scopeTarget: showExactly(params.command),
    facts: {
      kind: "shell",
      command: params.command,
      timeoutS: params.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS,
      outputSoFar: () => live.collector?.finish(context.secrets) ?? null,
    },
    run: () => run(params, context, live),
  });
}

async function run(params: ShellParams, context: ToolContext, live: { collector: OutputCollector | null }): Promise<ToolResult> {
  const { runtime, signal, secrets } = context;
  const label = `shell ${quote(firstLine(params.command))}`;
  const notStarted = { kind: "shell", ending: "not_started", exitCode: null, signal: null, durationMs: null, output: null } as const;
  if (signal.aborted) {
    return { ...finishResult(false, "Cancelled before the command started.", `${label}: cancelled before it started`, secrets), facts: notStarted };
  }
  const timeout = params.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS;
  const started = runtime.monotonicNow();
  let child: Subprocess;
  try {
    child = runtime.spawn("sh", {
      args: ["-c", params.command],
      cwd: context.workspace,
      env: shellEnvironment(runtime.envAll(), secrets).env,
      stdio: { stdin: "null", stdout: "pipe", stderr: "pipe" },
      processGroup: true,
    });
  } catch (error) {
    return { ...finishResult(false, `The shell could not be started: ${describeError(error)}.`, `${label}: could not start`, secrets), facts: notStarted };
  }
  const collector = new OutputCollector(OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES, secrets);
  live.collector = collector;
  const deadline = new GroupDeadline(runtime, child, timeout * 1000, signal);
  const finished = Promise.all([child.exited, drain(child.stdout, collector), drain(child.stderr, collector)])
    .then(([status]) => status, () => null);
  let status: ExitStatus | null;
  try {
    status = await Promise.race([finished, deadline.gaveUp]);
  } finally {
    deadline.dispose();
  }
  const how = deadline.ending;
  const durationMs = Math.max(0, Math.round(runtime.monotonicNow() - started));
  const seconds = (durationMs / 1000).toFixed(1);
  const outcome = ending(status, how, deadline.killed, timeout);
  const output = collector.finish(secrets);
  const body = output.totalBytes === 0 ? "(no output)" : output.text;
  const ok = how === null && status?.code === 0;
  const trailer = `[${outcome[0]!.toUpperCase()}${outcome.slice(1)}; ran ${seconds} s; ${formatBytes(output.totalBytes)} of output.]`;
  const summary = `${label}: ${outcome} after ${seconds} s, ${formatBytes(output.totalBytes)} of output`;
  const facts: ResultFacts = {
    kind: "shell",
    ending: status === null ? "abandoned" : how === "timeout" ? "timeout" : how === "cancel" ? "cancelled" : status.code !== null ? "exit" : "signal",
    exitCode: status?.code ?? null,
    signal: status?.signal ?? null,
    durationMs,
    output: { head: output.head, tail: output.tail, totalBytes: output.totalBytes, omittedBytes: output.omittedBytes },
  };
  return { ...finishResult(ok, `${body}${body.endsWith("\n") ? "" : "\n"}${trailer}`, summary, secrets), facts };
}

/** The `shell` tool. */
export const shellTool: Tool<ShellParams> = {
  name: "shell",
  description: "Run a shell command (sh -c) in the workspace directory and return its combined stdout and stderr " +
    "(the first and last 31 KiB when longer) and exit code. Commands are killed after timeout_seconds (default 120). " +
    "stdin is empty, so interactive prompts fail; background processes must redirect their output or the call waits for them.",
  schema: ShellParams,
  parameters: {
    type: "object",
    properties: {
      command: { type: "string", minLength: 1, maxLength: 32768, description: COMMAND_TEXT },
      timeout_seconds: { type: "integer", minimum: 1, maximum: MAX_TIMEOUT_SECONDS, description: TIMEOUT_TEXT },
    },
    required: ["command"],
    additionalProperties: false,
  },
  prepare,
};
