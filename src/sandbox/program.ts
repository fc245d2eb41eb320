/**
 * The child's side of one program: start the sandbox host process through
 * the runtime's subprocesses, send it the program, answer its tool calls
 * one at a time, and read its end. The child keeps its own clock: the host
 * may run for {@link SandboxLimits.wallMs}, counted from its start and
 * paused only while it says the guest waits on a tool; past that, on the
 * turn's cancellation, on a malformed frame or on anything the protocol
 * does not allow, the child kills the host's process group and waits for
 * it to be gone. The host gets no environment but what its runtime needs to
 * start, and no secret.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { encodeFrame, FrameReader } from "./frames.ts";
import { FRAME_BYTES, type SandboxLimits } from "./limits.ts";
import { type CallMessage, hostMessage, type StartMessage } from "./messages.ts";

/** How to start the host: the command and the arguments before the hidden subcommand. */
export interface HostCommand {
  readonly command: string;
  readonly args: readonly string[];
}

/** What one nested call answered, for the guest. */
export interface NestedResult {
  readonly ok: boolean;
  readonly output: string;
}

/** One program to run. */
export interface ProgramRequest {
  readonly runtime: Runtime;
  readonly host: HostCommand;
  /** The host's working directory (absolute): the child's, so a `deno run` host finds the same configuration. */
  readonly cwd: string;
  readonly source: string;
  /** The tool names `tools` offers the program. */
  readonly tools: readonly string[];
  readonly limits: SandboxLimits;
  /** The turn's cancellation. */
  readonly signal: AbortSignal;
  /**
   * Runs one nested call; `signal` aborts when the program ends before the
   * call does. Never rejects for anything the program sent.
   */
  call(name: string, args: string, signal: AbortSignal): Promise<NestedResult>;
}

/**
 * How a program ended: it returned or threw (its `text`, `logs` as the
 * guest wrote them, bounded), or the child stopped it: `deadline` (the wall
 * clock), `cancelled` (the turn), `protocol` (a malformed frame or message,
 * or the host ended without answering).
 */
export type ProgramOutcome =
  | { readonly kind: "returned" | "threw"; readonly text: string; readonly logs: string; readonly calls: number }
  | { readonly kind: "deadline" | "cancelled" | "protocol"; readonly calls: number };

/** Variables a runtime may need to start (caches, temp dirs); never credentials. */
const HOST_ENV = ["HOME", "TMPDIR", "TMP", "TEMP", "DENO_DIR", "XDG_CACHE_HOME", "NODE_COMPILE_CACHE", "SYSTEMROOT", "LANG"];

