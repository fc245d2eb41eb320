/**
 * `FileSystem.readDir` with an entry bound, on every adapter, and the
 * listing's use of it: `discovery_directory_entries` counts directory
 * iterations, so an inventory pass stops iterating one entry past the bound
 * instead of reading (and holding) a directory of any size first.
 */

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { nodeFileSystem } from "../runtime/node-runtime.ts";
import type { DirEntry, FileSystem } from "../src/host/runtime.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { listingFor, SESSIONS, writeSession } from "./support/listing.ts";

const isDeno = "Deno" in globalThis;
// A computed specifier keeps tsc (which builds the Node side) away from the Deno-only adapter.
const denoAdapter = "../runtime/deno-runtime.ts";
const deno = isDeno ? await import(denoAdapter) as { denoFileSystem: FileSystem } : null;

const scratch = mkdtempSync(join(tmpdir(), "magi-readdir-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

const memory = new MemoryFileSystem();
const adapters: [string, FileSystem, (names: string[]) => string][] = [
  ["node", nodeFileSystem, (names) => disk("node", names)],
  ["memory", memory, (names) => {
    void memory.mkdir("/bounded", 0o755);
    for (const name of names) memory.writeFile(`/bounded/${name}`, "");
    return "/bounded";
  }],
  ...(deno === null ? [] : [["deno", deno.denoFileSystem, (names: string[]) => disk("deno", names)] as [string, FileSystem, (names: string[]) => string]]),
];

function disk(name: string, names: string[]): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  for (const file of names) writeFileSync(join(dir, file), "");
  return dir;
}

for (const [name, fs, fixture] of adapters) {
  describe(`FileSystem contract: ${name} readDir() bound`, () => {
    it("lists everything without a bound, and at most maxEntries + 1 entries with one", async () => {
      const dir = fixture(Array.from({ length: 10 }, (_, n) => `f${n}`));
      assert.equal((await fs.readDir(dir)).length, 10);
      assert.equal((await fs.readDir(dir, 3)).length, 4, "one past the bound, so the caller sees the overflow");
      assert.equal((await fs.readDir(dir, 10)).length, 10);
      assert.equal((await fs.readDir(dir, 0)).length, 1);
    });
  });
}

/** A memory filesystem that records how many entries each directory listing handed back. */
class CountingStorage extends MemoryFileSystem {
  readonly returned: number[] = [];
  override async readDir(path: string, maxEntries?: number): Promise<DirEntry[]> {
    const entries = await super.readDir(path, maxEntries);
    this.returned.push(entries.length);
    return entries;
  }
}

describe("session.list inventory iteration", () => {
  it(`stops one entry past ${LIMITS.discovery_directory_entries} instead of reading the whole directory`, async () => {
    const fs = new CountingStorage();
    const runtime = createMemoryRuntime({ fs });
    writeSession(runtime, "only");
    for (let n = 0; n < 3 * LIMITS.discovery_directory_entries; n++) runtime.fs.writeFile(`${SESSIONS}/junk${n}.tmp`, "", 0o600);
    const outcome = await (await listingFor(runtime)).list({}, new AbortController().signal);
    assert.deepEqual(outcome, { ok: false, code: "discovery_limit" });
    assert.deepEqual(fs.returned, [LIMITS.discovery_directory_entries + 1]);
  });
});
