// Spec sentences of "Provider/model catalog and deliberate selection" that the
// other selection tests leave unproven: status between an attachment's commit
// and its response, catalog observations rotating the selection revision, the
// revisions a mutation keeps or makes stale, restoration through normal
// admission without writing, and the failed startup's null selection.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { FileInfo } from "../src/host/runtime.ts";
import { Gate, startFakeProvider } from "./support/fake-provider.ts";
import { type Frame, initLine, line, startServer, unlessBusy } from "./support/harness.ts";
import { reply } from "./support/provider-scripts.ts";
import { request, runEvents } from "./support/turns.ts";
import { builtinsAt, call, CATALOG_CAPABILITIES, type CatalogServer, fails, HOME, ok, seedCache, selectionOf, startCatalogServer, stopCatalogServer } from "./support/catalog.ts";

/** A memory filesystem whose next `lstat` of one path (after `skip` others of it) waits at a gate. */
class GatedFs extends MemoryFileSystem {
  gated: { readonly path: string; readonly gate: Gate; skip?: number } | null = null;
  override async lstat(path: string): Promise<FileInfo> {
    const gated = this.gated;
    if (gated !== null && gated.path === path && (gated.skip ?? 0) > 0) gated.skip! -= 1;
    else if (gated !== null && gated.path === path) {
      this.gated = null;
      gated.gate.markReached();
      await gated.gate.released;
    }
    return await super.lstat(path);
  }
}

/** Sends a request while the next `lstat` of `path` (after `skip` others) is held; returns what `meanwhile` saw and the answer. */
async function held<T>(fs: GatedFs, path: string, send: () => Promise<Frame>, meanwhile: () => Promise<T>, skip = 0): Promise<{ answer: Frame; seen: T }> {
  const gate = new Gate();
  fs.gated = { path, gate, skip };
  const pending = send();
  await gate.whenReached();
  const seen = await meanwhile();
  gate.release();
  return { answer: await pending, seen };
}

const ENABLED = ["ollama/qwen", "ollama/deep", "openai/gpt-5", "openai/gpt-5.2", "anthropic/claude-opus-4-7"];
const sessionFile = (id: string) => `${HOME}/sessions/${id}.jsonl`;

async function seedAll(fs: MemoryFileSystem, url: string) {
  await seedCache(fs, "ollama", "openai-chat", url, [{ id: "qwen" }, { id: "deep", reasoning: true }]);
  await seedCache(fs, "openai", "openai-responses", url, [{ id: "gpt-5" }, { id: "gpt-5.2" }]);
  await seedCache(fs, "anthropic", "anthropic-messages", url, [{ id: "claude-opus-4-7" }]);
}

interface ServerOptions {
  model?: string;
  enabled?: string[];
  env?: Record<string, string>;
  provider?: Awaited<ReturnType<typeof startFakeProvider>>;
  capabilities?: string[];
}

async function server(fs: MemoryFileSystem, options: ServerOptions = {}): Promise<CatalogServer> {
  const provider = options.provider ?? (await startFakeProvider());
  if (!fs.exists(`${HOME}/catalog/ollama.json`)) await seedAll(fs, `${provider.url}/v1`);
  const settings = builtinsAt(provider, { model: { provider: "ollama", model: options.model ?? "qwen" }, providers: { catalog: { enabled: options.enabled ?? ENABLED } } });
  return await startCatalogServer({ provider, fs, env: options.env ?? {}, settings, capabilities: options.capabilities ?? CATALOG_CAPABILITIES });
}

/** Runs `body` against a server on `fs`, stopping it afterwards. */
async function withServer(fs: MemoryFileSystem, options: ServerOptions, body: (run: CatalogServer) => Promise<void>): Promise<void> {
  const run = await server(fs, options);
  try {
    await body(run);
  } finally {
    await stopCatalogServer(run);
  }
}

/** Selects `provider`/`model` on `session` from a fresh catalog page and the current selection revision. */
async function select(run: CatalogServer, session: string, provider: string, model: string, effort?: Record<string, unknown>) {
  const catalog = (await ok(run, "model.catalog")).revision;
  const selection = (await selectionOf(run)).revision;
  return await ok(run, "selection.set", { session_id: session, selection_revision: selection, catalog_revision: catalog, provider, model, ...(effort ? { effort } : {}) });
}