/** Runs `request.source` in a fresh host process; resolves once the host is gone. */
export async function runProgram(request: ProgramRequest): Promise<ProgramOutcome> {
  const { runtime, limits } = request;
  // Deno's CLI would otherwise ask dl.deno.land for a newer Deno from the host's process (Node ignores it).
  const env: Record<string, string> = { DENO_NO_UPDATE_CHECK: "1" };
  for (const name of HOST_ENV) {
    const value = runtime.env(name);
    if (value !== undefined) env[name] = value;
  }
  const child = runtime.spawn(request.host.command, {
    args: [...request.host.args, "sandbox-host"],
    cwd: request.cwd,
    env,
    stdio: { stdin: "pipe", stdout: "pipe", stderr: "null" },
    processGroup: true,
  });
  let stopped: "deadline" | "cancelled" | "protocol" | null = null;
  const stop = (why: "deadline" | "cancelled" | "protocol") => {
    stopped ??= why;
    child.kill("SIGKILL");
  };
  const onAbort = () => stop("cancelled");
  request.signal.addEventListener("abort", onAbort, { once: true });
  if (request.signal.aborted) onAbort();
  const clock = new HostClock(runtime, limits.wallMs, () => stop("deadline"));
  const ended = new AbortController();
  let answering = Promise.resolve();
  let calls = 0;
  let answered = 0;
  try {
    const start: StartMessage = {
      type: "start",
      source: request.source,
      tools: request.tools,
      limits: {
        memoryBytes: limits.memoryBytes,
        stackBytes: limits.stackBytes,
        cpuMs: limits.cpuMs,
        maxCalls: limits.maxCalls,
        logBytes: limits.logBytes,
        resultBytes: limits.resultBytes,
      },
    };
    const send = async (message: Readonly<Record<string, unknown>>): Promise<boolean> => {
      const frame = encodeFrame(message, FRAME_BYTES);
      if (frame === null || child.stdin === null) return false;
      try {
        await child.stdin.write(frame);
        return true;
      } catch {
        return false;
      }
    };
    if (!await send(start as unknown as Record<string, unknown>)) {
      stop("protocol");
      return { kind: stopped ?? "protocol", calls };
    }
    const reader = new FrameReader(FRAME_BYTES);
    // Calls are answered one at a time, in order, while reading goes on: a `wait` frame must pause the
    // clock even while an earlier call is still waiting for the user's approval.
    const answer = async (call: CallMessage): Promise<void> => {
      if (ended.signal.aborted) return;
      const result = await request.call(call.name, call.args, ended.signal);
      if (ended.signal.aborted) return;
      answered += 1;
      clock.resume();
      if (!await send({ type: "result", id: call.id, ok: result.ok, output: result.output })) stop("protocol");
    };
    try {
      for (;;) {
        const chunk = child.stdout === null ? null : await child.stdout.read().catch(() => null);
        const pushed = chunk === null ? null : reader.push(chunk);
        if (pushed === null || !pushed.ok) {
          stop("protocol");
          return { kind: stopped ?? "protocol", calls };
        }
        for (const frame of pushed.frames) {
          const message = hostMessage(frame);
          if (message === null || message.type === "call" && !isNextCall(message, calls, request) || message.type === "wait" && message.results > answered) {
            stop("protocol");
            return { kind: stopped ?? "protocol", calls };
          }
          if (message.type === "done") {
            if (stopped !== null) return { kind: stopped, calls };
            return { kind: message.status, text: message.text, logs: message.logs, calls };
          }
          // Only a wait written after the latest result, with a call unanswered, is the guest waiting now.
          if (message.type === "wait") {
            if (message.results === answered && answered < calls) clock.pause();
          }
          else {
            calls += 1;
            answering = answering.then(() => answer(message));
          }
        }
      }
    } finally {
      // The program is over: a nested call still running is told so, and finishes (its activity
      // recorded) before the `code` call does; calls not started yet never start.
      ended.abort();
      await answering;
    }
  } finally {
    clock.dispose();
    request.signal.removeEventListener("abort", onAbort);
    child.kill("SIGKILL");
    await child.exited;
  }
}

/** Whether `call` is the next one the host may make: ids count up from 1, within the bound, to an offered tool. */
function isNextCall(call: CallMessage, made: number, request: ProgramRequest): boolean {
  return call.id === made + 1 && made < request.limits.maxCalls && request.tools.includes(call.name);
}

/** The child's wall clock over the host: armed while the host may be running, paused while the guest waits on a tool. */
class HostClock {
  readonly #runtime: Runtime;
  readonly #expire: () => void;
  #left: number;
  #since: number | null = null;
  #timer: { dispose(): void } | null = null;

  constructor(runtime: Runtime, budgetMs: number, expire: () => void) {
    this.#runtime = runtime;
    this.#expire = expire;
    this.#left = budgetMs;
    this.resume();
  }

  resume(): void {
    if (this.#since !== null) return;
    this.#since = this.#runtime.monotonicNow();
    this.#timer = this.#runtime.setTimer(Math.max(0, this.#left), this.#expire);
  }

  pause(): void {
    if (this.#since === null) return;
    this.#left -= this.#runtime.monotonicNow() - this.#since;
    this.#since = null;
    this.dispose();
  }

  dispose(): void {
    this.#timer?.dispose();
    this.#timer = null;
  }
}
