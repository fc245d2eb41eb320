import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { BUILTIN_PROVIDERS, DEFAULT_PROVIDER, resolveEndpoints, resolveSelection } from "../src/config/providers.ts";
import type { Settings } from "../src/config/settings.ts";
import { EFFORTS } from "../src/policy/efforts.ts";

/** Selection with no credentials file, which these tests do not exercise. */
const select = (settings: Settings, env: (name: string) => string | undefined) => resolveSelection(settings, env, new Map());

const noEnv = (_name: string): string | undefined => undefined;
const envOf = (vars: Record<string, string>) => (name: string): string | undefined =>
  Object.hasOwn(vars, name) ? vars[name] : undefined;

test("BUILTIN_PROVIDERS match the documented endpoints and default models", () => {
  assert.deepEqual(BUILTIN_PROVIDERS, {
    openai: { name: "openai", api: "openai-responses", baseUrl: "https://api.openai.com/v1", apiKeyEnv: "OPENAI_API_KEY", defaultModel: "gpt-5-mini" },
    anthropic: { name: "anthropic", api: "anthropic-messages", baseUrl: "https://api.anthropic.com/v1", apiKeyEnv: "ANTHROPIC_API_KEY", defaultModel: "claude-sonnet-4-5" },
    ollama: { name: "ollama", api: "openai-chat", baseUrl: "http://127.0.0.1:11434/v1", apiKeyEnv: null, defaultModel: "qwen2.5-coder:7b" },
  });
  assert.equal(DEFAULT_PROVIDER, "ollama");
  assert.ok(Object.isFrozen(BUILTIN_PROVIDERS) && Object.isFrozen(BUILTIN_PROVIDERS.openai));
});

test("select() makes a fresh config ready on ollama with its default model", () => {
  assert.deepEqual(select({}, noEnv), {
    ok: true,
    selection: { provider: "ollama", model: "qwen2.5-coder:7b", effort: "default", endpoint: BUILTIN_PROVIDERS.ollama },
  });
});

test("select() uses the configured model and effort", () => {
  for (const effort of EFFORTS) {
    const result = select({ model: { provider: "ollama", model: "llama3.1:8b", effort } }, noEnv);
    assert.deepEqual(result.ok && [result.selection.model, result.selection.effort], ["llama3.1:8b", effort]);
  }
});

test("select() returns provider_unavailable when the key variable is missing or blank", () => {
  for (const provider of ["openai", "anthropic"]) {
    for (const value of [undefined, "", "   ", "\t\n"]) {
      const env = (name: string) => (name === BUILTIN_PROVIDERS[provider as "openai"].apiKeyEnv ? value : undefined);
      assert.deepEqual(select({ model: { provider } }, env), { ok: false, code: "provider_unavailable" });
    }
  }
});

test("select() is ready when the key variable holds a value", () => {
  const result = select({ model: { provider: "anthropic" } }, envOf({ ANTHROPIC_API_KEY: "k" }));
  assert.deepEqual(result.ok && [result.selection.provider, result.selection.model], ["anthropic", "claude-sonnet-4-5"]);
});

test("select() rejects an unknown provider with configuration_invalid", () => {
  for (const provider of ["vllm", "OpenAI", "constructor", "__proto__"]) {
    assert.deepEqual(select({ model: { provider } }, noEnv), { ok: false, code: "configuration_invalid" });
  }
});

test("select() rejects a custom provider without a model with configuration_invalid", () => {
  const settings: Settings = {
    model: { provider: "vllm" },
    providers: { endpoints: { vllm: { api: "openai-chat", base_url: "http://127.0.0.1:8000/v1" } } },
  };
  assert.deepEqual(select(settings, noEnv), { ok: false, code: "configuration_invalid" });
});

test("select() makes a keyless custom provider with a model ready", () => {
  const vllm = { api: "openai-chat", base_url: "http://127.0.0.1:8000/v1" } as const;
  const result = select({ model: { provider: "vllm", model: "Qwen/Qwen2.5-Coder-32B-Instruct" }, providers: { endpoints: { vllm } } }, noEnv);
  assert.deepEqual(result, {
    ok: true,
    selection: {
      provider: "vllm",
      model: "Qwen/Qwen2.5-Coder-32B-Instruct",
      effort: "default",
      endpoint: { name: "vllm", api: "openai-chat", baseUrl: "http://127.0.0.1:8000/v1", apiKeyEnv: null, defaultModel: null },
    },
  });
});

