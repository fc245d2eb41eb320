/**
 * SIGKILL at points of a turn, on the real entry points over real pipes
 * (the Node bundle and the Deno entry): no acknowledged input is lost, the
 * reopened history shows nothing that was not produced (an interrupted turn
 * ends in the partial interruption notice), and the file reopens in a fresh
 * child, which takes over the dead child's leases and takes a new complete
 * turn. Kill points are protocol events, never sleeps (see
 * `support/kill-turns.ts`).
 */

import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { startFakeProvider } from "./support/fake-provider.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { crashAndRecover, KILL_POINTS, type KillPoint, RACING_DELTAS } from "./support/kill-turns.ts";
import { compactingWorkspace, crashDuringCompaction } from "./support/kill-compaction.ts";
import { launchers } from "./support/processes.ts";
import { workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-kill-"));
after(() => rmSync(root, { recursive: true, force: true }));

const CASES: readonly [KillPoint, string][] = [
  ["turn.start", "a SIGKILL right after turn.start is accepted (before input.persisted) leaves a file that reopens and takes a turn"],
  ["input.persisted", "a SIGKILL after input.persisted loses no acknowledged input"],
  ["message.delta", "a SIGKILL mid-stream shows at most the streamed prefix, then the interruption notice"],
  ["approval.requested", "a SIGKILL during a pending approval runs nothing and shows the interruption"],
  ["tool.running", "a SIGKILL while a shell command runs shows the started activity, then the interruption"],
  ["run.finished", "a SIGKILL just after run.finished reopens the complete turn exactly as reconciled"],
];

let runs = 0;

describe("SIGKILL at points of a turn", () => {
  for (const launcher of launchers()) {
    for (const [point, title] of CASES) {
      it(`${launcher.name}: ${title}`, async () => {
        const provider = await startFakeProvider();
        try {
          await crashAndRecover(launcher, point, provider, workspace(root, `${launcher.name}-${point}-${runs++}`, provider));
        } finally {
          await provider.close();
        }
      });
    }
  }
});

describe("SIGKILL during a compaction", () => {
  for (const launcher of launchers()) {
    for (const [point, title] of [
      ["compaction.started", "a SIGKILL while the summary request is out leaves no compaction: the reopened session replays the old conversation"],
      ["compaction.completed", "a SIGKILL right after the compaction completed keeps it: the reopened session replays the summary and what it kept"],
    ] as const) {
      it(`${launcher.name}: ${title}`, async () => {
        const provider = await startFakeProvider();
        try {
          await crashDuringCompaction(launcher, point, provider, compactingWorkspace(root, `${launcher.name}-${point}-${runs++}`, provider));
        } finally {
          await provider.close();
        }
      });
    }
  }

  it("a SIGKILL at any event of a compacting turn (either runtime) reopens with the old replay or the new one, never a mix", async () => {
    const launcher = fc.constantFrom(...launchers());
    await fc.assert(
      fc.asyncProperty(launcher, fc.integer({ min: 1, max: 10 }), async (chosen, at) => {
        const provider = await startFakeProvider();
        try {
          await crashDuringCompaction(chosen, at, provider, compactingWorkspace(root, `${chosen.name}-compaction-${runs++}`, provider));
        } finally {
          await provider.close();
        }
      }),
      { numRuns: fuzzRuns(6, 100) },
    );
  });
});

describe("SIGKILL at a chosen point of a turn", () => {
  it("a SIGKILL at any event of a turn (held or racing ahead, either runtime) loses no acknowledged input and shows nothing unproduced", async () => {
    // Each run spawns two children: the default stays small; FUZZ_RUNS scales it.
    const launcher = fc.constantFrom(...launchers());
    // A held kill point, or the k-th event of a free-running stream (the child may be ahead of the client).
    const point = fc.oneof(fc.constantFrom(...KILL_POINTS), fc.integer({ min: 1, max: RACING_DELTAS.length + 3 }));
    await fc.assert(
      fc.asyncProperty(launcher, point, async (chosen, at) => {
        const provider = await startFakeProvider();
        try {
          await crashAndRecover(chosen, at, provider, workspace(root, `${chosen.name}-property-${runs++}`, provider));
        } finally {
          await provider.close();
        }
      }),
      { numRuns: fuzzRuns(8, 200) },
    );
  });
});
