// The catalog cache file: format round trip, strict decoding, the atomic
// write, and model.catalog.status over every documented state.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { decodeCache, encodeCache } from "../src/catalog/cache-format.ts";
import { writeCache } from "../src/catalog/cache-write.ts";
import { readCache } from "../src/catalog/cache-read.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { builtinsAt, HOME, ok, seedCache, startCatalogServer, stopCatalogServer } from "./support/catalog.ts";
import { startFakeProvider } from "./support/fake-provider.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const model = fc.record({
  id: fc.string({ minLength: 1, maxLength: 40 }).filter((id) => !/[\uD800-\uDFFF]/u.test(id)),
  name: fc.option(fc.string({ maxLength: 40 }).filter((name) => !/[\uD800-\uDFFF]/u.test(name)), { nil: null }),
  reasoning: fc.constantFrom(true, false, null),
  contextWindow: fc.integer({ min: 1, max: 100_000_000 }),
}, { noNullPrototype: true, requiredKeys: ["id", "name", "reasoning"] });
const cache = fc.record({
  provider: fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/),
  endpoint: fc.stringMatching(/^[0-9a-f]{64}$/),
  refreshedAt: fc.date({ min: new Date(0), max: new Date(Date.UTC(9999, 0)), noInvalidDate: true }).map((date) => date.toISOString()),
  models: fc.uniqueArray(model, { selector: (entry) => entry.id, maxLength: 20 }),
}, { noNullPrototype: true });

describe("catalog cache format", () => {
  it("property: decode(encode(c)) is c", () => {
    fc.assert(fc.property(cache, (c) => assert.deepEqual(decodeCache(encodeCache(c), c.provider), { ok: true, cache: c })), { numRuns: fuzzRuns(300) });
  });

  it("refuses another provider's file, unknown fields, duplicate keys, other versions, any other spelling of the text; bounds are problems of their own", () => {
    const good = { provider: "p", endpoint: "a".repeat(64), refreshedAt: "2026-12-01T10:00:00.000Z", models: [{ id: "m", name: null, reasoning: null }] };
    const text = new TextDecoder().decode(encodeCache(good));
    const bytes = (value: string) => new TextEncoder().encode(value);
    assert.deepEqual(decodeCache(bytes(text), "q"), { ok: false, problem: "invalid" });
    assert.deepEqual(decodeCache(bytes(text.replace('"v":1', '"v":2')), "p"), { ok: false, problem: "invalid" });
    assert.deepEqual(decodeCache(bytes(text.replace('"v":1', '"v":1,"extra":0')), "p"), { ok: false, problem: "invalid" });
    assert.deepEqual(decodeCache(bytes(text.replace('"v":1', '"v":1,"v":1')), "p"), { ok: false, problem: "invalid" });
    assert.deepEqual(decodeCache(encodeCache({ ...good, models: [good.models[0]!, good.models[0]!] }), "p"), { ok: false, problem: "duplicate" });
    for (const variant of [text.replace('"v":1', '"v": 1'), text.trimEnd(), `${text}\n`, text.replace('"id":"m"', '"id":"\\u006d"'), text.replace('"v":1', '"v":1.0'), text.replace('"id":"m","name":null', '"name":null,"id":"m"'), text.replace('"id":"m"', '"id":"\\ud800"')]) {
      assert.deepEqual(decodeCache(bytes(variant), "p"), { ok: false, problem: "invalid" }, `only the writer's exact text: ${variant}`);
    }
    const long = { id: "x".repeat(LIMITS.catalog_string_bytes + 1), name: null, reasoning: null };
    assert.deepEqual(decodeCache(encodeCache({ ...good, models: [long] }), "p"), { ok: false, problem: "overlong" });
    // A window lifts the cache to v: 2; a v: 2 text without one, a v: 1 text with one and an unsound window are not the writer's.
    const windowed = new TextDecoder().decode(encodeCache({ ...good, models: [{ id: "m", name: null, reasoning: null, contextWindow: 200_000 }] }));
    assert.match(windowed, /^\{"v":2,.*"models":\[\{"id":"m","name":null,"reasoning":null,"context_window":200000\}\]\}\n$/);
    assert.equal(decodeCache(bytes(windowed), "p").ok, true);
    for (const variant of [windowed.replace('"v":2', '"v":1'), windowed.replace("200000", "0"), windowed.replace("200000", "1.5"), windowed.replace("200000", "null")]) {
      assert.deepEqual(decodeCache(bytes(variant), "p"), { ok: false, problem: "invalid" }, variant);
    }
    const many = Array.from({ length: LIMITS.catalog_models + 1 }, (_, i) => ({ id: `m${i}`, name: null, reasoning: null }));
    assert.deepEqual(decodeCache(encodeCache({ ...good, models: many }), "p"), { ok: false, problem: "too_many" });
  });
});

