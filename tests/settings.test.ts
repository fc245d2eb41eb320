import { test } from "node:test";
import assert from "node:assert/strict";
import { constants, promises as fsp, type Stats } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { RuntimeError, type FileInfo, type FileKind, type FileSystem } from "../src/host/runtime.ts";
import { BUILTIN_PROVIDER_NAMES, mergeSettings, parseSettingsText, PROVIDER_APIS } from "../src/config/settings.ts";
import { loadSettings } from "../src/config/settings-load.ts";
import type { EndpointSettings, Settings } from "../src/config/settings.ts";
import { EFFORTS } from "../src/policy/efforts.ts";

const INVALID = { ok: false, code: "configuration_invalid" } as const;
const utf8 = (text: string) => new TextEncoder().encode(text).length;
const json = (value: unknown) => JSON.stringify(value);

// ---- Valid-settings arbitraries
const RESERVED = ["__proto__", "prototype", "constructor"];
const providerName = fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/).filter((n) => !RESERVED.includes(n));
const customName = providerName.filter((n) => !(BUILTIN_PROVIDER_NAMES as readonly string[]).includes(n));
// deno-lint-ignore no-control-regex -- matching controls is the point
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
const modelId = fc.string({ unit: "binary", minLength: 1, maxLength: 100 })
  .filter((s) => utf8(s) <= 256 && !CONTROL.test(s) && !/[\uD800-\uDFFF]/u.test(s));
const baseUrl = fc.oneof(
  fc.constantFrom("http://127.0.0.1:11434/v1", "https://openrouter.ai/api/v1", "http://[::1]:8000/v1"),
  fc.webUrl({ withQueryParameters: false, withFragments: false }),
);
const envName = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/);
// Settings come from JSON, so generated objects keep the ordinary prototype.
const optional = <T extends object>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }) =>
  fc.record(model, { requiredKeys: [], noNullPrototype: true });
const api = fc.constantFrom(...PROVIDER_APIS);
const override = optional({ api, base_url: baseUrl, api_key_env: envName });
const custom = fc.record({ api, base_url: baseUrl, api_key_env: envName }, { requiredKeys: ["api", "base_url"], noNullPrototype: true });
const endpoints = fc.tuple(
  optional({ openai: override, anthropic: override, ollama: override }),
  fc.dictionary(customName, custom, { maxKeys: 3, noNullPrototype: true }),
).map(([builtins, customs]): Record<string, EndpointSettings> => ({ ...builtins, ...customs }));
const toolName = fc.stringMatching(/^[a-z][a-z0-9_]{0,63}$/).filter((n) => !RESERVED.includes(n));
const tools = fc.dictionary(toolName, fc.constantFrom("allow", "ask", "deny" as const), { maxKeys: 4, noNullPrototype: true });
const settingsArb: fc.Arbitrary<Settings> = optional({
  $schema: fc.string(),
  model: optional({ provider: providerName, model: modelId, effort: fc.constantFrom(...EFFORTS) }),
  providers: optional({ endpoints }),
  tools,
  agent: optional({ max_steps: fc.integer({ min: 1, max: 200 }) }),
});

// ---- parseSettingsText()
test("parseSettingsText() treats empty, whitespace-only and comment-only files as {}", () => {
  for (const text of ["", "  \n\t\r\n", "// nothing yet\n/* still nothing */\n"]) assert.deepEqual(parseSettingsText(text), { ok: true, settings: {} });
});

test("parseSettingsText() accepts JSONC comments and trailing commas", () => {
  const text = `{
    // the default selection
    "$schema": "https://unpkg.com/magi-code/docs/settings.schema.json",
    "model": { "provider": "vllm", "model": "Qwen/Qwen2.5-Coder-32B-Instruct", "effort": "high", },
    /* local server */
    "providers": { "endpoints": { "vllm": { "api": "openai-chat", "base_url": "http://127.0.0.1:8000/v1", }, }, },
  }`;
  const result = parseSettingsText(text);
  assert.equal(result.ok, true);
  assert.deepEqual(result.ok && result.settings.providers, {
    endpoints: { vllm: { api: "openai-chat", base_url: "http://127.0.0.1:8000/v1" } },
  });
});

test("parseSettingsText() round-trips every valid settings value", () => {
  fc.assert(fc.property(settingsArb, (settings) => {
    assert.deepEqual(parseSettingsText(json(settings)), { ok: true, settings });
  }));
});

test("parseSettingsText() accepts boundary-sized names, ids and variables", () => {
  const settings = {
    model: { provider: "p".repeat(64), model: `${"é".repeat(127)}ab` },
    providers: { endpoints: { ["n".repeat(64)]: { api: "openai-chat", base_url: "http://h/", api_key_env: `K${"_".repeat(127)}` } } },
  };
  assert.equal(utf8(settings.model.model), 256);
  assert.deepEqual(parseSettingsText(json(settings)), { ok: true, settings });
});

