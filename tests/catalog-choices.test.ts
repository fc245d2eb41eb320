// Catalog choices built lazily: the admitted index against the eager build it
// replaced, serialized sizes counted from the fields, the snapshot byte bound
// at its edge, and rescans that reuse unchanged providers' results.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { createMemoryRuntime, createSha256 } from "../runtime/memory.ts";
import { type CachedModel, encodeCache } from "../src/catalog/cache-format.ts";
import { type Choice, choiceBytes, choiceOf, selectionId } from "../src/catalog/choice.ts";
import { admitChoices, buildChoices, choicesIn, type DialectScan } from "../src/catalog/choices.ts";
import { type DecodeMemo, scanCatalog, type ScanTarget } from "../src/catalog/scan.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { isSafeDisplayName } from "../src/util/redaction.ts";
import { compareUtf8 } from "../src/util/utf8-order.ts";
import { jsonStringBytes, utf8ByteCount } from "../src/util/utf8.ts";
import { HOME } from "./support/catalog.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const idOf = (provider: string, model: string) => selectionId(createSha256, provider, model);
const APIS = ["openai-chat", "openai-responses", "anthropic-messages"];

function scanOf(name: string, api: string, models: CachedModel[], authAvailable = true): DialectScan {
  const cache = { provider: name, endpoint: "e".repeat(64), refreshedAt: "2026-12-01T10:00:00.000Z", models };
  return { name, api, endpoint: cache.endpoint, authAvailable, state: models.length === 0 ? "empty" : "ready", cache };
}

/** The eager build this module replaced: every admitted choice, built, then sorted. */
function eager(scans: readonly DialectScan[], enabled: ReadonlySet<string>): Choice[] {
  const choices = scans.flatMap((scan) =>
    (scan.cache?.models ?? [])
      .filter((model) => enabled.has(`${scan.name}/${model.id}`) && isSafeDisplayName(scan.name) && isSafeDisplayName(model.id))
      .map((model) => choiceOf(scan.name, scan.api, model, scan.authAvailable, idOf))
  );
  return choices.sort((a, b) => compareUtf8(a.provider, b.provider) || compareUtf8(a.model, b.model));
}

const text = fc.string({ unit: "binary", maxLength: 12 });
const modelList = fc.uniqueArray(
  fc.record({ id: fc.oneof(text.filter((id) => id !== ""), fc.constantFrom("gpt-5", "o3", "claude-sonnet-4-5", "sk-ant-api03-abcdefghijklmnop1234567890")), name: fc.option(text, { nil: null }), reasoning: fc.constantFrom(true, false, null) }, { noNullPrototype: true }),
  { selector: (model) => model.id, maxLength: 8 },
);
const catalog = fc.uniqueArray(
  fc.record({ name: fc.constantFrom("openai", "anthropic", "ollama", "vllm", "z\u{1f600}", "z\uffff"), api: fc.constantFrom(...APIS), models: modelList, auth: fc.boolean() }),
  { selector: (provider) => provider.name, maxLength: 4 },
);

