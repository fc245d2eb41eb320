/**
 * The Node adapter's stdin reader hands out one 4,096-byte batch per turn of
 * the event loop, so bytes stdout could not write at once are retried
 * between batches (docs/protocol.md, "Output"). Resuming at once would let
 * libuv read up to 32 batches in a row from inside its read callback, and a
 * client pipelining thousands of requests would get hundreds of KB of
 * answers queued per turn. Run in a Node child over a real pipe, under both
 * test runtimes.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, it } from "node:test";
import { guarded } from "./support/hang-guard.ts";
import { collect, nodeBinary, repoRoot } from "./support/processes.ts";

/** Reads stdin to EOF through the Node runtime, counting the reads that came in the same loop turn as the one before. */
const script = (adapter: string) => `
import { createNodeRuntime } from ${JSON.stringify(adapter)};
const runtime = createNodeRuntime();
let turn = 0;
let done = false;
const count = () => { turn++; if (!done) setImmediate(count); };
setImmediate(count);
let reads = 0, sameTurn = 0, last = -1;
for (let chunk = await runtime.stdin.read(); chunk !== null; chunk = await runtime.stdin.read()) {
  reads++;
  if (turn === last) sameTurn++;
  last = turn;
}
done = true;
process.stdout.write(JSON.stringify({ reads, sameTurn }));
`;

describe("Node runtime stdin", () => {
  it("stdin.read() hands out one batch per event-loop turn, however much input is waiting", async () => {
    const adapter = pathToFileURL(join(repoRoot(), "dist", "runtime", "node-runtime.js")).href;
    const child = spawn(nodeBinary(), ["--input-type=module", "-e", script(adapter)], { stdio: ["pipe", "pipe", "pipe"] });
    const [stdout, stderr] = [collect(child.stdout), collect(child.stderr)];
    // 1 MiB at once: far more than one batch is waiting at every read.
    child.stdin.end(Buffer.alloc(1024 * 1024, 0x61));
    const result = JSON.parse(await guarded(stdout, "the reader's report")) as { reads: number; sameTurn: number };
    assert.equal(await guarded(stderr, "stderr"), "");
    assert.ok(result.reads >= 256, `read in batches of at most 4,096 bytes (${result.reads} reads)`);
    assert.equal(result.sameTurn, 0, "no two reads in one turn");
  });
});