describe("status between an attachment's commit and its response", () => {
  it("session.open: session_id and selection come from the same completed attachment", async () => {
    const fs = new GatedFs();
    await withServer(fs, {}, async (run) => {
      const saved = (await ok(run, "session.create")).session_id as string;
      await select(run, saved, "openai", "gpt-5.2", { mode: "set", value: "high" });
      const other = (await ok(run, "session.create")).session_id as string;
      const before = await ok(run, "status");
      assert.deepEqual([before.session_id, before.provider], [other, "ollama"]);
      const { answer, seen: during } = await held(fs, `${HOME}/catalog/openai.json`, () => call(run, "session.open", { session_id: saved }), () => ok(run, "status"));
      assert.deepEqual(answer.result?.notices, []);
      const after = await ok(run, "status");
      assert.deepEqual([after.session_id, after.provider, after.model], [saved, "openai", "gpt-5.2"]);
      // Either the previous attachment with its selection, or the new one with its own: never a mix.
      const pair = [during.session_id, (during.selection as { revision: string }).revision];
      assert.ok(
        JSON.stringify(pair) === JSON.stringify([other, (before.selection as { revision: string }).revision]) ||
          JSON.stringify(pair) === JSON.stringify([saved, (after.selection as { revision: string }).revision]),
        `status during the open mixes attachments: ${JSON.stringify(during)}`,
      );
    });
  });
});

describe("status between a session.create's attachment and its response", () => {
  it("session.create: status keeps the previous session with its selection until the new one's is in place", async () => {
    const fs = new GatedFs();
    await withServer(fs, {}, async (run) => {
      const saved = (await ok(run, "session.create")).session_id as string;
      await select(run, saved, "openai", "gpt-5", { mode: "set", value: "low" });
      const before = await ok(run, "status");
      const { answer, seen: during } = await held(fs, `${HOME}/catalog/ollama.json`, () => call(run, "session.create"), () => ok(run, "status"));
      const fresh = answer.result!.session_id;
      assert.deepEqual([during.session_id, during.selection], [before.session_id, before.selection]);
      const after = await ok(run, "status");
      assert.deepEqual([after.session_id, after.provider], [fresh, "ollama"]);
    });
  });
});

describe("selection.set on the one worker", () => {
  it("validates twice: a cache changed after the first rescan is stale_catalog; meanwhile status shows the prior selection and other work is busy", async () => {
    const fs = new GatedFs();
    await withServer(fs, {}, async (run) => {
      const session = (await ok(run, "session.create")).session_id as string;
      const catalog = (await ok(run, "model.catalog")).revision;
      const before = await selectionOf(run);
      const params = { session_id: session, selection_revision: before.revision, catalog_revision: catalog, provider: "openai", model: "gpt-5" };
      // The first rescan reads openai.json once; the second one waits.
      const { answer } = await held(fs, `${HOME}/catalog/openai.json`, () => call(run, "selection.set", params), async () => {
        assert.deepEqual(await selectionOf(run), before);
        assert.equal(await fails(run, "model.catalog"), "busy");
        assert.equal(await fails(run, "turn.start", { session_id: session, prompt: "hi" }), "busy");
        await seedCache(fs, "openai", "openai-responses", `${run.provider.url}/v1`, [{ id: "gpt-5" }]);
      }, 1);
      assert.equal(answer.error?.code, "stale_catalog");
      assert.equal(fs.exists(sessionFile(session)), false);
      assert.deepEqual(await selectionOf(run), before);
    });
  });

  it("operation.cancel stops model.catalog and model.catalog.status, answering them first; selection.set is not cancellable by id", async () => {
    const fs = new GatedFs();
    await withServer(fs, { capabilities: [...CATALOG_CAPABILITIES, "operation.cancel"] }, async (run) => {
      const session = (await ok(run, "session.create")).session_id as string;
      for (const method of ["model.catalog", "model.catalog.status"]) {
        const send = () => request(run, `${method}-1`, method);
        const { answer, seen: cancel } = await held(fs, `${HOME}/catalog/ollama.json`, send, () => request(run, `${method}-cancel`, "operation.cancel", { id: `${method}-1` }));
        assert.deepEqual(cancel.result, { cancellation_requested: true });
        assert.equal(answer.error?.code, "operation_cancelled");
        assert.ok((answer.seq as number) < (cancel.seq as number), "the cancelled request is answered before the cancel");
        // The worker stays occupied until the cancelled work reaches its next check.
        assert.ok((await unlessBusy(() => call(run, "model.catalog"), `the cancelled ${method} to stop`)).result);
      }
      const catalog = (await ok(run, "model.catalog")).revision;
      const params = { session_id: session, selection_revision: (await selectionOf(run)).revision, catalog_revision: catalog, provider: "openai", model: "gpt-5" };
      const { answer, seen } = await held(fs, `${HOME}/catalog/openai.json`, () => request(run, "select-1", "selection.set", params), () => request(run, "select-cancel", "operation.cancel", { id: "select-1" }));
      assert.equal(seen.error?.code, "stale_operation");
      assert.equal(answer.result?.durable, true);
    });
  });

  it("a catalog revision replaced by a fresh page is stale_catalog, for continuations and for selection.set", async () => {
    await withServer(new MemoryFileSystem(), {}, async (run) => {
      const session = (await ok(run, "session.create")).session_id as string;
      const first = await ok(run, "model.catalog", { limit: 1 });
      await ok(run, "model.catalog", { limit: 1 });
      assert.equal(await fails(run, "model.catalog", { revision: first.revision, cursor: first.next_cursor, limit: 1 }), "stale_catalog");
      const params = { session_id: session, selection_revision: (await selectionOf(run)).revision, catalog_revision: first.revision, provider: "openai", model: "gpt-5" };
      assert.equal(await fails(run, "selection.set", params), "stale_catalog");
    });
  });
});

