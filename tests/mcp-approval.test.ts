/**
 * Which MCP servers start (`startableMcpServers`): only enabled servers whose
 * current canonical definition is approved from the file that defines it.
 * The canonical digest is pinned (changing its form voids every approval
 * ever given), and each part of a definition, and the defining file, voids
 * an approval when it changes (docs/features/mcp.md, "Approval").
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { createMemoryRuntime } from "../runtime/memory.ts";
import type { ConfiguredMcpServer } from "../src/config/mcp-merge.ts";
import { loadSettings } from "../src/config/settings-load.ts";
import { canonicalHttp, canonicalStdio, canonicalText } from "../src/mcp/canonical.ts";
import { approvalFor, mcpServerStatuses, startableMcpServers } from "../src/mcp/servers.ts";
import { resolveCommand } from "../src/mcp/resolve.ts";
import { serializeApprovals } from "../src/trust/approvals-file.ts";
import type { Approval } from "../src/trust/approvals.ts";

const HOME = "/h";
const WORKSPACE = "/w";
const GLOBAL = `${HOME}/settings.jsonc`;
const PROJECT = `${WORKSPACE}/.magi-code/settings.jsonc`;
const live = () => new AbortController().signal;

/** A memory world: PATH=/usr/bin with an executable npx and node, the workspace /w, MC_HOME=/h. */
function world(env: Record<string, string> = {}) {
  const fs = new MemoryFileSystem();
  fs.writeFile("/usr/bin/npx", "#!/bin/sh\n", 0o755);
  fs.writeFile("/usr/bin/node", "#!/bin/sh\n", 0o755);
  void fs.mkdir(`${WORKSPACE}/.magi-code`, 0o755);
  void fs.mkdir(HOME, 0o700);
  const runtime = createMemoryRuntime({ fs, cwd: WORKSPACE, env: { PATH: "/usr/bin", MC_HOME: HOME, ...env } });
  return { fs, runtime };
}

type World = ReturnType<typeof world>;

/** Writes the settings files (undefined: none) and returns the configured servers as startup loads them. */
async function configure(w: World, global: unknown, project?: unknown): Promise<readonly ConfiguredMcpServer[]> {
  if (global !== undefined) w.fs.writeFile(GLOBAL, JSON.stringify(global));
  if (project !== undefined) w.fs.writeFile(PROJECT, JSON.stringify(project));
  const loaded = await loadSettings(w.fs, { global: GLOBAL, project: PROJECT }, live());
  assert.ok(loaded.ok, "the settings load");
  return loaded.mcpServers ?? [];
}

/** Approves each named server's current definition, as `mcp approve` would. */
async function approve(w: World, servers: readonly ConfiguredMcpServer[], names: readonly string[]): Promise<void> {
  const statuses = await mcpServerStatuses(w.runtime, servers, [], WORKSPACE);
  const approvals = statuses.filter((status) => names.includes(status.server.name)).map((status) => approvalFor(status)!);
  w.fs.writeFile(`${HOME}/approvals.json`, serializeApprovals(approvals), 0o600);
}

async function startable(w: World, servers: readonly ConfiguredMcpServer[]): Promise<string[]> {
  const result = await startableMcpServers(w.runtime, { home: HOME, cwd: WORKSPACE, servers }, live());
  assert.ok(result.ok, "startable");
  return result.servers.map((server) => server.name);
}

