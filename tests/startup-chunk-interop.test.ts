/**
 * How the npm bundle's halves meet (scripts/bundle.mjs): the lazy ES-module
 * chunks, and the ES-module twin of the bin, take the start-up modules off
 * `dist/chunks/startup.cjs` through `require`, the one instance the bin
 * already loaded, never through the ES-module loader. That loader would run
 * its CommonJS translator on the file, which on Node 20 and 22 lexes all of
 * it for export names (about 35 ms of CPU for 240 KB, profiled), at the
 * first request that loads lazy code, or before the twin's `initialize`
 * answer. Deterministic: Node's `NODE_DEBUG=esm` names every file its
 * ES-module loader handles. Under both test runtimes (the child is Node).
 */

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { nodeBinary, repoRoot } from "./support/processes.ts";
import { WireClient } from "./support/wire-client.ts";

describe("the npm bundle's start-up chunk", () => {
  for (const bin of ["magi-code.cjs", "magi-code.mjs"]) {
    it(`dist/${bin}: session.create loads lazy chunks without startup.cjs going through the ES-module loader`, async () => {
      const base = mkdtempSync(join(tmpdir(), "magi-interop-"));
      try {
        mkdirSync(join(base, "work"));
        const env = { ...process.env, MC_HOME: join(base, "home"), NODE_DEBUG: "esm" };
        const client = new WireClient({ name: "node", command: nodeBinary(), prefix: [join(repoRoot(), "dist", bin)] }, join(base, "work"), env);
        try {
          await client.ok("initialize", { required_capabilities: ["session.create"] });
          // session.create loads the workers' chunk, an ES module that needs start-up modules.
          await client.ok("session.create");
          assert.equal((await client.shutdown()).code, 0);
        } finally {
          client.abandon();
        }
        const log = await client.stderr;
        assert.match(log, /ESM \d+: .*chunks\/workers-/, "the ES-module log names the lazy chunks it loaded");
        assert.deepEqual(log.split("\n").filter((line) => line.includes("startup.cjs")), [], "startup.cjs went through the ES-module loader");
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    });
  }
});
