// model.catalog: cache-only pages, order, notices, bounds and the sticky
// stale_catalog of its one snapshot per child.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { endpointFingerprint } from "../src/catalog/cache-format.ts";
import { compareUtf8 } from "../src/util/utf8-order.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { allChoices, builtinsAt, fails, HOME, ok, seedCache, startCatalogServer, stopCatalogServer } from "./support/catalog.ts";
import { startFakeProvider } from "./support/fake-provider.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

async function withCatalog(
  caches: Record<string, { id: string; name?: string | null; reasoning?: boolean | null }[]>,
  enabled: string[],
  body: (server: Awaited<ReturnType<typeof startCatalogServer>>, url: string) => Promise<void>,
) {
  const provider = await startFakeProvider();
  const url = `${provider.url}/v1`;
  const fs = new MemoryFileSystem();
  const apis: Record<string, string> = { ollama: "openai-chat", openai: "openai-responses", anthropic: "anthropic-messages" };
  for (const [name, models] of Object.entries(caches)) await seedCache(fs, name, apis[name]!, url, models);
  const server = await startCatalogServer({ provider, fs, settings: builtinsAt(provider, { providers: { catalog: { enabled } } }) });
  try {
    await body(server, url);
  } finally {
    await stopCatalogServer(server);
  }
}

