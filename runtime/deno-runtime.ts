/**
 * The Deno implementation of the magi-code {@link Runtime} contract.
 *
 * stdin is read with `Deno.stdin.read` into one reused 4,096-byte buffer;
 * stdout is written with the asynchronous `Deno.stdout.write`, looping over
 * partial writes, so a stalled reader never blocks the event loop. The
 * filesystem adapter is `deno-fs.ts`, the launch check's stdio classifier
 * `deno-stdio.ts`.
 *
 * @module
 */

import type * as NodeCrypto from "node:crypto";
import {
  type ByteReader,
  type ByteWriter,
  READ_BATCH_BYTES,
  type Runtime,
  type Sha256,
  type SpawnOptions,
  type Subprocess,
} from "../src/host/runtime.ts";
import { sha256HexSync } from "../src/util/digest.ts";
import { denoFileSystem, normalizeError } from "./deno-fs.ts";
import { denoFetch } from "./deno-http.ts";
import { createStdioKinds } from "./deno-stdio.ts";
import { type IdleClock, withIdleTimeout } from "./idle-fetch.ts";

// Re-exported so callers keep one import path for the whole Deno adapter.
export { denoFileSystem, normalizeError };

function stdinReader(): ByteReader {
  const buffer = new Uint8Array(READ_BATCH_BYTES);
  let closed = false;
  return {
    read: async () => {
      if (closed) return null;
      try {
        const count = await Deno.stdin.read(buffer);
        return count === null || closed ? null : buffer.subarray(0, count);
      } catch (error) {
        if (closed) return null;
        throw normalizeError(error, "read");
      }
    },
    close: () => {
      closed = true;
    },
  };
}

/**
 * How long streamed `message.delta` text may be held to leave in fewer
 * frames (see {@link ByteWriter.batchMs}). Every `Deno.stdout.write` costs
 * ~20 µs of CPU however small (~10 µs on the main thread, the rest on the
 * blocking-pool thread that performs it); a provider streaming one event per
 * write would otherwise pay about one write per delta.
 */
const STDOUT_BATCH_MS = 1;

/**
 * No {@link ByteWriter.heldBytes}: `Deno.stdout.write` (a blocking write on a
 * pool thread) tells what the OS took only when it settles, so an unsettled
 * write counts as held. `writeSync` would block the loop on a full pipe;
 * `node:net`'s non-blocking Socket on fd 1 is exact but took 11-33 ms more to
 * `initialize` (loaded host). The writer's 2 MiB of slots absorb the lag, and
 * its writes of at most one output frame keep what the pipe took of an
 * unsettled write, still counted, within one slot.
 */
function writerOf(sink: { write(bytes: Uint8Array): Promise<number> }, batchMs = 0): ByteWriter {
  return {
    batchMs,
    write: async (bytes) => {
      try {
        let written = 0;
        while (written < bytes.length) written += await sink.write(bytes.subarray(written));
      } catch (error) {
        throw normalizeError(error, "write");
      }
    },
  };
}

function readerOf(stream: ReadableStream<Uint8Array>): ByteReader {
  const reader = stream.getReader();
  let pending: Uint8Array | null = null;
  return {
    read: async () => {
      if (pending === null) {
        const next = await reader.read().catch((error) => {
          throw normalizeError(error, "read");
        });
        if (next.done) return null;
        pending = next.value;
      }
      const batch: Uint8Array = pending.subarray(0, READ_BATCH_BYTES);
      pending = pending.length > READ_BATCH_BYTES ? pending.subarray(READ_BATCH_BYTES) : null;
      return batch;
    },
    close: () => void reader.cancel().catch(() => {}),
  };
}

function spawn(command: string, options: SpawnOptions): Subprocess {
  const child = new Deno.Command(command, {
    args: [...options.args],
    cwd: options.cwd,
    env: { ...options.env },
    clearEnv: true,
    stdin: options.stdio.stdin === "pipe" ? "piped" : "null",
    stdout: options.stdio.stdout === "pipe" ? "piped" : "null",
    stderr: options.stdio.stderr === "pipe" ? "piped" : "null",
    detached: options.processGroup,
  }).spawn();
  const stdinWriter = options.stdio.stdin === "pipe" ? child.stdin.getWriter() : null;
  return {
    pid: child.pid,
    stdin: stdinWriter === null ? null : {
      write: (bytes) => stdinWriter.write(bytes).catch((error) => Promise.reject(normalizeError(error, "write"))),
      close: () => stdinWriter.close().catch(() => {}),
    },
    stdout: options.stdio.stdout === "pipe" ? readerOf(child.stdout) : null,
    stderr: options.stdio.stderr === "pipe" ? readerOf(child.stderr) : null,
    kill: (signal) => {
      try {
        if (options.processGroup) Deno.kill(-child.pid, signal);
        else child.kill(signal);
      } catch {
        // Already gone: killing an exited process is not a failure.
      }
    },
    exited: child.status.then((status) => ({ code: status.signal === null ? status.code : null, signal: status.signal })),
  };
}

/** Largest pid a `pid_t` holds. */
const MAX_PID = 0x7fff_ffff;

/**
 * `Deno.kill(pid, 0)`: Deno 2.9 types `signo` as `Signal | number` and
 * documents 0 as the existence test; it issues a bare `kill(pid, 0)` (no
 * signal is delivered) and maps ESRCH to `NotFound`. Stating `/proc/<pid>`
 * would be Linux-only and would report every pid dead where `/proc` is not
 * mounted, which is the dangerous direction for leases.
 */