test("parseSettingsText() accepts a partial override of a built-in endpoint", () => {
  for (const entry of [{}, { base_url: "http://proxy.internal:8080/v1" }, { api_key_env: "WORK_OPENAI_KEY" }]) {
    assert.equal(parseSettingsText(json({ providers: { endpoints: { openai: entry } } })).ok, true);
  }
  assert.equal(parseSettingsText(json({ providers: { endpoints: { lm: { api: "openai-chat", base_url: "http://h:1" } } } })).ok, true);
});

const model = (m: unknown) => json({ model: m });
const endpoint = (name: string, entry: unknown) => json({ providers: { endpoints: { [name]: entry } } });
const url = (u: unknown) => endpoint("openai", { base_url: u });
const key = (k: unknown) => endpoint("openai", { api_key_env: k });
const rejected: Array<[string, string]> = [
  ["malformed JSONC", `{"model": {"provider": "openai"}`],
  ["a single-quoted string", `{'model': {}}`],
  ["an array top level", "[]"],
  ["a string top level", `"settings"`],
  ["a null top level", "null"],
  ["a number top level", "42"],
  ["an unknown key", `{"modle": {}}`],
  ["an unknown key in model", model({ provider: "openai", temperature: 1 })],
  ["an unknown key in providers", json({ providers: { models: {} } })],
  ["an unknown key in an endpoint", endpoint("openai", { headers: {} })],
  ["a duplicate key", `{"model": {"model": "a", "model": "b"}}`],
  ["a __proto__ key", `{"__proto__": {"model": {}}}`],
  ["a constructor endpoint name", endpoint("constructor", { api: "openai-chat", base_url: "http://h" })],
  ["deep nesting", `{"$schema": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`],
  ["a non-string $schema", json({ $schema: 1 })],
  ["a non-object model", model("gpt-5")],
  ["an empty provider name", model({ provider: "" })],
  ["a 65-byte provider name", model({ provider: "p".repeat(65) })],
  ["a provider name with a slash", model({ provider: "a/b" })],
  ["a provider name with a space", model({ provider: "my provider" })],
  ["a non-ASCII provider name", model({ provider: "prövider" })],
  ["an invalid endpoint name", endpoint("bad name", { api: "openai-chat", base_url: "http://h" })],
  ["an empty model id", model({ model: "" })],
  ["a 257-byte model id", model({ model: `${"é".repeat(128)}a` })],
  ["a model id with a C0 control", model({ model: "gpt\n5" })],
  ["a model id with DEL", model({ model: "gpt\u007F" })],
  ["a model id with a C1 control", model({ model: "gpt\u0085" })],
  ["a model id with a lone surrogate", model({ model: "gpt\uD800" })],
  ["an unknown effort", model({ effort: "ultra" })],
  ["a differently cased effort", model({ effort: "High" })],
  ["an unknown api", endpoint("openai", { api: "gemini" })],
  ["a relative base_url", url("/v1")],
  ["a non-http base_url", url("ftp://h/v1")],
  ["an unparseable base_url", url("http://exa mple.com")],
  ["a base_url with credentials", url("https://user:pass@h/v1")],
  ["a base_url with a username only", url("https://user@h/v1")],
  ["a base_url with a query", url("https://h/v1?key=1")],
  ["a base_url with a fragment", url("https://h/v1#x")],
  ["an over-long base_url", url(`https://h/${"a".repeat(2048)}`)],
  ["an api_key_env starting with a digit", key("1KEY")],
  ["an api_key_env with a dash", key("MY-KEY")],
  ["an empty api_key_env", key("")],
  ["a 129-character api_key_env", key(`K${"_".repeat(128)}`)],
  ["a custom endpoint without api", endpoint("vllm", { base_url: "http://h:8000/v1" })],
  ["a custom endpoint without base_url", endpoint("vllm", { api: "openai-chat" })],
  ["a custom endpoint with only a key", endpoint("OpenAI", { api_key_env: "OPENAI_API_KEY" })],
];
for (const [label, text] of rejected) {
  test(`parseSettingsText() rejects ${label} with configuration_invalid`, () => {
    assert.deepEqual(parseSettingsText(text), INVALID);
  });
}

// ---- mergeSettings()
test("mergeSettings() is the identity when either side is {}", () => {
  fc.assert(fc.property(settingsArb, (settings) => {
    assert.deepEqual(mergeSettings({}, settings), settings);
    assert.deepEqual(mergeSettings(settings, {}), settings);
  }));
});

