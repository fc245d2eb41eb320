/**
 * The `client.tools` registry (docs/features/local-agent-client-tools.md):
 * every bound at and around its value, the JSON Schema subset and argument
 * checks, the capability rules of `initialize`'s params, and two fast-check
 * properties over a child on the memory runtime: an accepted registry comes
 * back as its descriptor, in order; a refused one is `invalid_params`,
 * creates nothing (no storage root) and leaves the child able to initialize.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import * as v from "valibot";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { clientToolRegistry, clientToolResultCode, clientToolResultParams, invalidClientToolRegistry, invalidClientToolResultParams } from "../src/fuzz/mod.ts";
import { parseClientToolRegistry } from "../src/protocol/client-tool-registry.ts";
import { argumentProblems, isSubsetSchema } from "../src/protocol/json-subset.ts";
import { ClientToolResultParamsSchema, InitializeParamsSchema } from "../src/protocol/schemas.ts";
import { startServer } from "./support/harness.ts";
import { callRaw } from "./support/params-child.ts";

const TOOL = { name: "open_editors", description: "The open files.", input_schema: { type: "object" } };
const accepted = (tools: unknown) => parseClientToolRegistry(tools) !== null;
const nested = (depth: number): Record<string, unknown> => depth === 1 ? { type: "object" } : { type: "object", properties: { a: nested(depth - 1) } };
/** An object schema whose compact JSON is exactly `bytes` long. */
const schemaOfBytes = (bytes: number) => ({ type: "object", description: "x".repeat(bytes - JSON.stringify({ type: "object", description: "" }).length) });

const HOME = "/home/user/.magi-code";
const SETTINGS = { model: { provider: "ollama", model: "qwen" }, providers: { endpoints: { ollama: { base_url: "http://127.0.0.1:9/v1" } } } };

function child() {
  const fs = new MemoryFileSystem();
  const run = startServer({ fs, env: { HOME: "/home/user" } });
  return { fs, run };
}