describe("catalog choices", () => {
  it("property: jsonStringBytes(s) is the UTF-8 length of JSON.stringify(s), lone surrogates and controls included", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (value) => assert.equal(jsonStringBytes(value), utf8ByteCount(JSON.stringify(value)))), { numRuns: fuzzRuns(500) });
  });

  it("property: choiceBytes(choice) is the UTF-8 length of JSON.stringify(choice)", () => {
    const provider = fc.oneof(fc.constantFrom("openai", "anthropic", "ollama"), text);
    fc.assert(
      fc.property(provider, fc.constantFrom(...APIS), modelList, fc.boolean(), (name, api, models, available) => {
        for (const model of models) {
          const choice = choiceOf(name, api, model, available, idOf);
          assert.equal(choiceBytes(choice), utf8ByteCount(JSON.stringify(choice)));
        }
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it("property: admitted choices, paged in any ranges, are exactly the eager build's, with its notices", () => {
    fc.assert(
      fc.property(catalog, fc.array(fc.nat(), { maxLength: 4 }), (providers, cuts) => {
        const scans = providers.map((provider) => scanOf(provider.name, provider.api, provider.models, provider.auth)).sort((a, b) => compareUtf8(a.name, b.name));
        // Every other cached model enabled, plus an id nothing caches.
        const enabled = scans.flatMap((scan) => scan.cache!.models.filter((_, index) => index % 2 === 0).map((model) => ({ provider: scan.name, model: model.id })));
        enabled.push({ provider: "ollama", model: "retired" });
        const expected = eager(scans, new Set(enabled.map((choice) => `${choice.provider}/${choice.model}`)));
        const admitted = admitChoices(scans, enabled);
        assert.ok(admitted.ok);
        assert.equal(admitted.count, expected.length);
        const edges = [...new Set([0, ...cuts.map((cut) => cut % (expected.length + 1)), expected.length])].sort((a, b) => a - b);
        const paged = edges.slice(1).flatMap((end, index) => choicesIn(admitted, edges[index]!, end, idOf));
        assert.deepEqual(paged, expected);
        const built = buildChoices(scans, enabled, idOf);
        assert.ok(built.ok);
        assert.deepEqual(built.choices, expected);
        const unsafe = scans.some((scan) => scan.cache!.models.some((model, index) => index % 2 === 0 && (!isSafeDisplayName(scan.name) || !isSafeDisplayName(model.id))));
        const empty = scans.some((scan) => scan.state === "empty");
        const notices = [...(unsafe ? ["catalog_entries_omitted_unsafe"] : []), ...(empty ? ["provider_catalog_unavailable"] : [])];
        assert.deepEqual([...admitted.notices].sort(), notices);
      }),
      { numRuns: fuzzRuns(200) },
    );
  });

  it("admitChoices() admits choices serializing to exactly catalog_snapshot_bytes and refuses one byte more", () => {
    const models = (extra: number) =>
      Array.from({ length: 2000 }, (_, index) => ({ id: `model-${String(index).padStart(4, "0")}-${"x".repeat(200)}`, name: "n".repeat(1 + (index < extra % 2000 ? 1 : 0) + Math.floor(extra / 2000)), reasoning: null }));
    const enabled = models(0).map((model) => ({ provider: "vllm", model: model.id }));
    const size = (extra: number) => {
      const built = buildChoices([scanOf("vllm", "openai-chat", models(extra))], enabled, idOf);
      return built.ok ? utf8ByteCount(JSON.stringify(built.choices)) : null;
    };
    const room = LIMITS.catalog_snapshot_bytes - size(0)!;
    assert.ok(room > 0 && room < 2000 * 200, "the names can fill the rest");
    assert.equal(size(room), LIMITS.catalog_snapshot_bytes);
    assert.equal(size(room + 1), null);
    const over = admitChoices([scanOf("vllm", "openai-chat", models(room + 1))], enabled);
    assert.deepEqual(over, { ok: false, code: "catalog_limit" });
  });

  it("admitChoices() fails with catalog_unavailable when a provider is scanned twice (duplicate choices)", () => {
    const scan = scanOf("ollama", "openai-chat", [{ id: "qwen", name: null, reasoning: null }]);
    assert.deepEqual(admitChoices([scan, scan], [{ provider: "ollama", model: "qwen" }]), { ok: false, code: "catalog_unavailable" });
  });
});

describe("catalog rescans", () => {
  it("scanCatalog() reuses an unchanged provider's result; a changed file or target gets a new one and a new fingerprint", async () => {
    const fs = new MemoryFileSystem();
    const runtime = createMemoryRuntime({ fs });
    const endpoint = "e".repeat(64);
    const seed = (provider: string, ids: string[]) =>
      fs.writeFile(`${HOME}/catalog/${provider}.json`, encodeCache({ provider, endpoint, refreshedAt: "2026-12-01T10:00:00.000Z", models: ids.map((id) => ({ id, name: null, reasoning: null })) }), 0o600);
    seed("a", ["one"]);
    seed("b", ["two"]);
    const targets: ScanTarget[] = [{ name: "a", endpoint, authAvailable: true }, { name: "b", endpoint, authAvailable: true }, { name: "c", endpoint, authAvailable: true }];
    const memo: DecodeMemo = new Map();
    const signal = new AbortController().signal;
    const scan = async (list: readonly ScanTarget[]) => {
      const result = await scanCatalog(runtime, HOME, list, signal, memo);
      assert.ok(result.ok);
      return result;
    };
    const first = await scan(targets);
    assert.deepEqual(first.providers.map((provider) => provider.state), ["ready", "ready", "missing"]);
    const again = await scan(targets);
    assert.equal(again.fingerprint, first.fingerprint);
    assert.ok(again.providers.every((provider, index) => provider === first.providers[index]), "nothing new for unchanged files");
    seed("b", ["three"]);
    const changed = await scan(targets);
    assert.notEqual(changed.fingerprint, first.fingerprint);
    assert.equal(changed.providers[0], first.providers[0]);
    assert.notEqual(changed.providers[1], first.providers[1]);
    assert.deepEqual(changed.providers[1]!.cache!.models.map((model) => model.id), ["three"]);
    const locked = await scan([targets[0]!, { ...targets[1]!, authAvailable: false }, targets[2]!]);
    assert.notEqual(locked.fingerprint, changed.fingerprint, "local readiness is part of the fingerprint");
    assert.equal(locked.providers[1]!.authAvailable, false);
  });
});