test("select() checks the key variable a custom or overridden endpoint names", () => {
  const settings: Settings = {
    model: { provider: "openrouter", model: "anthropic/claude-sonnet-4.5" },
    providers: { endpoints: { openrouter: { api: "openai-chat", base_url: "https://openrouter.ai/api/v1", api_key_env: "OPENROUTER_API_KEY" } } },
  };
  assert.deepEqual(select(settings, noEnv), { ok: false, code: "provider_unavailable" });
  assert.equal(select(settings, envOf({ OPENROUTER_API_KEY: "or-key" })).ok, true);
  const work: Settings = { model: { provider: "openai" }, providers: { endpoints: { openai: { api_key_env: "WORK_KEY" } } } };
  assert.deepEqual(select(work, envOf({ OPENAI_API_KEY: "k" })), { ok: false, code: "provider_unavailable" });
  assert.equal(select(work, envOf({ WORK_KEY: "k" })).ok, true);
});

test("select() asks the environment only for the endpoint's key variable", () => {
  const asked: string[] = [];
  select({ model: { provider: "openai" } }, (name) => (asked.push(name), "secret-value"));
  select({}, (name) => (asked.push(name), "secret-value"));
  assert.deepEqual(asked, ["OPENAI_API_KEY"]);
});

test("select() never returns the key value", () => {
  const settingsArb = fc.constantFrom<Settings>(
    {},
    { model: { provider: "openai" } },
    { model: { provider: "anthropic", model: "claude-opus-4-1", effort: "high" } },
    { model: { provider: "openai" }, providers: { endpoints: { openai: { base_url: "http://proxy:8080/v1" } } } },
    { model: { provider: "lm", model: "m" }, providers: { endpoints: { lm: { api: "openai-chat", base_url: "http://h:1/v1", api_key_env: "LM_KEY" } } } },
  );
  const strings = (value: unknown): string[] =>
    typeof value === "string" ? [value] : value !== null && typeof value === "object" ? Object.values(value).flatMap(strings) : [];
  fc.assert(fc.property(settingsArb, fc.string({ minLength: 8 }), (settings, key) => {
    const baseline = JSON.stringify(select(settings, () => "placeholder"));
    fc.pre(/\S/.test(key) && !baseline.includes(key));
    const result = select(settings, () => key);
    assert.equal(result.ok, true);
    assert.ok(!JSON.stringify(result).includes(key));
    assert.ok(strings(result).every((s) => !s.includes(key)));
  }));
});

test("resolveEndpoints() overrides built-ins field by field and appends customs without default models", () => {
  const endpoints = resolveEndpoints({
    providers: {
      endpoints: {
        lmstudio: { api: "openai-chat", base_url: "http://127.0.0.1:1234/v1" },
        ollama: { base_url: "http://gpu-box:11434/v1" },
        anthropic: { api_key_env: "CLAUDE_KEY" },
      },
    },
  });
  assert.deepEqual([...endpoints.keys()], ["openai", "anthropic", "ollama", "lmstudio"]);
  assert.deepEqual(endpoints.get("openai"), BUILTIN_PROVIDERS.openai);
  assert.deepEqual(endpoints.get("ollama"), { ...BUILTIN_PROVIDERS.ollama, baseUrl: "http://gpu-box:11434/v1" });
  assert.deepEqual(endpoints.get("anthropic"), { ...BUILTIN_PROVIDERS.anthropic, apiKeyEnv: "CLAUDE_KEY" });
  assert.deepEqual(endpoints.get("lmstudio"), {
    name: "lmstudio", api: "openai-chat", baseUrl: "http://127.0.0.1:1234/v1", apiKeyEnv: null, defaultModel: null,
  });
});

test("resolveEndpoints() leaves out an incomplete custom endpoint from unvalidated input", () => {
  const endpoints = resolveEndpoints({ providers: { endpoints: { half: { api: "openai-chat" } } } });
  assert.equal(endpoints.has("half"), false);
  assert.deepEqual(select({ model: { provider: "half", model: "m" }, providers: { endpoints: { half: {} } } }, noEnv), {
    ok: false,
    code: "configuration_invalid",
  });
});

test("resolveEndpoints() does not mutate the built-in table", () => {
  resolveEndpoints({ providers: { endpoints: { openai: { base_url: "http://elsewhere/v1" } } } });
  assert.equal(BUILTIN_PROVIDERS.openai.baseUrl, "https://api.openai.com/v1");
});
