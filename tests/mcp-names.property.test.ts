/**
 * The names MCP tools are exposed under (docs/features/mcp.md, "Tool
 * names"): `mcp__<server>__<tool>`, sanitised and, past 64 bytes, shortened
 * with a hash. The property: over servers following the name grammar and
 * any tool names at all, every exposed name is valid for all three provider
 * APIs and they are distinct, or the collision is reported naming both tools.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { MAX_MCP_SERVER_NAME, MCP_SERVER_NAME } from "../src/config/mcp-settings.ts";
import { exposedToolName, exposeToolNames } from "../src/mcp/names.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

/** What each provider API accepts as a function/tool name, per its documentation. */
const PROVIDERS: Readonly<Record<string, RegExp>> = {
  "openai-chat": /^[a-zA-Z0-9_-]{1,64}$/,
  "openai-responses": /^[a-zA-Z0-9_-]{1,64}$/,
  "anthropic-messages": /^[a-zA-Z0-9_-]{1,64}$/,
};

const serverName = fc.stringMatching(MCP_SERVER_NAME).filter((name) => name.length <= MAX_MCP_SERVER_NAME);
// Tool names from anywhere: ASCII-heavy near the 64-byte edge, any Unicode, lone surrogates, the empty name.
const toolName = fc.oneof(
  fc.string({ unit: "binary", maxLength: 80 }),
  fc.stringMatching(/^[A-Za-z0-9_.\-/ ]{0,70}$/),
  fc.constantFrom("", "a.b", "a_b", "a b", "é", "\uD800", "x".repeat(60), "x".repeat(200)),
);

describe("the server-name grammar", () => {
  it("property: a name it admits has no double and no trailing underscore and starts with a letter or digit", () => {
    fc.assert(
      fc.property(serverName, (name) => {
        assert.ok(!name.includes("__") && !name.endsWith("_") && /^[A-Za-z0-9]/.test(name), name);
      }),
      { numRuns: fuzzRuns(300) },
    );
  });
});

describe("exposedToolName()", () => {
  it("keeps a fitting name, replaces each character outside [A-Za-z0-9_-] with _", () => {
    assert.equal(exposedToolName("github", "create_issue"), "mcp__github__create_issue");
    assert.equal(exposedToolName("fs", "read.file/v2 é"), "mcp__fs__read_file_v2__");
    assert.equal(exposedToolName("x", "😀"), "mcp__x___", "one code point, one _");
  });

  it("keeps exactly 64 bytes, and shortens 65 to 55 plus _ and 8 hex digits of the tool name's SHA-256", () => {
    const fits = "t".repeat(64 - "mcp__s__".length);
    assert.equal(exposedToolName("s", fits), `mcp__s__${fits}`);
    const long = `${fits}u`;
    // The first 8 hex digits of SHA-256("ttt…tu"), computed apart from magi-code.
    assert.equal(exposedToolName("s", long), `mcp__s__${"t".repeat(47)}_fb38889b`);
    assert.equal(exposedToolName("s", long).length, 64);
  });
});

describe("exposeToolNames()", () => {
  it("reports a collision after sanitising, naming both tools", () => {
    assert.deepEqual(exposeToolNames([{ server: "s", tools: ["a.b", "c", "a_b"] }]), {
      ok: false,
      collision: { exposed: "mcp__s__a_b", first: { server: "s", tool: "a.b" }, second: { server: "s", tool: "a_b" } },
    });
  });

  it("property: every exposed name is valid for all three providers and distinct, or the collision names two tools behind one name", () => {
    fc.assert(
      fc.property(fc.uniqueArray(serverName, { minLength: 1, maxLength: 4 }), fc.array(fc.array(toolName, { maxLength: 12 }), { minLength: 4, maxLength: 4 }), (servers, toolLists) => {
        const input = servers.map((server, index) => ({ server, tools: toolLists[index]! }));
        const result = exposeToolNames(input);
        for (const { server, tools } of input) {
          for (const tool of tools) {
            const exposed = exposedToolName(server, tool);
            for (const [provider, pattern] of Object.entries(PROVIDERS)) assert.match(exposed, pattern, `${provider}: ${exposed}`);
          }
        }
        const all = input.flatMap(({ server, tools }) => tools.map((tool) => ({ server, tool })));
        if (result.ok) {
          assert.equal(result.names.size, all.length, "one name per tool: distinct");
          for (const [exposed, owner] of result.names) assert.equal(exposedToolName(owner.server, owner.tool), exposed);
          return;
        }
        const { exposed, first, second } = result.collision;
        assert.equal(exposedToolName(first.server, first.tool), exposed);
        assert.equal(exposedToolName(second.server, second.tool), exposed);
        const index = (owner: typeof first) => all.findIndex((entry) => entry.server === owner.server && entry.tool === owner.tool);
        assert.ok(index(first) !== -1 && index(second) !== -1, "both are tools that were listed");
        assert.equal(first.server, second.server, "the grammar keeps servers apart: only one server's own names meet");
        const duplicated = first.tool === second.tool;
        assert.ok(!duplicated || all.filter((entry) => entry.server === first.server && entry.tool === first.tool).length > 1, "the same name twice only if listed twice");
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it("property: two distinct servers never expose the same name, whatever their tools", () => {
    fc.assert(
      fc.property(serverName, serverName, toolName, toolName, (a, b, ta, tb) => {
        fc.pre(a !== b);
        assert.notEqual(exposedToolName(a, ta), exposedToolName(b, tb));
      }),
      { numRuns: fuzzRuns(500) },
    );
  });
});
