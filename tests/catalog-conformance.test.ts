// Catalog sentences the other catalog tests leave unproven: the per-scan bounds
// at their boundaries (catalog_providers, catalog_scan_bytes,
// catalog_snapshot_bytes, catalog_scan_ms), and model.refresh as an observation
// of the selection, as an invalidation whatever its outcome, as a write that
// touches nothing but its cache, under cancellation and Anthropic's page bound.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ManualClock, createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { endpointFingerprint } from "../src/catalog/cache-format.ts";
import { scanCatalog } from "../src/catalog/scan.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { Gate, startFakeProvider } from "./support/fake-provider.ts";
import { SlowStorage } from "./support/slow-storage.ts";
import { request } from "./support/turns.ts";
import {
  anthropicPages,
  builtinsAt,
  CATALOG_CAPABILITIES,
  type CatalogServer,
  fails,
  HOME,
  ok,
  openAiList,
  seedCache,
  selectionOf,
  startCatalogServer,
  stopCatalogServer,
} from "./support/catalog.ts";

/** A server whose settings add `count` custom endpoints `p0`… at the fake provider, each with one enabled model. */
async function withEndpoints(count: number, body: (run: CatalogServer) => Promise<void>, fs = new MemoryFileSystem()) {
  const provider = await startFakeProvider();
  const url = `${provider.url}/v1`;
  const endpoints = Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, { api: "openai-chat", base_url: url }]));
  const builtins = (builtinsAt(provider).providers as { endpoints: object }).endpoints;
  const enabled = Array.from({ length: count }, (_, i) => `p${i}/m`);
  const run = await startCatalogServer({ provider, fs, settings: { ...builtinsAt(provider), providers: { endpoints: { ...builtins, ...endpoints }, catalog: { enabled } } } });
  try {
    await body(run);
  } finally {
    await stopCatalogServer(run);
  }
}

