/**
 * Running one hook's process: through `runtime.spawn`, in its own process
 * group, in the workspace, with the environment the shell tool gets (the
 * backend's without credential variables, `runner/tools/shell.ts`), its
 * input as one JSON line on stdin, then EOF.
 *
 * Bounds: the input at most {@link MAX_HOOK_INPUT_BYTES} (a larger one is not
 * sent: the hook fails unrun); stdout and stderr each kept to
 * {@link MAX_HOOK_OUTPUT_BYTES}, the rest read and dropped so the hook never
 * blocks on a full pipe, and each stream's overflow noted. On timeout or when the run
 * is cancelled the whole group gets SIGTERM, then SIGKILL after a grace;
 * should something that left the group hold the pipes open, the wait ends
 * after one more grace (`util/process-group.ts`, as for the shell tool). Nothing of a hook reaches our stdout:
 * all three pipes are its own.
 *
 * @module
 */

import type { ByteReader, ExitStatus, Runtime, Subprocess } from "../host/runtime.ts";
import { shellEnvironment } from "../runner/tools/shell.ts";
import { GroupDeadline } from "../util/process-group.ts";

/** Largest input written to a hook's stdin, in bytes. */
export const MAX_HOOK_INPUT_BYTES = 1_048_576;
/** Bytes of stdout, and of stderr, kept from a hook. */
export const MAX_HOOK_OUTPUT_BYTES = 65_536;

/** What to run. */
export interface HookProcessSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly input: string;
  readonly secrets: readonly string[];
}

/**
 * How a hook's process ended: `exited` (`status` as the runtime saw it, with
 * the kept output and whether either stream overflowed), or why it did not
 * get that far.
 */
export type HookProcessResult =
  | {
    readonly kind: "exited";
    readonly status: ExitStatus;
    readonly stdout: Uint8Array;
    readonly stderr: Uint8Array;
    /** Whether each stream printed more than it kept. */
    readonly overflowed: { readonly stdout: boolean; readonly stderr: boolean };
  }
  | { readonly kind: "not_started" | "input_too_large" | "timed_out" | "cancelled" };

const encoder = new TextEncoder();

/** Keeps the first `limit` bytes of a stream and counts what it dropped. */
class Kept {
  readonly #chunks: Uint8Array[] = [];
  #bytes = 0;
  overflowed = false;
  constructor(readonly limit: number) {}

  push(chunk: Uint8Array): void {
    const room = this.limit - this.#bytes;
    if (chunk.length > room) this.overflowed = true;
    if (room <= 0) return;
    const taken = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.#chunks.push(taken);
    this.#bytes += taken.length;
  }

  bytes(): Uint8Array {
    const out = new Uint8Array(this.#bytes);
    let at = 0;
    for (const chunk of this.#chunks) {
      out.set(chunk, at);
      at += chunk.length;
    }
    return out;
  }
}

async function drain(reader: ByteReader | null, kept: Kept): Promise<void> {
  if (reader === null) return;
  try {
    for (let chunk = await reader.read(); chunk !== null; chunk = await reader.read()) kept.push(chunk);
  } catch {
    // The pipe broke: what arrived is all there is.
  }
}

async function feed(child: Subprocess, input: Uint8Array): Promise<void> {
  try {
    await child.stdin?.write(input);
  } catch {
    // A hook need not read its input; one that exits first closes the pipe.
  }
  await child.stdin?.close().catch(() => {});
}

/** Runs one hook to its end, its timeout or `signal`; never throws. */
export async function runHookProcess(runtime: Runtime, spec: HookProcessSpec, signal: AbortSignal): Promise<HookProcessResult> {
  const input = encoder.encode(`${spec.input}\n`);
  if (input.length > MAX_HOOK_INPUT_BYTES) return { kind: "input_too_large" };
  if (signal.aborted) return { kind: "cancelled" };
  let child: Subprocess;
  try {
    child = runtime.spawn(spec.command, {
      args: spec.args,
      cwd: spec.cwd,
      env: shellEnvironment(runtime.envAll(), spec.secrets).env,
      stdio: { stdin: "pipe", stdout: "pipe", stderr: "pipe" },
      processGroup: true,
    });
  } catch {
    return { kind: "not_started" };
  }
  const stdout = new Kept(MAX_HOOK_OUTPUT_BYTES);
  const stderr = new Kept(MAX_HOOK_OUTPUT_BYTES);
  const deadline = new GroupDeadline(runtime, child, spec.timeoutMs, signal);
  const finished = Promise.all([child.exited, drain(child.stdout, stdout), drain(child.stderr, stderr), feed(child, input)])
    .then(([status]) => status, () => null);
  // A program that could not start may leave its pipes unsettled (Node's child_process under Deno): do not wait for them.
  const unstarted = child.exited.then((exit) => exit.code === null && exit.signal === null ? exit : new Promise<never>(() => {}), () => null);
  let status: ExitStatus | null;
  try {
    status = await Promise.race([finished, deadline.gaveUp, unstarted]);
  } finally {
    deadline.dispose();
  }
  if (deadline.ending !== null) return { kind: deadline.ending === "timeout" ? "timed_out" : "cancelled" };
  // Node reports a program that could not be started as an exit without code or signal.
  if (status === null || (status.code === null && status.signal === null)) return { kind: "not_started" };
  return { kind: "exited", status, stdout: stdout.bytes(), stderr: stderr.bytes(), overflowed: { stdout: stdout.overflowed, stderr: stderr.overflowed } };
}
