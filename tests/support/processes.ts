/**
 * Spawning the real entry points over real pipes, for end-to-end tests and
 * benches. Works under both test runtimes: Node runs the compiled
 * `dist/runtime/node.js`, Deno runs `runtime/deno.ts` from source. On Linux
 * x64 the Node test run also drives the Node single executable
 * (`dist/magi-code-linux-x64`, scripts/build-sea.mjs) through every test that
 * loops over {@link launchers}.
 *
 * @module
 */

import { type ChildProcess, spawn, type SpawnOptions } from "node:child_process";
import { spawnSync } from "node:child_process";
import { createReadStream, createWriteStream, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DENO_LAUNCH_FLAGS } from "../../runtime/deno-launch.ts";
import { guarded } from "./hang-guard.ts";

/** The repository root, found from this file in `tests/support` or `dist/tests/support`. */
export function repoRoot(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(directory, "package.json"))) directory = dirname(directory);
  return directory;
}

const isDeno = "Deno" in globalThis;

/** The Deno binary that `npm ci` installed (the npm package's binary, not its Node wrapper). */
export function denoBinary(): string {
  if (isDeno) return process.execPath;
  const root = repoRoot();
  const candidates = [
    join(root, "node_modules", "deno", "deno"),
    join(root, "node_modules", "@deno", `${process.platform}-${process.arch === "arm64" ? "arm64" : "x64"}-glibc`, "deno"),
  ];
  const found = candidates.find((path) => existsSync(path));
  if (found === undefined) throw new Error("The deno binary from the deno npm package is missing; run npm ci");
  return found;
}

/** The Node binary: this process's under Node, `node` from PATH under Deno. */
export function nodeBinary(): string {
  return isDeno ? "node" : process.execPath;
}

/** One way to launch magi-code. */
export interface Launcher {
  /** `node`, `deno`, or `sea` (the Node single executable). */
  readonly name: "node" | "deno" | "sea";
  /** The command. */
  readonly command: string;
  /** Arguments before magi-code's own arguments. */
  readonly prefix: readonly string[];
}

/** The Node single executable scripts/build-sea.mjs writes (Linux x64 only). */
export function seaBinary(): string {
  return join(repoRoot(), "dist", "magi-code-linux-x64");
}

/** Whether this host builds and runs the Node single executable. */
export const seaHost = process.platform === "linux" && process.arch === "x64";

/**
 * The entry points: the npm bin (the bundle) under Node and `deno run` of the
 * Deno entry with the documented launch flags (runtime/deno-launch.ts); in the Node test run on Linux x64, also the Node single
 * executable once it is built (scripts/test.mjs builds it before the tests,
 * and tests/sea.test.ts fails when it is missing there). The Deno test run
 * leaves it to tests/sea.test.ts rather than run every end-to-end test against
 * the same binary twice.
 */
export function launchers(): Launcher[] {
  const root = repoRoot();
  const all: Launcher[] = [
    { name: "node", command: nodeBinary(), prefix: [join(root, "dist", "magi-code.mjs")] },
    { name: "deno", command: denoBinary(), prefix: ["run", "--allow-all", "--quiet", ...DENO_LAUNCH_FLAGS, join(root, "runtime", "deno.ts")] },
  ];
  if (!isDeno && seaHost && existsSync(seaBinary())) all.push({ name: "sea", command: seaBinary(), prefix: [] });
  return all;
}

/** A spawned magi-code with the client's ends of its stdio. */
export interface Spawned {
  /** The client's write end of magi-code's stdin. */
  readonly stdin: NodeJS.WritableStream & { destroy(): void; writableNeedDrain?: boolean };
  /** The client's read end of magi-code's stdout. */
  readonly stdout: NodeJS.ReadableStream & { destroy(): void };
  /** magi-code's stderr. */
  readonly stderr: NodeJS.ReadableStream;
  /** Resolves with magi-code's exit code (`null` after a signal). */
  readonly exited: Promise<number | null>;
  /** Whether magi-code has exited. */
  readonly done: () => boolean;
  /** The spawned process's id. */
  readonly pid: number | undefined;
  /** Sends `signal` to the spawned process (magi-code itself for {@link spawnDirect}); false if it is gone. */
  readonly kill: (signal: NodeJS.Signals) => boolean;
}

/** What {@link reap} needs of a child: its exit, whether it came, and a way to signal it. */
export type Reapable = Pick<Spawned, "exited" | "done" | "kill">;

/** Tracks `child`'s exit (call it right after spawning, before the exit can have been emitted). */
export function exitOf(child: ChildProcess): Reapable {
  let finished = false;
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => {
      finished = true;
      resolve(code);
    });
  });
  // process.kill, not child.kill: Deno's ChildProcess sends only the first signal it is asked to (a later
  // SIGKILL would be dropped) and then reports that signal as the exit, whatever the child did.
  const kill = (signal: NodeJS.Signals): boolean => {
    if (finished || child.pid === undefined) return false;
    try {
      return process.kill(child.pid, signal);
    } catch {
      return false;
    }
  };
  return { exited, done: () => finished, kill };
}