describe("catalog bounds at their boundaries", () => {
  it(`catalog_providers: ${LIMITS.catalog_providers} admitted providers (built-ins included) scan; one more is catalog_limit everywhere`, async () => {
    await withEndpoints(LIMITS.catalog_providers - 3, async (run) => {
      assert.equal((await ok(run, "model.catalog")).complete, true);
      assert.equal(((await ok(run, "model.catalog.status")).providers as unknown[]).length, LIMITS.catalog_providers);
    });
    await withEndpoints(LIMITS.catalog_providers - 2, async (run) => {
      assert.equal(await fails(run, "model.catalog"), "catalog_limit");
      assert.equal(await fails(run, "model.catalog.status"), "catalog_limit");
      assert.equal(await fails(run, "model.refresh", { provider: "p0" }), "catalog_limit");
      assert.equal(run.provider.log.length, 0, "no request when the child admits too many providers");
    });
  });

  it("catalog_scan_bytes: eight relevant 1 MiB caches fit one scan; a ninth is catalog_limit, no partial result", async () => {
    const fs = new MemoryFileSystem();
    const junk = new Uint8Array(LIMITS.catalog_file_bytes).fill(0x20);
    for (let i = 0; i < 9; i++) fs.writeFile(`${HOME}/catalog/p${i}.json`, junk, 0o600);
    await withEndpoints(8, async (run) => {
      assert.deepEqual((await ok(run, "model.catalog")).notices, ["provider_catalog_unavailable"]);
    }, fs);
    await withEndpoints(9, async (run) => {
      assert.equal(await fails(run, "model.catalog"), "catalog_limit");
    }, fs);
  });

  it("one cache over a per-file bound is its provider's invalid in model.catalog.status, which still answers; model.catalog is catalog_limit", async () => {
    const fs = new MemoryFileSystem();
    fs.writeFile(`${HOME}/catalog/p0.json`, new Uint8Array(LIMITS.catalog_file_bytes + 1).fill(0x20), 0o600);
    await withEndpoints(2, async (run) => {
      await seedCache(fs, "p1", "openai-chat", `${run.provider.url}/v1`, [{ id: "x".repeat(LIMITS.catalog_string_bytes + 1) }]);
      const rows = (await ok(run, "model.catalog.status")).providers as { provider: string; state: string; notices: string[] }[];
      const states = rows.filter((row) => row.provider.startsWith("p")).map((row) => [row.provider, row.state, row.notices]);
      assert.deepEqual(states, [["p0", "invalid", ["provider_catalog_unavailable"]], ["p1", "invalid", ["provider_catalog_unavailable"]]]);
      assert.equal(await fails(run, "model.catalog"), "catalog_limit");
    }, fs);
  });

  it("catalog_snapshot_bytes: choices serializing past 1 MiB are catalog_limit, however the pages would split them", async () => {
    const provider = await startFakeProvider();
    const url = `${provider.url}/v1`;
    const fs = new MemoryFileSystem();
    const models = (prefix: string) => Array.from({ length: LIMITS.catalog_models / 2 }, (_, i) => ({ id: `${prefix}${String(i).padStart(4, "0")}-${"i".repeat(200)}`, name: `${"N".repeat(200)} ${i}` }));
    await seedCache(fs, "ollama", "openai-chat", url, models("o"));
    await seedCache(fs, "openai", "openai-responses", url, models("g"));
    const half = models("o").map((model) => `ollama/${model.id}`);
    // The same scan with half of the models enabled fits: only the serialized choices differ.
    for (const [enabled, fits] of [[half, true], [[...half, ...models("g").map((model) => `openai/${model.id}`)], false]] as const) {
      const run = await startCatalogServer({ provider, fs, settings: builtinsAt(provider, { providers: { catalog: { enabled } } }) });
      try {
        if (fits) assert.equal((await ok(run, "model.catalog")).complete, false);
        else assert.equal(await fails(run, "model.catalog"), "catalog_limit");
      } finally {
        await stopCatalogServer(run, !fits);
      }
    }
  });

  it(`catalog_page_entries: an omitted limit pages ${LIMITS.catalog_page_entries} choices at most`, async () => {
    const provider = await startFakeProvider();
    const fs = new MemoryFileSystem();
    const models = Array.from({ length: 150 }, (_, i) => ({ id: `m${String(i).padStart(3, "0")}` }));
    await seedCache(fs, "ollama", "openai-chat", `${provider.url}/v1`, models);
    const run = await startCatalogServer({ provider, fs, settings: builtinsAt(provider, { providers: { catalog: { enabled: models.map((model) => `ollama/${model.id}`) } } }) });
    try {
      const page = await ok(run, "model.catalog");
      assert.deepEqual([(page.choices as unknown[]).length, page.complete], [LIMITS.catalog_page_entries, false]);
      const rest = await ok(run, "model.catalog", { revision: page.revision, cursor: page.next_cursor });
      assert.deepEqual([(rest.choices as unknown[]).length, rest.complete, rest.next_cursor], [50, true, null]);
    } finally {
      await stopCatalogServer(run);
    }
  });

  it("catalog_scan_ms: the deadline is checked after each file; a scan past 2,000 ms is catalog_limit", async () => {
    for (const [files, expected] of [[2, true], [3, false]] as const) {
      const clock = new ManualClock();
      const fs = new SlowStorage(clock, LIMITS.catalog_scan_ms / 2);
      const runtime = createMemoryRuntime({ clock, fs });
      const endpoint = await endpointFingerprint("openai-chat", "http://127.0.0.1:1/v1");
      const targets = Array.from({ length: files }, (_, i) => ({ name: `p${i}`, endpoint, authAvailable: true }));
      for (const target of targets) await seedCache(fs, target.name, "openai-chat", "http://127.0.0.1:1/v1", [{ id: "m" }]);
      const scanned = await scanCatalog(runtime, HOME, targets, new AbortController().signal);
      assert.equal(scanned.ok, expected, `${files} files`);
      if (!scanned.ok) assert.equal(scanned.code, "catalog_limit");
    }
  });
});

const ENABLED = ["ollama/deep", "ollama/qwen"];

async function refreshServer(model = "deep"): Promise<CatalogServer> {
  const provider = await startFakeProvider();
  const fs = new MemoryFileSystem();
  await seedCache(fs, "ollama", "openai-chat", `${provider.url}/v1`, [{ id: "deep", reasoning: true }, { id: "qwen" }]);
  const settings = builtinsAt(provider, { model: { provider: "ollama", model }, providers: { catalog: { enabled: ENABLED } } });
  return await startCatalogServer({ provider, fs, settings, capabilities: [...CATALOG_CAPABILITIES, "operation.cancel"] });
}

