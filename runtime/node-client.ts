/**
 * `magi-code/client` on Node: the web-stream client of `src/client/` plus
 * what only Node can do, spawning the child. It lives here, not in `src/`,
 * because `src/` never imports `node:*`; package.json maps the `node`
 * condition of `./client` to this file and every other runtime to
 * `src/client/mod.ts`.
 *
 * @module
 */

import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { AgentClient, type AgentClientOptions } from "../src/client/client.ts";
import { checkedRegistry } from "../src/client/client-tools.ts";
import { SpawnError } from "../src/client/errors.ts";

export * from "../src/client/mod.ts";

/**
 * This module's path. A CommonJS bundle (esbuild `--format=cjs`, the shape
 * VS Code's extension guide builds) empties `import.meta` but has
 * `__filename`, the bundle's own path.
 */
function modulePath(): string | null {
  const url: unknown = import.meta.url;
  if (typeof url === "string" && url.startsWith("file:")) return fileURLToPath(url);
  return typeof __filename === "string" ? __filename : null;
}

/**
 * Where the npm bin, `dist/magi-code.cjs`, is: next to this file (compiled,
 * it is `dist/runtime/node-client.js`; from source, `runtime/node-client.ts`
 * beside a built `dist/`), else in the `magi-code` package that Node's
 * resolution finds from here, which is how a bundle that inlined this
 * module still finds it when the package ships beside it.
 */
function findBin(): string {
  const here = modulePath();
  if (here === null) return join(process.cwd(), "node_modules", "magi-code", "dist", "magi-code.cjs");
  const beside = [join(dirname(here), "..", "magi-code.cjs"), join(dirname(here), "..", "dist", "magi-code.cjs")];
  const found = beside.find((path) => existsSync(path));
  if (found !== undefined) return found;
  try {
    return join(dirname(createRequire(here).resolve("magi-code/package.json")), "dist", "magi-code.cjs");
  } catch {
    return beside[0]!;
  }
}

/**
 * The npm bin, `dist/magi-code.cjs`, resolved from this module rather than
 * from PATH (see {@link spawnAgent} for a bundled extension, where it may be
 * missing: spawnAgent then fails with a `SpawnError` of reason `bin_missing`).
 */
export const binPath: string = findBin();

/** Options of {@link spawnAgent}. */
export interface SpawnAgentOptions {
  /** The workspace: the child's working directory (default: this process's). */
  readonly cwd?: string;
  /** The child's environment (default: this process's); set `MC_HOME` here to move the storage root. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * The executable and the arguments before `serve --stdio` (default: this
   * Node, or Electron run as Node, with {@link binPath}). Use it for a
   * compiled single binary (`{ command: "/path/to/magi-code", args: [] }`),
   * or in a bundle that does not ship the package (`{ command:
   * process.execPath, args: ["/path/to/magi-code.cjs"] }`).
   */
  readonly command?: string;
  readonly args?: readonly string[];
  /**
   * Where the child's stderr goes; it carries nothing while serving.
   * `"tail"` (default) reads it and keeps the last 4 KiB for the
   * `SpawnError` of a child that exits before `initialize` answers;
   * `"inherit"` shares this process's; `"ignore"` drops it.
   */
  readonly stderr?: "tail" | "ignore" | "inherit";
  /** Give the child its own process group, so a terminal Ctrl-C reaches only the parent (default false). */
  readonly detached?: boolean;
  /** Tools this client lends the agent (`client.tools`; see `AgentClientOptions.clientTools`). */
  readonly clientTools?: AgentClientOptions["clientTools"];
}

/** A client connected to a child it spawned. */
export interface SpawnedAgent extends AgentClient {
  /** The child process, for `kill()` as a last resort (`shutdown()` is the orderly way); null when it was never spawned (a missing bin or working directory). */
  readonly child: ChildProcess | null;
}

/** How much of the child's stderr is kept. */
const STDERR_TAIL_BYTES = 4_096;

/**
 * Spawns `magi-code serve --stdio` with pipes on stdin and stdout and returns
 * a client connected to it; `shutdown()` resolves with the exit code. Under
 * Electron (a VS Code extension host included) `process.execPath` is the
 * Electron binary, which runs our bin as plain Node with
 * `ELECTRON_RUN_AS_NODE=1`. A child that cannot be started (missing
 * command, no permission, bad `cwd`, missing bin) or that exits before
 * `initialize` answers fails every request with a `SpawnError` naming the
 * cause; nothing is thrown here but the `TypeError` of a `clientTools` registry the
 * child would refuse, before anything is spawned.
 */
