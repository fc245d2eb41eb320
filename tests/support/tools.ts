/**
 * Fixtures for the built-in tool tests: a "world" (a root holding a
 * workspace, an outside directory and an MC_HOME) on a real temporary
 * directory or on the in-memory filesystem, and a {@link ToolContext} over
 * it. Real worlds use the Node adapter on both runtimes, and the Deno adapter
 * too under Deno, loaded through a computed specifier as in
 * `runtime-contract.test.ts`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createMemoryRuntime } from "../../runtime/memory.ts";
import { MemoryFileSystem } from "../../runtime/memory-fs.ts";
import { createNodeRuntime } from "../../runtime/node-runtime.ts";
import type { FileSystem, Runtime } from "../../src/host/runtime.ts";
import { prepareCall } from "../../src/runner/tools/invoke.ts";
import { type AnyTool, isPrepared, type ToolContext, type ToolResult } from "../../src/runner/tools/tool.ts";

const isDeno = "Deno" in globalThis;
// A computed specifier keeps tsc (which builds the Node side) away from the Deno-only adapter.
const denoAdapter = "../../runtime/deno-runtime.ts";
const deno = isDeno ? await import(denoAdapter) as { createDenoRuntime(): Runtime } : null;

/** A root directory with `ws/` (the workspace), `outside/` and `home/` (MC_HOME) in it. */
export interface World {
  /** Canonical root. */
  readonly root: string;
  /** Canonical workspace (`root/ws`). */
  readonly workspace: string;
  /** Canonical MC_HOME (`root/home`). */
  readonly home: string;
  /** The runtime whose filesystem holds the world. */
  readonly runtime: Runtime;
  /** Creates a directory (and parents) at root-relative `path`. */
  dir(path: string): string;
  /** Writes a file at root-relative `path`, creating parents. */
  file(path: string, data: string | Uint8Array): string;
  /** Creates a symlink at root-relative `path` with the literal `target`. */
  link(target: string, path: string): string;
  /** Creates a hard link at root-relative `path` to root-relative `target`; null on the memory filesystem, which has none. */
  readonly hardlink: ((target: string, path: string) => string) | null;
  /** Creates a FIFO at root-relative `path`. */
  fifo(path: string): string;
  /** Sets the permission bits of the file at root-relative `path`. */
  chmod(path: string, mode: number): void;
  /** A context for tool calls in this world. */
  context(options?: { signal?: AbortSignal; secrets?: readonly string[]; home?: string }): ToolContext;
  /** The filesystem. */
  readonly fs: FileSystem;
}

function finish(world: Omit<World, "context" | "fs">): World {
  return {
    ...world,
    fs: world.runtime.fs,
    context: (options = {}) => ({
      runtime: world.runtime,
      workspace: world.workspace,
      home: options.home ?? world.home,
      signal: options.signal ?? new AbortController().signal,
      secrets: options.secrets ?? [],
    }),
  };
}

let scratch: string | null = null;
let counter = 0;

/** Removes every real world made by this process; call it from an `after` hook. */
export function removeWorlds(): void {
  if (scratch !== null) rmSync(scratch, { recursive: true, force: true });
  scratch = null;
}

/** A world on a real temporary directory, driven by `runtime`'s filesystem. */
export function diskWorld(runtime: Runtime): World {
  scratch ??= realpathSync(mkdtempSync(join(tmpdir(), "magi-tools-")));
  const root = join(scratch, `w${counter++}`);
  for (const part of ["ws", "outside", "home"]) mkdirSync(join(root, part), { recursive: true });
  const at = (path: string) => join(root, path);
  return finish({
    root,
    workspace: at("ws"),
    home: at("home"),
    runtime,
    dir: (path) => (mkdirSync(at(path), { recursive: true }), at(path)),
    file: (path, data) => (mkdirSync(dirname(at(path)), { recursive: true }), writeFileSync(at(path), data), at(path)),
    link: (target, path) => (mkdirSync(dirname(at(path)), { recursive: true }), symlinkSync(target, at(path)), at(path)),
    hardlink: (target, path) => (mkdirSync(dirname(at(path)), { recursive: true }), linkSync(at(target), at(path)), at(path)),
    fifo: (path) => {
      mkdirSync(dirname(at(path)), { recursive: true });
      assert.equal(spawnSync("mkfifo", [at(path)]).status, 0);
      return at(path);
    },
    chmod: (path, mode) => chmodSync(at(path), mode),
  });
}

/** A world on the in-memory filesystem (its runtime cannot spawn). */
export function memoryWorld(): World {
  const fs = new MemoryFileSystem();
  const root = `/m${counter++}`;
  const runtime = createMemoryRuntime({ fs, cwd: `${root}/ws` });
  const at = (path: string) => `${root}/${path}`;
  for (const part of ["ws", "outside", "home"]) void fs.mkdir(at(part), 0o755);
  return finish({
    root,
    workspace: at("ws"),
    home: at("home"),
    runtime,
    dir: (path) => (void fs.mkdir(at(path), 0o755), at(path)),
    file: (path, data) => (fs.writeFile(at(path), data), at(path)),
    link: (target, path) => (fs.symlink(target, at(path)), at(path)),
    hardlink: null,
    fifo: (path) => (fs.mkfifo(at(path)), at(path)),
    // The memory filesystem has no chmod; rewriting the file with a mode is the same to a reader.
    chmod: (path, mode) => fs.writeFile(at(path), fs.contents(at(path)) ?? new Uint8Array(0), mode),
  });
}

/** The world makers to run filesystem cases against: node, memory, and deno under Deno. */
export function worldMakers(): [string, () => World][] {
  const node = createNodeRuntime();
  const makers: [string, () => World][] = [["node", () => diskWorld(node)], ["memory", memoryWorld]];
  if (deno !== null) {
    const denoRuntime = deno.createDenoRuntime();
    makers.push(["deno", () => diskWorld(denoRuntime)]);
  }
  return makers;
}

/** The real runtimes to spawn with: node, and deno under Deno. */
export function spawningRuntimes(): [string, Runtime][] {
  const runtimes: [string, Runtime][] = [["node", createNodeRuntime()]];
  if (deno !== null) runtimes.push(["deno", deno.createDenoRuntime()]);
  return runtimes;
}

/**
 * Puts an empty executable in `fs` wherever the host's `PATH` finds each of
 * `names`, so a memory runtime resolves a bare command to the path the real
 * runtime then spawns (hooks and MCP servers run only what resolves).
 */
export function mirrorPrograms(fs: MemoryFileSystem, names: readonly string[]): MemoryFileSystem {
  for (const name of names) {
    const entry = (process.env.PATH ?? "").split(":").find((dir) => dir.startsWith("/") && existsSync(join(dir, name)));
    if (entry !== undefined) fs.writeFile(join(entry, name), "", 0o755);
  }
  return fs;
}

/** UTF-8 bytes of `text`. */
export function bytesOf(text: string): number {
  return new TextEncoder().encode(text).length;
}

/** Prepares and runs one call without asking anyone, as the turn loop does under an `allow` policy. */
export async function invokeTool(tool: AnyTool, args: unknown, context: ToolContext): Promise<ToolResult> {
  const prepared = await prepareCall(tool, args, context);
  return isPrepared(prepared) ? prepared.run() : prepared;
}
