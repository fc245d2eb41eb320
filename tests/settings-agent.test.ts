import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { DEFAULT_POLICIES, isAtLeastAsStrict } from "../src/policy/tool-policies.ts";
import { projectToolsTrusted } from "../src/config/project-trust.ts";
import { mergeSettings, parseSettingsText, type Settings } from "../src/config/settings.ts";
import { compactionPolicy } from "../src/config/compaction-settings.ts";
import { contextWindow } from "../src/config/compaction-settings.ts";
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

  it("accepts agent.compaction's enabled and threshold 0.5 to 0.95, and providers.endpoints.<name>.context_window 1,024 to 100,000,000", () => {
    for (const compaction of [{}, { enabled: false }, { threshold: 0.5 }, { threshold: 0.95, enabled: true }]) {
      assert.deepEqual(parseSettingsText(json({ agent: { compaction } })), { ok: true, settings: { agent: { compaction } } });
    }
    for (const context_window of [1_024, 8_192, 100_000_000]) {
      const endpoints = { ollama: { context_window }, local: { api: "openai-chat", base_url: "http://127.0.0.1:8000/v1", context_window } };
      assert.deepEqual(parseSettingsText(json({ providers: { endpoints } })), { ok: true, settings: { providers: { endpoints } } });
    }
  });

  const rejected: Array<[string, unknown]> = [
    ["a threshold under 0.5", { agent: { compaction: { threshold: 0.49 } } }],
    ["a threshold over 0.95", { agent: { compaction: { threshold: 0.96 } } }],
    ["a string threshold", { agent: { compaction: { threshold: "0.8" } } }],
    ["a non-boolean enabled", { agent: { compaction: { enabled: "yes" } } }],
    ["an unknown compaction key", { agent: { compaction: { keep_turns: 2 } } }],
    ["a context_window under 1,024", { providers: { endpoints: { ollama: { context_window: 1_023 } } } }],
    ["a fractional context_window", { providers: { endpoints: { ollama: { context_window: 4096.5 } } } }],
    ["a context_window over 100,000,000", { providers: { endpoints: { ollama: { context_window: 100_000_001 } } } }],
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

describe("agent.compaction and context windows: merging and resolution", () => {
  it("mergeSettings() merges agent.compaction field by field, the project winning, and keeps max_steps", () => {
    const global: Settings = { agent: { max_steps: 9, compaction: { enabled: false, threshold: 0.7 } } };
    assert.deepEqual(mergeSettings(global, { agent: { compaction: { threshold: 0.9 } } }).agent, { max_steps: 9, compaction: { enabled: false, threshold: 0.9 } });
    assert.deepEqual(mergeSettings(global, {}).agent, global.agent);
    assert.deepEqual(mergeSettings({ agent: { max_steps: 3 } }, { agent: { max_steps: 4 } }).agent, { max_steps: 4 });
  });

  it("compactionPolicy() defaults to enabled at 0.8 of the window", () => {
    assert.deepEqual(compactionPolicy(undefined), { enabled: true, threshold: 0.8 });
    assert.deepEqual(compactionPolicy({ threshold: 0.6 }), { enabled: true, threshold: 0.6 });
  });

  it("contextWindow(): the provider's list, else the endpoint setting, else the built-in default model's, else unknown", () => {
    const of = (provider: string, model: string, cached: number | null, configured: number | null) => contextWindow({ provider, model, cached, configured });
    assert.equal(of("anthropic", "claude-sonnet-4-5", 1_000_000, 50_000), 1_000_000);
    assert.equal(of("anthropic", "claude-sonnet-4-5", null, 50_000), 50_000);
    assert.equal(of("anthropic", "claude-sonnet-4-5", null, null), 200_000);
    assert.equal(of("openai", "gpt-5-mini", null, null), 400_000);
    assert.equal(of("ollama", "qwen2.5-coder:7b", null, null), 32_768);
    assert.equal(of("ollama", "qwen2.5-coder:7b", null, 8_192), 8_192);
    assert.equal(of("local", "qwen2.5-coder:7b", null, null), null);
    assert.equal(of("openai", "gpt-5", null, null), null);
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

