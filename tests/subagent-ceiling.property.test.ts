// The delegated ceiling as a property over settings policies × the
// delegating run's profile × the subagent profile × tool names: a child's
// effective policy for any tool is exactly the stricter of the parent's
// effective policy and the profile's, so never looser than either and a deny
// anywhere stays deny, a profile's `*` entry (every tool it does not name)
// included; a project file layered onto a profile never loosens any tool's
// entry, named or not; delegating again from a ceiling never widens it; and
// the configuration a child actually runs with carries that ceiling and no
// `task` tool (the depth bound, 1).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  ANY_TOOL,
  type ApprovalPolicy,
  delegatedPolicies,
  isAtLeastAsStrict,
  policySource,
  profileEntry,
  profilePolicy,
  type ProfilePolicies,
  resolvePolicy,
  stricter,
} from "../src/policy/tool-policies.ts";
import { tightenProfile } from "../src/config/profiles.ts";
import { childConfig } from "../src/agents/child-run.ts";
import { BUILTIN_PROFILES } from "../src/config/agent-settings.ts";
import type { RunConfig } from "../src/runner/run-config.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

// Built-ins, `task`, an MCP name, a settings-only name and the names a plain object would mishandle.
const TOOLS = ["read_file", "write_file", "edit_file", "shell", "grep", "skill", "task", "mcp__srv__echo", "custom", "__proto__", "constructor"];
const policy = fc.constantFrom<ApprovalPolicy>("allow", "ask", "deny");
const entriesOf = (names: readonly string[]) =>
  fc.dictionary(fc.constantFrom(...names), policy, { maxKeys: names.length }).map((entries) => Object.fromEntries(Object.entries(entries)));
const tools = entriesOf(TOOLS);
// A profile's map may also hold `*`, which settings' `tools` cannot.
const profileTools = entriesOf([...TOOLS, ANY_TOOL]);
const profile = (name: string) => profileTools.map((entries): ProfilePolicies => ({ name, tools: entries }));
const settings = tools;

/** A tool's effective policy under `settings` and `restrictions`, as `runOne` evaluates it (an MCP tool's base is its own, `ask` here). */
const effective = (tool: string, given: Record<string, ApprovalPolicy>, restrictions: ProfilePolicies) =>
  profilePolicy(resolvePolicy(tool, given), tool, restrictions).policy;

describe("the delegated ceiling", () => {
  it("a child's policy for every tool is the stricter of the parent's effective policy and the profile's: never looser, deny stays deny", () => {
    fc.assert(
      fc.property(settings, profile("plan"), profile("explore"), (given, parent, child) => {
        const ceiling = delegatedPolicies(parent, child);
        for (const tool of TOOLS) {
          const inParent = effective(tool, given, parent);
          const underProfile = effective(tool, given, child);
          const inChild = effective(tool, given, ceiling);
          assert.ok(isAtLeastAsStrict(inChild, inParent), `${tool}: ${inChild} is looser than the parent's ${inParent}`);
          assert.ok(isAtLeastAsStrict(inChild, underProfile), `${tool}: ${inChild} is looser than the profile's ${underProfile}`);
          assert.equal(inChild, stricter(inParent, underProfile), `${tool}: no stricter than the two make it`);
          if (inParent === "deny" || underProfile === "deny") assert.equal(inChild, "deny");
          // A refusal names a profile whose own entry (or its `*`) says so.
          const entry = profileEntry(ceiling.tools, tool);
          if (entry !== undefined) {
            const source = policySource(ceiling, tool) === "plan" ? parent : child;
            assert.equal(profileEntry(source.tools, tool), entry, `${tool}: named after ${source.name}`);
          }
        }
      }),
      { numRuns: fuzzRuns(500) },
    );
  });

  it("tightenProfile(): a project's entries, its * included, never loosen a tool's entry in the profile it is layered onto", () => {
    fc.assert(
      fc.property(profileTools, profileTools, (base, project) => {
        const built = { name: "plan", description: "d", mode: "primary" as const, body: "", files: [] };
        const layered = tightenProfile({ ...built, tools: base }, { ...built, tools: project }).tools;
        for (const tool of TOOLS) {
          const [was, by, now] = [base, project, layered].map((entries) => profileEntry(entries, tool) ?? "allow");
          assert.equal(now, stricter(was!, by!), tool);
        }
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it("delegating again from a ceiling never widens it, whatever the next profile allows", () => {
    fc.assert(
      fc.property(settings, profile("build"), profile("general"), profile("helper"), (given, parent, child, grandchild) => {
        const first = delegatedPolicies(parent, child);
        const second = delegatedPolicies(first, grandchild);
        for (const tool of TOOLS) assert.ok(isAtLeastAsStrict(effective(tool, given, second), effective(tool, given, first)), tool);
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it("childConfig() runs the child under the ceiling, offers it no task (depth bound 1), and keeps the settings' step bound as a cap", () => {
    fc.assert(
      fc.property(settings, profile("plan"), profileTools, fc.integer({ min: 1, max: 200 }), fc.option(fc.integer({ min: 1, max: 200 }), { nil: undefined }), (given, parent, entries, maxSteps, profileSteps) => {
        const explore = { ...BUILTIN_PROFILES.get("explore")!, tools: entries, ...profileSteps === undefined ? {} : { maxSteps: profileSteps } };
        const ceiling = delegatedPolicies(parent, { name: explore.name, tools: explore.tools });
        const parentConfig = { policies: given, profile: parent, model: "m", effort: "high", contextWindow: 1000, maxSteps: 7, delegation: { spec: { name: "task", description: "", parameters: {} }, forStep: () => () => Promise.reject(new Error("unused")) } } as unknown as RunConfig;
        const config = childConfig(parentConfig, { profile: explore, ceiling, identity: { profile: "explore", activityId: "t1", description: "d" }, instructions: "", context: { instructions: [] }, maxSteps });
        assert.equal(config.delegation, null);
        assert.equal(config.maxSteps, Math.min(maxSteps, profileSteps ?? Infinity));
        for (const tool of TOOLS) {
          const inChild = profilePolicy(resolvePolicy(tool, config.policies), tool, config.profile).policy;
          assert.ok(isAtLeastAsStrict(inChild, effective(tool, given, parent)), tool);
        }
      }),
      { numRuns: fuzzRuns(200) },
    );
  });
});
