/**
 * Real MCP servers for tests, started as subprocesses with `node <bin>` so
 * no network or `npx` is needed: `@modelcontextprotocol/server-everything`
 * (stdio, and Streamable HTTP on a loopback port), `server-filesystem`
 * (stdio), and our fault server (`mcp-fault-server.mjs`). Also the process
 * table check the no-process-left tests make.
 *
 * @module
 */

import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { delimiter, join } from "node:path";
import type { McpServerDefinition } from "../../src/mcp/definition.ts";
import { guarded } from "./hang-guard.ts";
import { exitOf, reap, repoRoot } from "./processes.ts";

/** The absolute path of the Node binary: this process's under Node, the first `node` on PATH under Deno. */
export function nodeCommand(): string {
  if (!("Deno" in globalThis)) return process.execPath;
  for (const directory of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(directory, "node");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  throw new Error("node is not on PATH");
}

const modules = () => join(repoRoot(), "node_modules", "@modelcontextprotocol");

/** The fault server's script. */
export const FAULT_SERVER = (): string => join(repoRoot(), "tests", "support", "mcp-fault-server.mjs");

/** Timeouts generous enough for a cold `node` start on a loaded machine; no test relies on their values. */
const TIMEOUTS = { startupTimeoutMs: 30_000, toolTimeoutMs: 30_000 };

/** A stdio definition running `node <script> ...args` in `cwd`. */
export function nodeServer(name: string, script: string, args: readonly string[], cwd: string, overrides: Partial<McpServerDefinition> = {}): McpServerDefinition {
  return { transport: "stdio", name, command: nodeCommand(), args: [script, ...args], env: {}, cwd, toolPolicies: {}, ...TIMEOUTS, ...overrides } as McpServerDefinition;
}

/** `server-everything` over stdio. */
export function everythingStdio(name: string, cwd: string, overrides: Partial<McpServerDefinition> = {}): McpServerDefinition {
  return nodeServer(name, join(modules(), "server-everything", "dist", "index.js"), ["stdio"], cwd, overrides);
}

/** `server-filesystem` over stdio, allowed `directory` only. */
export function filesystemStdio(name: string, directory: string, overrides: Partial<McpServerDefinition> = {}): McpServerDefinition {
  return nodeServer(name, join(modules(), "server-filesystem", "dist", "index.js"), [directory], directory, overrides);
}

/** The fault server in `mode`, recording what it receives to `record` when given. */
export function faultServer(name: string, mode: string, cwd: string, record?: string, overrides: Partial<McpServerDefinition> = {}): McpServerDefinition {
  return nodeServer(name, FAULT_SERVER(), record === undefined ? [mode] : [mode, record], cwd, overrides);
}

/** An HTTP definition for `url` with no headers or token and the test timeouts. */
export function httpServer(name: string, url: string, overrides: Partial<Extract<McpServerDefinition, { transport: "http" }>> = {}): McpServerDefinition {
  return { transport: "http", name, url, headers: {}, bearerToken: null, toolPolicies: {}, ...TIMEOUTS, ...overrides };
}

/**
 * Record files of fault servers under `directory`: a fresh path per server,
 * the lines one recorded so far, and the pid it recorded first.
 */
export function recordFiles(directory: string): { next(): string; lines(path: string): string[]; pid(path: string): number } {
  let count = 0;
  const lines = (path: string): string[] => (existsSync(path) ? readFileSync(path, "utf8").trim().split("\n") : []);
  return {
    next: () => join(directory, `record-${count++}.txt`),
    lines,
    pid: (path) => Number(lines(path).find((line) => line.startsWith("pid "))!.slice(4)),
  };
}

/** A free loopback TCP port (closed again before it is returned). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** `server-everything` serving Streamable HTTP on a loopback port, and what it logged. */
export interface HttpEverything {
  /** Its MCP endpoint. */
  readonly url: string;
  /** Everything it wrote to stdout so far. */
  log(): string;
  /** Stops it. */
  stop(): Promise<void>;
}

/** Starts `server-everything` in Streamable HTTP mode and waits until it listens. */
export async function startEverythingHttp(): Promise<HttpEverything> {
  const port = await freePort();
  const child: ChildProcess = spawn(nodeCommand(), [join(modules(), "server-everything", "dist", "index.js"), "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
  const exit = exitOf(child);
  try {
    await guarded((async () => {
      while (!err.includes("listening on port")) {
        if (exit.done()) throw new Error(`server-everything exited: ${err}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })(), "server-everything to listen");
  } catch (error) {
    // A server that never listened would otherwise serve on, holding the test file open.
    await reap(exit);
    throw error;
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    log: () => out,
    stop: async () => {
      child.kill("SIGKILL");
      await exit.exited;
    },
  };
}

/**
 * Whether `pid` is a running process, from the process table: `/proc/<pid>`
 * exists and is not a zombie (an exited process its parent has not reaped
 * runs nothing). Linux only, which is where these tests run.
 */
export function isRunning(pid: number): boolean {
  const stat = join("/proc", String(pid), "stat");
  if (!existsSync(stat)) return false;
  try {
    // The state follows the command name, which is in parentheses and may itself contain them.
    const text = readFileSync(stat, "utf8");
    return text.slice(text.lastIndexOf(")") + 2, text.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** The pids whose process group is `group`, from the process table. */
export function groupMembers(group: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const text = readFileSync(join("/proc", entry, "stat"), "utf8");
      const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
      if (fields[0] !== "Z" && Number(fields[2]) === group) members.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return members;
}
