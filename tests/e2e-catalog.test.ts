// End to end over real pipes, under Node and Deno: refresh a provider's list,
// pick a model, restart the child, reopen the session: the selection is
// restored and the next turn's provider request uses it; the settings files
// are byte-identical afterwards.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type FakeProvider, startFakeProvider } from "./support/fake-provider.ts";
import { reply } from "./support/provider-scripts.ts";
import { launchers } from "./support/processes.ts";
import { WireClient, workspace } from "./support/wire-client.ts";
import { openAiList } from "./support/catalog.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-catalog-"));
after(() => rmSync(root, { recursive: true, force: true }));

const CAPABILITIES = ["status", "shutdown", "session.create", "session.open", "turn.start", "model.catalog", "selection.set", "model.refresh", "model.catalog.status"];

describe("catalog end to end over real pipes", () => {
  let provider: FakeProvider;
  before(async () => (provider = await startFakeProvider()));
  after(async () => await provider.close());

  for (const launcher of launchers()) {
    it(`${launcher.name}: refresh, select, restart, reopen: restored, and the next turn uses it`, async () => {
      const ws = workspace(root, launcher.name, provider, {
        providers: { endpoints: { ollama: { base_url: `${provider.url}/v1` } }, catalog: { enabled: ["ollama/qwen", "ollama/gpt-oss:20b"] } },
      });
      const projectDir = join(ws.cwd, ".magi-code");
      mkdirSync(projectDir, { mode: 0o700 });
      writeFileSync(join(projectDir, "settings.jsonc"), `{ "providers": { "catalog": { "enabled": ["ollama/gpt-oss:20b", "ollama/qwen"] } } }\n`);
      const settings = [readFileSync(join(ws.home, "settings.jsonc")), readFileSync(join(projectDir, "settings.jsonc"))];

      const first = new WireClient(launcher, ws.cwd, ws.env);
      let sessionId: string;
      try {
        await first.ok("initialize", { required_capabilities: CAPABILITIES });
        provider.enqueue(openAiList([{ id: "qwen" }, { id: "gpt-oss:20b" }, { id: "unlisted" }]));
        assert.deepEqual(await first.ok("model.refresh", { provider: "ollama" }), { provider: "ollama", refreshed: true, models: 3, notices: [] });
        const page = await first.ok("model.catalog", {});
        assert.deepEqual((page.choices as { model: string }[]).map((choice) => choice.model), ["gpt-oss:20b", "qwen"]);
        sessionId = (await first.ok("session.create")).session_id as string;
        const status = await first.ok("status");
        const selected = await first.ok("selection.set", {
          session_id: sessionId,
          selection_revision: (status.selection as { revision: string }).revision,
          catalog_revision: page.revision,
          provider: "ollama",
          model: "gpt-oss:20b",
          effort: { mode: "set", value: "medium" },
        });
        assert.equal(selected.durable, true);
        assert.deepEqual((await first.ok("status")).selection, selected.selection);
        assert.equal((await first.shutdown()).code, 0);
      } finally {
        first.abandon();
      }

      const second = new WireClient(launcher, ws.cwd, ws.env);
      try {
        const init = await second.ok("initialize", { required_capabilities: CAPABILITIES });
        assert.equal((init.status as { model: string }).model, "qwen", "a new child starts from the settings");
        const opened = await second.ok("session.open", { session_id: sessionId });
        assert.deepEqual(opened.notices, []);
        const status = await second.ok("status");
        assert.deepEqual([status.provider, status.model], ["ollama", "gpt-oss:20b"]);
        assert.deepEqual((status.selection as Record<string, unknown>).effective_effort, "medium");
        provider.enqueue(reply("openai-chat", { text: ["restored"] }));
        const run = (await second.ok("turn.start", { session_id: sessionId, prompt: "which model?" })).run_id as string;
        const events = await second.runEvents(run);
        assert.equal(events.at(-1)!.data!.outcome, "completed");
        const body = provider.log.at(-1)!.body as { model: string; reasoning_effort: string };
        assert.deepEqual([body.model, body.reasoning_effort], ["gpt-oss:20b", "medium"]);
        assert.equal((await second.shutdown()).code, 0);
      } finally {
        second.abandon();
      }
      assert.deepEqual([readFileSync(join(ws.home, "settings.jsonc")), readFileSync(join(projectDir, "settings.jsonc"))], settings);
    });
  }
});
