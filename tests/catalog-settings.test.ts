import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { enabledChoices, parseEnabledId, projectCatalogNarrows } from "../src/config/catalog-settings.ts";
import { mergeSettings, parseSettingsText } from "../src/config/settings.ts";
import { loadSettings } from "../src/config/settings-load.ts";
import { checkConfiguration } from "../src/admission/config-check.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const live = () => new AbortController().signal;
const catalog = (enabled: unknown) => JSON.stringify({ providers: { catalog: { enabled } } });

test("parseEnabledId() splits at the first slash: model ids keep theirs", () => {
  assert.deepEqual(parseEnabledId("openrouter/anthropic/claude-sonnet-4.5"), { provider: "openrouter", model: "anthropic/claude-sonnet-4.5" });
  assert.deepEqual(parseEnabledId("ollama/qwen2.5-coder:7b"), { provider: "ollama", model: "qwen2.5-coder:7b" });
  for (const bad of ["ollama", "/qwen", "ollama/", "bad name/x", `ollama/${"m".repeat(257)}`, "ollama/a\u0007b", "ollama/\uD800"]) {
    assert.equal(parseEnabledId(bad), null, bad);
  }
  assert.ok(parseEnabledId(`ollama/${"m".repeat(256)}`));
  assert.equal(parseEnabledId(`ollama/${"é".repeat(129)}`), null, "258 UTF-8 bytes");
});

test("providers.catalog.enabled: default is no choice; valid lists parse; every broken form is configuration_invalid", () => {
  assert.deepEqual(enabledChoices(undefined), []);
  assert.deepEqual(parseSettingsText(catalog(["openai/gpt-5", "ollama/qwen"])), {
    ok: true,
    settings: { providers: { catalog: { enabled: ["openai/gpt-5", "ollama/qwen"] } } },
  });
  assert.deepEqual(parseSettingsText(JSON.stringify({ providers: { catalog: {} } })), { ok: true, settings: { providers: { catalog: {} } } });
  const invalid = [
    catalog("openai/gpt-5"),
    catalog(["openai/gpt-5", "openai/gpt-5"]),
    catalog(["nomodel"]),
    catalog([1]),
    catalog(Array.from({ length: 2049 }, (_, i) => `ollama/m${i}`)),
    JSON.stringify({ providers: { catalog: { enabled: [], extra: true } } }),
    JSON.stringify({ providers: { catalog: [] } }),
  ];
  for (const text of invalid) assert.deepEqual(parseSettingsText(text), { ok: false, code: "configuration_invalid" }, text.slice(0, 80));
});

test("mergeSettings(): a project enabled list replaces the global one; endpoints keep merging", () => {
  const global = { providers: { endpoints: { ollama: { base_url: "http://a/v1" } }, catalog: { enabled: ["ollama/a", "ollama/b"] } } };
  const project = { providers: { catalog: { enabled: ["ollama/b"] } } };
  assert.deepEqual(mergeSettings(global, project).providers, { endpoints: { ollama: { base_url: "http://a/v1" } }, catalog: { enabled: ["ollama/b"] } });
  assert.deepEqual(mergeSettings(global, {}).providers?.catalog, { enabled: ["ollama/a", "ollama/b"] });
});

test("projectCatalogNarrows(): property: a project list narrows exactly when it is a subset of the global one", () => {
  const id = fc.constantFrom("ollama/a", "ollama/b", "openai/gpt-5", "anthropic/claude-opus-4-7");
  fc.assert(
    fc.property(fc.uniqueArray(id), fc.option(fc.uniqueArray(id), { nil: undefined }), (global, project) => {
      const expected = project === undefined || project.every((entry) => global.includes(entry));
      assert.equal(projectCatalogNarrows({ enabled: global }, project === undefined ? undefined : { enabled: project }), expected);
    }),
    { numRuns: fuzzRuns(200) },
  );
});

async function load(global: unknown, project: unknown) {
  const fs = new MemoryFileSystem();
  fs.writeFile("/h/settings.jsonc", JSON.stringify(global), 0o600);
  fs.writeFile("/w/.magi-code/settings.jsonc", JSON.stringify(project), 0o600);
  return await loadSettings(fs, { global: "/h/settings.jsonc", project: "/w/.magi-code/settings.jsonc" }, live());
}

test("loadSettings(): a project may narrow the enabled list, never widen it; unknown providers are refused", async () => {
  const global = { providers: { catalog: { enabled: ["ollama/a", "openai/gpt-5"] } } };
  assert.deepEqual(await load(global, { providers: { catalog: { enabled: ["ollama/a"] } } }), {
    ok: true,
    settings: { providers: { catalog: { enabled: ["ollama/a"] } } },
  });
  assert.deepEqual(await load(global, { providers: { catalog: { enabled: ["ollama/a", "ollama/z"] } } }), { ok: false, code: "configuration_invalid" });
  assert.deepEqual(await load({ providers: { catalog: { enabled: ["nowhere/x"] } } }, {}), { ok: false, code: "configuration_invalid" });
  const custom = { providers: { endpoints: { vllm: { api: "openai-chat", base_url: "http://127.0.0.1:8000/v1" } }, catalog: { enabled: ["vllm/Qwen/Qwen3"] } } };
  assert.equal((await load(custom, {})).ok, true);
});

test("magi-code config check names the enabled entry a project may not add and the one naming no provider", async () => {
  const fs = new MemoryFileSystem();
  const runtime = createMemoryRuntime({ fs, env: { HOME: "/home/user" }, cwd: "/work/project" });
  void fs.mkdir("/home/user/.magi-code", 0o700);
  void fs.mkdir("/work/project/.magi-code", 0o700);
  fs.writeFile("/home/user/.magi-code/settings.jsonc", JSON.stringify({ providers: { catalog: { enabled: ["ollama/a", "ghost/x"] } } }), 0o600);
  fs.writeFile("/work/project/.magi-code/settings.jsonc", JSON.stringify({ providers: { catalog: { enabled: ["ollama/a", "ollama/b"] } } }), 0o600);
  const report = await checkConfiguration(runtime);
  assert.deepEqual(report.problems.map((problem) => [problem.file, problem.path]), [
    ["/work/project/.magi-code/settings.jsonc", "$.providers.catalog.enabled[1]"],
  ]);
  fs.writeFile("/work/project/.magi-code/settings.jsonc", "{}", 0o600);
  const second = await checkConfiguration(runtime);
  assert.deepEqual(second.problems.map((problem) => [problem.file, problem.path]), [["/home/user/.magi-code/settings.jsonc", "$.providers.catalog.enabled[1]"]]);
});