describe("catalog observations and the selection revision", () => {
  it("a fresh page that changes the effort semantics rotates the revision, and the old one is stale_selection", async () => {
    const fs = new MemoryFileSystem();
    await withServer(fs, { model: "deep" }, async (run) => {
      const session = (await ok(run, "session.create")).session_id as string;
      const start = await selectionOf(run);
      assert.deepEqual([start.model, start.effort_support], ["deep", "supported"]);
      const catalog = (await ok(run, "model.catalog")).revision;
      assert.equal((await selectionOf(run)).revision, start.revision, "an unchanged observation keeps the revision");
      await seedCache(fs, "ollama", "openai-chat", `${run.provider.url}/v1`, [{ id: "qwen" }, { id: "deep", reasoning: false }]);
      const fresh = (await ok(run, "model.catalog")).revision;
      const changed = await selectionOf(run);
      assert.notEqual(changed.revision, start.revision);
      assert.deepEqual([changed.effort_support, changed.effective_effort], ["unsupported", null]);
      const params = { session_id: session, selection_revision: start.revision, catalog_revision: fresh, provider: "ollama", model: "qwen" };
      assert.equal(await fails(run, "selection.set", params), "stale_selection");
      assert.notEqual(catalog, fresh);
      assert.equal(fs.exists(sessionFile(session)), false);
    });
  });

  it("the selected provider is relevant without an enabled id: its missing cache is a notice", async () => {
    const fs = new MemoryFileSystem();
    await withServer(fs, { enabled: ["openai/gpt-5"] }, async (run) => {
      assert.deepEqual((await ok(run, "model.catalog")).notices, []);
      fs.unlink(`${HOME}/catalog/ollama.json`);
      const page = await ok(run, "model.catalog");
      assert.deepEqual([page.notices, (page.choices as { model: string }[]).map((choice) => choice.model)], [["provider_catalog_unavailable"], ["gpt-5"]]);
      fs.unlink(`${HOME}/catalog/anthropic.json`);
      assert.deepEqual((await ok(run, "model.catalog")).notices, ["provider_catalog_unavailable"], "an unused provider adds nothing");
    });
  });

  it("model.catalog.status changes neither the catalog snapshot nor the selection", async () => {
    await withServer(new MemoryFileSystem(), {}, async (run) => {
      const first = await ok(run, "model.catalog", { limit: 1 });
      const selection = (await selectionOf(run)).revision;
      await ok(run, "model.catalog.status");
      const next = await ok(run, "model.catalog", { revision: first.revision, cursor: first.next_cursor, limit: 1 });
      assert.equal(next.revision, first.revision);
      assert.equal((await selectionOf(run)).revision, selection);
    });
  });
});