const servers = (entries: Record<string, unknown>) => ({ mcp: { servers: entries } });
const everything = { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"], env: { TOKEN: "one" } };

describe("the canonical definition", () => {
  // The expected digests were computed apart from magi-code (node:crypto over the texts below, the
  // values digest over 4-byte big-endian length-prefixed UTF-8 parts).
  it("has a pinned digest for a stdio and an HTTP definition", async () => {
    const stdio = await canonicalStdio({ command: "/usr/bin/npx", args: ["-y", "pkg"], env: { B: "2", A: "1" }, cwd: "/w" });
    assert.equal(
      canonicalText(stdio.fields),
      '{"v":1,"transport":"stdio","command":"/usr/bin/npx","args":["-y","pkg"],"env_names":["A","B"],' +
        '"env_values_sha256":"7566f8c18a3661a8669fc9910423505da838dbfd3cd2d10131ae33a7f07c7d20","cwd":"/w"}',
    );
    assert.equal(stdio.digest, "e15f6da4c65cd3bb7654533f8bd9d0dbf58854d631e4f6cb9080fe3fa0578cb6");
    const http = await canonicalHttp({ url: "https://a.test/mcp", headers: { "X-Key": "v" }, bearerTokenEnv: "T" });
    assert.equal(
      canonicalText(http.fields),
      '{"v":1,"transport":"http","url":"https://a.test/mcp","header_names":["x-key"],' +
        '"header_values_sha256":"fd0b73f80b95441e78d40b06bfa4de781fb74911ee0f88b4d6a8590098f73ce7","bearer_token_env":"T"}',
    );
    assert.equal(http.digest, "8e229d4d774da88c281f968629b035af1d1f79a233ddc6dd67c4ef7983613d1e");
  });

  it("changes with every part of a stdio definition, never with the order of env", async () => {
    const base: { command: string; args: readonly string[]; env: Record<string, string>; cwd: string } = { command: "/usr/bin/npx", args: ["-y", "pkg"], env: { A: "1", B: "2" }, cwd: "/w" };
    const digest = async (change: Partial<typeof base>) => (await canonicalStdio({ ...base, ...change })).digest;
    const original = await digest({});
    assert.equal(await digest({ env: { B: "2", A: "1" } }), original);
    const variants: Partial<typeof base>[] = [
      { command: "/usr/local/bin/npx" },
      { args: ["-y", "pkg@2"] },
      { args: ["-y"] },
      { args: ["-y", "pkg", ""] },
      { env: { A: "1", B: "3" } },
      { env: { A: "1", C: "2" } },
      { env: { A: "12" } },
      { env: { A: "1", B: "2", C: "" } },
      { cwd: "/w/sub" },
    ];
    const digests = await Promise.all(variants.map(digest));
    assert.equal(new Set([original, ...digests]).size, variants.length + 1);
  });

  it("changes with every part of an HTTP definition but the header names' case and the token's value", async () => {
    const base = { url: "https://a.test/mcp", headers: { "X-Key": "v" } as Record<string, string>, bearerTokenEnv: "T" as string | null };
    const digest = async (change: Partial<typeof base>) => (await canonicalHttp({ ...base, ...change })).digest;
    const original = await digest({});
    assert.equal(await digest({ headers: { "x-key": "v" } }), original);
    const variants: Partial<typeof base>[] = [{ url: "https://a.test/mcp2" }, { headers: { "X-Key": "w" } }, { headers: { "X-Other": "v" } }, { headers: {} }, { bearerTokenEnv: "U" }, { bearerTokenEnv: null }];
    const digests = await Promise.all(variants.map(digest));
    assert.equal(new Set([original, ...digests]).size, variants.length + 1);
  });
});

describe("startableMcpServers()", () => {
  it("starts nothing without an approvals file, and an approved enabled server once approved", async () => {
    const w = world();
    const configured = await configure(w, servers({ everything }));
    assert.deepEqual(await startable(w, configured), []);
    await approve(w, configured, ["everything"]);
    const result = await startableMcpServers(w.runtime, { home: HOME, cwd: WORKSPACE, servers: configured }, live());
    assert.ok(result.ok);
    assert.deepEqual(result.servers, [{
      transport: "stdio",
      name: "everything",
      command: "/usr/bin/npx",
      args: ["-y", "@modelcontextprotocol/server-everything"],
      env: { TOKEN: "one" },
      cwd: WORKSPACE,
      startupTimeoutMs: 60_000,
      toolTimeoutMs: 300_000,
      toolPolicies: {},
    }]);
  });

  it("a project-only definition never starts until approved, and then from the project file only", async () => {
    const w = world();
    const configured = await configure(w, {}, servers({ local: { command: "node", args: ["server.js"] } }));
    assert.deepEqual(await startable(w, configured), []);
    await approve(w, configured, ["local"]);
    assert.deepEqual(await startable(w, configured), ["local"]);
    // The same definition moved to the global file is another source: its approval does not follow.
    w.fs.writeFile(PROJECT, "{}");
    assert.deepEqual(await startable(w, await configure(w, servers({ local: { command: "node", args: ["server.js"] } }))), []);
  });

  for (const [label, edit] of [
    ["one argument", { ...everything, args: ["-y", "@modelcontextprotocol/server-everything@latest"] }],
    ["one env value", { ...everything, env: { TOKEN: "two" } }],
    ["the working directory", { ...everything, cwd: ".magi-code" }],
    ["the command's path", { ...everything, command: "/usr/bin/node" }],
  ] as const) {
    it(`changing ${label} voids the approval (changed since approval)`, async () => {
      const w = world();
      await approve(w, await configure(w, servers({ everything })), ["everything"]);
      const changed = await configure(w, servers({ everything: edit }));
      const result = await startableMcpServers(w.runtime, { home: HOME, cwd: WORKSPACE, servers: changed }, live());
      assert.ok(result.ok);
      assert.deepEqual(result.servers, []);
      assert.deepEqual(result.statuses.map((status) => status.state), ["changed"]);
    });
  }

  it("changes that are not the definition keep the approval: timeouts, tool policies", async () => {
    const w = world();
    await approve(w, await configure(w, servers({ everything })), ["everything"]);
    const tuned = await configure(w, servers({ everything: { ...everything, startup_timeout_ms: 120_000, tools: { echo: "deny" } } }));
    assert.deepEqual(await startable(w, tuned), ["everything"]);
  });

  it("project enabled=true on a globally approved, disabled server starts the approved global definition", async () => {
    const w = world();
    const global = servers({ everything: { ...everything, enabled: false } });
    const disabled = await configure(w, global);
    await approve(w, disabled, ["everything"]);
    assert.deepEqual(await startable(w, disabled), [], "disabled: not started although approved");
    const enabled = await configure(w, global, servers({ everything: { enabled: true, tools: { echo: "deny" } } }));
    const result = await startableMcpServers(w.runtime, { home: HOME, cwd: WORKSPACE, servers: enabled }, live());
    assert.ok(result.ok);
    assert.deepEqual(result.servers.map((server) => server.transport === "stdio" && [server.command, server.args, server.env, server.toolPolicies]), [
      ["/usr/bin/npx", ["-y", "@modelcontextprotocol/server-everything"], { TOKEN: "one" }, { echo: "deny" }],
    ]);
  });

  it("project enabled=true on a globally disabled server that is not approved starts nothing", async () => {
    const w = world();
    const configured = await configure(w, servers({ everything: { ...everything, enabled: false } }), servers({ everything: { enabled: true } }));
    assert.deepEqual(await startable(w, configured), []);
  });

  it("an unresolvable command or working directory is skipped, never started", async () => {
    const w = world();
    const configured = await configure(w, servers({ gone: { command: "no-such-server" }, nowhere: { command: "npx", cwd: "/missing" } }));
    const result = await startableMcpServers(w.runtime, { home: HOME, cwd: WORKSPACE, servers: configured }, live());
    assert.ok(result.ok);
    assert.deepEqual(result.statuses.map((status) => status.state === "unresolved" && status.reason), ["command_not_found", "cwd_not_found"]);
  });

  it("an approved, enabled server whose command or working directory is gone fails with mcp_unavailable; unapproved or disabled ones stay skipped", async () => {
    for (const [definition, names, enabled, expected] of [
      [{ command: "npx" }, ["gone"], true, "mcp_unavailable"],
      [{ command: "node", cwd: "/somewhere" }, ["gone"], true, "mcp_unavailable"],
      [{ command: "npx" }, [], true, null],
      [{ command: "npx" }, ["gone"], false, null],
    ] as const) {
      const w = world();
      void w.fs.mkdir("/somewhere", 0o755);
      const configured = await configure(w, servers({ gone: { ...definition, enabled } }));
      await approve(w, configured, names);
      await w.fs.unlink("/usr/bin/npx");
      await w.fs.rename("/somewhere", "/elsewhere");
      const result = await startableMcpServers(w.runtime, { home: HOME, cwd: WORKSPACE, servers: configured }, live());
      const label = `${JSON.stringify(definition)} approved=${names.length > 0} enabled=${enabled}`;
      if (expected === null) assert.deepEqual(result.ok && result.servers, [], label);
      else assert.deepEqual(result, { ok: false, code: expected }, label);
    }
  });

  it("an HTTP server carries its headers and the bearer token's value, null when the variable is unset or blank", async () => {
    for (const [token, expected] of [["secret-token", "secret-token"], [" ", null], [undefined, null]] as const) {
      const w = world(token === undefined ? {} : { WEB_TOKEN: token });
      const configured = await configure(w, servers({ web: { url: "https://a.test/mcp", headers: { "X-Key": "v" }, bearer_token_env: "WEB_TOKEN" } }));
      await approve(w, configured, ["web"]);
      const result = await startableMcpServers(w.runtime, { home: HOME, cwd: WORKSPACE, servers: configured }, live());
      assert.ok(result.ok);
      assert.deepEqual(result.servers.map((server) => server.transport === "http" && [server.url, server.headers, server.bearerToken]), [["https://a.test/mcp", { "X-Key": "v" }, expected]]);
    }
  });

  it("an approvals file others may read or write, a symlink or a malformed one fails with configuration_invalid", async () => {
    const approval: Approval = { kind: "mcp", name: "everything", source: GLOBAL, digest: "0".repeat(64) };
    const cases: [string, (w: World) => void][] = [
      ["mode 0644", (w) => w.fs.writeFile(`${HOME}/approvals.json`, serializeApprovals([approval]), 0o644)],
      ["mode 0620", (w) => w.fs.writeFile(`${HOME}/approvals.json`, serializeApprovals([approval]), 0o620)],
      ["a symlink", (w) => (w.fs.writeFile("/elsewhere.json", serializeApprovals([approval]), 0o600), w.fs.symlink("/elsewhere.json", `${HOME}/approvals.json`))],
      ["an upper-case digest", (w) => w.fs.writeFile(`${HOME}/approvals.json`, serializeApprovals([{ ...approval, digest: "A".repeat(64) }]), 0o600)],
      ["a duplicate approval", (w) => w.fs.writeFile(`${HOME}/approvals.json`, serializeApprovals([approval, approval]), 0o600)],
      ["a relative source", (w) => w.fs.writeFile(`${HOME}/approvals.json`, serializeApprovals([{ ...approval, source: "settings.jsonc" }]), 0o600)],
      ["an unknown field", (w) => w.fs.writeFile(`${HOME}/approvals.json`, '{"v":1,"approvals":[],"extra":1}', 0o600)],
      ["version 2", (w) => w.fs.writeFile(`${HOME}/approvals.json`, '{"v":2,"approvals":[]}', 0o600)],
    ];
    for (const [label, arrange] of cases) {
      const w = world();
      const configured = await configure(w, servers({ everything }));
      arrange(w);
      assert.deepEqual(await startableMcpServers(w.runtime, { home: HOME, cwd: WORKSPACE, servers: configured }, live()), { ok: false, code: "configuration_invalid" }, label);
    }
  });

  it("answers startup_cancelled for an aborted signal", async () => {
    const w = world();
    const controller = new AbortController();
    controller.abort();
    const result = await startableMcpServers(w.runtime, { home: HOME, cwd: WORKSPACE, servers: await configure(w, servers({ everything })) }, controller.signal);
    assert.deepEqual(result, { ok: false, code: "startup_cancelled" });
  });
});

describe("resolveCommand()", () => {
  it("takes the first executable on PATH, skipping relative entries and files without an execute bit", async () => {
    const w = world({ PATH: ".:bin:/opt/a:/opt/b:/usr/bin" });
    w.fs.writeFile(`${WORKSPACE}/srv`, "", 0o755);
    w.fs.writeFile(`${WORKSPACE}/bin/srv`, "", 0o755);
    w.fs.writeFile("/opt/a/srv", "", 0o644);
    w.fs.writeFile("/opt/b/srv", "", 0o700);
    assert.equal(await resolveCommand(w.runtime, "srv", WORKSPACE), "/opt/b/srv");
    assert.equal(await resolveCommand(w.runtime, "missing", WORKSPACE), null);
  });

  it("resolves a path with a slash against the server's working directory, lexically", async () => {
    const w = world();
    w.fs.writeFile(`${WORKSPACE}/tools/srv`, "", 0o755);
    assert.equal(await resolveCommand(w.runtime, "./tools/srv", WORKSPACE), `${WORKSPACE}/tools/srv`);
    assert.equal(await resolveCommand(w.runtime, "tools/../tools/srv", WORKSPACE), `${WORKSPACE}/tools/srv`);
    assert.equal(await resolveCommand(w.runtime, `${WORKSPACE}//tools/srv`, "/"), `${WORKSPACE}/tools/srv`);
    assert.equal(await resolveCommand(w.runtime, "./tools", WORKSPACE), null, "a directory is not a program");
  });
});
