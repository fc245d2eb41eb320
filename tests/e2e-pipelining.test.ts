/**
 * Pipelining over real pipes (docs/protocol.md, "Output"): the writer's bound
 * is on what the child holds, not on what the OS pipe holds, so a client that
 * writes thousands of requests in one chunk and reads its stdout promptly
 * gets every answer, while one that never reads still sees exit 1. Every
 * launcher, over socketpairs, a shell pipeline's anonymous pipes and named
 * FIFOs.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { guarded } from "./support/hang-guard.ts";
import { initLine, line } from "./support/harness.ts";
import { collect, launchers, type Spawned, spawnDirect, spawnFifo, spawnPipeline } from "./support/processes.ts";

const home = mkdtempSync(join(tmpdir(), "magi-pipelining-"));
after(() => rmSync(home, { recursive: true, force: true }));

const env = { ...process.env, MC_HOME: join(home, "mc") };
const init = initLine("i1");
const serve = ["serve", "--stdio"];
/**
 * Where the client reads promptly while its one big write is under way. Not
 * named FIFOs: the Deno test run's `node:fs` streams write to a FIFO
 * synchronously, so that client could not read at all until the child had
 * taken every request.
 */
const promptTransports = [["socketpair", spawnDirect], ["a shell pipeline (cat | magi-code | cat)", spawnPipeline]] as const;
/** Where the client never reads; a pipeline's input `cat` would keep the shell waiting for EOF. */
const stalledTransports = [["socketpair", spawnDirect], ["named FIFOs", spawnFifo]] as const;
const LF = 0x0a;

/** `count` status requests as one string, written with one write call. */
function statuses(count: number): string {
  return Array.from({ length: count }, (_, i) => line(`p${i}`, "status")).join("");
}

/**
 * A client that reads stdout as fast as it arrives: it only counts line
 * feeds per chunk and keeps the bytes, so it never falls behind while parsing.
 */
function promptReader(child: Spawned): { lines: () => number; until(count: number, what: string): Promise<void>; text: () => string } {
  const chunks: Buffer[] = [];
  let lines = 0;
  let ended = false;
  let wake: (() => void) | null = null;
  child.stdout.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    for (let at = chunk.indexOf(LF); at !== -1; at = chunk.indexOf(LF, at + 1)) lines++;
    wake?.();
  });
  child.stdout.on("end", () => {
    ended = true;
    wake?.();
  });
  return {
    lines: () => lines,
    async until(count, what) {
      while (lines < count) {
        assert.ok(!ended, `stdout ended after ${lines} of ${count} lines`);
        await guarded(new Promise<void>((resolve) => (wake = resolve)), what);
      }
    },
    text: () => Buffer.concat(chunks).toString("utf8"),
  };
}

for (const [transport, spawner] of promptTransports) {
  describe(`pipelining over ${transport}`, () => {
    for (const launcher of launchers()) {
      for (const count of [200, 4_000]) {
        it(`${launcher.name}: ${count} status requests in one write, read promptly, are all answered, then EOF exits 0`, async () => {
          const child = spawner(launcher, serve, { env });
          const stderr = collect(child.stderr);
          const reader = promptReader(child);
          try {
            child.stdin.write(init);
            await reader.until(1, "the initialize response");
            child.stdin.write(statuses(count));
            await reader.until(1 + count, `answers to ${count} pipelined requests`);
          } finally {
            // Also after a failure: EOF ends the child, and a pipeline's input `cat`, which would keep the run alive.
            child.stdin.end();
          }
          const [code, errors] = await guarded(Promise.all([child.exited, stderr]), "the child to exit");
          assert.equal(code, 0);
          assert.equal(errors, "");
          const frames = reader.text().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { id: string; seq: number; result?: { state?: string } });
          assert.deepEqual(frames.map((f) => f.id), ["i1", ...Array.from({ length: count }, (_, i) => `p${i}`)]);
          assert.deepEqual(frames.map((f) => f.seq), Array.from({ length: count + 1 }, (_, i) => i + 1));
          assert.ok(frames.slice(1).every((f) => f.result?.state === "idle"), "every status answered idle");
        });
      }
    }
  });
}

for (const [transport, spawner] of stalledTransports) {
  describe(`pipelining to a client that never reads, over ${transport}`, () => {
    for (const launcher of launchers()) {
      // When the child gives up (the queue bound or the output deadline) is the writer's business, proven
      // under a ManualClock in writer.schedule.test.ts; here only that it does. The wait is a hang guard.
      it(`${launcher.name}: the same 4,000 requests to a client that never reads end in exit 1, silently`, async () => {
        const child = spawner(launcher, serve, { env });
        child.stdout.pause();
        const stderr = collect(child.stderr);
        child.stdin.on("error", () => {});
        child.stdin.write(init + statuses(4_000));
        assert.equal(await guarded(child.exited, "the child to exit"), 1);
        assert.equal(await guarded(stderr, "stderr end"), "");
        child.stdout.destroy();
        child.stdin.destroy();
      });
    }
  });
}