function track(child: ChildProcess, stdin: Spawned["stdin"], stdout: Spawned["stdout"]): Spawned {
  return { stdin, stdout, stderr: child.stderr!, pid: child.pid, ...exitOf(child) };
}

/**
 * How long {@link reap} lets a child go on before each signal: ample for one
 * that is merely slow to notice closed pipes under load (it then exits
 * unsignalled), short enough that a stuck one does not stall the test file.
 * A cleanup bound, never a claim about speed.
 */
const REAP_GRACE_MS = 3_000;

/** Whether `child` exits within `ms`; the timer is cleared either way, so it never holds a test's event loop. */
async function exitsWithin(child: Reapable, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([child.exited.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Cleanup, for whatever spawned `child`, once it closed (or gave up on) the
 * child's pipes: a child that exits within {@link REAP_GRACE_MS} is never
 * signalled; one that does not gets SIGTERM, then SIGKILL after another
 * grace. Resolves once it exited, so a failed case leaves no child behind to
 * hold the test file open; rejects (after the hang guard) only if even
 * SIGKILL did not end it.
 */
export async function reap(child: Reapable): Promise<void> {
  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    if (child.done() || await exitsWithin(child, REAP_GRACE_MS)) return;
    child.kill(signal);
  }
  await guarded(child.exited, "a child to exit after SIGKILL");
}

/** Spawns magi-code with `args` over socketpairs (Node's default child stdio). */
export function spawnDirect(launcher: Launcher, args: readonly string[], options: SpawnOptions = {}): Spawned {
  const child = spawn(launcher.command, [...launcher.prefix, ...args], { stdio: ["pipe", "pipe", "pipe"], ...options });
  return track(child, child.stdin!, child.stdout!);
}

/**
 * Spawns magi-code inside a shell pipeline (`cat | magi-code … | cat`), so its
 * stdin and stdout are anonymous pipes; the shell exits with magi-code's code.
 * The `cat`s buffer, so stall and close tests use {@link spawnFifo} instead.
 */
export function spawnPipeline(launcher: Launcher, args: readonly string[], options: SpawnOptions = {}): Spawned {
  const script = 'cat | "$@" | cat; exit "${PIPESTATUS[1]}"';
  const child = spawn("bash", ["-c", script, "magi-code", launcher.command, ...launcher.prefix, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
    ...options,
  });
  return track(child, child.stdin!, child.stdout!);
}

let fifoCounter = 0;

/**
 * Spawns magi-code with named FIFOs as stdin and stdout, as a shell
 * redirection (`exec magi-code … < in > out`) would: the client opens the
 * other ends itself, so closing or stalling them reaches magi-code directly.
 */
export function spawnFifo(launcher: Launcher, args: readonly string[], options: SpawnOptions = {}): Spawned {
  const directory = mkdtempSync(join(tmpdir(), "magi-fifo-"));
  const input = join(directory, `in-${fifoCounter}`);
  const output = join(directory, `out-${fifoCounter++}`);
  const made = spawnSync("mkfifo", ["-m", "600", input, output]);
  if (made.status !== 0) throw new Error("mkfifo failed");
  const child = spawn("bash", ["-c", 'exec "${@:2}" < "$0" > "$1"', input, output, launcher.command, ...launcher.prefix, ...args], {
    stdio: ["ignore", "ignore", "pipe"],
    ...options,
  });
  const stdin = createWriteStream(input);
  const stdout = createReadStream(output);
  child.once("exit", () => rmSync(directory, { recursive: true, force: true }));
  return track(child, stdin, stdout);
}

/** Collects a stream's bytes as text. */
export function collect(stream: NodeJS.ReadableStream | null): Promise<string> {
  return new Promise((resolve) => {
    if (stream === null) return resolve("");
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    stream.on("error", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}


/** What {@link runCommand} saw: stdout as lines and whole, stderr, the exit code. */
export interface CommandRun {
  readonly lines: string[];
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number | null;
}

/** Runs `magi-code <args>` through `launcher` in `where.cwd` with `where.env`, stdin at end; resolves once it exited. */
export async function runCommand(launcher: Launcher, where: { readonly cwd: string; readonly env: NodeJS.ProcessEnv }, args: readonly string[]): Promise<CommandRun> {
  const child = spawnDirect(launcher, args, { cwd: where.cwd, env: where.env });
  child.stdin.end();
  try {
    const [stdout, stderr, code] = await Promise.all([collect(child.stdout), collect(child.stderr), guarded(child.exited, args.join(" "))]);
    return { lines: stdout.trimEnd().split("\n"), stdout, stderr, code };
  } finally {
    await reap(child);
  }
}
