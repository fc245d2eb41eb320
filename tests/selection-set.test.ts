// selection.set, status.selection, restoration on session.open and turns that
// use the selection, over the protocol on the memory runtime.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.ts";
import { reply } from "./support/provider-scripts.ts";
import { runEvents } from "./support/turns.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { encodeAll, overSnapshotParts } from "./support/records.ts";
import { builtinsAt, type CatalogServer, CWD, fails, HOME, ok, seedCache, selectionOf, startCatalogServer, stopCatalogServer } from "./support/catalog.ts";

const ENABLED = ["ollama/qwen", "ollama/deep", "openai/gpt-5", "openai/gpt-5.2", "anthropic/claude-opus-4-7"];

async function seedAll(fs: MemoryFileSystem, url: string, deepReasoning: boolean | null = true) {
  await seedCache(fs, "ollama", "openai-chat", url, [{ id: "qwen" }, { id: "deep", reasoning: deepReasoning }]);
  await seedCache(fs, "openai", "openai-responses", url, [{ id: "gpt-5" }, { id: "gpt-5.2" }]);
  await seedCache(fs, "anthropic", "anthropic-messages", url, [{ id: "claude-opus-4-7" }]);
}

async function server(fs = new MemoryFileSystem(), provider?: FakeProvider, env: Record<string, string> = {}): Promise<CatalogServer> {
  const fake = provider ?? (await startFakeProvider());
  if (!fs.exists(`${HOME}/catalog/ollama.json`)) await seedAll(fs, `${fake.url}/v1`);
  return await startCatalogServer({ provider: fake, fs, env, settings: builtinsAt(fake, { providers: { catalog: { enabled: ENABLED } } }) });
}

/** A fresh catalog revision, the current selection revision and a new lazy session. */
async function prepare(run: CatalogServer): Promise<{ session: string; catalog: string; selection: string }> {
  const session = (await ok(run, "session.create")).session_id as string;
  const catalog = (await ok(run, "model.catalog")).revision as string;
  return { session, catalog, selection: (await selectionOf(run)).revision as string };
}

const sessionFile = (id: string) => `${HOME}/sessions/${id}.jsonl`;
const lines = (fs: MemoryFileSystem, id: string) => new TextDecoder().decode(fs.contents(sessionFile(id))).trim().split("\n").map((line) => JSON.parse(line));

describe("status.selection", () => {
  it("is the startup selection at readiness, null while starting; effort semantics from the policy table", async () => {
    const run = await server();
    try {
      const selection = await selectionOf(run);
      assert.match(selection.revision as string, /^[A-Za-z0-9._-]{1,64}$/);
      assert.deepEqual({ ...selection, revision: "" }, {
        revision: "",
        provider: "ollama",
        model: "qwen",
        requested_effort: "default",
        effective_effort: null,
        effort_support: "unknown",
        permitted_efforts: ["default"],
      });
    } finally {
      await stopCatalogServer(run);
    }
  });
});

