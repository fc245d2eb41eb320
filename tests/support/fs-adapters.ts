/**
 * The filesystem adapters the runtime contract runs its cases against (Node,
 * memory, and Deno under Deno), with a fixture builder per adapter: real
 * directories for the disk adapters, arranged files for the memory one.
 *
 * @module
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { MemoryFileSystem } from "../../runtime/memory-fs.ts";
import { nodeFileSystem } from "../../runtime/node-runtime.ts";
import { type FileSystem, isRuntimeError, type Runtime, type RuntimeErrorCode } from "../../src/host/runtime.ts";

const isDeno = "Deno" in globalThis;
// A computed specifier keeps tsc (which builds the Node side) away from the Deno-only adapter.
const denoAdapter = "../../runtime/deno-runtime.ts";
/** The Deno adapter, under Deno only. */
export const deno = isDeno ? await import(denoAdapter) as { denoFileSystem: FileSystem; createDenoRuntime(): Runtime } : null;

/** Asserts that `promise` rejects with a {@link RuntimeError} of `code`. */
export async function rejectsWith(promise: Promise<unknown>, code: RuntimeErrorCode): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isRuntimeError(error), `a RuntimeError, got ${String(error)}`);
    assert.equal(error.code, code);
    return true;
  });
}

/** A temporary directory removed after the file's tests. */
export const scratch = mkdtempSync(join(tmpdir(), "magi-runtime-"));
after(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;

/** A fixture builder: real directories for disk adapters, arranged files for the memory one. */
export interface Fixture {
  dir: string;
  file(name: string, data: string): string;
  link(target: string, name: string): string;
  fifo(name: string): string;
}

function diskFixture(): Fixture {
  const dir = join(scratch, `case-${counter++}`);
  mkdirSync(dir, { recursive: true });
  return {
    dir,
    file: (name, data) => (writeFileSync(join(dir, name), data), join(dir, name)),
    link: (target, name) => (symlinkSync(target, join(dir, name)), join(dir, name)),
    fifo: (name) => {
      assert.equal(spawnSync("mkfifo", [join(dir, name)]).status, 0);
      return join(dir, name);
    },
  };
}

function memoryFixture(fs: MemoryFileSystem): Fixture {
  const dir = `/case-${counter++}`;
  void fs.mkdir(dir, 0o755);
  return {
    dir,
    file: (name, data) => (fs.writeFile(`${dir}/${name}`, data), `${dir}/${name}`),
    link: (target, name) => (fs.symlink(target, `${dir}/${name}`), `${dir}/${name}`),
    fifo: (name) => (fs.mkfifo(`${dir}/${name}`), `${dir}/${name}`),
  };
}

const memory = new MemoryFileSystem();
/** Name, filesystem and fixture builder of every adapter under test. */
export const adapters: [string, FileSystem, () => Fixture][] = [
  ["node", nodeFileSystem, diskFixture],
  ["memory", memory, () => memoryFixture(memory)],
  ...(deno === null ? [] : [["deno", deno.denoFileSystem, diskFixture] as [string, FileSystem, () => Fixture]]),
];
