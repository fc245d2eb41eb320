// model.refresh against loopback /models servers in each real format, through
// the production HTTP client; every fault keeps the previous cache and leaves
// the catalog as it was.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Gate } from "./support/fake-provider.ts";
import {
  ANTHROPIC_KEY,
  allChoices,
  anthropicPages,
  builtinsAt,
  call,
  type CatalogServer,
  fails,
  HOME,
  hostFetch,
  leaked,
  ok,
  OPENAI_KEY,
  openAiList,
  startCatalogServer,
  stopCatalogServer,
} from "./support/catalog.ts";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.ts";
import { fetchModelList } from "../src/catalog/model-list.ts";
import { createMemoryRuntime } from "../runtime/memory.ts";

const ENABLED = ["ollama/qwen", "ollama/llama3.1:8b", "openai/gpt-5", "openai/gpt-5.2", "anthropic/claude-opus-4-7"];

describe("model.refresh: real list formats", () => {
  let server: CatalogServer;
  before(async () => {
    const provider = await startFakeProvider();
    server = await startCatalogServer({ provider, settings: builtinsAt(provider, { providers: { catalog: { enabled: ENABLED } } }) });
  });
  after(async () => void await stopCatalogServer(server));

  it("Ollama's OpenAI-compatible list: keyless GET /v1/models, cached, offered when enabled", async () => {
    server.provider.enqueue(openAiList([{ id: "qwen" }, { id: "llama3.1:8b" }, { id: "not-enabled" }]));
    const result = await ok(server, "model.refresh", { provider: "ollama" });
    assert.deepEqual(result, { provider: "ollama", refreshed: true, models: 3, notices: [] });
    const request = server.provider.log.at(-1)!;
    assert.equal(request.method, "GET");
    assert.equal(request.url, "/v1/models");
    assert.equal(request.headers.authorization, undefined);
    assert.ok(server.fs.exists(`${HOME}/catalog/ollama.json`));
    const { choices } = await allChoices(server);
    assert.deepEqual(choices.map((choice) => [choice.provider, choice.model]), [["ollama", "llama3.1:8b"], ["ollama", "qwen"]]);
  });

  it("OpenAI's list with the provider's key as a bearer token, never in output", async () => {
    server.provider.enqueue(openAiList([{ id: "gpt-5" }, { id: "gpt-5.2" }, { id: "gpt-4o" }]));
    assert.equal((await ok(server, "model.refresh", { provider: "openai" })).models, 3);
    assert.equal(server.provider.log.at(-1)!.headers.authorization, `Bearer ${OPENAI_KEY}`);
    const choices = (await allChoices(server)).choices.filter((choice) => choice.provider === "openai");
    assert.deepEqual(choices.map((choice) => [choice.model, choice.provider_name, choice.availability, choice.effort_support, choice.permitted_efforts]), [
      ["gpt-5", "OpenAI", "available", "supported", ["default", "low", "medium", "high"]],
      ["gpt-5.2", "OpenAI", "available", "supported", ["default", "low", "medium", "high", "xhigh"]],
    ]);
    assert.equal(leaked(server, OPENAI_KEY), false);
  });

  it("Anthropic's paginated list: has_more/last_id continue with after_id; x-api-key and anthropic-version sent", async () => {
    const models = Array.from({ length: 5 }, (_, i) => ({ id: i === 4 ? "claude-opus-4-7" : `claude-old-${i}`, name: `Claude ${i}` }));
    server.provider.handler = anthropicPages(models, 2);
    const before = server.provider.log.length;
    try {
      assert.equal((await ok(server, "model.refresh", { provider: "anthropic" })).models, 5);
    } finally {
      server.provider.handler = null;
    }
    const urls = server.provider.log.slice(before).map((request) => request.url);
    assert.deepEqual(urls, ["/v1/models?limit=1000", "/v1/models?limit=1000&after_id=claude-old-1", "/v1/models?limit=1000&after_id=claude-old-3"]);
    const last = server.provider.log.at(-1)!;
    assert.equal(last.headers["x-api-key"], ANTHROPIC_KEY);
    assert.equal(last.headers["anthropic-version"], "2023-06-01");
    const claude = (await allChoices(server)).choices.find((choice) => choice.provider === "anthropic")!;
    assert.deepEqual([claude.model, claude.model_name, claude.permitted_efforts], ["claude-opus-4-7", "Claude 4", ["default", "low", "medium", "high", "xhigh", "max"]]);
    assert.equal(leaked(server, ANTHROPIC_KEY), false);
  });

  it("Anthropic's max_input_tokens and OpenRouter's context_length are cached as context_window (cache v: 2); an unsound one is left out", async () => {
    const anthropic = {
      data: [
        { type: "model", id: "claude-opus-4-7", display_name: "Claude Opus 4.7", created_at: "2026-01-01T00:00:00Z", max_input_tokens: 200_000, max_tokens: 64_000 },
        { type: "model", id: "claude-old", display_name: "Claude Old", created_at: "2024-01-01T00:00:00Z", max_input_tokens: null, max_tokens: null },
      ],
      has_more: false,
      first_id: "claude-opus-4-7",
      last_id: "claude-old",
    };
    server.provider.enqueue({ body: anthropic });
    await ok(server, "model.refresh", { provider: "anthropic" });
    const cached = new TextDecoder().decode(server.fs.contents(`${HOME}/catalog/anthropic.json`)!);
    assert.match(cached, /^\{"v":2,/);
    assert.match(cached, /\{"id":"claude-opus-4-7","name":"Claude Opus 4.7","reasoning":null,"context_window":200000\},\{"id":"claude-old","name":"Claude Old","reasoning":null\}/);
    const openRouter = { object: "list", data: [{ id: "qwen", name: "Qwen", context_length: 32_768 }, { id: "llama3.1:8b", context_length: -1 }] };
    server.provider.enqueue({ body: openRouter });
    await ok(server, "model.refresh", { provider: "ollama" });
    const local = new TextDecoder().decode(server.fs.contents(`${HOME}/catalog/ollama.json`)!);
    assert.match(local, /\{"id":"qwen","name":"Qwen","reasoning":null,"context_window":32768\},\{"id":"llama3.1:8b","name":null,"reasoning":null\}/);
    // A list that says nothing of windows is still written at v: 1, as before.
    server.provider.enqueue(openAiList([{ id: "qwen" }, { id: "llama3.1:8b" }]));
    await ok(server, "model.refresh", { provider: "ollama" });
    assert.match(new TextDecoder().decode(server.fs.contents(`${HOME}/catalog/ollama.json`)!), /^\{"v":1,/);
  });

  it("every fault keeps the previous cache byte for byte and the catalog unchanged", async () => {
    const cache = `${HOME}/catalog/ollama.json`;
    const bytes = server.fs.contents(cache)!;
    const catalog = (await allChoices(server)).choices;
    const huge = { object: "list", data: Array.from({ length: 40_000 }, (_, i) => ({ id: `model-${i}-padding-padding` })) };
    const faults = [
      { status: 500, body: { error: "boom" } },
      { status: 401, body: { error: { message: `bad key ${OPENAI_KEY}` } } },
      { body: "{not json" },
      { body: huge },
      { body: { object: "list", data: [{ id: "qwen" }, { id: "qwen" }] } },
      { body: { object: "list", data: [{ id: "x".repeat(257) }] } },
      { body: { object: "list", data: [{ name: "no id" }] } },
      { body: { object: "list" } },
      { status: 302, headers: { location: "http://127.0.0.1:1/" }, body: {} },
    ];
    for (const fault of faults) {
      server.provider.enqueue(fault);
      assert.equal(await fails(server, "model.refresh", { provider: "ollama" }), "catalog_unavailable", JSON.stringify(fault).slice(0, 60));
      assert.deepEqual(server.fs.contents(cache), bytes);
      assert.deepEqual((await allChoices(server)).choices, catalog);
    }
    assert.equal(leaked(server, OPENAI_KEY), false);
    assert.deepEqual(server.fs.readDir ? (await server.fs.readDir(`${HOME}/catalog`)).map((entry) => entry.name).sort() : [], ["anthropic.json", "ollama.json", "openai.json"]);
  });

  it("a provider without its key is provider_unavailable before any request; an unknown one too", async () => {
    const provider = await startFakeProvider();
    const keyless = await startCatalogServer({ provider, settings: builtinsAt(provider), env: { ANTHROPIC_API_KEY: "" } });
    try {
      assert.equal(await fails(keyless, "model.refresh", { provider: "anthropic" }), "provider_unavailable");
      assert.equal(await fails(keyless, "model.refresh", { provider: "nowhere" }), "provider_unavailable");
      assert.equal(provider.log.length, 0);
      assert.equal(await fails(keyless, "model.refresh", { provider: "bad name" }), "invalid_params");
      assert.equal(await fails(keyless, "model.refresh", { provider: "ollama", extra: 1 }), "invalid_params");
    } finally {
      await stopCatalogServer(keyless);
    }
  });

  it("without negotiation model.refresh and model.catalog.status are unsupported_capability", async () => {
    const provider = await startFakeProvider();
    const base = await startCatalogServer({ provider, capabilities: ["status", "model.catalog", "selection.set"] });
    try {
      assert.equal(await fails(base, "model.refresh", { provider: "ollama" }), "unsupported_capability");
      assert.equal(await fails(base, "model.catalog.status"), "unsupported_capability");
      assert.equal(provider.log.length, 0);
      assert.equal((await call(base, "model.catalog")).result?.source, "cache_only");
    } finally {
      await stopCatalogServer(base);
    }
  });
});

describe("fetchModelList: time bound and cancellation", () => {
  let provider: FakeProvider;
  before(async () => (provider = await startFakeProvider()));
  after(async () => await provider.close());
  const endpoint = () => ({ name: "ollama", api: "openai-chat" as const, baseUrl: `${provider.url}/v1`, apiKeyEnv: null, defaultModel: null });

  it("a server slower than the deadline is catalog_unavailable", async () => {
    const gate = new Gate();
    provider.enqueue({ chunks: [gate, JSON.stringify({ data: [] })] });
    const runtime = createMemoryRuntime({ fetch: await hostFetch() });
    const result = await fetchModelList({ runtime, endpoint: endpoint(), apiKey: null, signal: new AbortController().signal, deadlineMs: 50 });
    gate.release();
    assert.deepEqual(result, { ok: false, code: "catalog_unavailable" });
  });

  it("a hanging server, then cancellation: operation_cancelled and the connection closed", async () => {
    const gate = new Gate();
    provider.enqueue({ chunks: [gate, "never"], end: "hang" });
    const runtime = createMemoryRuntime({ fetch: await hostFetch() });
    const abort = new AbortController();
    const pending = fetchModelList({ runtime, endpoint: endpoint(), apiKey: null, signal: abort.signal, deadlineMs: 60_000 });
    await gate.whenReached();
    abort.abort();
    assert.deepEqual(await pending, { ok: false, code: "operation_cancelled" });
    await provider.until(() => provider.log.at(-1)!.clientClosed);
    gate.release();
  });
});