describe("model.refresh beyond the list formats", () => {
  it("a refresh of the selected provider rotates the selection revision only when the effort semantics changed", async () => {
    const run = await refreshServer();
    try {
      const start = await selectionOf(run);
      assert.equal(start.effort_support, "supported");
      run.provider.enqueue(openAiList([{ id: "deep", parameters: ["reasoning"] }, { id: "qwen" }]));
      await ok(run, "model.refresh", { provider: "ollama" });
      assert.equal((await selectionOf(run)).revision, start.revision, "same semantics, same revision");
      run.provider.enqueue(openAiList([{ id: "deep" }, { id: "qwen" }]));
      await ok(run, "model.refresh", { provider: "ollama" });
      const changed = await selectionOf(run);
      assert.notEqual(changed.revision, start.revision);
      assert.deepEqual([changed.effort_support, changed.permitted_efforts], ["unknown", ["default"]]);
    } finally {
      await stopCatalogServer(run);
    }
  });

  it("a failed refresh still invalidates the catalog snapshot; the previous cache stays", async () => {
    const run = await refreshServer();
    try {
      const bytes = run.fs.contents(`${HOME}/catalog/ollama.json`);
      const first = await ok(run, "model.catalog", { limit: 1 });
      run.provider.enqueue({ status: 500, body: { error: "boom" } });
      assert.equal(await fails(run, "model.refresh", { provider: "ollama" }), "catalog_unavailable");
      assert.deepEqual(run.fs.contents(`${HOME}/catalog/ollama.json`), bytes);
      assert.equal(await fails(run, "model.catalog", { revision: first.revision, cursor: first.next_cursor, limit: 1 }), "stale_catalog");
    } finally {
      await stopCatalogServer(run);
    }
  });

  it("a refresh writes only its cache: settings, session files and saved preferences stay byte for byte; no raw body is stored", async () => {
    const run = await refreshServer();
    try {
      const session = (await ok(run, "session.create")).session_id as string;
      const catalog = (await ok(run, "model.catalog")).revision;
      await ok(run, "selection.set", { session_id: session, selection_revision: (await selectionOf(run)).revision, catalog_revision: catalog, provider: "ollama", model: "qwen" });
      const settings = run.fs.contents(`${HOME}/settings.jsonc`);
      const history = run.fs.contents(`${HOME}/sessions/${session}.jsonl`);
      run.provider.enqueue(openAiList([{ id: "deep", parameters: ["reasoning"] }, { id: "sk-ant-api03-abcdefghijklmnop1234567890" }]));
      const result = await ok(run, "model.refresh", { provider: "ollama" });
      assert.deepEqual(result, { provider: "ollama", refreshed: true, models: 2, notices: ["catalog_entries_omitted_unsafe"] });
      assert.deepEqual(run.fs.contents(`${HOME}/settings.jsonc`), settings);
      assert.deepEqual(run.fs.contents(`${HOME}/sessions/${session}.jsonl`), history);
      const cache = new TextDecoder().decode(run.fs.contents(`${HOME}/catalog/ollama.json`));
      assert.ok(!cache.includes("secret-ish prose") && !cache.includes("pricing") && !cache.includes("owned_by"), cache);
      const selection = await selectionOf(run);
      assert.deepEqual([selection.provider, selection.model], ["ollama", "qwen"], "the selection is not changed by a refresh");
    } finally {
      await stopCatalogServer(run);
    }
  });

  it("operation.cancel during the fetch: operation_cancelled, and no cache or temporary file is written", async () => {
    const run = await refreshServer();
    try {
      run.fs.unlink(`${HOME}/catalog/ollama.json`);
      const gate = new Gate();
      run.provider.enqueue({ chunks: [gate, JSON.stringify({ object: "list", data: [{ id: "deep" }] })] });
      const refresh = request(run, "refresh1", "model.refresh", { provider: "ollama" });
      await gate.whenReached();
      const cancel = await request(run, "cancel1", "operation.cancel", { id: "refresh1" });
      assert.deepEqual(cancel.result, { cancellation_requested: true });
      assert.equal((await refresh).error?.code, "operation_cancelled");
      await run.provider.until(() => run.provider.log.at(-1)!.clientClosed);
      gate.release();
      assert.equal(run.fs.exists(`${HOME}/catalog/ollama.json`), false);
      assert.deepEqual((await run.fs.readDir(`${HOME}/catalog`)).map((entry) => entry.name), []);
    } finally {
      await stopCatalogServer(run);
    }
  });

  it(`Anthropic: ${16} pages are listed; a list needing a 17th is catalog_unavailable and keeps the previous cache`, async () => {
    const run = await refreshServer();
    try {
      const models = (count: number) => Array.from({ length: count }, (_, i) => ({ id: `claude-m-${i}` }));
      run.provider.handler = anthropicPages(models(16), 1);
      assert.equal((await ok(run, "model.refresh", { provider: "anthropic" })).models, 16);
      const bytes = run.fs.contents(`${HOME}/catalog/anthropic.json`);
      run.provider.handler = anthropicPages(models(17), 1);
      assert.equal(await fails(run, "model.refresh", { provider: "anthropic" }), "catalog_unavailable");
      assert.deepEqual(run.fs.contents(`${HOME}/catalog/anthropic.json`), bytes);
    } finally {
      run.provider.handler = null;
      await stopCatalogServer(run);
    }
  });
});
