/**
 * File restore never follows a link out of the workspace: a file the
 * dropped turns wrote whose path now leads elsewhere (the file or a
 * directory above it swapped for a symlink) is `changed` in the preview
 * as in the rewind, and what the link points to is never written.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { Checkpoints } from "../src/rewind/checkpoints.ts";
import { previewFiles, restoreFiles } from "../src/rewind/file-restore.ts";

const SESSION = "01890000-0000-7000-8000-000000000000";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A workspace whose `sub/a.txt` a dropped turn rewrote from `old` to `new`, then `swap` moved it behind a link to `/outside`. */
async function swapped(swap: (fs: MemoryFileSystem) => void) {
  const fs = new MemoryFileSystem();
  const runtime = createMemoryRuntime({ fs, cwd: "/ws" });
  await fs.mkdir("/ws/sub", 0o755);
  await fs.mkdir("/outside/sub", 0o755);
  fs.writeFile("/ws/sub/a.txt", "new", 0o644);
  fs.writeFile("/outside/a.txt", "new", 0o644);
  fs.writeFile("/outside/sub/a.txt", "new", 0o644);
  const store = new Checkpoints(runtime, "/home/user/.magi-code", "/ws");
  await store.taker(SESSION, "t1")("/ws/sub/a.txt", encoder.encode("old"), encoder.encode("new"));
  swap(fs);
  const checkpoints = await store.of(SESSION, new Set(["t1"]));
  assert.ok(checkpoints !== "evicted" && checkpoints.length === 1);
  return { runtime, store, checkpoints, fs };
}

const swaps: Record<string, (fs: MemoryFileSystem) => void> = {
  "the file": (fs) => {
    void fs.unlink("/ws/sub/a.txt");
    fs.symlink("/outside/a.txt", "/ws/sub/a.txt");
  },
  "a directory above it": (fs) => {
    void fs.unlink("/ws/sub/a.txt");
    void fs.rename("/ws/sub", "/gone");
    fs.symlink("/outside/sub", "/ws/sub");
  },
};

describe("file restore and symlinks", () => {
  for (const [what, swap] of Object.entries(swaps)) {
    it(`previewFiles() and restoreFiles() report a file whose path leads out through ${what} as changed and write nothing there`, async () => {
      const { runtime, store, checkpoints } = await swapped(swap);
      assert.deepEqual((await previewFiles(runtime, store, checkpoints)).map((file) => file.change), [{ path: "sub/a.txt", created: false, state: "changed" }]);
      assert.deepEqual(await restoreFiles(runtime, store, checkpoints), [{ path: "sub/a.txt", created: false, state: "changed" }]);
      assert.equal(decoder.decode(await runtime.fs.readFile("/outside/a.txt", 1024)), "new");
      assert.equal(decoder.decode(await runtime.fs.readFile("/outside/sub/a.txt", 1024)), "new");
    });
  }
});