export function spawnAgent(options: SpawnAgentOptions = {}): SpawnedAgent {
  const electron = process.versions.electron !== undefined;
  const own = options.command === undefined;
  const command = options.command ?? process.execPath;
  const args = options.args ?? (own ? [binPath] : []);
  const cwd = options.cwd ?? process.cwd();
  // A registry the child would refuse throws before a process exists to leak.
  if (options.clientTools !== undefined) checkedRegistry(options.clientTools);
  const refused = cwdProblem(cwd, command) ?? (own && !existsSync(binPath) ? binMissing() : null);
  if (refused !== null) return unstarted(refused);
  const env = { ...(options.env ?? process.env), ...(electron && own ? { ELECTRON_RUN_AS_NODE: "1" } : {}) };
  const stderr = options.stderr ?? "tail";
  let child: ChildProcess;
  try {
    child = spawn(command, [...args, "serve", "--stdio"], {
      cwd,
      env,
      stdio: ["pipe", "pipe", stderr === "tail" ? "pipe" : stderr],
      detached: options.detached ?? false,
    });
  } catch (error) {
    // Node throws some spawn failures (a cwd that became a file) instead of emitting them.
    return unstarted(spawnProblem(error, command, cwd));
  }
  let tail: Buffer = Buffer.alloc(0);
  child.stderr?.on("data", (chunk: Buffer) => {
    tail = Buffer.concat([tail, chunk]);
    if (tail.length > STDERR_TAIL_BYTES) tail = tail.subarray(tail.length - STDERR_TAIL_BYTES);
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    let failed: SpawnError | null = null;
    // Only an error before the process exists is a spawn failure; a later one (a failed kill) is not.
    child.once("error", (error) => void (child.pid === undefined && (failed = spawnProblem(error, command, cwd))));
    child.once("close", (code) => (failed !== null ? reject(failed) : resolve(code)));
  });
  // A dead child surfaces as the end of its output; without these the pipes' errors would be unhandled.
  child.stdin!.on("error", () => {});
  child.stdout!.on("error", () => {});
  const client = new AgentClient({
    readable: Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
    writable: Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
  }, { exited, stderrTail: () => tail.toString("utf8").trimEnd(), ...(options.clientTools === undefined ? {} : { clientTools: options.clientTools }) });
  return Object.assign(client, { child });
}

/** A client for a child that was never spawned: every request fails with `error`. */
function unstarted(error: SpawnError): SpawnedAgent {
  const readable = new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
  const writable = new WritableStream<Uint8Array>({ write: () => Promise.reject(error) });
  const client = new AgentClient({ readable, writable }, { exited: Promise.reject(error) });
  return Object.assign(client, { child: null });
}

/** The working directory's problem, if it has one: missing, not a directory, not searchable. */
function cwdProblem(cwd: string, command: string): SpawnError | null {
  const info = statSync(cwd, { throwIfNoEntry: false });
  const problem = info === undefined ? "does not exist" : !info.isDirectory() ? "is not a directory" : searchable(cwd) ? null : "is not searchable";
  return problem === null ? null : new SpawnError("cwd_invalid", `cannot start ${command}: the working directory ${cwd} ${problem}`);
}

function searchable(directory: string): boolean {
  try {
    accessSync(directory, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function binMissing(): SpawnError {
  return new SpawnError(
    "bin_missing",
    `the magi-code bin is not at ${binPath}: a bundler that inlines magi-code/client moves it away from its package; ` +
      'mark "magi-code" external (or ship node_modules/magi-code beside the bundle), or pass { command, args }',
  );
}

/** Names the cause of a failed spawn from its system error code and the working directory. */
function spawnProblem(error: unknown, command: string, cwd: string): SpawnError {
  const errno = typeof (error as { code?: unknown }).code === "string" ? (error as { code: string }).code : null;
  const badCwd = cwdProblem(cwd, command);
  if (badCwd !== null) return new SpawnError("cwd_invalid", badCwd.message, { errno });
  if (errno === "ENOENT") return new SpawnError("command_not_found", `cannot start ${command}: no such file (ENOENT)`, { errno });
  if (errno === "EACCES") return new SpawnError("permission_denied", `cannot start ${command}: permission denied (EACCES)`, { errno });
  return new SpawnError("spawn_failed", `cannot start ${command}: ${errno ?? String(error)}`, { errno });
}
