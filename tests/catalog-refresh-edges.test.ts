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
import type { Frame } from "./support/harness.ts";
import { request } from "./support/turns.ts";
import {
  allChoices,
  builtinsAt,
  CATALOG_CAPABILITIES,
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

/** The steps of a cache replacement a test can hold: the temporary file's creation, the rename over the cache, the directory sync. */
type CacheStep = "temporary" | "rename" | "sync";

/** A memory filesystem that waits for `hold(step)` before each step of replacing a catalog cache. */
class HeldCacheWrite extends MemoryFileSystem {
  hold: (step: CacheStep) => Promise<void> = () => Promise.resolve();
  override async createExclusive(path: string, bytes: Uint8Array, mode: number): Promise<void> {
    if (path.startsWith(`${HOME}/catalog/`)) await this.hold("temporary");
    return await super.createExclusive(path, bytes, mode);
  }
  override async rename(from: string, to: string): Promise<void> {
    if (to.startsWith(`${HOME}/catalog/`)) await this.hold("rename");
    return await super.rename(from, to);
  }
  override async syncDirectory(path: string): Promise<void> {
    if (path === `${HOME}/catalog`) await this.hold("sync");
    return await super.syncDirectory(path);
  }
}

describe("model.refresh's commit point: right before the rename", () => {
  const cases: [CacheStep, string, string][] = [
    ["temporary", "writes its temporary file", "the refresh is operation_cancelled; the previous cache stays"],
    ["rename", "renames it over the cache", "stale_operation; the refresh answers its result, the cache is the new one"],
    ["sync", "syncs the directory", "stale_operation; the refresh answers its result, the cache is the new one"],
  ];
  for (const [step, doing, outcome] of cases) {
    const verdict = outcome.startsWith("stale_operation") ? "stale_operation" : "operation_cancelled";
    it(`operation.cancel while model.refresh ${doing}: ${outcome}`, async () => {
      const provider = await startFakeProvider();
      const fs = new HeldCacheWrite();
      await seedCache(fs, "ollama", "openai-chat", `${provider.url}/v1`, [{ id: "qwen" }]);
      const run = await startCatalogServer({ provider, fs, settings: builtinsAt(provider), capabilities: [...CATALOG_CAPABILITIES, "operation.cancel"] });
      const bytes = fs.contents(`${HOME}/catalog/ollama.json`);
      const cancel: { answer?: Promise<Frame> } = {};
      try {
        // The step is held until the client's cancel of the refresh has been answered.
        fs.hold = async (held) => {
          if (held !== step) return;
          fs.hold = () => Promise.resolve();
          cancel.answer = request(run, "cancel1", "operation.cancel", { id: "refresh1" });
          await cancel.answer;
        };
        provider.enqueue(openAiList([{ id: "qwen" }, { id: "deep" }]));
        const refreshed = await request(run, "refresh1", "model.refresh", { provider: "ollama" });
        assert.ok(cancel.answer !== undefined, `the refresh reached the ${step} step`);
        const answer = await cancel.answer;
        if (verdict === "stale_operation") {
          assert.equal(answer.error?.code, "stale_operation");
          assert.deepEqual(refreshed.result, { provider: "ollama", refreshed: true, models: 2, notices: [] }, `answered ${refreshed.error?.code}`);
          assert.notDeepEqual(fs.contents(`${HOME}/catalog/ollama.json`), bytes);
        } else {
          assert.deepEqual(answer.result, { cancellation_requested: true });
          assert.equal(refreshed.error?.code, "operation_cancelled");
          assert.ok(refreshed.seq < answer.seq, "the cancelled request is answered first");
        }
      } finally {
        await stopCatalogServer(run);
      }
      // Exit waited for the worker: a cancelled refresh removes its temporary file after its answer.
      assert.deepEqual((await fs.readDir(`${HOME}/catalog`)).map((entry) => entry.name), ["ollama.json"], "no temporary file is left");
      if (verdict !== "stale_operation") assert.deepEqual(fs.contents(`${HOME}/catalog/ollama.json`), bytes, "the previous cache stays");
    });
  }
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
