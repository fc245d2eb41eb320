/**
 * Drives the filesystem adapter of the runtime it runs on into a real short
 * write: the test starts it under a file-size limit (`ulimit -f`, with
 * SIGXFSZ ignored), so the kernel writes only part of a write that crosses
 * the limit and refuses the rest. Prints one line per operation:
 * `append <resolved|rejected> <bytes on disk>`, then the same for `create`.
 *
 *     node dist/tests/support/short-write.js <dir> <bytes>
 *     deno run -A tests/support/short-write.ts <dir> <bytes>
 *
 * @module
 */

import { nodeFileSystem } from "../../runtime/node-fs.ts";
import type { FileSystem } from "../../src/host/runtime.ts";

// A computed specifier keeps tsc (which builds the Node side) away from the Deno-only adapter.
const denoAdapter = "../../runtime/deno-fs.ts";
const fs: FileSystem = "Deno" in globalThis ? (await import(denoAdapter) as { denoFileSystem: FileSystem }).denoFileSystem : nodeFileSystem;
const args: string[] = "Deno" in globalThis
  ? (globalThis as unknown as { Deno: { args: string[] } }).Deno.args
  : (globalThis as unknown as { process: { argv: string[] } }).process.argv.slice(2);
const [dir, size] = args;
const bytes = new Uint8Array(Number(size)).fill(0x61);

async function outcome(name: string, path: string, write: () => Promise<void>): Promise<string> {
  let verdict = "resolved";
  try {
    await write();
  } catch {
    verdict = "rejected";
  }
  return `${name} ${verdict} ${(await fs.lstat(path)).size}\n`;
}

const appendPath = `${dir}/append.jsonl`;
let out = await outcome("append", appendPath, async () => {
  const handle = await fs.openAppend(appendPath, { create: true, mode: 0o600 });
  try {
    await handle.append(bytes);
  } finally {
    await handle.close();
  }
});
out += await outcome("create", `${dir}/create.jsonl`, () => fs.createExclusive(`${dir}/create.jsonl`, bytes, 0o600));
console.log(out.trimEnd());