describe("catalog cache write", () => {
  it("replaces atomically through a temporary file; a refusal before the rename keeps the old cache and leaves no file", async () => {
    const fs = new MemoryFileSystem();
    const runtime = createMemoryRuntime({ fs });
    assert.deepEqual(await writeCache(runtime, HOME, "ollama", new TextEncoder().encode("one"), () => true), { ok: true });
    assert.deepEqual(await readCache(fs, HOME, "ollama"), { kind: "bytes", bytes: new TextEncoder().encode("one") });
    assert.equal((await fs.stat(`${HOME}/catalog`)).mode & 0o777, 0o700);
    assert.equal((await fs.stat(`${HOME}/catalog/ollama.json`)).mode & 0o777, 0o600);
    assert.deepEqual(await writeCache(runtime, HOME, "ollama", new TextEncoder().encode("two"), () => false), { ok: false });
    assert.deepEqual(await readCache(fs, HOME, "ollama"), { kind: "bytes", bytes: new TextEncoder().encode("one") });
    assert.deepEqual((await fs.readDir(`${HOME}/catalog`)).map((entry) => entry.name), ["ollama.json"]);
  });

  it("reads refuse symlinks, FIFOs and writable-by-others files, and bound the size", async () => {
    const fs = new MemoryFileSystem();
    const path = `${HOME}/catalog/p.json`;
    assert.deepEqual(await readCache(fs, HOME, "p"), { kind: "missing" });
    fs.writeFile(`${HOME}/x`, "{}", 0o600);
    fs.symlink(`${HOME}/x`, path);
    assert.deepEqual(await readCache(fs, HOME, "p"), { kind: "unreadable" });
    await fs.unlink(path);
    fs.mkfifo(path);
    assert.deepEqual(await readCache(fs, HOME, "p"), { kind: "unreadable" });
    await fs.unlink(path);
    fs.writeFile(path, "{}", 0o620);
    assert.deepEqual(await readCache(fs, HOME, "p"), { kind: "unreadable" });
    fs.writeFile(path, "x".repeat(LIMITS.catalog_file_bytes + 1), 0o600);
    assert.deepEqual(await readCache(fs, HOME, "p"), { kind: "too_large" });
    fs.writeFile(path, "x".repeat(LIMITS.catalog_file_bytes), 0o600);
    assert.equal((await readCache(fs, HOME, "p")).kind, "bytes");
  });
});

describe("model.catalog.status", () => {
  it("one entry per admitted provider in ascending order, each in its documented state", async () => {
    const provider = await startFakeProvider();
    const url = `${provider.url}/v1`;
    const fs = new MemoryFileSystem();
    await seedCache(fs, "ollama", "openai-chat", url, [{ id: "qwen" }]);
    await seedCache(fs, "anthropic", "anthropic-messages", url, [{ id: "claude-sonnet-4-5" }]);
    await seedCache(fs, "vllm", "openai-chat", "http://elsewhere/v1", [{ id: "q" }]);
    fs.writeFile(`${HOME}/catalog/lmstudio.json`, "{}", 0o600);
    await seedCache(fs, "empty", "openai-chat", "http://127.0.0.1:9/v1", []);
    const endpoints = {
      vllm: { api: "openai-chat", base_url: url },
      lmstudio: { api: "openai-chat", base_url: url },
      empty: { api: "openai-chat", base_url: "http://127.0.0.1:9/v1" },
      locked: { api: "openai-chat", base_url: url },
    };
    fs.writeFile(`${HOME}/catalog/locked.json`, "{}", 0o666);
    const settings = builtinsAt(provider, { providers: { endpoints, catalog: { enabled: ["ollama/qwen", "vllm/q"] } } });
    (settings.providers as { endpoints: Record<string, unknown> }).endpoints = { ...endpoints, ...(builtinsAt(provider).providers as { endpoints: object }).endpoints };
    const server = await startCatalogServer({ provider, fs, settings, env: { ANTHROPIC_API_KEY: "" } });
    try {
      const result = await ok(server, "model.catalog.status");
      const rows = (result.providers as Record<string, unknown>[]).map((row) => [row.provider, row.state, row.models, row.refreshed_at === null ? null : "t", row.notices]);
      assert.deepEqual(rows, [
        ["anthropic", "authentication_unavailable", 1, "t", []],
        ["empty", "empty", 0, "t", []],
        ["lmstudio", "invalid", null, null, []],
        ["locked", "unreadable", null, null, []],
        ["ollama", "ready", 1, "t", []],
        ["openai", "missing", null, null, []],
        ["vllm", "endpoint_changed", null, null, ["provider_catalog_unavailable"]],
      ]);
      assert.equal(provider.log.length, 0);
    } finally {
      await stopCatalogServer(server);
    }
  });
});