test("mergeSettings() lets the project value win for every field", () => {
  const modelFields = ["provider", "model", "effort"] as const;
  const endpointFields = ["api", "base_url", "api_key_env"] as const;
  fc.assert(fc.property(settingsArb, settingsArb, (global, project) => {
    const merged = mergeSettings(global, project);
    assert.equal(merged.$schema, project.$schema ?? global.$schema);
    for (const f of modelFields) assert.equal(merged.model?.[f], project.model?.[f] ?? global.model?.[f]);
    assert.equal(merged.agent?.max_steps, project.agent?.max_steps ?? global.agent?.max_steps);
    assert.deepEqual(merged.tools, global.tools === undefined && project.tools === undefined ? undefined : { ...global.tools, ...project.tools });
    const g = global.providers?.endpoints ?? {};
    const p = project.providers?.endpoints ?? {};
    const names = new Set([...Object.keys(g), ...Object.keys(p)]);
    assert.deepEqual(new Set(Object.keys(merged.providers?.endpoints ?? {})), names);
    for (const name of names) {
      for (const f of endpointFields) {
        assert.equal(merged.providers?.endpoints?.[name]?.[f], p[name]?.[f] ?? g[name]?.[f]);
      }
    }
    // Two valid files always merge into a valid file.
    assert.equal(parseSettingsText(json(merged)).ok, true);
  }));
});

test("mergeSettings() is associative", () => {
  fc.assert(fc.property(settingsArb, settingsArb, settingsArb, (a, b, c) => {
    assert.deepEqual(mergeSettings(mergeSettings(a, b), c), mergeSettings(a, mergeSettings(b, c)));
  }));
});

test("mergeSettings() merges one endpoint field by field", () => {
  const merged = mergeSettings(
    { model: { provider: "openai", effort: "low" }, providers: { endpoints: { openai: { base_url: "http://a/v1", api_key_env: "A" } } } },
    { model: { model: "gpt-5" }, providers: { endpoints: { openai: { api_key_env: "B" } } } },
  );
  assert.deepEqual(merged, {
    model: { provider: "openai", effort: "low", model: "gpt-5" },
    providers: { endpoints: { openai: { base_url: "http://a/v1", api_key_env: "B" } } },
  });
});

// ---- loadSettings() over a real directory
const kindOf = (s: Stats): FileKind =>
  s.isFile() ? "file" : s.isDirectory() ? "directory" : s.isSymbolicLink() ? "symlink" : s.isFIFO() ? "fifo" : "other";
const CODES: Record<string, RuntimeError["code"]> = { ENOENT: "not_found", EACCES: "permission", EPERM: "permission", ENOTDIR: "not_directory", ELOOP: "symlink" };

/** The subset of FileSystem loadSettings uses, over node:fs; everything else throws. */
function nodeFs(): FileSystem {
  const info = (s: Stats): FileInfo =>
    ({ kind: kindOf(s), size: s.size, mode: s.mode & 0o7777, mtimeMs: s.mtimeMs, dev: s.dev, ino: s.ino, nlink: s.nlink });
  const wrap = async <T>(op: () => Promise<T>): Promise<T> => {
    try {
      return await op();
    } catch (error) {
      if (error instanceof RuntimeError) throw error;
      throw new RuntimeError(CODES[(error as { code?: string }).code ?? ""] ?? "io");
    }
  };
  const unused = (): never => assert.fail("not used by loadSettings");
  return {
    lstat: (p) => wrap(async () => info(await fsp.lstat(p))),
    stat: (p) => wrap(async () => info(await fsp.stat(p))),
    realpath: (p) => wrap(() => fsp.realpath(p)),
    readFile: (p, max) => wrap(async () => {
      const handle = await fsp.open(p, constants.O_RDONLY | constants.O_NOFOLLOW);
      const data = await handle.readFile().finally(() => handle.close());
      if (data.length > max) throw new RuntimeError("too_large");
      return new Uint8Array(data);
    }),
    readDir: unused, openDir: unused, mkdir: unused, openRead: unused, createExclusive: unused, syncDirectory: unused, openAppend: unused, link: unused, rename: unused, unlink: unused, removeDirectory: unused,
  };
}