describe("revisions a mutation keeps and makes stale", () => {
  it("selection.set keeps the catalog revision pageable and makes the prior history revision stale", async () => {
    await withServer(new MemoryFileSystem(), {}, async (run) => {
      const settings = run.fs.contents(`${HOME}/settings.jsonc`);
      const session = (await ok(run, "session.create")).session_id as string;
      const first = await ok(run, "model.catalog", { limit: 1 });
      const params = { session_id: session, catalog_revision: first.revision, provider: "openai", model: "gpt-5", effort: { mode: "set", value: "low" } };
      const one = await ok(run, "selection.set", { ...params, selection_revision: (await selectionOf(run)).revision });
      assert.equal(one.catalog_revision, first.revision);
      const next = await ok(run, "model.catalog", { revision: first.revision, cursor: first.next_cursor, limit: 1 });
      assert.equal(next.revision, first.revision, "the catalog revision survives the mutation");
      const two = await ok(run, "selection.set", { ...params, model: "gpt-5.2", selection_revision: (await selectionOf(run)).revision });
      assert.notEqual(two.history_revision, one.history_revision);
      assert.equal(await fails(run, "history.page", { session_id: session, revision: one.history_revision }), "stale_revision");
      assert.equal((await ok(run, "history.page", { session_id: session, revision: two.history_revision })).complete, true);
      const records = new TextDecoder().decode(run.fs.contents(sessionFile(session))).trim().split("\n").map((text) => JSON.parse(text).type);
      assert.deepEqual(records, ["session", "session_preferences", "session_preferences"]);
      assert.deepEqual(run.fs.contents(`${HOME}/settings.jsonc`), settings, "settings are never written");
    });
  });

  it("a failed session.open keeps the selection and its revision", async () => {
    await withServer(new MemoryFileSystem(), {}, async (run) => {
      await ok(run, "session.create");
      const before = await ok(run, "status");
      assert.equal(await fails(run, "session.open", { session_id: "missing-session" }), "session_missing");
      const after = await ok(run, "status");
      assert.deepEqual([after.session_id, after.selection], [before.session_id, before.selection]);
    });
  });

  it("selection.set makes the prior discovery revision stale", async () => {
    await withServer(new MemoryFileSystem(), {}, async (run) => {
      const sessions = [(await ok(run, "session.create")).session_id as string];
      await select(run, sessions[0]!, "openai", "gpt-5");
      sessions.push((await ok(run, "session.create")).session_id as string);
      await select(run, sessions[1]!, "openai", "gpt-5");
      const listed = await ok(run, "session.list", { limit: 1 });
      assert.notEqual(listed.next_cursor, null);
      await select(run, sessions[1]!, "openai", "gpt-5.2");
      assert.equal(await fails(run, "session.list", { revision: listed.revision, cursor: listed.next_cursor, limit: 1 }), "stale_revision");
    });
  });

  it("params: each of the five required fields, the id grammars, the 256-byte names and a duplicate nested key are invalid_params", async () => {
    await withServer(new MemoryFileSystem(), {}, async (run) => {
      const session = (await ok(run, "session.create")).session_id as string;
      const base: Record<string, unknown> = { session_id: session, selection_revision: (await selectionOf(run)).revision, catalog_revision: (await ok(run, "model.catalog")).revision, provider: "openai", model: "gpt-5" };
      for (const field of Object.keys(base)) {
        const { [field]: _, ...rest } = base;
        assert.equal(await fails(run, "selection.set", rest), "invalid_params", `without ${field}`);
      }
      const wrong = [{ session_id: "a/b" }, { session_id: "s".repeat(65) }, { selection_revision: "r".repeat(65) }, { catalog_revision: "bad id" }, { provider: "p".repeat(257) }, { model: "\u00e9".repeat(129) }, { provider: null }, { effort: null }];
      for (const bad of wrong) assert.equal(await fails(run, "selection.set", { ...base, ...bad }), "invalid_params", JSON.stringify(bad));
      // 256 bytes exactly is a valid name: refused only because it is no choice.
      assert.equal(await fails(run, "selection.set", { ...base, model: "\u00e9".repeat(128) }), "selection_invalid");
      const raw = `{"protocol":"magi-code.local-agent","version":1,"id":"dup1","method":"selection.set","params":${JSON.stringify(base).slice(0, -1)},"effort":{"mode":"keep","mode":"keep"}}}\n`;
      assert.equal((await request(run, "dup1", "selection.set", {}, () => raw)).error?.code, "invalid_params");
      assert.equal(run.fs.exists(sessionFile(session)), false);
    });
  });

  it("a secret-like provider or model is invalid_params, like every other unsafe string", async () => {
    await withServer(new MemoryFileSystem(), {}, async (run) => {
      const session = (await ok(run, "session.create")).session_id as string;
      const catalog = (await ok(run, "model.catalog")).revision;
      const selection = (await selectionOf(run)).revision;
      const base = { session_id: session, selection_revision: selection, catalog_revision: catalog, provider: "openai", model: "gpt-5" };
      for (const bad of [{ model: "sk-ant-api03-abcdefghijklmnop1234567890" }, { model: "Bearer abcdefgh" }, { provider: "sk-proj-abcdefghijklmnopqrstuvwxyz012345" }]) {
        assert.equal(await fails(run, "selection.set", { ...base, ...bad }), "invalid_params", JSON.stringify(bad));
      }
      assert.equal(run.fs.exists(sessionFile(session)), false);
    });
  });
});

