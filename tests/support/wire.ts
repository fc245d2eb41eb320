/**
 * A memory-runtime server whose responses are parsed incrementally as each
 * write completes, so tests that drive thousands of frames can wait for the
 * next response without re-reading the whole transcript every time.
 *
 * @module
 */

import { createMemoryRuntime, type MemoryRuntime, type MemoryRuntimeOptions } from "../../runtime/memory.ts";
import { createServer } from "../../src/server.ts";
import type { Frame } from "./harness.ts";

/** A running server and what it has written so far. */
export interface TappedServer {
  /** The runtime, for pushing input and ending it. */
  readonly runtime: MemoryRuntime;
  /** Resolves with the exit code once the server closes. */
  readonly exit: Promise<number>;
  /** Every complete output line so far, parsed. */
  readonly frames: Frame[];
  /** Resolves once at least `count` frames were written, or once the server exited. */
  waitFrames(count: number): Promise<Frame[]>;
  /** Pushes `data` as one chunk (the memory input splits it into 4,096-byte reads). */
  push(data: Uint8Array | string): void;
}

/** Starts a server on a fresh memory runtime with a tap on its stdout. */
export function startTapped(options: MemoryRuntimeOptions = {}): TappedServer {
  const runtime = createMemoryRuntime(options);
  const frames: Frame[] = [];
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let buffer = "";
  let waiter: { count: number; resolve(frames: Frame[]): void } | null = null;
  const output = runtime.output;
  const write = output.write.bind(output);
  output.write = (bytes: Uint8Array) => {
    const copy = bytes.slice();
    return write(bytes).then(() => {
      buffer += decoder.decode(copy, { stream: true });
      let lf = buffer.indexOf("\n");
      while (lf !== -1) {
        frames.push(JSON.parse(buffer.slice(0, lf)) as Frame);
        buffer = buffer.slice(lf + 1);
        lf = buffer.indexOf("\n");
      }
      if (waiter !== null && frames.length >= waiter.count) {
        const { resolve } = waiter;
        waiter = null;
        resolve(frames);
      }
    });
  };
  const exit = createServer(runtime).serve();
  return {
    runtime,
    exit,
    frames,
    waitFrames(count) {
      if (frames.length >= count) return Promise.resolve(frames);
      // A server that exits early has written everything it ever will: let the caller's assertions see it.
      const enough = new Promise<Frame[]>((resolve) => (waiter = { count, resolve }));
      return Promise.race([enough, exit.then(() => frames)]);
    },
    push(data) {
      runtime.input.push(data);
    },
  };
}