describe("model.catalog", () => {
  it("the default empty enabled list admits no choice, however much is cached", () =>
    withCatalog({ ollama: [{ id: "qwen" }] }, [], async (server) => {
      const page = await ok(server, "model.catalog");
      assert.deepEqual({ ...page, revision: "" }, { revision: "", choices: [], next_cursor: null, complete: true, notices: [], source: "cache_only" });
      assert.equal(server.provider.log.length, 0, "never a network call");
    }));

  it("choices: exact fields, stable 64-hex selection ids, provider then model in UTF-8 byte order", () =>
    withCatalog(
      { ollama: [{ id: "z\uffff" }, { id: "z\u{1f600}" }, { id: "a", name: "Model A" }], openai: [{ id: "gpt-5" }] },
      ["ollama/a", "ollama/z\uffff", "ollama/z\u{1f600}", "openai/gpt-5"],
      async (server) => {
        const { choices } = await allChoices(server);
        assert.deepEqual(choices.map((choice) => choice.model), ["a", "z\uffff", "z\u{1f600}", "gpt-5"]);
        assert.deepEqual(Object.keys(choices[0]!).sort(), ["availability", "effort_support", "model", "model_name", "permitted_efforts", "provider", "provider_name", "selection_id"]);
        assert.deepEqual([choices[0]!.model_name, choices[0]!.provider_name, choices[0]!.effort_support], ["Model A", "Ollama", "unknown"]);
        for (const choice of choices) assert.match(choice.selection_id as string, /^[0-9a-f]{64}$/);
        const again = await allChoices(server);
        assert.deepEqual(again.choices.map((choice) => choice.selection_id), choices.map((choice) => choice.selection_id));
        assert.notEqual(again.revision, (await allChoices(server)).revision, "every fresh request is a new revision");
      },
    ));

  it("notices: relevant providers without a usable cache, unsafe ids omitted; unused providers stay quiet", () =>
    withCatalog(
      { ollama: [{ id: "qwen" }, { id: "sk-ant-api03-abcdefghijklmnop1234567890" }] },
      ["ollama/qwen", "ollama/sk-ant-api03-abcdefghijklmnop1234567890", "openai/gpt-5"],
      async (server) => {
        const page = await ok(server, "model.catalog");
        assert.deepEqual((page.choices as { model: string }[]).map((choice) => choice.model), ["qwen"]);
        assert.deepEqual([...page.notices as string[]].sort(), ["catalog_entries_omitted_unsafe", "provider_catalog_unavailable"]);
      },
    ));

  it("no notice when only unused providers lack caches", () =>
    withCatalog({ ollama: [{ id: "qwen" }] }, ["ollama/qwen"], async (server) => {
      assert.deepEqual((await ok(server, "model.catalog")).notices, []);
    }));

  it("authentication stays explicit: a cached choice of a provider without its key is authentication_unavailable", async () => {
    const provider = await startFakeProvider();
    const fs = new MemoryFileSystem();
    await seedCache(fs, "anthropic", "anthropic-messages", `${provider.url}/v1`, [{ id: "claude-sonnet-4-5" }]);
    const server = await startCatalogServer({ provider, fs, env: { ANTHROPIC_API_KEY: "" }, settings: builtinsAt(provider, { providers: { catalog: { enabled: ["anthropic/claude-sonnet-4-5"] } } }) });
    try {
      const [choice] = (await allChoices(server)).choices;
      assert.equal(choice!.availability, "authentication_unavailable");
    } finally {
      await stopCatalogServer(server);
    }
  });

  it("paging: limit and page bytes bound each page; cursors reach every choice; a continuation after a change is stale for good", () => {
    const models = Array.from({ length: LIMITS.catalog_models }, (_, i) => ({ id: `model-${String(i).padStart(4, "0")}-${"x".repeat(100)}` }));
    return withCatalog({ ollama: models }, models.map((model) => `ollama/${model.id}`), async (server, url) => {
      const { choices, pages } = await allChoices(server, 100);
      assert.equal(choices.length, LIMITS.catalog_models);
      assert.ok(pages > LIMITS.catalog_models / 100, "pages hold fewer than 100 entries to fit the byte bound");
      for (const frame of server.frames().filter((f) => f.type === "response")) assert.ok(JSON.stringify(frame.result ?? {}).length <= LIMITS.catalog_page_bytes);
      const first = await ok(server, "model.catalog", { limit: 1 });
      const original = server.fs.contents(`${HOME}/catalog/ollama.json`)!;
      await seedCache(server.fs, "ollama", "openai-chat", url, [{ id: "other" }]);
      assert.equal(await fails(server, "model.catalog", { revision: first.revision, cursor: first.next_cursor, limit: 1 }), "stale_catalog");
      server.fs.writeFile(`${HOME}/catalog/ollama.json`, original, 0o600);
      assert.equal(await fails(server, "model.catalog", { revision: first.revision, cursor: first.next_cursor, limit: 1 }), "stale_catalog", "sticky");
      const fresh = await ok(server, "model.catalog", { limit: 1 });
      assert.equal(await fails(server, "model.catalog", { revision: fresh.revision, cursor: "p1-000000000000000000000000", limit: 1 }), "stale_catalog");
      assert.equal((await ok(server, "model.catalog", { revision: fresh.revision, cursor: fresh.next_cursor, limit: 1 })).revision, fresh.revision);
    });
  });

  it("params: both or neither of revision and cursor, limit 1-100, nothing unknown; all invalid_params", () =>
    withCatalog({}, [], async (server) => {
      for (const params of [{ revision: "c1-x" }, { cursor: "p1-x" }, { revision: null, cursor: "p1" }, { limit: 0 }, { limit: 101 }, { limit: 1.5 }, { extra: 1 }, { revision: "bad id!", cursor: "p" }]) {
        assert.equal(await fails(server, "model.catalog", params), "invalid_params", JSON.stringify(params));
      }
    }));

  it("unsafe or unreadable relevant caches are catalog_unavailable; over-bound ones catalog_limit; no partial result", async () => {
    const provider = await startFakeProvider();
    const url = `${provider.url}/v1`;
    const fs = new MemoryFileSystem();
    const server = await startCatalogServer({ provider, fs, settings: builtinsAt(provider, { providers: { catalog: { enabled: ["ollama/a"] } } }) });
    try {
      await seedCache(fs, "ollama", "openai-chat", url, [{ id: "a" }], 0o666);
      assert.equal(await fails(server, "model.catalog"), "catalog_unavailable");
      fs.symlink(`${HOME}/elsewhere.json`, `${HOME}/catalog/ollama.json`);
      assert.equal(await fails(server, "model.catalog"), "catalog_unavailable");
      fs.writeFile(`${HOME}/catalog/ollama.json`, `${JSON.stringify({ v: 1, provider: "ollama", endpoint: await endpointFingerprint("openai-chat", url), refreshed_at: "2026-12-01T10:00:00.000Z", models: [{ id: "a", name: null, reasoning: null }, { id: "a", name: null, reasoning: null }] })}\n`, 0o600);
      assert.equal(await fails(server, "model.catalog"), "catalog_unavailable", "duplicates");
      await seedCache(fs, "ollama", "openai-chat", url, [{ id: "a".repeat(LIMITS.catalog_string_bytes + 1) }]);
      assert.equal(await fails(server, "model.catalog"), "catalog_limit", "overlong id");
      fs.writeFile(`${HOME}/catalog/ollama.json`, " ".repeat(LIMITS.catalog_file_bytes + 1), 0o600);
      assert.equal(await fails(server, "model.catalog"), "catalog_limit", "file bytes");
      fs.writeFile(`${HOME}/catalog/ollama.json`, "{broken", 0o600);
      assert.deepEqual((await ok(server, "model.catalog")).notices, ["provider_catalog_unavailable"], "invalid content is a notice");
      await seedCache(fs, "ollama", "openai-chat", "http://other.example/v1", [{ id: "a" }]);
      assert.deepEqual((await ok(server, "model.catalog")).choices, [], "a cache of another endpoint offers nothing");
    } finally {
      await stopCatalogServer(server);
    }
  });

  it("more than catalog_models cached models across providers is catalog_limit", () => {
    const half = (prefix: string) => Array.from({ length: 1100 }, (_, i) => ({ id: `${prefix}-${i}` }));
    return withCatalog({ ollama: half("o"), openai: half("g") }, ["ollama/o-1", "openai/g-1"], async (server) => {
      assert.equal(await fails(server, "model.catalog"), "catalog_limit");
    });
  });

  it("compareUtf8 is UTF-8 byte order (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.string({ unit: "grapheme" }), (a, b) => {
        const x = new TextEncoder().encode(a);
        const y = new TextEncoder().encode(b);
        let expected = 0;
        for (let i = 0; i < Math.min(x.length, y.length) && expected === 0; i++) expected = x[i]! - y[i]!;
        if (expected === 0) expected = x.length - y.length;
        assert.equal(Math.sign(compareUtf8(a, b)), Math.sign(expected));
      }),
      { numRuns: fuzzRuns(500) },
    );
  });
});