describe("client.tools registry", () => {
  it("parseClientToolRegistry() holds every bound at its value and refuses one past it", () => {
    assert.ok(accepted([{ ...TOOL, name: `a${"b".repeat(47)}` }]));
    assert.ok(!accepted([{ ...TOOL, name: `a${"b".repeat(48)}` }]));
    assert.ok(accepted(Array.from({ length: 32 }, (_, i) => ({ ...TOOL, name: `t${i}` }))));
    assert.ok(!accepted(Array.from({ length: 33 }, (_, i) => ({ ...TOOL, name: `t${i}` }))));
    assert.ok(!accepted([]));
    assert.ok(accepted([{ ...TOOL, description: "é".repeat(1_024) }]));
    assert.ok(!accepted([{ ...TOOL, description: `${"é".repeat(1_024)}x` }]));
    assert.ok(accepted([{ ...TOOL, input_schema: schemaOfBytes(8_192) }]));
    assert.ok(!accepted([{ ...TOOL, input_schema: schemaOfBytes(8_193) }]));
    for (const [timeout, ok] of [[999, false], [1_000, true], [600_000, true], [600_001, false]] as const) {
      assert.equal(accepted([{ ...TOOL, timeout_ms: timeout }]), ok, `timeout_ms ${timeout}`);
    }
    assert.ok(accepted([{ ...TOOL, input_schema: nested(8) }]));
    assert.ok(!accepted([{ ...TOOL, input_schema: nested(9) }]));
    const values = (count: number) => ({ type: "object", properties: { a: { type: "integer", enum: Array.from({ length: count }, (_, i) => i) } } });
    assert.ok(accepted([{ ...TOOL, input_schema: values(64) }]));
    assert.ok(!accepted([{ ...TOOL, input_schema: values(65) }]));
    assert.ok(!accepted([TOOL, TOOL]));
  });

  it("isSubsetSchema() accepts only keywords it enforces", () => {
    assert.ok(isSubsetSchema({ type: "object", properties: { a: { type: "array", items: { type: "string", maxLength: 3 }, minItems: 1 } }, required: ["a"], additionalProperties: false }));
    for (const keyword of ["pattern", "format", "default", "const"]) assert.ok(!isSubsetSchema({ type: "string", [keyword]: "x" }), keyword);
    for (const keyword of ["oneOf", "anyOf", "allOf"]) assert.ok(!isSubsetSchema({ type: "object", [keyword]: [] }), keyword);
    assert.ok(!isSubsetSchema({ type: "string", minimum: 1 }), "a keyword of another type");
    assert.ok(!isSubsetSchema({ type: "object", required: ["a", "a"], properties: { a: { type: "string" } } }));
  });

  it("argumentProblems() checks types, bounds, enums, required and additional properties", () => {
    const schema = {
      type: "object",
      properties: { path: { type: "string", minLength: 1 }, line: { type: "integer", minimum: 1 }, kind: { type: "string", enum: ["a", "b"] } },
      required: ["path"],
      additionalProperties: false,
    };
    assert.deepEqual(argumentProblems(schema, { path: "a.ts", line: 3, kind: "a" }), []);
    assert.deepEqual(argumentProblems(schema, { line: 1.5, kind: "c", extra: true }), [
      'arguments: missing "path"',
      "arguments.line: expected an integer",
      "arguments.kind: not one of the allowed values",
      'arguments: unexpected "extra"',
    ]);
    assert.deepEqual(argumentProblems(schema, []), ["arguments: expected object"]);
    assert.deepEqual(argumentProblems({ type: "object", properties: { s: { type: "string", maxLength: 1 } } }, { s: "😀" }), [], "lengths count code points");
  });

  it("initialize params: client_tools only with client.tools and the reverse; 18 names with it, 16 without", () => {
    const valid = (params: unknown) => v.safeParse(InitializeParamsSchema, params).success;
    const names = (count: number) => Array.from({ length: count }, (_, i) => `c${i}`);
    assert.ok(valid({ required_capabilities: [...names(17), "client.tools"], client_tools: [] }));
    assert.ok(!valid({ required_capabilities: [...names(18), "client.tools"], client_tools: [] }));
    assert.ok(valid({ required_capabilities: names(16) }));
    assert.ok(!valid({ required_capabilities: names(17) }));
    assert.ok(valid({ required_capabilities: [...names(16), "client.tools"], client_tools: [] }), "17 names with client.tools");
    assert.ok(!valid({ required_capabilities: ["client.tools"] }));
    assert.ok(!valid({ required_capabilities: [], client_tools: [] }));
  });

  it("client.tool.result params: exactly five fields, output within 61,440 bytes", () => {
    const valid = (params: unknown) => v.safeParse(ClientToolResultParamsSchema, params).success;
    const base = { session_id: "s", run_id: "r", call_id: "ct1", ok: true, output: "" };
    assert.ok(valid(base));
    assert.ok(valid({ ...base, output: "x".repeat(61_440) }));
    assert.ok(!valid({ ...base, output: "x".repeat(61_441) }));
    assert.ok(!valid({ ...base, extra: 1 }));
    assert.ok(!valid({ ...base, ok: "yes" }));
  });

  it("an accepted registry round-trips as the descriptor, in order (property, memory child)", async () => {
    await fc.assert(
      fc.asyncProperty(clientToolRegistry(), async (tools) => {
        // As JSON, the way a client sends it (fast-check may build null-prototype objects).
        const sent = JSON.parse(JSON.stringify(tools)) as typeof tools;
        assert.deepEqual(parseClientToolRegistry(sent), sent);
        const { fs, run } = child();
        fs.writeFile(`${HOME}/settings.jsonc`, JSON.stringify(SETTINGS), 0o600);
        const init = await callRaw(run, "initialize", JSON.stringify({ required_capabilities: ["client.tools"], client_tools: tools }));
        assert.ok(init.result, JSON.stringify(init.error));
        const descriptor = (init.result.extensions as Record<string, { tools: unknown }>)["client.tools"]!;
        assert.deepEqual(descriptor.tools, tools.map((tool) => ({ name: tool.name, model_name: `client__${tool.name}`, timeout_ms: tool.timeout_ms ?? 120_000 })));
        run.runtime.input.end();
        assert.equal(await run.exit, 0);
      }),
      { numRuns: 25 },
    );
  });

  it("a refused registry is invalid_params and changes nothing: no storage root, the child still initializes (property, memory child)", async () => {
    await fc.assert(
      fc.asyncProperty(invalidClientToolRegistry(), async ({ registry, label }) => {
        const { fs, run } = child();
        const refused = await callRaw(run, "initialize", JSON.stringify({ required_capabilities: ["client.tools"], client_tools: registry }));
        assert.equal(refused.error?.code, "invalid_params", label);
        assert.equal(fs.exists(HOME), false, label);
        fs.writeFile(`${HOME}/settings.jsonc`, JSON.stringify(SETTINGS), 0o600);
        const init = await callRaw(run, "initialize", JSON.stringify({ required_capabilities: ["client.tools"], client_tools: [TOOL] }));
        assert.ok(init.result, JSON.stringify(init.error));
        run.runtime.input.end();
        assert.equal(await run.exit, 0);
      }),
      { numRuns: 40 },
    );
  });

  it("client.tool.result admission: unknown without the extension, params first, then the calls (property, memory child)", async () => {
    const call = { session_id: "s1", run_id: "r1", call_id: "ct1" };
    const request = fc.oneof(
      clientToolResultParams(call).map((params) => ({ params: params as unknown, valid: true, label: "valid params" })),
      invalidClientToolResultParams().map(({ params, label }) => ({ params, valid: false, label })),
    );
    await fc.assert(
      fc.asyncProperty(request, fc.boolean(), async ({ params, valid, label }, negotiated) => {
        const { fs, run } = child();
        fs.writeFile(`${HOME}/settings.jsonc`, JSON.stringify(SETTINGS), 0o600);
        const init = negotiated ? { required_capabilities: ["client.tools"], client_tools: [TOOL] } : { required_capabilities: [] };
        assert.ok((await callRaw(run, "initialize", JSON.stringify(init))).result);
        const answer = await callRaw(run, "client.tool.result", JSON.stringify(params));
        // No call is pending, so a result that reaches the calls is stale.
        assert.equal(answer.error?.code, clientToolResultCode(valid, { kind: "ready", required: init.required_capabilities }, negotiated) ?? "stale_tool_call", label);
        run.runtime.input.end();
        assert.equal(await run.exit, 0);
      }),
      { numRuns: 30 },
    );
  });
});
