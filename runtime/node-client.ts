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
import { existsSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { AgentClient } from "../src/client/client.ts";

export * from "../src/client/mod.ts";

/**
 * The npm bin, `dist/magi-code.mjs`, resolved from this file rather than
 * from PATH: compiled, this file is `dist/runtime/node-client.js`; run from
 * source it is `runtime/node-client.ts` next to a built `dist/`.
 */
export const binPath: string = [new URL("../magi-code.mjs", import.meta.url), new URL("../dist/magi-code.mjs", import.meta.url)]
  .map((url) => fileURLToPath(url))
  .find((path) => existsSync(path)) ?? fileURLToPath(new URL("../magi-code.mjs", import.meta.url));

/** Options of {@link spawnAgent}. */
export interface SpawnAgentOptions {
  /** The workspace: the child's working directory (default: this process's). */
  readonly cwd?: string;
  /** The child's environment (default: this process's); set `MC_HOME` here to move the storage root. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * The executable and the arguments before `serve --stdio` (default: this
   * Node, or Electron run as Node, with {@link binPath}). Use it for a
   * compiled single binary (`{ command: "/path/to/magi-code", args: [] }`).
   */
  readonly command?: string;
  readonly args?: readonly string[];
  /** Where the child's stderr goes; it carries nothing while serving (default `"ignore"`). */
  readonly stderr?: "ignore" | "inherit";
  /** Give the child its own process group, so a terminal Ctrl-C reaches only the parent (default false). */
  readonly detached?: boolean;
}

/** A client connected to a child it spawned. */
export interface SpawnedAgent extends AgentClient {
  /** The child process, for `kill()` as a last resort (`shutdown()` is the orderly way). */
  readonly child: ChildProcess;
}

/**
 * Spawns `magi-code serve --stdio` with pipes on stdin and stdout and returns
 * a client connected to it; `shutdown()` resolves with the exit code. Under
 * Electron (a VS Code extension host included) `process.execPath` is the
 * Electron binary, which runs our bin as plain Node with
 * `ELECTRON_RUN_AS_NODE=1`.
 */
export function spawnAgent(options: SpawnAgentOptions = {}): SpawnedAgent {
  const electron = process.versions.electron !== undefined;
  const command = options.command ?? process.execPath;
  const args = options.args ?? (options.command === undefined ? [binPath] : []);
  const env = { ...(options.env ?? process.env), ...(electron && options.command === undefined ? { ELECTRON_RUN_AS_NODE: "1" } : {}) };
  const child = spawn(command, [...args, "serve", "--stdio"], {
    cwd: options.cwd ?? process.cwd(),
    env,
    stdio: ["pipe", "pipe", options.stderr ?? "ignore"],
    detached: options.detached ?? false,
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once("error", () => resolve(null));
    child.once("close", (code) => resolve(code));
  });
  // A dead child surfaces as the end of its output; without these the pipes' errors would be unhandled.
  child.stdin!.on("error", () => {});
  child.stdout!.on("error", () => {});
  const client = new AgentClient({
    readable: Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
    writable: Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
  }, { exited });
  return Object.assign(client, { child });
}
