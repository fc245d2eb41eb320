/**
 * The `mcp` settings section (docs/settings.md, "MCP servers"): every field
 * and bound, the server-name grammar, the merge of both files and what a
 * project file may not do, each failure `configuration_invalid` at startup
 * and a problem at its JSON path in `config check`.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { checkConfiguration } from "../src/admission/config-check.ts";
import { loadSettings } from "../src/config/settings-load.ts";
import { parseSettingsText } from "../src/config/settings.ts";

const INVALID = { ok: false, code: "configuration_invalid" };
const GLOBAL = "/h/settings.jsonc";
const PROJECT = "/w/.magi-code/settings.jsonc";

/** Loads the given global and project files (undefined: no file) as startup does. */
async function load(global: unknown, project?: unknown) {
  const fs = new MemoryFileSystem();
  if (global !== undefined) fs.writeFile(GLOBAL, JSON.stringify(global));
  if (project !== undefined) fs.writeFile(PROJECT, JSON.stringify(project));
  return await loadSettings(fs, { global: GLOBAL, project: PROJECT }, new AbortController().signal);
}

const servers = (entries: Record<string, unknown>) => ({ mcp: { servers: entries } });
const stdio = (extra: Record<string, unknown> = {}) => ({ command: "npx", ...extra });
const http = (extra: Record<string, unknown> = {}) => ({ url: "https://mcp.example.test/mcp", ...extra });

