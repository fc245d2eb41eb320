/**
 * Review findings of issue 10 (session 4): a refresh that fails on a full
 * disk leaves no temporary file; a display name over its bound is dropped,
 * not a failed refresh; catalog and selection revisions are scoped to their
 * child, as the spec scopes every ephemeral identifier to the instance.
 *
 * @module
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { startFakeProvider } from "./support/fake-provider.ts";
import {
  allChoices,
  builtinsAt,
  fails,
  HOME,
  ok,
  openAiList,
  seedCache,
  selectionOf,
  startCatalogServer,
  stopCatalogServer,
} from "./support/catalog.ts";

describe("model.refresh edges", () => {
  it("model.refresh on a full disk answers persistence_failed, keeps the previous cache and leaves no temporary file", async () => {
    const provider = await startFakeProvider();
    const fs = new MemoryFileSystem();
    await seedCache(fs, "ollama", "openai-chat", `${provider.url}/v1`, [{ id: "qwen" }]);
    const run = await startCatalogServer({ provider, fs, settings: builtinsAt(provider) });
    try {
      const bytes = fs.contents(`${HOME}/catalog/ollama.json`);
      provider.enqueue(openAiList([{ id: "qwen" }, { id: "deep" }]));
      fs.freeBytes = 10;
      assert.equal(await fails(run, "model.refresh", { provider: "ollama" }), "persistence_failed");
      fs.freeBytes = null;
      assert.deepEqual(fs.contents(`${HOME}/catalog/ollama.json`), bytes);
      assert.deepEqual((await fs.readDir(`${HOME}/catalog`)).map((entry) => entry.name), ["ollama.json"]);
    } finally {
      await stopCatalogServer(run);
    }
  });

  it("model.refresh drops a 257-byte display name (null) instead of failing the refresh", async () => {
    const provider = await startFakeProvider();
    const settings = builtinsAt(provider, { providers: { catalog: { enabled: ["ollama/qwen"] } } });
    const run = await startCatalogServer({ provider, fs: new MemoryFileSystem(), settings });
    try {
      provider.enqueue(openAiList([{ id: "qwen", name: "N".repeat(257) }]));
      assert.deepEqual(await ok(run, "model.refresh", { provider: "ollama" }), { provider: "ollama", refreshed: true, models: 1, notices: [] });
      assert.equal((await allChoices(run)).choices[0]!.model_name, null);
    } finally {
      await stopCatalogServer(run);
    }
  });
});

describe("catalog identifiers are scoped to their child", () => {
  it("model.catalog answers another child's revision over identical caches stale_catalog; selection revisions differ too", async () => {
    const provider = await startFakeProvider();
    const settings = builtinsAt(provider, { providers: { catalog: { enabled: ["ollama/qwen", "ollama/deep"] } } });
    const runs = await Promise.all([0, 1].map(async () => {
      const fs = new MemoryFileSystem();
      await seedCache(fs, "ollama", "openai-chat", `${provider.url}/v1`, [{ id: "qwen" }, { id: "deep" }]);
      return await startCatalogServer({ provider, fs, settings });
    }));
    try {
      const [a, b] = await Promise.all(runs.map((run) => ok(run, "model.catalog", { limit: 1 })));
      assert.notEqual(a!.revision, b!.revision, "two children issued the same catalog revision");
      const continuation = { revision: a!.revision, cursor: a!.next_cursor, limit: 1 };
      assert.equal(await fails(runs[1]!, "model.catalog", continuation), "stale_catalog");
      const [first, second] = await Promise.all(runs.map((run) => selectionOf(run)));
      assert.notEqual(first!.revision, second!.revision, "two children issued the same selection revision");
    } finally {
      await stopCatalogServer(runs[0]!, false);
      await stopCatalogServer(runs[1]!);
    }
  });
});
