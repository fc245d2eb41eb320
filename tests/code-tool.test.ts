/**
 * The `code` tool's spec (`src/runner/code-mode/`): its parameters match
 * its valibot schema, its description declares `tools` for exactly the
 * offered tools, and the declarations stay within their bound whatever the
 * schemas, with names and comments that cannot break the TypeScript text.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toJsonSchema } from "@valibot/to-json-schema";
import { codeCall } from "../src/runner/code-mode/code-call.ts";
import { CODE_TOOL_NAME, codeTool, codeToolSpec, MAX_SOURCE_BYTES } from "../src/runner/code-mode/code-tool.ts";
import { MAX_DECLARATION_BYTES, toolDeclarations } from "../src/runner/code-mode/declarations.ts";
import { builtinTools } from "../src/runner/tools/registry.ts";
import { SANDBOX_LIMITS } from "../src/sandbox/limits.ts";
import { createMemoryRuntime } from "../runtime/memory.ts";

const specs = builtinTools().map(({ name, description, parameters }) => ({ name, description, parameters }));

describe("the code tool's spec", () => {
  it("its JSON Schema equals @valibot/to-json-schema's rendering of its valibot schema, and bounds the source", () => {
    const tool = codeTool([], { command: "magi-code", args: [] }, () => Promise.resolve({ ok: true, output: "" }));
    const { $schema: _, ...rendered } = toJsonSchema(tool.schema, { errorMode: "ignore" }) as Record<string, unknown>;
    assert.deepEqual(codeToolSpec(specs).parameters, rendered);
    assert.equal(tool.name, CODE_TOOL_NAME);
    assert.ok(MAX_SOURCE_BYTES >= 16_384);
  });

  it("codeToolSpec() declares one typed function per offered tool in its description", () => {
    const description = codeToolSpec(specs).description;
    for (const spec of specs) assert.match(description, new RegExp(`\\n  ${spec.name}\\(args: `));
    assert.match(description, /read_file\(args: \{ path: string; start_line\?: number; end_line\?: number \}\): Promise<string>;/);
    assert.doesNotMatch(description, /\bcode\(args/);
    // The description is written out (the runner must not load src/sandbox/ to build it): it must say what the sandbox enforces.
    const { memoryBytes, cpuMs, maxCalls } = SANDBOX_LIMITS;
    assert.match(description, new RegExp(`${MAX_SOURCE_BYTES} bytes of source, a ${memoryBytes / 1_048_576} MiB heap, ${cpuMs / 1000} s of CPU, ${maxCalls} tool calls\\.`));
  });

  it("toolDeclarations() quotes names that are not identifiers, defuses comment terminators and maps enums, unions and arrays", () => {
    const text = toolDeclarations([{
      name: "mcp__docs__search-all",
      description: "Finds things */ declare const evil: 1; /*\nsecond line",
      parameters: {
        type: "object",
        properties: {
          mode: { enum: ["a", "b"] },
          ids: { type: "array", items: { type: ["string", "null"] } },
          either: { anyOf: [{ type: "integer" }, { type: "boolean" }] },
          "odd key": { type: "object" },
        },
        required: ["mode"],
      },
    }]);
    assert.match(text, /"mcp__docs__search-all"\(args: \{ mode: "a" \| "b"; ids\?: Array<string \| null>; either\?: number \| boolean; "odd key"\?: Record<string, unknown> \}\)/);
    assert.doesNotMatch(text, /\*\/ declare/);
    assert.doesNotMatch(text, /second line/);
  });

  it("toolDeclarations() stays within MAX_DECLARATION_BYTES for a thousand huge, deep schemas", () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let level = 0; level < 50; level++) deep = { type: "object", properties: { [`p${level}`]: deep, wide: { type: "string" } } };
    const many = Array.from({ length: 1000 }, (_, index) => ({ name: `tool_${index}`, description: "x".repeat(5000), parameters: deep }));
    const text = toolDeclarations(many);
    assert.ok(new TextEncoder().encode(text).length <= MAX_DECLARATION_BYTES);
    assert.match(text, /tool_0\(args: /);
    assert.match(text, /unknown/);
    assert.ok(text.endsWith("};"));
  });

  it("codeCall() makes a code call only of a direct call named code, with Code Mode on and a runtime that can start itself", () => {
    const call = { id: "c", name: "code", argumentsJson: "{}" };
    const nested = () => Promise.reject(new Error("not called"));
    const options = { codeMode: {}, runtime: createMemoryRuntime(), skills: false, external: null, signal: new AbortController().signal };
    assert.equal(codeCall(call, "direct", options, nested), null, "the memory runtime cannot start a host");
    const able = { ...options, runtime: { ...options.runtime, self: { command: "magi-code", args: [] } } };
    assert.notEqual(codeCall(call, "direct", able, nested), null);
    assert.equal(codeCall(call, "code_mode", able, nested), null, "a program cannot start a program");
    assert.equal(codeCall({ ...call, name: "read_file" }, "direct", able, nested), null);
    assert.equal(codeCall(call, "direct", { ...able, codeMode: null }, nested), null);
  });
});
