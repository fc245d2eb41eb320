/**
 * The params kit against a spawned child on real pipes and a real disk, as
 * docs/fuzzing.md tells fuzz testers to use it: a temp MC_HOME holding a
 * durable session with a saved selection, then every method's invalid
 * params with the live ids in the other fields. Each gets `invalid_params`,
 * and afterwards every file and directory under the temp root is exactly as
 * it was.
 */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { encodeCache, endpointFingerprint } from "../src/catalog/cache-format.ts";
import { invalidCall, type ParamsContext, WIRE_METHODS } from "../src/fuzz/mod.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { LEASE_NAME } from "./support/params-child.ts";
import { launchers } from "./support/processes.ts";
import { WireClient } from "./support/wire-client.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-fuzz-params-")));
after(() => rmSync(root, { recursive: true, force: true }));

/** Nothing listens here: a call that reached the network would fail at once. */
const NOWHERE = "http://127.0.0.1:9/v1";

/**
 * Every path under `path` with its mode, size, mtime, inode and content
 * digest. Leases are compared as `fsTree` compares them (see
 * tests/support/params-child.ts): a heartbeat every 15 s may rewrite one
 * while the property runs, which is no write of a request.
 */
function tree(path: string): string[] {
  if (LEASE_NAME.test(path)) return path.endsWith(".lease") ? [path] : [];
  const info = lstatSync(path);
  const children = info.isDirectory() ? readdirSync(path).sort() : [];
  const leased = children.some((name) => LEASE_NAME.test(name));
  const line = `${path} ${info.mode.toString(8)} ${leased ? "" : `${info.size} ${info.mtimeMs}`} ${info.ino}`;
  if (info.isFile()) return [`${line} ${createHash("sha256").update(readFileSync(path)).digest("hex")}`];
  return [line, ...children.flatMap((name) => tree(join(path, name)))];
}

describe("the params kit against a spawned child", () => {
  const launcher = launchers().find((candidate) => candidate.name === ("Deno" in globalThis ? "deno" : "node"))!;

  it(`a ${launcher.name} child answers every method's invalid params with invalid_params and leaves MC_HOME and the workspace unchanged`, async () => {
    const home = join(root, "home");
    mkdirSync(join(home, "catalog"), { recursive: true, mode: 0o700 });
    const cwd = realpathSync(mkdtempSync(join(root, "ws-")));
    const settings = { model: { provider: "ollama", model: "qwen" }, providers: { endpoints: { ollama: { base_url: NOWHERE } }, catalog: { enabled: ["ollama/qwen"] } } };
    writeFileSync(join(home, "settings.jsonc"), JSON.stringify(settings), { mode: 0o600 });
    const cache = encodeCache({ provider: "ollama", endpoint: await endpointFingerprint("openai-chat", NOWHERE), refreshedAt: "2026-12-01T10:00:00.000Z", models: [{ id: "qwen", name: null, reasoning: null }] });
    writeFileSync(join(home, "catalog", "ollama.json"), cache, { mode: 0o600 });
    const env: NodeJS.ProcessEnv = { ...process.env, MC_HOME: home };
    delete env.OPENAI_API_KEY;
    delete env.ANTHROPIC_API_KEY;
    const client = new WireClient(launcher, cwd, env);
    try {
      await client.ok("initialize", { required_capabilities: [...WIRE_METHODS] });
      const session = (await client.ok("session.create")).session_id as string;
      const catalog = (await client.ok("model.catalog")).revision as string;
      const selection = ((await client.ok("status")).selection as { revision: string }).revision;
      const base = { session_id: session, catalog_revision: catalog, provider: "ollama", model: "qwen" };
      const saved = await client.ok("selection.set", { ...base, selection_revision: selection, effort: { mode: "default" } });
      const revision = ((await client.ok("status")).selection as { revision: string }).revision;
      const context: ParamsContext = { ...base, selection_revision: revision, revision: saved.history_revision as string, run_id: "r1", approval_id: "a1", id: "r1" };
      const before = tree(root);
      assert.ok(before.some((line) => line.includes(`${session}.jsonl`)), "the session is durable on disk");
      await fc.assert(
        fc.asyncProperty(invalidCall(context), async (sample) => {
          const frame = await client.callRaw(sample.method, sample.json);
          assert.equal(frame.error?.code, sample.code, `${sample.method} ${sample.label}`);
        }),
        // One child holds at most 4,096 ids; the setup used six.
        { numRuns: Math.min(fuzzRuns(200, 4), 4_000) },
      );
      assert.deepEqual(tree(root), before);
      assert.deepEqual((await client.shutdown()).code, 0);
    } finally {
      client.abandon();
    }
  });
});