describe("mcp settings: fields and bounds", () => {
  it("loadSettings() admits every stdio and HTTP field and fills the documented defaults", async () => {
    const loaded = await load(servers({
      fs: stdio({ args: ["-y", "@modelcontextprotocol/server-filesystem", "."], env: { ROOT: "/tmp", _X1: "" }, cwd: "sub", enabled: false, tools: { read_file: "allow", "a.b/c": "deny" }, startup_timeout_ms: 1_000, tool_timeout_ms: 3_600_000 }),
      web: http({ url: "http://127.0.0.1:3000/mcp?profile=a", headers: { "X-Api-Key": "v\talue" }, bearer_token_env: "WEB_TOKEN" }),
    }));
    assert.ok(loaded.ok);
    assert.deepEqual(loaded.settings, {}, "the mcp section is not part of the merged settings");
    assert.deepEqual(loaded.mcpServers, [
      {
        name: "fs",
        source: GLOBAL,
        transport: { transport: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."], env: { ROOT: "/tmp", _X1: "" }, cwd: "sub" },
        enabled: false,
        toolPolicies: { read_file: "allow", "a.b/c": "deny" },
        startupTimeoutMs: 1_000,
        toolTimeoutMs: 3_600_000,
      },
      {
        name: "web",
        source: GLOBAL,
        transport: { transport: "http", url: "http://127.0.0.1:3000/mcp?profile=a", headers: { "X-Api-Key": "v\talue" }, bearerTokenEnv: "WEB_TOKEN" },
        enabled: true,
        toolPolicies: {},
        startupTimeoutMs: 60_000,
        toolTimeoutMs: 300_000,
      },
    ]);
  });

  it("loadSettings() leaves mcpServers out when no server is configured", async () => {
    for (const settings of [{}, { mcp: {} }, { mcp: { servers: {} } }]) assert.deepEqual(await load(settings), { ok: true, settings: {} });
  });

  it("parseSettingsText() hands the mcp section back apart, unchecked", () => {
    assert.deepEqual(parseSettingsText('{ "agent": { "max_steps": 3 }, "mcp": { "servers": 1 } }'), { ok: true, settings: { agent: { max_steps: 3 } }, mcp: { servers: 1 } });
  });

  it("server names: 1-32 of [A-Za-z0-9_-], a letter or digit first, no double or trailing underscore", async () => {
    for (const name of ["a", "GitHub", "1password", "my-server_2", "a_b-c", "x".repeat(32)]) {
      assert.equal((await load(servers({ [name]: stdio() }))).ok, true, name);
    }
    for (const name of ["", "x".repeat(33), "_a", "-a", "a__b", "a_", "a.b", "a b", "é", "a/b"]) {
      assert.deepEqual(await load(servers({ [name]: stdio() })), INVALID, name);
    }
  });

  it("timeouts: startup 1000-600000 ms, tool 1000-3600000 ms, integers", async () => {
    for (const startup_timeout_ms of [1_000, 600_000]) assert.equal((await load(servers({ s: stdio({ startup_timeout_ms }) }))).ok, true);
    for (const tool_timeout_ms of [1_000, 3_600_000]) assert.equal((await load(servers({ s: stdio({ tool_timeout_ms }) }))).ok, true);
    for (const startup_timeout_ms of [999, 600_001, 1_500.5, "60000", null]) assert.deepEqual(await load(servers({ s: stdio({ startup_timeout_ms }) })), INVALID);
    for (const tool_timeout_ms of [999, 3_600_001, 0, -1]) assert.deepEqual(await load(servers({ s: stdio({ tool_timeout_ms }) })), INVALID);
  });

  const invalidEntries: [string, unknown][] = [
    ["an unknown key", stdio({ commnd: "x" })],
    ["an empty command", { command: "" }],
    ["a command with a control character", { command: "np\u0007x" }],
    ["args that are not an array", stdio({ args: "-y" })],
    ["an argument with a NUL", stdio({ args: ["a\u0000b"] })],
    ["1025 arguments", stdio({ args: Array.from({ length: 1025 }, () => "a") })],
    ["an argument over 32 KiB", stdio({ args: ["é".repeat(16_385)] })],
    ["an argument with a lone surrogate", stdio({ args: ["\uD800"] })],
    ["an env name starting with a digit", stdio({ env: { "1A": "x" } })],
    ["an env value that is not a string", stdio({ env: { A: 1 } })],
    ["an env value with a NUL", stdio({ env: { A: "\u0000" } })],
    ["an empty cwd", stdio({ cwd: "" })],
    ["an ftp url", { url: "ftp://example.test/mcp" }],
    ["a relative url", { url: "/mcp" }],
    ["a url with credentials", { url: "https://user:pass@example.test/mcp" }],
    ["a url with a fragment", { url: "https://example.test/mcp#x" }],
    ["a header name with a space", http({ headers: { "X Key": "v" } })],
    ["a header value with a line feed", http({ headers: { "X-Key": "a\nb" } })],
    ["a bearer_token_env that is not a variable name", http({ bearer_token_env: "MY-TOKEN" })],
    ["enabled as a string", stdio({ enabled: "yes" })],
    ["an unknown tool policy", stdio({ tools: { echo: "maybe" } })],
    ["a tool name with a control character", stdio({ tools: { "a\u0001": "deny" } })],
    ["servers as an array", []],
  ];
  for (const [label, entry] of invalidEntries) {
    it(`loadSettings() refuses ${label} with configuration_invalid`, async () => {
      assert.deepEqual(await load(Array.isArray(entry) ? { mcp: { servers: entry } } : servers({ s: entry })), INVALID);
    });
  }
});

describe("mcp settings: combinations and the project rule", () => {
  const broken: [string, unknown, unknown][] = [
    ["command and url together", servers({ s: { command: "x", url: "https://a.test/" } }), undefined],
    ["args without command", servers({ s: http({ args: [] }) }), undefined],
    ["cwd on an HTTP server", servers({ s: http({ cwd: "/" }) }), undefined],
    ["headers without url", servers({ s: stdio({ headers: {} }) }), undefined],
    ["bearer_token_env on a stdio server", servers({ s: stdio({ bearer_token_env: "T" }) }), undefined],
    ["a header the transport sets", servers({ s: http({ headers: { "Mcp-Session-Id": "x" } }) }), undefined],
    ["one header named twice in different case", servers({ s: http({ headers: { "X-A": "1", "x-a": "2" } }) }), undefined],
    ["an Authorization header with bearer_token_env", servers({ s: http({ headers: { Authorization: "Bearer x" }, bearer_token_env: "T" }) }), undefined],
    ["a global entry that defines nothing", servers({ s: { enabled: true } }), undefined],
    ["a project restating a global server's command", servers({ s: stdio() }), servers({ s: stdio() })],
    ["a project changing a global server's url", servers({ s: http() }), servers({ s: { url: "https://evil.test/" } })],
    ["a project setting a global server's timeout", servers({ s: stdio() }), servers({ s: { tool_timeout_ms: 5_000 } })],
    ["a project adjusting a server nobody defines", {}, servers({ s: { enabled: true } })],
    ["a project loosening a global server's tool from ask", servers({ s: stdio({ tools: { t: "ask" } }) }), servers({ s: { tools: { t: "allow" } } })],
    ["a project loosening a global server's tool from deny", servers({ s: stdio({ tools: { t: "deny" } }) }), servers({ s: { tools: { t: "ask" } } })],
    ["a project allowing a tool the global file leaves at ask", servers({ s: stdio() }), servers({ s: { tools: { t: "allow" } } })],
    ["a project allowing a tool of its own server", {}, servers({ s: stdio({ tools: { t: "allow" } }) })],
  ];
  for (const [label, global, project] of broken) {
    it(`loadSettings() refuses ${label} with configuration_invalid`, async () => {
      assert.deepEqual(await load(global, project), INVALID);
    });
  }

  it("a project may enable a global server it cannot redefine, and tighten or restate its policies", async () => {
    const loaded = await load(
      servers({ s: stdio({ enabled: false, tools: { a: "allow", b: "ask" } }) }),
      servers({ s: { enabled: true, tools: { a: "allow", b: "deny", c: "ask" } } }),
    );
    assert.ok(loaded.ok);
    assert.deepEqual(loaded.mcpServers?.map(({ name, source, transport, enabled, toolPolicies }) => ({ name, source, transport, enabled, toolPolicies })), [
      { name: "s", source: GLOBAL, transport: { transport: "stdio", command: "npx", args: [], env: {}, cwd: null }, enabled: true, toolPolicies: { a: "allow", b: "deny", c: "ask" } },
    ]);
  });

  it("a project may disable a global server, and define servers of its own with ask or deny", async () => {
    const loaded = await load(servers({ g: stdio() }), servers({ g: { enabled: false }, p: http({ tools: { t: "deny", u: "ask" } }) }));
    assert.ok(loaded.ok);
    assert.deepEqual(loaded.mcpServers?.map(({ name, source, enabled, toolPolicies }) => ({ name, source, enabled, toolPolicies })), [
      { name: "g", source: GLOBAL, enabled: false, toolPolicies: {} },
      { name: "p", source: PROJECT, enabled: true, toolPolicies: { t: "deny", u: "ask" } },
    ]);
  });

  it("without a project file (cwd's .magi-code is MC_HOME) only global servers count", async () => {
    const fs = new MemoryFileSystem();
    fs.writeFile(GLOBAL, JSON.stringify(servers({ g: stdio() })));
    const loaded = await loadSettings(fs, { global: GLOBAL, project: null }, new AbortController().signal);
    assert.deepEqual(loaded.ok && loaded.mcpServers?.map((server) => server.source), [GLOBAL]);
  });
});

describe("mcp settings in config check", () => {
  /** Runs checkConfiguration over a memory runtime with MC_HOME=/h and the workspace /w. */
  async function check(global: unknown, project?: unknown) {
    const fs = new MemoryFileSystem();
    fs.writeFile(GLOBAL, JSON.stringify(global));
    if (project !== undefined) fs.writeFile(PROJECT, JSON.stringify(project));
    const runtime = createMemoryRuntime({ fs, cwd: "/w", env: { MC_HOME: "/h", PATH: "/bin" } });
    fs.writeFile("/bin/npx", "#!/bin/sh\n", 0o755);
    const report = await checkConfiguration(runtime);
    const line = (entry: { file: string; path: string; message: string }) => `${entry.file}: ${entry.path}: ${entry.message}`;
    return { problems: report.problems.map(line), notes: report.notes.map(line) };
  }

  it("names the path of a bad server name, a bad field and a broken combination", async () => {
    const report = await check(servers({ "a__b": stdio(), ok: stdio({ startup_timeout_ms: 10 }) }));
    assert.deepEqual(report.problems.map((line) => line.split(": ").slice(0, 2).join(": ")), [
      `${GLOBAL}: $.mcp.servers.a__b`,
      `${GLOBAL}: $.mcp.servers.ok.startup_timeout_ms`,
    ]);
    const combined = await check(servers({ s: { command: "x", url: "https://a.test/" } }));
    assert.deepEqual(combined.problems, [`${GLOBAL}: $.mcp.servers.s.url: a server has either command (stdio) or url (Streamable HTTP), not both`]);
  });

  it("names each project entry that breaks the project rule", async () => {
    const report = await check(servers({ s: stdio() }), servers({ s: { command: "evil", tools: { t: "allow" } }, q: { enabled: true } }));
    assert.deepEqual(report.problems.map((line) => line.split(": ").slice(0, 2).join(": ")), [
      `${PROJECT}: $.mcp.servers.q`,
      `${PROJECT}: $.mcp.servers.s.command`,
      `${PROJECT}: $.mcp.servers.s.tools.t`,
    ]);
  });

  it("notes an enabled server that will not start without making it a problem; a disabled one is not noted", async () => {
    const report = await check(servers({ on: stdio(), off: stdio({ enabled: false }), lost: { command: "/nowhere/server" } }));
    assert.deepEqual(report.problems, []);
    assert.deepEqual(report.notes, [
      `${GLOBAL}: $.mcp.servers.lost: command not found (not on PATH, not executable, or no such file), will not start`,
      `${GLOBAL}: $.mcp.servers.on: not approved, will not start: run 'magi-code mcp approve on'`,
    ]);
  });
});
