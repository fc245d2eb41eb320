/**
 * Test helpers around the in-memory runtime: build request lines, run a
 * server to completion and read its frames.
 *
 * @module
 */

import { createMemoryRuntime, type MemoryRuntime, type MemoryRuntimeOptions } from "../../runtime/memory.ts";
import { request } from "../../src/fuzz/mod.ts";
import type { McpServerSource } from "../../src/admission/startup.ts";
import { createServer } from "../../src/server.ts";
import { guarded } from "./hang-guard.ts";

/** One request line (JSON + LF). */
export function line(id: string, method: string, params: Record<string, unknown> = {}): string {
  return `${JSON.stringify(request(id, method, params))}\n`;
}

/** An `initialize` line requiring `capabilities`. */
export function initLine(id: string, capabilities: string[] = ["status", "shutdown"]): string {
  return line(id, "initialize", { required_capabilities: capabilities });
}

/** A parsed output frame. */
export type Frame = Record<string, unknown> & {
  type: string;
  seq: number;
  id?: string | null;
  result?: Record<string, unknown>;
  error?: { code: string };
};

/** A server run on a memory runtime. */
export interface Run {
  /** The runtime, for pushing input and inspecting output. */
  readonly runtime: MemoryRuntime;
  /** Resolves with the exit code once the server closes. */
  readonly exit: Promise<number>;
  /** Frames written so far. */
  frames(): Frame[];
  /** Waits until at least `count` frames were written (bounded by a hang guard). */
  waitFrames(count: number): Promise<Frame[]>;
}

/** Options of {@link startServer}: the memory runtime's, and which MCP servers startup starts. */
export interface ServerRunOptions extends MemoryRuntimeOptions {
  readonly mcpServers?: McpServerSource;
}

/** Starts a server on a fresh memory runtime. */
export function startServer(options: ServerRunOptions = {}): Run {
  const runtime = createMemoryRuntime(options);
  const exit = createServer(runtime, options.mcpServers === undefined ? {} : { mcpServers: options.mcpServers }).serve();
  const frames = () => runtime.output.frames() as Frame[];
  // Every pending wait is checked on each write, so concurrent waits never replace one another.
  const waiters = new Set<() => void>();
  const waitFrames = (count: number) => {
    if (frames().length >= count) return Promise.resolve(frames());
    let waiter!: () => void;
    const reached = new Promise<Frame[]>((resolve) => {
      waiter = () => {
        if (frames().length >= count) resolve(frames());
      };
    });
    waiters.add(waiter);
    runtime.output.onWrite = () => {
      for (const check of [...waiters]) check();
    };
    return guarded(reached, `${count} output frames`).finally(() => waiters.delete(waiter));
  };
  return { runtime, exit, frames, waitFrames };
}

/** The first frame of `run` answering request `id`, waiting for it as frames arrive (bounded by the hang guard of {@link Run.waitFrames}). */
export async function frameFor(run: Run, id: string): Promise<Frame> {
  for (;;) {
    const found = run.frames().find((frame) => frame.id === id);
    if (found) return found;
    await run.waitFrames(run.frames().length + 1);
  }
}

/**
 * Most tries {@link unlessBusy} makes: a worker whose cancelled work stops at
 * its next check frees within a few, and a child accepts 4,096 request ids.
 */
export const BUSY_TRIES = 1_000;

/**
 * The first answer of `attempt(0)`, `attempt(1)`, … that is not `busy`,
 * with a timer's turn of the loop between tries; fails naming `what` after
 * {@link BUSY_TRIES} busy answers, so a worker that never frees fails the
 * test instead of hanging it.
 */
export async function unlessBusy(attempt: (n: number) => Promise<Frame>, what: string): Promise<Frame> {
  for (let n = 0; n < BUSY_TRIES; n++) {
    const answer = await attempt(n);
    if (answer.error?.code !== "busy") return answer;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  throw new Error(`Still busy after ${BUSY_TRIES} tries: ${what}`);
}

/** Feeds `input` (each element one read), ends input, and resolves with the exit code and frames. */
export async function runToEnd(
  input: readonly (string | Uint8Array)[],
  options: MemoryRuntimeOptions = {},
): Promise<{ code: number; frames: Frame[]; run: Run }> {
  const run = startServer(options);
  for (const chunk of input) run.runtime.input.push(chunk);
  run.runtime.input.end();
  const code = await run.exit;
  return { code, frames: run.frames(), run };
}

/** Responses only, keyed by id (null ids collected under `"null"` in order). */
export function responses(frames: Frame[]): Frame[] {
  return frames.filter((frame) => frame.type === "response");
}