describe("selection.set", () => {
  it("on a lazy handle: one session_preferences record makes it durable; status agrees; history revision pages", async () => {
    const run = await server();
    try {
      const { session, catalog, selection } = await prepare(run);
      const result = await ok(run, "selection.set", {
        session_id: session,
        selection_revision: selection,
        catalog_revision: catalog,
        provider: "openai",
        model: "gpt-5.2",
        effort: { mode: "set", value: "xhigh" },
      });
      assert.deepEqual(Object.keys(result).sort(), ["catalog_revision", "durable", "history_revision", "notices", "scope", "selection", "session_id"]);
      assert.deepEqual([result.session_id, result.catalog_revision, result.scope, result.durable, result.notices], [session, catalog, "session", true, []]);
      const status = await ok(run, "status");
      assert.deepEqual(status.selection, result.selection);
      assert.deepEqual([status.provider, status.model], ["openai", "gpt-5.2"]);
      assert.notEqual((result.selection as { revision: string }).revision, selection);
      assert.deepEqual({ ...(result.selection as object), revision: "" }, {
        revision: "",
        provider: "openai",
        model: "gpt-5.2",
        requested_effort: "xhigh",
        effective_effort: "xhigh",
        effort_support: "supported",
        permitted_efforts: ["default", "low", "medium", "high", "xhigh"],
      });
      const records = lines(run.fs, session);
      assert.deepEqual(records.map((record) => record.type), ["session", "session_preferences"]);
      assert.deepEqual([records[1].provider, records[1].model, records[1].effort], ["openai", "gpt-5.2", "xhigh"]);
      const page = await ok(run, "history.page", { session_id: session, revision: result.history_revision });
      assert.deepEqual([page.entries, page.complete], [[], true]);
    } finally {
      await stopCatalogServer(run);
    }
  });

  it("every refusal writes nothing and keeps the selection and its revision", async () => {
    const run = await server();
    try {
      const fresh = () => ok(run, "model.catalog").then((page) => page.revision as string);
      assert.equal(await fails(run, "selection.set", { session_id: "nobody", selection_revision: "s1", catalog_revision: "c1", provider: "ollama", model: "qwen" }), "session_missing");
      const { session, selection } = await prepare(run);
      const base = { session_id: session, selection_revision: selection, provider: "openai", model: "gpt-5" };
      const cases: [Record<string, unknown>, string][] = [
        [{ ...base, session_id: "other" }, "stale_session"],
        [{ ...base, selection_revision: "s9-nope" }, "stale_selection"],
        [{ ...base, catalog_revision: "c9-nope" }, "stale_catalog"],
        [{ ...base, model: "gpt-4o" }, "selection_invalid"],
        [{ ...base, provider: "ollama", model: "not-cached" }, "selection_invalid"],
        [{ ...base, provider: "nowhere" }, "selection_invalid"],
        [{ ...base, effort: { mode: "set", value: "xhigh" } }, "effort_unsupported"],
        [{ ...base, provider: "ollama", model: "qwen", effort: { mode: "set", value: "low" } }, "effort_unsupported"],
      ];
      for (const [params, code] of cases) {
        // A fresh page right before each attempt, so only the case's own defect can refuse it.
        const attempt = { catalog_revision: await fresh(), ...params };
        assert.equal(await fails(run, "selection.set", attempt), code, JSON.stringify(params));
        assert.equal(run.fs.exists(sessionFile(session)), false);
        assert.equal((await selectionOf(run)).revision, selection);
      }
      // Keep retains the requested effort, and must be compatible with the new model.
      await ok(run, "selection.set", { ...base, model: "gpt-5.2", effort: { mode: "set", value: "xhigh" }, catalog_revision: await fresh() });
      const now = (await selectionOf(run)).revision as string;
      const before = run.fs.contents(sessionFile(session));
      assert.equal(await fails(run, "selection.set", { ...base, selection_revision: now, catalog_revision: await fresh() }), "effort_unsupported");
      assert.deepEqual(run.fs.contents(sessionFile(session)), before);
    } finally {
      await stopCatalogServer(run);
    }
  });

  it("a known choice without ready authentication is provider_unavailable", async () => {
    const run = await server(new MemoryFileSystem(), undefined, { ANTHROPIC_API_KEY: "" });
    try {
      const { session, catalog, selection } = await prepare(run);
      const code = await fails(run, "selection.set", { session_id: session, selection_revision: selection, catalog_revision: catalog, provider: "anthropic", model: "claude-opus-4-7" });
      assert.equal(code, "provider_unavailable");
    } finally {
      await stopCatalogServer(run);
    }
  });

  it("a catalog changed after the page is stale_catalog, stickily", async () => {
    const run = await server();
    try {
      const { session, catalog, selection } = await prepare(run);
      await seedCache(run.fs, "openai", "openai-responses", `${run.provider.url}/v1`, [{ id: "gpt-5" }]);
      const params = { session_id: session, selection_revision: selection, catalog_revision: catalog, provider: "openai", model: "gpt-5" };
      assert.equal(await fails(run, "selection.set", params), "stale_catalog");
      await seedCache(run.fs, "openai", "openai-responses", `${run.provider.url}/v1`, [{ id: "gpt-5" }, { id: "gpt-5.2" }]);
      assert.equal(await fails(run, "selection.set", params), "stale_catalog");
    } finally {
      await stopCatalogServer(run);
    }
  });

  it("a failed append is persistence_failed and leaves everything as it was", async () => {
    const run = await server();
    try {
      const { session, catalog, selection } = await prepare(run);
      run.fs.faults.set(sessionFile(session), "io");
      const params = { session_id: session, selection_revision: selection, catalog_revision: catalog, provider: "openai", model: "gpt-5" };
      assert.equal(await fails(run, "selection.set", params), "persistence_failed");
      assert.equal((await selectionOf(run)).revision, selection);
      run.fs.faults.clear();
      assert.equal((await ok(run, "selection.set", params)).durable, true);
    } finally {
      await stopCatalogServer(run);
    }
  });

  it("on a session over the history snapshot budget: durable, history_revision null with history_unavailable; a reopen pages history_limit", async () => {
    const fs = new MemoryFileSystem();
    const id = "over-budget";
    fs.writeFile(sessionFile(id), encodeAll(overSnapshotParts(id, CWD)), 0o600);
    const run = await server(fs);
    try {
      const opened = await ok(run, "session.open", { session_id: id });
      assert.equal(await fails(run, "history.page", { session_id: id, revision: opened.revision }), "history_limit");
      const catalog = (await ok(run, "model.catalog")).revision;
      const selection = (await selectionOf(run)).revision;
      const result = await ok(run, "selection.set", { session_id: id, selection_revision: selection, catalog_revision: catalog, provider: "openai", model: "gpt-5" });
      assert.deepEqual([result.durable, result.history_revision, result.notices], [true, null, ["history_unavailable"]]);
      assert.deepEqual((await selectionOf(run)), result.selection, "the selection is applied");
      assert.equal(lines(fs, id).at(-1).type, "session_preferences");
      assert.equal(await fails(run, "history.page", { session_id: id, revision: opened.revision }), "stale_revision", "the append made the prior revision stale");
      const reopened = await ok(run, "session.open", { session_id: id });
      assert.equal(await fails(run, "history.page", { session_id: id, revision: reopened.revision }), "history_limit");
    } finally {
      await stopCatalogServer(run);
    }
  });

  it("property: every invalid effort request object is invalid_params and nothing is written", async () => {
    const run = await server();
    try {
      const { session, catalog, selection } = await prepare(run);
      const invalid = fc.oneof(
        fc.constant(null),
        fc.constantFrom("high", 1, [], {}),
        fc.record({ mode: fc.constantFrom("keep", "default"), value: fc.constantFrom("high", "low", null, "default") }),
        fc.constant({ mode: "set" }),
        fc.record({ mode: fc.constant("set"), value: fc.constantFrom("default", null, "High", "HIGH", "x-high", "maximum", "minimal", "none", "") }),
        fc.record({ mode: fc.string().filter((mode) => !["keep", "default", "set"].includes(mode)) }),
        fc.record({ mode: fc.constantFrom("Keep", "DEFAULT", "Set", "keep ", "reset") }),
        fc.record({ mode: fc.constantFrom("keep", "default"), extra: fc.jsonValue() }),
        fc.record({ mode: fc.constant("set"), value: fc.constant("high"), extra: fc.jsonValue() }),
      );
      await fc.assert(
        fc.asyncProperty(invalid, async (effort) => {
          const params = { session_id: session, selection_revision: selection, catalog_revision: catalog, provider: "openai", model: "gpt-5", effort };
          assert.equal(await fails(run, "selection.set", params), "invalid_params");
        }),
        { numRuns: fuzzRuns(60) },
      );
      for (const bad of [{ provider: "" }, { model: "" }, { model: "a\u0000b" }, { model: "m".repeat(257) }, { extra: true }]) {
        assert.equal(await fails(run, "selection.set", { session_id: session, selection_revision: selection, catalog_revision: catalog, provider: "openai", model: "gpt-5", ...bad }), "invalid_params");
      }
      assert.equal(run.fs.exists(sessionFile(session)), false);
      assert.equal((await selectionOf(run)).revision, selection);
    } finally {
      await stopCatalogServer(run);
    }
  });
});

