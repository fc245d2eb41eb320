/**
 * A model-based test (fc.commands) of the catalog and the selection as a
 * client drives them: refresh a provider's list from a loopback server, page
 * the catalog, continue a page, select a choice with an effort, create and
 * reopen sessions, restart the child on the same storage, run a turn. The
 * model holds the caches, the snapshot's validity and the selection; after
 * every command `status.selection` must agree with it, and its revision must
 * change exactly when the model says a new one is due.
 */

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { effortPolicy } from "../src/policy/effort-policy.ts";
import { compareUtf8 } from "../src/util/utf8-order.ts";
import { type FakeProvider, type Script, startFakeProvider } from "./support/fake-provider.ts";
import { reply } from "./support/provider-scripts.ts";
import { runEvents } from "./support/turns.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { builtinsAt, call, type CatalogServer, OPENAI_KEY, openAiList, selectionOf, startCatalogServer, stopCatalogServer } from "./support/catalog.ts";

const MODELS: Record<string, string[]> = { ollama: ["qwen", "llama", "mistral"], openai: ["gpt-5", "gpt-5.2", "gpt-4o"] };
const ENABLED = ["ollama/qwen", "ollama/llama", "openai/gpt-5", "openai/gpt-5.2"];
const API: Record<string, string> = { ollama: "openai-chat", openai: "openai-responses" };
const EFFORTS = ["keep", "default", "low", "high", "xhigh"] as const;

interface Selection {
  provider: string;
  model: string;
  requested: string;
}

interface Model {
  /** What each provider's cache lists (null: no cache). */
  caches: Record<string, string[] | null>;
  /** The last fresh page's revision and cursor, and whether the snapshot is still valid. */
  snapshot: { revision: string; cursor: string | null; valid: boolean } | null;
  selection: Selection;
  /** The status revision the model expects to be unchanged since last seen. */
  revision: string;
  attached: { id: string; durable: boolean } | null;
  /** Durable sessions and their saved selection (null: a turn made it durable, nothing saved). */
  saved: Map<string, Selection | null>;
}

interface Real {
  server: CatalogServer;
  fs: MemoryFileSystem;
  provider: FakeProvider;
  remote: Record<string, string[]>;
}

type Command = fc.AsyncCommand<Model, Real>;
const STARTUP: Selection = { provider: "ollama", model: "qwen", requested: "default" };

function choices(model: Model): Selection[] {
  const out: Selection[] = [];
  for (const entry of ENABLED) {
    const [provider, name] = entry.split("/") as [string, string];
    if (model.caches[provider]?.includes(name)) out.push({ provider, model: name, requested: "" });
  }
  return out.sort((a, b) => compareUtf8(a.provider, b.provider) || compareUtf8(a.model, b.model));
}

/** Checks status against the model; `rotated` says whether a new revision is due (null: a new child, either may hold). */
async function agree(model: Model, real: Real, rotated: boolean | null): Promise<void> {
  const selection = await selectionOf(real.server);
  assert.deepEqual([selection.provider, selection.model, selection.requested_effort], [model.selection.provider, model.selection.model, model.selection.requested]);
  const policy = effortPolicy(API[model.selection.provider]!, model.selection.model, null);
  assert.deepEqual([selection.effort_support, selection.permitted_efforts], [policy.support, policy.permitted]);
  if (rotated === true) assert.notEqual(selection.revision, model.revision);
  if (rotated === false) assert.equal(selection.revision, model.revision);
  model.revision = selection.revision as string;
}

class Refresh implements Command {
  constructor(readonly provider: string, readonly models: string[]) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    real.remote[this.provider] = this.models;
    const answer = await call(real.server, "model.refresh", { provider: this.provider });
    assert.deepEqual(answer.result, { provider: this.provider, refreshed: true, models: this.models.length, notices: [] });
    model.caches[this.provider] = this.models;
    if (model.snapshot !== null) model.snapshot.valid = false;
    await agree(model, real, false);
  }
  toString = () => `refresh(${this.provider}: ${this.models.join(",")})`;
}

class CatalogPage implements Command {
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const page = (await call(real.server, "model.catalog", { limit: 1 })).result!;
    const expected = choices(model);
    assert.deepEqual((page.choices as Selection[]).map((choice) => [choice.provider, choice.model]), expected.slice(0, 1).map((c) => [c.provider, c.model]));
    assert.equal(page.complete, expected.length <= 1);
    model.snapshot = { revision: page.revision as string, cursor: page.next_cursor as string | null, valid: true };
    await agree(model, real, false);
  }
  toString = () => "catalog";
}

class Continue implements Command {
  check = (model: Readonly<Model>) => model.snapshot?.cursor != null;
  async run(model: Model, real: Real): Promise<void> {
    const snapshot = model.snapshot!;
    const answer = await call(real.server, "model.catalog", { revision: snapshot.revision, cursor: snapshot.cursor, limit: 100 });
    if (!snapshot.valid) assert.equal(answer.error?.code, "stale_catalog");
    else assert.deepEqual((answer.result!.choices as Selection[]).map((c) => [c.provider, c.model]), choices(model).slice(1).map((c) => [c.provider, c.model]));
    await agree(model, real, false);
  }
  toString = () => "continue";
}

