import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { DEFAULT_POLICIES, isAtLeastAsStrict } from "../src/policy/tool-policies.ts";
import { projectToolsTrusted } from "../src/config/project-trust.ts";
import { parseSettingsText, type Settings } from "../src/config/settings.ts";
import { loadSettings } from "../src/config/settings-load.ts";
import { runStartup } from "../src/admission/startup.ts";

const INVALID = { ok: false, code: "configuration_invalid" } as const;
const json = (value: unknown) => JSON.stringify(value);
const live = () => new AbortController().signal;
const BUILTIN_DEFAULTS = DEFAULT_POLICIES;

describe("tools and agent settings: parsing", () => {
  it("accepts every policy for every tool name shape, and max_steps 1 to 200", () => {
    const settings = { tools: { ...BUILTIN_DEFAULTS, shell: "deny", mcp_server_tool: "ask", ["t".repeat(64)]: "allow" }, agent: { max_steps: 1 } };
    assert.deepEqual(parseSettingsText(json(settings)), { ok: true, settings });
    for (const max_steps of [1, 50, 200]) assert.equal(parseSettingsText(json({ agent: { max_steps } })).ok, true);
    assert.deepEqual(parseSettingsText('{ "agent": { "max_steps": 1e2 }, "tools": {} }'), { ok: true, settings: { agent: { max_steps: 100 }, tools: {} } });
  });

  const rejected: Array<[string, unknown]> = [
    ["an unknown policy", { tools: { shell: "never" } }],
    ["a differently cased policy", { tools: { shell: "Allow" } }],
    ["a non-string policy", { tools: { shell: true } }],
    ["a null policy", { tools: { shell: null } }],
    ["an upper-case tool name", { tools: { Shell: "deny" } }],
    ["a tool name starting with a digit", { tools: { "1tool": "deny" } }],
    ["a tool name with a dash", { tools: { "my-tool": "deny" } }],
    ["a 65-character tool name", { tools: { ["t".repeat(65)]: "deny" } }],
    ["an empty tool name", { tools: { "": "deny" } }],
    ["a tools array", { tools: ["shell"] }],
    ["max_steps 0", { agent: { max_steps: 0 } }],
    ["max_steps 201", { agent: { max_steps: 201 } }],
    ["a negative max_steps", { agent: { max_steps: -1 } }],
    ["a fractional max_steps", { agent: { max_steps: 1.5 } }],
    ["a string max_steps", { agent: { max_steps: "50" } }],
    ["an unknown agent key", { agent: { max_turns: 5 } }],
    ["an agent array", { agent: [] }],
  ];
  for (const [label, value] of rejected) {
    it(`rejects ${label} with configuration_invalid`, () => assert.deepEqual(parseSettingsText(json(value)), INVALID));
  }
  it("rejects a reserved tool name and a duplicate tool", () => {
    assert.deepEqual(parseSettingsText('{ "tools": { "constructor": "deny" } }'), INVALID);
    assert.deepEqual(parseSettingsText('{ "tools": { "shell": "deny", "shell": "allow" } }'), INVALID);
  });
});

describe("tools and agent settings: project trust", () => {
  const trusted = (global: Settings, project: Settings) => projectToolsTrusted(global, project);

  it("orders policies allow < ask < deny", () => {
    assert.ok(isAtLeastAsStrict("deny", "allow") && isAtLeastAsStrict("ask", "ask") && !isAtLeastAsStrict("allow", "ask"));
  });

  it("refuses a project loosening a default or a global policy", () => {
    for (const name of ["shell", "write_file", "edit_file", "mcp_anything"]) assert.equal(trusted({}, { tools: { [name]: "allow" } }), false, name);
    assert.equal(trusted({ tools: { shell: "deny" } }, { tools: { shell: "ask" } }), false);
    assert.equal(trusted({ tools: { read_file: "ask" } }, { tools: { read_file: "allow" } }), false);
  });

  it("accepts a project tightening or restating a policy", () => {
    assert.equal(trusted({}, { tools: { shell: "deny", read_file: "ask", grep: "deny", write_file: "ask", mcp_x: "ask" } }), true);
    assert.equal(trusted({ tools: { shell: "allow" } }, { tools: { shell: "allow" } }), true);
    assert.equal(trusted({ tools: { shell: "allow" } }, { tools: { shell: "ask" } }), true);
    assert.equal(trusted({ tools: { shell: "allow" } }, {}), true);
  });

  const load = async (global: unknown, project: unknown) => {
    const fs = new MemoryFileSystem();
    fs.writeFile("/g/settings.jsonc", json(global));
    fs.writeFile("/p/.magi-code/settings.jsonc", json(project));
    return await loadSettings(fs, { global: "/g/settings.jsonc", project: "/p/.magi-code/settings.jsonc" }, live());
  };

  it("loadSettings() refuses loosening and merges tightening per tool", async () => {
    assert.deepEqual(await load({}, { tools: { shell: "allow" } }), INVALID);
    assert.deepEqual(await load({ tools: { shell: "deny" } }, { tools: { shell: "ask" } }), INVALID);
    assert.deepEqual(await load({ tools: { shell: "allow", grep: "allow" } }, { tools: { shell: "deny" }, agent: { max_steps: 10 } }), {
      ok: true,
      settings: { tools: { shell: "deny", grep: "allow" }, agent: { max_steps: 10 } },
    });
    // The global file itself may loosen anything: it is the user's own.
    assert.deepEqual(await load({ tools: { shell: "allow" } }, {}), { ok: true, settings: { tools: { shell: "allow" } } });
  });

  it("a project file allowing shell fails startup with configuration_invalid", async () => {
    const runtime = createMemoryRuntime({ cwd: "/work/repo" });
    runtime.fs.writeFile("/work/repo/.magi-code/settings.jsonc", '{ "tools": { "shell": "allow" } }');
    const outcome = await runStartup(runtime, live());
    assert.equal(outcome.ok ? null : outcome.code, "configuration_invalid");
  });
});