/** Runs `body` with global and project settings paths inside a fresh temp directory. */
async function withDir(body: (paths: { global: string; project: string }, dir: string) => Promise<void>): Promise<void> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), "magi-settings-"));
  try {
    await fsp.mkdir(path.join(dir, "cwd", ".magi-code"), { recursive: true });
    await body({ global: path.join(dir, "settings.jsonc"), project: path.join(dir, "cwd", ".magi-code", "settings.jsonc") }, dir);
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

const live = () => new AbortController().signal;

test("loadSettings() returns {} when neither file exists", () => withDir(async (paths) => {
  assert.deepEqual(await loadSettings(nodeFs(), paths, live()), { ok: true, settings: {} });
}));

test("loadSettings() merges the global and project files, project winning", () => withDir(async (paths) => {
  await fsp.writeFile(paths.global, `{ "model": { "provider": "anthropic", "effort": "high" } } // global`);
  await fsp.writeFile(paths.project, "\uFEFF{ \"model\": { \"effort\": \"low\" } }");
  assert.deepEqual(await loadSettings(nodeFs(), paths, live()), { ok: true, settings: { model: { provider: "anthropic", effort: "low" } } });
}));

test("loadSettings() accepts a file of exactly 1 MiB", () => withDir(async (paths) => {
  await fsp.writeFile(paths.global, "{}".padEnd(1_048_576, " "));
  assert.deepEqual(await loadSettings(nodeFs(), paths, live()), { ok: true, settings: {} });
}));

test("loadSettings() rejects a file of 1 MiB + 1 byte with configuration_invalid", () => withDir(async (paths) => {
  await fsp.writeFile(paths.project, "{}".padEnd(1_048_577, " "));
  assert.deepEqual(await loadSettings(nodeFs(), paths, live()), INVALID);
}));

test("loadSettings() rejects invalid JSONC and invalid UTF-8 with configuration_invalid", () => withDir(async (paths) => {
  await fsp.writeFile(paths.project, `{ "model": `);
  assert.deepEqual(await loadSettings(nodeFs(), paths, live()), INVALID);
  await fsp.writeFile(paths.project, new Uint8Array([0x7b, 0xff, 0x7d]));
  assert.deepEqual(await loadSettings(nodeFs(), paths, live()), INVALID);
}));

test("loadSettings() rejects a directory at the settings path with configuration_invalid", () => withDir(async (paths) => {
  await fsp.mkdir(paths.global);
  assert.deepEqual(await loadSettings(nodeFs(), paths, live()), INVALID);
}));

test("loadSettings() follows a symlinked settings file", () => withDir(async (paths, dir) => {
  await fsp.writeFile(path.join(dir, "dotfiles.jsonc"), `{ "model": { "provider": "openai" } }`);
  await fsp.symlink(path.join(dir, "dotfiles.jsonc"), paths.global);
  assert.deepEqual(await loadSettings(nodeFs(), paths, live()), { ok: true, settings: { model: { provider: "openai" } } });
}));

test("loadSettings() reports startup_failed for a dangling symlink", () => withDir(async (paths, dir) => {
  await fsp.symlink(path.join(dir, "gone.jsonc"), paths.global);
  assert.deepEqual(await loadSettings(nodeFs(), paths, live()), { ok: false, code: "startup_failed" });
}));

test("loadSettings() maps read errors: too_large to configuration_invalid, others to startup_failed", async () => {
  const file = { kind: "file", size: 2, mode: 0o600, mtimeMs: 0, dev: 1, ino: 1, nlink: 1 } as const;
  const failing = (error: unknown): FileSystem => ({ ...nodeFs(), lstat: () => Promise.resolve(file), readFile: () => Promise.reject(error) });
  const paths = { global: "/g", project: "/p" };
  assert.deepEqual(await loadSettings(failing(new RuntimeError("too_large")), paths, live()), INVALID);
  for (const error of [new RuntimeError("permission"), new RuntimeError("io"), new RuntimeError("symlink"), new TypeError("bug")]) {
    assert.deepEqual(await loadSettings(failing(error), paths, live()), { ok: false, code: "startup_failed" });
  }
});

test("loadSettings() returns startup_cancelled for an aborted signal without touching the filesystem", async () => {
  const controller = new AbortController();
  controller.abort();
  const untouchable = new Proxy({}, { get: () => assert.fail("filesystem used") }) as FileSystem;
  assert.deepEqual(await loadSettings(untouchable, { global: "/g", project: "/p" }, controller.signal), { ok: false, code: "startup_cancelled" });
});

test("loadSettings() returns startup_cancelled when aborted between files", () => withDir(async (paths) => {
  const controller = new AbortController();
  const fs = nodeFs();
  const aborting: FileSystem = { ...fs, lstat: (p) => (p === paths.global ? controller.abort() : undefined, fs.lstat(p)) };
  assert.deepEqual(await loadSettings(aborting, paths, controller.signal), { ok: false, code: "startup_cancelled" });
}));

test("parseSettingsText() rejects an array where a settings object belongs with configuration_invalid", () => {
  const texts = ['{ "model": [] }', '{ "providers": [] }', '{ "providers": { "endpoints": [] } }', '{ "providers": { "endpoints": { "vllm": [] } } }'];
  for (const text of texts) assert.deepEqual(parseSettingsText(text), { ok: false, code: "configuration_invalid" }, text);
});