class Select implements Command {
  constructor(readonly pick: string, readonly effort: typeof EFFORTS[number]) {}
  check = (model: Readonly<Model>) => model.attached !== null && model.snapshot !== null;
  async run(model: Model, real: Real): Promise<void> {
    const [provider, name] = this.pick.split("/") as [string, string];
    const effort = this.effort === "keep" ? { mode: "keep" } : this.effort === "default" ? { mode: "default" } : { mode: "set", value: this.effort };
    const answer = await call(real.server, "selection.set", {
      session_id: model.attached!.id,
      selection_revision: model.revision,
      catalog_revision: model.snapshot!.revision,
      provider,
      model: name,
      effort,
    });
    const requested = this.effort === "keep" ? model.selection.requested : this.effort;
    const admitted = choices(model).some((c) => c.provider === provider && c.model === name);
    const expected = !model.snapshot!.valid
      ? "stale_catalog"
      : !admitted
      ? "selection_invalid"
      : !effortPolicy(API[provider]!, name, null).permitted.includes(requested as never)
      ? "effort_unsupported"
      : null;
    assert.equal(answer.error?.code ?? null, expected, JSON.stringify(answer));
    if (expected === null) {
      model.selection = { provider, model: name, requested };
      model.attached = { id: model.attached!.id, durable: true };
      model.saved.set(model.attached.id, { ...model.selection });
    }
    await agree(model, real, expected === null);
  }
  toString = () => `select(${this.pick}, ${this.effort})`;
}

class Create implements Command {
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const result = (await call(real.server, "session.create")).result!;
    model.attached = { id: result.session_id as string, durable: false };
    model.selection = { ...STARTUP };
    await agree(model, real, true);
  }
  toString = () => "create";
}

class Reopen implements Command {
  check = (model: Readonly<Model>) => model.saved.size > 0;
  async run(model: Model, real: Real): Promise<void> {
    const id = [...model.saved.keys()].at(-1)!;
    const result = (await call(real.server, "session.open", { session_id: id })).result!;
    const saved = model.saved.get(id)!;
    const admitted = saved !== null && choices(model).some((c) => c.provider === saved.provider && c.model === saved.model);
    assert.deepEqual(result.notices, saved === null || admitted ? [] : ["saved_selection_unavailable"]);
    model.selection = saved === null ? { ...STARTUP } : admitted ? { ...saved } : { ...STARTUP, requested: saved.requested };
    model.attached = { id, durable: true };
    await agree(model, real, true);
  }
  toString = () => "reopen";
}

class Restart implements Command {
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    await stopCatalogServer(real.server, false);
    real.server = await start(real.fs, real.provider);
    model.snapshot = null;
    model.attached = null;
    model.selection = { ...STARTUP };
    // Revisions are unique within a child and name its state; a new child starts its own sequence.
    await agree(model, real, null);
  }
  toString = () => "restart";
}

class Turn implements Command {
  check = (model: Readonly<Model>) => model.attached !== null;
  async run(model: Model, real: Real): Promise<void> {
    const started = await call(real.server, "turn.start", { session_id: model.attached!.id, prompt: "hi" });
    const events = await runEvents(real.server, started.result!.run_id as string);
    assert.equal((events.at(-1)!.data as { outcome: string }).outcome, "completed");
    const body = real.provider.log.at(-1)!.body as { model: string };
    assert.equal(body.model, model.selection.model);
    model.attached = { id: model.attached!.id, durable: true };
    if (!model.saved.has(model.attached.id)) model.saved.set(model.attached.id, null);
    await agree(model, real, false);
  }
  toString = () => "turn";
}

function start(fs: MemoryFileSystem, provider: FakeProvider): Promise<CatalogServer> {
  return startCatalogServer({ fs, provider, settings: builtinsAt(provider, { providers: { catalog: { enabled: ENABLED } } }) });
}

describe("catalog and selection: model-based", () => {
  let provider: FakeProvider;
  const remote: Record<string, string[]> = {};
  before(async () => {
    provider = await startFakeProvider();
    provider.handler = (request): Script => {
      const name = request.headers.authorization === `Bearer ${OPENAI_KEY}` ? "openai" : "ollama";
      if (request.method === "GET") return openAiList((remote[name] ?? []).map((id) => ({ id })));
      return reply(name === "openai" ? "openai-responses" : "openai-chat", { text: ["ok"] });
    };
  });
  after(async () => await provider.close());

  it("fc.commands over refresh, catalog pages, select, create, reopen, restart and turns match the model", async () => {
    const list = (provider: string) => fc.subarray(MODELS[provider]!).map((models) => new Refresh(provider, models));
    const commands = fc.commands([
      list("ollama"),
      list("openai"),
      fc.constant(new CatalogPage()),
      fc.constant(new Continue()),
      fc.tuple(fc.constantFrom(...ENABLED, "openai/gpt-4o", "ollama/mistral"), fc.constantFrom(...EFFORTS)).map(([pick, effort]) => new Select(pick, effort)),
      fc.constant(new Create()),
      fc.constant(new Reopen()),
      fc.constant(new Restart()),
      fc.constant(new Turn()),
    ], { maxCommands: 14 });
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        const fs = new MemoryFileSystem();
        for (const key of Object.keys(remote)) delete remote[key];
        const real: Real = { server: await start(fs, provider), fs, provider, remote };
        const model: Model = { caches: { ollama: null, openai: null }, snapshot: null, selection: { ...STARTUP }, revision: "", attached: null, saved: new Map() };
        model.revision = (await selectionOf(real.server)).revision as string;
        try {
          await fc.asyncModelRun(() => ({ model, real }), cmds);
        } finally {
          await stopCatalogServer(real.server, false);
        }
      }),
      { numRuns: fuzzRuns(20, 4) },
    );
  });
});
