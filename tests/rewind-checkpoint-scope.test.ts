/**
 * Which runs take file checkpoints for `session.rewind`: a subagent's never
 * do. Its history is never listed nor opened, so nothing could ever rewind
 * it and restore them, and each task call would open a fresh per-session
 * bound of its own, leaving a primary session's checkpoints unbounded.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { childConfig } from "../src/agents/child-run.ts";
import { BUILTIN_PROFILES } from "../src/config/agent-settings.ts";
import type { RunConfig } from "../src/runner/run-config.ts";

describe("checkpoints and subagents", () => {
  it("childConfig() drops the delegating run's checkpoint taker: a subagent's writes take none", () => {
    const explore = BUILTIN_PROFILES.get("explore")!;
    const parent = {
      policies: {},
      profile: { name: "build", tools: {} },
      model: "m",
      effort: "default",
      contextWindow: 1000,
      maxSteps: 7,
      delegation: null,
      checkpoints: () => () => Promise.resolve(),
    } as unknown as RunConfig;
    const config = childConfig(parent, { profile: explore, ceiling: { name: "explore", tools: {} }, identity: { profile: "explore", activityId: "t1", description: "d" }, instructions: "", context: { instructions: [] }, maxSteps: 3 });
    assert.equal(config.checkpoints, undefined);
    assert.equal("checkpoints" in config, false);
  });
});