/** A durable session whose saved selection is `provider`/`model` at `effort`, written by a child that has since exited. */
async function savedSession(fs: MemoryFileSystem, fake: Awaited<ReturnType<typeof startFakeProvider>>, provider: string, model: string, effort: string): Promise<string> {
  const first = await server(fs, { provider: fake });
  const session = (await ok(first, "session.create")).session_id as string;
  await select(first, session, provider, model, { mode: "set", value: effort });
  await stopCatalogServer(first, false);
  return session;
}

describe("session.open restores through normal admission, without writing", () => {
  it("a saved choice whose provider lost its key, or that is no longer enabled, keeps the startup selection; the file is untouched", async () => {
    const provider = await startFakeProvider();
    const fs = new MemoryFileSystem();
    const session = await savedSession(fs, provider, "anthropic", "claude-opus-4-7", "max");
    const bytes = fs.contents(sessionFile(session));

    for (const options of [{ env: { ANTHROPIC_API_KEY: "" } }, { enabled: ["ollama/qwen"] }]) {
      const next = await server(fs, { provider, ...options });
      try {
        const opened = await ok(next, "session.open", { session_id: session });
        assert.deepEqual(opened.notices, ["saved_selection_unavailable"], JSON.stringify(options));
        const kept = await selectionOf(next);
        assert.deepEqual([kept.provider, kept.model, kept.requested_effort], ["ollama", "qwen", "max"]);
        assert.deepEqual(fs.contents(sessionFile(session)), bytes, "restoration writes nothing");
      } finally {
        await stopCatalogServer(next, false);
      }
    }
    await provider.close();
  });
});

describe("turns use the restored selection", () => {
  it("a saved effort the model no longer permits stays requested, and the turn sends no override", async () => {
    const provider = await startFakeProvider();
    const fs = new MemoryFileSystem();
    const session = await savedSession(fs, provider, "ollama", "deep", "high");
    await seedCache(fs, "ollama", "openai-chat", `${provider.url}/v1`, [{ id: "qwen" }, { id: "deep", reasoning: false }]);
    const next = await server(fs, { provider });
    try {
      assert.deepEqual((await ok(next, "session.open", { session_id: session })).notices, ["saved_selection_notice"]);
      const restored = await selectionOf(next);
      assert.deepEqual([restored.model, restored.requested_effort, restored.effective_effort], ["deep", "high", null]);
      provider.enqueue(reply("openai-chat", { text: ["hi"] }));
      const started = await ok(next, "turn.start", { session_id: session, prompt: "hello" });
      const events = await runEvents(next, started.run_id as string);
      assert.equal((events.at(-1)!.data as { outcome: string }).outcome, "completed");
      const body = provider.log.at(-1)!.body as Record<string, unknown>;
      assert.deepEqual([body.model, "reasoning_effort" in body], ["deep", false]);
    } finally {
      await stopCatalogServer(next);
    }
  });
});

describe("status.selection after a failed startup", () => {
  it("is null, and the catalog operations answer the startup's code", async () => {
    const run = startServer();
    run.runtime.fs.writeFile(`${HOME}/settings.jsonc`, JSON.stringify({ providers: { catalog: { enabled: ["nowhere/x"] } } }));
    assert.equal((await request(run, "early", "selection.set", { session_id: "a", selection_revision: "s", catalog_revision: "c", provider: "ollama", model: "qwen" })).error?.code, "not_initialized");
    const init = await request(run, "i1", "initialize", { required_capabilities: ["status", "model.catalog", "selection.set"] }, (id, capabilities) => initLine(id, capabilities));
    assert.equal(init.error?.code, "configuration_invalid");
    const status = await request(run, "s1", "status");
    assert.equal(status.result?.state, "failed");
    assert.equal(status.result?.selection, null);
    run.runtime.input.push(line("c1", "model.catalog") + line("x1", "selection.set", { session_id: "a", selection_revision: "s", catalog_revision: "c", provider: "ollama", model: "qwen" }));
    const frames = await run.waitFrames(5);
    assert.deepEqual(frames.slice(3).map((frame) => frame.error?.code), ["configuration_invalid", "configuration_invalid"]);
    run.runtime.input.end();
    await run.exit;
  });
});