describe("session.open restores; turns use the selection", () => {
  it("restart, reopen: restored; the next turn's request uses it; a stale effort observation fails the turn", async () => {
    const provider = await startFakeProvider();
    const fs = new MemoryFileSystem();
    const first = await server(fs, provider);
    const { session, catalog, selection } = await prepare(first);
    await ok(first, "selection.set", { session_id: session, selection_revision: selection, catalog_revision: catalog, provider: "openai", model: "gpt-5.2", effort: { mode: "set", value: "high" } });
    await stopCatalogServer(first, false);

    const second = await server(fs, provider);
    try {
      const opened = await ok(second, "session.open", { session_id: session });
      assert.deepEqual(opened.notices, []);
      const restored = await selectionOf(second);
      assert.deepEqual([restored.provider, restored.model, restored.requested_effort, restored.effective_effort], ["openai", "gpt-5.2", "high", "high"]);
      provider.enqueue(reply("openai-responses", { text: ["hi"] }));
      const started = await ok(second, "turn.start", { session_id: session, prompt: "hello" });
      const events = await runEvents(second, started.run_id as string);
      assert.equal((events.at(-1)!.data as { outcome: string }).outcome, "completed");
      const body = provider.log.at(-1)!.body as { model: string; reasoning: { effort: string } };
      assert.deepEqual([body.model, body.reasoning.effort], ["gpt-5.2", "high"]);
    } finally {
      await stopCatalogServer(second, false);
    }

    // The saved choice no longer cached: the startup selection stays, with the saved requested effort.
    await seedCache(fs, "openai", "openai-responses", `${provider.url}/v1`, [{ id: "gpt-5" }]);
    const third = await server(fs, provider);
    try {
      assert.deepEqual((await ok(third, "session.open", { session_id: session })).notices, ["saved_selection_unavailable"]);
      const kept = await selectionOf(third);
      assert.deepEqual([kept.provider, kept.model, kept.requested_effort, kept.effective_effort], ["ollama", "qwen", "high", null]);
    } finally {
      await stopCatalogServer(third, false);
    }

    // A reasoning chat model: saved high, then the cache says it has no reasoning control.
    const fourth = await server(fs, provider);
    try {
      await ok(fourth, "session.open", { session_id: session });
      const catalog4 = (await ok(fourth, "model.catalog")).revision;
      await ok(fourth, "selection.set", { session_id: session, selection_revision: (await selectionOf(fourth)).revision, catalog_revision: catalog4, provider: "ollama", model: "deep", effort: { mode: "set", value: "high" } });
      const before = (await selectionOf(fourth)).revision;
      const requests = provider.log.length;
      await seedCache(fs, "ollama", "openai-chat", `${provider.url}/v1`, [{ id: "qwen" }, { id: "deep", reasoning: false }]);
      const started = await ok(fourth, "turn.start", { session_id: session, prompt: "hello" });
      const events = await runEvents(fourth, started.run_id as string);
      assert.deepEqual(events.map((event) => event.event), ["run.finished"]);
      assert.deepEqual(events[0]!.data, { session_id: session, run_id: started.run_id, outcome: "failed", persistence: "not_started", revision: null, error_code: "stale_selection" });
      assert.equal(provider.log.length, requests, "no provider work");
      const after = await selectionOf(fourth);
      assert.notEqual(after.revision, before);
      assert.deepEqual([after.effort_support, after.effective_effort, after.requested_effort], ["unsupported", null, "high"]);
    } finally {
      await stopCatalogServer(fourth, false);
    }

    const fifth = await server(fs, provider);
    try {
      assert.deepEqual((await ok(fifth, "session.open", { session_id: session })).notices, ["saved_selection_notice"]);
    } finally {
      await stopCatalogServer(fifth);
    }
  });
});