function isProcessAlive(pid: number): boolean {
  // 0 and negative pids address process groups, so they never name one process.
  if (!Number.isInteger(pid) || pid <= 0 || pid > MAX_PID) return false;
  try {
    Deno.kill(pid, 0);
    return true;
  } catch (error) {
    // PermissionDenied (EPERM) means it exists; NotCapable (no --allow-run) or an older Deno rejecting
    // signal 0 is inconclusive, and inconclusive must read as alive so a live lease is never taken over.
    return !(error instanceof Deno.errors.NotFound);
  }
}

function hostname(): string | null {
  try {
    const name = Deno.hostname();
    return name === "" ? null : name;
  } catch {
    return null; // No --allow-sys: leases then fall back to heartbeat age alone.
  }
}

// Loaded on first use, not imported: evaluating `node:crypto` adds ~4 ms to
// every Deno cold start, and only a hash of over SMALL_HASH_BYTES needs it.
let nodeCrypto: typeof NodeCrypto | null = null;

/**
 * Bytes a hash collects for {@link createSha256}'s JavaScript SHA-256
 * before the native one takes over: that one hashes ~200 MB/s here, the
 * native ~1.9 GB/s, so 16 KiB costs at most ~80 µs more.
 */
const SMALL_HASH_BYTES = 16_384;
const EMPTY = new Uint8Array(0);

/**
 * An incremental SHA-256. Up to {@link SMALL_HASH_BYTES} in all it copies
 * the updates and hashes them in JavaScript (`src/util/sha256.ts`) at `digest`;
 * past that it feeds Deno's native `node:crypto` hash (WebCrypto has no
 * incremental form). Why not native throughout: in Deno 2.9 every
 * `node:crypto` hash object outlived V8's young-generation collections and
 * stayed in the old generation until a full one, about 270 bytes each,
 * and a `session.discover` pass makes one per examined history and runs no
 * full collection (bench/README.md); larger histories keep the native
 * speed. As node:crypto does, it refuses any call after `digest`.
 */
export function createSha256(): Sha256 {
  let native: NodeCrypto.Hash | null = null;
  let small = EMPTY;
  let length = 0;
  let done = false;
  const update = (bytes: Uint8Array): void => {
    if (done) throw new Error("The hash was already digested");
    if (native !== null) {
      native.update(bytes);
      return;
    }
    const needed = length + bytes.length;
    if (needed <= SMALL_HASH_BYTES) {
      if (needed > small.length) {
        const grown = new Uint8Array(Math.min(SMALL_HASH_BYTES, Math.max(needed, small.length * 2, 256)));
        grown.set(small.subarray(0, length));
        small = grown;
      }
      small.set(bytes, length);
      length = needed;
      return;
    }
    nodeCrypto ??= process.getBuiltinModule("node:crypto");
    native = nodeCrypto.createHash("sha256").update(small.subarray(0, length)).update(bytes);
    small = EMPTY;
  };
  const digest = (): string => {
    if (done) throw new Error("The hash was already digested");
    done = true;
    return native !== null ? native.digest("hex") : sha256HexSync(small.subarray(0, length));
  };
  return { update, digest };
}

/** Deno's timers, shared by the runtime and its provider idle timeout. */
const timers: IdleClock = {
  setTimer: (ms, callback) => {
    const handle = setTimeout(callback, ms);
    return { dispose: () => clearTimeout(handle) };
  },
  monotonicNow: () => performance.now(),
};

/**
 * How this program starts again: a `deno compile` binary runs its embedded
 * entry from its own path; `deno run` runs the entry module again, with no
 * permission flag (the Code Mode host needs none) and the same working
 * directory, so it finds the same configuration. Not the launch flags of
 * `deno-launch.ts`: importing them here would add a module to every
 * child's start-up (tests/startup-budget.test.ts).
 */
function selfCommand(): { command: string; args: string[] } {
  const compiled = Deno.mainModule.includes("/deno-compile-");
  return { command: Deno.execPath(), args: compiled ? [] : ["run", "--quiet", "--no-prompt", Deno.mainModule] };
}

/** Creates the Deno runtime for this process. */
export function createDenoRuntime(): Runtime {
  return {
    name: "deno",
    args: [...Deno.args],
    stdin: stdinReader(),
    stdout: writerOf(Deno.stdout, STDOUT_BATCH_MS),
    stderr: writerOf(Deno.stderr),
    stdioKind: createStdioKinds(),
    fs: denoFileSystem,
    // A getter: Deno.execPath() needs read permission, which the sandbox host itself does not have.
    get self() {
      return selfCommand();
    },
    spawn,
    randomUUID: () => crypto.randomUUID(),
    createSha256,
    ...timers,
    wallNow: () => Date.now(),
    env: (name) => Deno.env.get(name),
    envAll: () => Deno.env.toObject(),
    cwd: () => Deno.cwd(),
    pid: Deno.pid,
    isProcessAlive,
    hostname,
    // Web fetch has no idle bound; Node's adapter has the same one (node-http.ts).
    fetch: withIdleTimeout(denoFetch, timers),
    // Loaded on first use: only `mcp login` listens, so a child never loads it.
    listenLoopback: async (handler) => (await import("./deno-loopback.ts")).denoListenLoopback(handler),
    platform: Deno.build.os,
    exit: (code) => Deno.exit(code),
  };
}
