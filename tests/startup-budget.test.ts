/**
 * The start-up budget (docs/architecture.md, "Start-up budget"): the real
 * entry on each runtime has loaded no more of our modules, and on Deno no
 * more Node-compat modules, than `STARTUP_BUDGET` allows when it writes the
 * `initialize` answer, and none of the modules that must load on first use.
 * Deterministic: it counts modules, it times nothing.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { modulesAtInitialize, NEVER_AT_STARTUP, STARTUP_BUDGET } from "./support/startup-modules.ts";

describe("start-up budget", () => {
  for (const runtime of ["node", "deno"] as const) {
    it(`${runtime}: the initialize answer is written with at most ${STARTUP_BUDGET[runtime].own} own modules loaded`, async () => {
      const loaded = await modulesAtInitialize(runtime);
      const list = `\nloaded: ${loaded.own.join(" ")}\npackages: ${loaded.packages.join(" ")}`;
      // The recorder still understands the runtime's module log: the entry's own path is there.
      assert.ok(loaded.own.includes("src/cli.ts") && loaded.own.includes("src/server.ts"), `the module log was not understood${list}`);
      assert.deepEqual(loaded.own.filter((path) => NEVER_AT_STARTUP.some((pattern) => pattern.test(path))), [], `loaded before the answer${list}`);
      assert.ok(loaded.own.length <= STARTUP_BUDGET[runtime].own, `${loaded.own.length} own modules over the budget of ${STARTUP_BUDGET[runtime].own}${list}`);
      assert.ok(loaded.compat <= STARTUP_BUDGET[runtime].compat, `${loaded.compat} Node-compat modules over the budget of ${STARTUP_BUDGET[runtime].compat}`);
      assert.deepEqual(loaded.packages, STARTUP_BUDGET[runtime].packages, `npm packages loaded before the answer${list}`);
    });
  }
});
