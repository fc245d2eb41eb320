/**
 * The start-up budget (docs/architecture.md, "Start-up budget"): the real
 * entry on each runtime has loaded no more of our modules, and on Deno no
 * more Node-compat modules, than `STARTUP_BUDGET` allows when it writes the
 * `initialize` answer, and none of the modules that must load on first use;
 * nor does an idle child load more after it, up to its exit.
 * Deterministic: it counts modules, it times nothing. Also what the lazy
 * boundary does when its chunk is missing (docs/protocol.md, `initialize`).
 *
 * Neither the Node single executable nor a `deno compile` binary is counted:
 * the executable is one CommonJS script with every chunk inlined
 * (scripts/build-sea.mjs), so there is no module log to read, and each
 * inlined module stays behind esbuild's lazy `__esm` wrapper, which runs its
 * body only where the `import()` it replaced ran; so the boundaries this test
 * holds on the npm bundle are the same code paths in it. A `deno compile`
 * binary runs the same module graph as `runtime/deno.ts` with runtime flags
 * baked in (no `--log-level` to read), and building one needs a download.
 */

import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { nodeBinary, repoRoot } from "./support/processes.ts";
import { modulesAtInitialize, NEVER_AT_STARTUP, STARTUP_BUDGET, type StartupRecord } from "./support/startup-modules.ts";
import { WireClient } from "./support/wire-client.ts";

// One child per runtime serves both of its tests.
const records = new Map<string, Promise<StartupRecord>>();
const recordOf = (runtime: "node" | "deno") => records.get(runtime) ?? records.set(runtime, modulesAtInitialize(runtime)).get(runtime)!;

describe("start-up budget", () => {
  for (const runtime of ["node", "deno"] as const) {
    const files = runtime === "node" ? ` from at most ${STARTUP_BUDGET.node.files} bundle files` : "";
    it(`${runtime}: the initialize answer is written with at most ${STARTUP_BUDGET[runtime].own} own modules loaded${files}`, async () => {
      const loaded = await recordOf(runtime);
      const list = `\nloaded: ${loaded.own.join(" ")}\npackages: ${loaded.packages.join(" ")}`;
      // The recorder still understands the runtime's module log: the entry's own path is there.
      assert.ok(loaded.own.includes("src/cli.ts") && loaded.own.includes("src/server.ts"), `the module log was not understood${list}`);
      assert.deepEqual(loaded.own.filter((path) => NEVER_AT_STARTUP.some((pattern) => pattern.test(path))), [], `loaded before the answer${list}`);
      assert.ok(loaded.own.length <= STARTUP_BUDGET[runtime].own, `${loaded.own.length} own modules over the budget of ${STARTUP_BUDGET[runtime].own}${list}`);
      assert.ok(loaded.compat <= STARTUP_BUDGET[runtime].compat, `${loaded.compat} Node-compat modules over the budget of ${STARTUP_BUDGET[runtime].compat}`);
      assert.ok(loaded.files <= STARTUP_BUDGET[runtime].files, `${loaded.files} bundle files over the budget of ${STARTUP_BUDGET[runtime].files}`);
      assert.ok(loaded.read <= STARTUP_BUDGET[runtime].read, `${loaded.read} source files read over the budget of ${STARTUP_BUDGET[runtime].read}`);
      assert.deepEqual(loaded.packages, STARTUP_BUDGET[runtime].packages, `npm packages loaded before the answer${list}`);
    });

    it(`${runtime}: an idle child loads nothing after the initialize answer, through status, shutdown and exit`, async () => {
      const { untilExit, ...atAnswer } = await recordOf(runtime);
      const later = untilExit.own.filter((path) => !atAnswer.own.includes(path));
      assert.deepEqual(later, [], "loaded after the answer by a child that was asked nothing else");
      assert.deepEqual(untilExit.own.filter((path) => NEVER_AT_STARTUP.some((pattern) => pattern.test(path))), []);
      assert.deepEqual(untilExit.packages, atAnswer.packages);
      // Deno's compat modules come with the first timer, which the answer's own write arms (its output
      // deadline) as its bytes leave, so they may log just after them: held to the budget, not the answer.
      assert.ok(untilExit.compat <= STARTUP_BUDGET[runtime].compat, `${untilExit.compat} Node-compat modules by the exit`);
    });
  }

  it("node: dist/magi-code.mjs, the ES-module twin of the bin, answers and loads the lazy half as the bin does", async () => {
    const base = mkdtempSync(join(tmpdir(), "magi-twin-"));
    try {
      mkdirSync(join(base, "work"));
      const client = new WireClient({ name: "node", command: nodeBinary(), prefix: [join(repoRoot(), "dist", "magi-code.mjs")] }, join(base, "work"), { ...process.env, MC_HOME: join(base, "home") });
      try {
        const init = await client.ok("initialize", { required_capabilities: ["session.create"] });
        assert.equal((init.status as Record<string, unknown>).readiness, "ready");
        // session.create loads the workers' chunk, an ES module that reads start-up modules off startup.cjs.
        assert.match(String((await client.ok("session.create")).session_id), /^[0-9a-f-]{36}$/);
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
      }
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it("node: without the workers' chunk (a damaged install) the child fails as a startup does: startup_failed for ready requests and in status; shutdown works", async () => {
    const base = mkdtempSync(join(tmpdir(), "magi-damaged-"));
    try {
      const dist = join(repoRoot(), "dist");
      cpSync(join(dist, "magi-code.cjs"), join(base, "magi-code.cjs"));
      cpSync(join(dist, "chunks"), join(base, "chunks"), { recursive: true });
      for (const name of readdirSync(join(base, "chunks")).filter((file) => file.startsWith("workers-"))) rmSync(join(base, "chunks", name));
      mkdirSync(join(base, "work"));
      const client = new WireClient({ name: "node", command: nodeBinary(), prefix: [join(base, "magi-code.cjs")] }, join(base, "work"), { ...process.env, MC_HOME: join(base, "home") });
      try {
        const init = await client.ok("initialize", { required_capabilities: [] });
        // Both wait for the chunk, which cannot load; a later request meets the failed phase in the gate.
        const [create, list] = await Promise.all([client.call("session.create"), client.call("session.list")]);
        const later = await client.call("session.create");
        assert.deepEqual([create.error?.code, list.error?.code, later.error?.code], ["startup_failed", "startup_failed", "startup_failed"]);
        // As a failed startup: a non-negotiated method still meets the failed phase first.
        assert.equal((await client.call("session.discover", {})).error?.code, "startup_failed");
        const status = await client.ok("status");
        assert.deepEqual(
          [status.state, status.readiness, status.provider, status.selection, status.context_id],
          ["failed", "startup_failed", null, null, (init.status as Record<string, unknown>).context_id],
        );
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
      }
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
