/**
 * The MCP conformance kit's client scenarios (`@modelcontextprotocol/conformance`)
 * against our MCP client code, through `support/conformance-client.ts` run by
 * the runtime under test (Node from dist/, Deno from source). The kit's CLI
 * needs a Node newer than 20, so it runs under Deno. Every scenario here runs
 * offline against the kit's own loopback servers, and each must pass.
 *
 * Not run, because they do not apply to a client that advertises no
 * elicitation and never prompts outside `mcp login` (docs/features/mcp.md):
 * `elicitation-sep1034-client-defaults`; `auth/scope-step-up` and
 * `auth/scope-retry-limit` (a new authorization in the middle of a session);
 * `auth/pre-registration` (no setting carries pre-registered client
 * credentials); `auth/basic-cimd` (no HTTPS client metadata document); the
 * `extension` client-credentials and cross-app-access scenarios.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { denoBinary, nodeBinary, repoRoot } from "./support/processes.ts";

const SCENARIOS = [
  "initialize",
  "tools_call",
  "sse-retry",
  "auth/metadata-default",
  "auth/metadata-var1",
  "auth/metadata-var2",
  "auth/metadata-var3",
  "auth/scope-from-www-authenticate",
  "auth/scope-from-scopes-supported",
  "auth/scope-omitted-when-undefined",
  "auth/token-endpoint-auth-basic",
  "auth/token-endpoint-auth-post",
  "auth/token-endpoint-auth-none",
  "auth/2025-03-26-oauth-metadata-backcompat",
  "auth/2025-03-26-oauth-endpoint-fallback",
  "auth/resource-mismatch",
  "auth/offline-access-scope",
  "auth/offline-access-not-supported",
];

const isDeno = "Deno" in globalThis;
const root = repoRoot();
const driver = isDeno
  ? `${denoBinary()} run -A ${join(root, "tests", "support", "conformance-client.ts")}`
  : `${nodeBinary()} ${join(root, "dist", "tests", "support", "conformance-client.js")}`;
const results = mkdtempSync(join(tmpdir(), "magi-conformance-results-"));
after(() => rmSync(results, { recursive: true, force: true }));

describe(`MCP conformance kit, client scenarios, our client on ${isDeno ? "Deno" : "Node"}`, () => {
  for (const scenario of SCENARIOS) {
    it(`scenario ${scenario} passes`, () => {
      const kit = join(root, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
      const run = spawnSync(denoBinary(), ["run", "-A", kit, "client", "--command", driver, "--scenario", scenario, "--timeout", "60000"], {
        cwd: results,
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1" },
        // A hang guard, not a speed claim.
        timeout: 180_000,
      });
      const summary = /Passed: \d+\/\d+, \d+ failed/.exec(`${run.stdout}${run.stderr}`)?.[0] ?? "no summary";
      assert.equal(run.status, 0, `${scenario}: ${summary}\n${run.stdout.slice(-2000)}\n${run.stderr.slice(-1000)}`);
      assert.match(summary, /, 0 failed/);
    });
  }
});
