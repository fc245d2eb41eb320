/**
 * `agentInfo()`, the `agent.info` result of a startup snapshot: whatever
 * the profiles, skills, servers and hooks hold, the result matches its
 * schema, stays within its byte bound with every entry kept or counted in
 * `omitted`, cuts descriptions at 512 code points and redacts known
 * secrets; the subagents are the task tool's (mode `subagent` or `all`,
 * not disabled). The snapshot is data built here; the end-to-end test
 * (`e2e-agent-info.test.ts`) gets one from a real startup.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import * as v from "valibot";
import type { StartupSnapshot } from "../src/admission/startup.ts";
import type { AgentProfile } from "../src/config/agent-settings.ts";
import { agentInfo } from "../src/operations/info/agent-info.ts";
import { AGENT_INFO_DESCRIPTION_CHARS, AGENT_INFO_RESULT_BYTES, AgentInfoResultSchema } from "../src/protocol/agent-info.ts";

const SECRET = "sk-live-unit-0123456789abcdefSECRET";

const profile = (name: string, mode: AgentProfile["mode"], description = `${name} profile`): AgentProfile =>
  ({ name, description, mode, tools: {}, body: "", files: [] });

/** A snapshot holding only what `agentInfo()` reads. */
function snapshot(parts: {
  profiles?: AgentProfile[];
  disabled?: string[];
  skills?: { name: string; description: string; scope: "user" | "project" }[];
  skipped?: { name: string; state: "disabled" | "not_approved" }[];
  hooks?: { event: "PreToolUse" | "Stop"; scope: "user" | "project"; approved: boolean }[];
}): StartupSnapshot {
  const all = parts.profiles ?? [profile("build", "primary")];
  return {
    settings: parts.disabled === undefined ? {} : { agent: { disabled_subagents: parts.disabled } },
    profiles: { primary: all[0]!, all },
    ...(parts.skills === undefined ? {} : { skills: { skills: parts.skills.map((skill) => ({ ...skill, body: "", directory: "/d", file: "/d/SKILL.md" })), notes: [] } }),
    ...(parts.skipped === undefined ? {} : { skippedMcp: parts.skipped }),
    ...(parts.hooks === undefined ? {} : { hookStates: parts.hooks }),
  } as unknown as StartupSnapshot;
}

const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;

describe("agentInfo()", () => {
  it("lists the task tool's subagents (mode subagent or all, not disabled), the servers by name, and redacts known secrets", () => {
    const info = agentInfo(snapshot({
      profiles: [profile("build", "primary", `uses ${SECRET}`), profile("all-round", "all"), profile("helper", "subagent"), profile("off", "subagent"), profile("plan", "primary")],
      disabled: ["off"],
      skills: [{ name: "lint", description: `key ${SECRET}`, scope: "user" }],
      skipped: [{ name: "zeta", state: "disabled" }, { name: "alpha", state: "not_approved" }],
      hooks: [{ event: "Stop", scope: "project", approved: false }],
    }), [SECRET]);
    assert.deepEqual(info, {
      profile: { name: "build", description: "uses [redacted]" },
      skills: [{ name: "lint", description: "key [redacted]", scope: "user" }],
      mcp_servers: [{ name: "alpha", state: "not_approved", tools: 0 }, { name: "zeta", state: "disabled", tools: 0 }],
      hooks: [{ event: "Stop", scope: "project", approved: false }],
      subagents: [{ name: "all-round", description: "all-round profile" }, { name: "helper", description: "helper profile" }],
      omitted: { skills: 0, mcp_servers: 0, hooks: 0, subagents: 0 },
    });
  });

  it("cuts a description of 513 code points to 511 and an ellipsis; one of 512 is kept whole", () => {
    const long = "é".repeat(AGENT_INFO_DESCRIPTION_CHARS + 1);
    const whole = "😀".repeat(AGENT_INFO_DESCRIPTION_CHARS);
    const info = agentInfo(snapshot({ skills: [{ name: "a", description: long, scope: "user" }, { name: "b", description: whole, scope: "user" }] }), []);
    assert.equal(info.skills[0]!.description, `${"é".repeat(AGENT_INFO_DESCRIPTION_CHARS - 1)}…`);
    assert.equal(info.skills[1]!.description, whole);
  });

  it("128 skills whose descriptions escape to 3 KB each keep the first that fit in 49,152 bytes and count the rest; hooks and servers go first", () => {
    const skills = Array.from({ length: 128 }, (_, index) => ({ name: `s${index}`, description: "\u0001".repeat(600), scope: "user" as const }));
    const info = agentInfo(snapshot({ skills, skipped: [{ name: "a", state: "disabled" }], hooks: [{ event: "Stop", scope: "user", approved: true }] }), []);
    assert.ok(info.omitted.skills > 100 && info.skills.length > 0, JSON.stringify(info.omitted));
    assert.deepEqual(info.skills.map((skill) => skill.name), skills.slice(0, info.skills.length).map((skill) => skill.name));
    assert.deepEqual([info.mcp_servers.length, info.hooks.length], [1, 1]);
    assert.ok(bytes(info) <= AGENT_INFO_RESULT_BYTES && bytes(info) > AGENT_INFO_RESULT_BYTES - 3_100);
  });

  it("any snapshot's result matches its schema, fits 49,152 bytes, and keeps or counts every entry", () => {
    const text = fc.string({ unit: "binary", maxLength: 700 });
    const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,30}$/);
    fc.assert(fc.property(
      fc.array(fc.record({ name, description: text, scope: fc.constantFrom("user" as const, "project" as const) }), { maxLength: 128 }),
      fc.array(fc.record({ name, state: fc.constantFrom("disabled" as const, "not_approved" as const) }), { maxLength: 40 }),
      fc.array(fc.record({ event: fc.constantFrom("PreToolUse" as const, "Stop" as const), scope: fc.constantFrom("user" as const, "project" as const), approved: fc.boolean() }), { maxLength: 64 }),
      fc.array(fc.tuple(name, text), { maxLength: 60 }),
      (skills, skipped, hooks, subagents) => {
        const profiles = [profile("build", "primary"), ...subagents.map(([label, description]) => profile(`s-${label}`, "subagent", description))];
        const info = agentInfo(snapshot({ profiles, skills, skipped, hooks }), [SECRET]);
        assert.ok(v.is(AgentInfoResultSchema, info));
        assert.ok(bytes(info) <= AGENT_INFO_RESULT_BYTES, `${bytes(info)} bytes`);
        assert.equal(info.skills.length + info.omitted.skills, skills.length);
        assert.equal(info.mcp_servers.length + info.omitted.mcp_servers, skipped.length);
        assert.equal(info.hooks.length + info.omitted.hooks, hooks.length);
        assert.equal(info.subagents.length + info.omitted.subagents, subagents.length);
        for (const entry of [...info.skills, ...info.subagents]) assert.ok([...entry.description].length <= AGENT_INFO_DESCRIPTION_CHARS);
      },
    ), { numRuns: 60 });
  });
});
