/**
 * The `client.tools` extension for fuzzing (docs/features/local-agent-client-tools.md):
 * valid registries (every tool in the JSON Schema subset, names distinct),
 * registries with one defect labelled with why they are refused, and
 * `client.tool.result` params. The rules are spelled here from the
 * contract, not imported from the server's schemas, so the kit checks the
 * child independently.
 *
 * @module
 */

import fc from "fast-check";

/** The contract's bounds of a registry and of a result. */
export const CLIENT_TOOL_BOUNDS = Object.freeze({
  tools: 32,
  nameChars: 48,
  descriptionBytes: 2_048,
  schemaBytes: 8_192,
  schemaDepth: 8,
  enumValues: 64,
  timeoutMin: 1_000,
  timeoutMax: 600_000,
  capabilities: 18,
  outputBytes: 61_440,
});

/** One registered tool as a client sends it. */
export interface ClientTool {
  readonly name: string;
  readonly description: string;
  readonly input_schema: Readonly<Record<string, unknown>>;
  readonly timeout_ms?: number;
}

/** A registered name: `[a-z][a-z0-9_]{0,47}`. */
export function clientToolName(): fc.Arbitrary<string> {
  const tail = fc.string({ unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789_"), maxLength: CLIENT_TOOL_BOUNDS.nameChars - 1 });
  return fc.tuple(fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz"), tail).map(([head, rest]) => head + rest);
}

const scalarNode: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({ type: fc.constant("string"), minLength: fc.nat(4), maxLength: fc.integer({ min: 4, max: 64 }) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constantFrom("number", "integer"), minimum: fc.integer({ min: -100, max: 0 }), maximum: fc.integer({ min: 0, max: 100 }) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("string"), enum: fc.uniqueArray(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 4 }) }),
  fc.record({ type: fc.constantFrom("boolean", "null"), description: fc.string({ maxLength: 20 }) }, { requiredKeys: ["type"] }),
);

/** A schema node of the subset, nested at most `depth` more levels. */
function subsetNode(depth: number): fc.Arbitrary<Record<string, unknown>> {
  if (depth <= 1) return scalarNode;
  return fc.oneof(scalarNode, objectNode(depth - 1), fc.record({ type: fc.constant("array"), items: subsetNode(depth - 1), maxItems: fc.nat(8) }, { requiredKeys: ["type"] }));
}

function objectNode(depth: number): fc.Arbitrary<Record<string, unknown>> {
  return fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/u), subsetNode(depth), { maxKeys: 3 }).chain((properties) =>
    fc.record({
      type: fc.constant("object"),
      properties: fc.constant(properties),
      required: fc.subarray(Object.keys(properties)),
      additionalProperties: fc.boolean(),
    }, { requiredKeys: ["type", "properties"] })
  );
}

/** A tool with a valid name, description, subset `input_schema` and optional timeout. */
export function clientTool(): fc.Arbitrary<ClientTool> {
  return fc.record({
    name: clientToolName(),
    description: fc.string({ minLength: 1, maxLength: 40 }).map((text) => `Tool: ${text}`),
    input_schema: objectNode(3),
    timeout_ms: fc.integer({ min: CLIENT_TOOL_BOUNDS.timeoutMin, max: CLIENT_TOOL_BOUNDS.timeoutMax }),
  }, { requiredKeys: ["name", "description", "input_schema"] });
}

/** A valid registry: 1–`maxTools` tools with distinct names. */
export function clientToolRegistry(maxTools = 4): fc.Arbitrary<ClientTool[]> {
  return fc.uniqueArray(clientTool(), { minLength: 1, maxLength: Math.min(maxTools, CLIENT_TOOL_BOUNDS.tools), selector: (tool) => tool.name });
}

/** A registry the contract refuses (`invalid_params`), and why. */
export interface InvalidRegistry {
  readonly registry: unknown;
  readonly label: string;
}

type Defect = readonly [label: string, apply: (tools: ClientTool[]) => unknown];

const withFirst = (tools: ClientTool[], change: (tool: ClientTool) => unknown): unknown[] => [change(tools[0]!), ...tools.slice(1)];
const schemaOf = (tool: ClientTool, schema: unknown) => ({ ...tool, input_schema: schema });
const nested = (depth: number): Record<string, unknown> => depth === 1 ? { type: "object" } : { type: "object", properties: { a: nested(depth - 1) } };

const DEFECTS: readonly Defect[] = [
  ["an empty registry", () => []],
  [`${CLIENT_TOOL_BOUNDS.tools + 1} tools`, (tools) => Array.from({ length: CLIENT_TOOL_BOUNDS.tools + 1 }, (_, i) => ({ ...tools[0]!, name: `t${i}` }))],
  ["a duplicate name", (tools) => [...tools, tools[0]]],
  ["a name of 49 characters", (tools) => withFirst(tools, (tool) => ({ ...tool, name: `a${"b".repeat(CLIENT_TOOL_BOUNDS.nameChars)}` }))],
  ["a name with an uppercase letter", (tools) => withFirst(tools, (tool) => ({ ...tool, name: `A${tool.name}` }))],
  ["a name starting with a digit", (tools) => withFirst(tools, (tool) => ({ ...tool, name: `1${tool.name}` }))],
  ["a name with a hyphen", (tools) => withFirst(tools, (tool) => ({ ...tool, name: `${tool.name}-x` }))],
  ["an empty description", (tools) => withFirst(tools, (tool) => ({ ...tool, description: "" }))],
  ["a description of White_Space only", (tools) => withFirst(tools, (tool) => ({ ...tool, description: " \u00a0\t" }))],
  ["a description of 2,049 bytes", (tools) => withFirst(tools, (tool) => ({ ...tool, description: "é".repeat(1_024) + "x" }))],
  ["an unknown tool field", (tools) => withFirst(tools, (tool) => ({ ...tool, policy: "allow" }))],
  ["a tool that is no object", (tools) => withFirst(tools, () => [])],
  ["a missing input_schema", (tools) => withFirst(tools, ({ input_schema: _, ...tool }) => tool)],
  ["a top schema that is no object type", (tools) => withFirst(tools, (tool) => schemaOf(tool, { type: "string" }))],
  ["a schema keyword outside the subset (pattern)", (tools) => withFirst(tools, (tool) => schemaOf(tool, { type: "object", properties: { a: { type: "string", pattern: "^a" } } }))],
  ["a schema keyword outside the subset ($ref)", (tools) => withFirst(tools, (tool) => schemaOf(tool, { type: "object", properties: { a: { $ref: "#" } } }))],
  ["a type array", (tools) => withFirst(tools, (tool) => schemaOf(tool, { type: "object", properties: { a: { type: ["string", "null"] } } }))],
  ["a node without type", (tools) => withFirst(tools, (tool) => schemaOf(tool, { type: "object", properties: { a: { description: "x" } } }))],
  ["an empty enum", (tools) => withFirst(tools, (tool) => schemaOf(tool, { type: "object", properties: { a: { type: "string", enum: [] } } }))],
  ["an enum value of another type", (tools) => withFirst(tools, (tool) => schemaOf(tool, { type: "object", properties: { a: { type: "string", enum: [1] } } }))],
  ["a required name not among the properties", (tools) => withFirst(tools, (tool) => schemaOf(tool, { type: "object", properties: {}, required: ["a"] }))],
  ["minLength above maxLength", (tools) => withFirst(tools, (tool) => schemaOf(tool, { type: "object", properties: { a: { type: "string", minLength: 3, maxLength: 2 } } }))],
  ["a schema additionalProperties", (tools) => withFirst(tools, (tool) => schemaOf(tool, { type: "object", additionalProperties: { type: "string" } }))],
  ["nesting 9 nodes deep", (tools) => withFirst(tools, (tool) => schemaOf(tool, nested(CLIENT_TOOL_BOUNDS.schemaDepth + 1)))],
  ["an input_schema over 8,192 bytes", (tools) => withFirst(tools, (tool) => schemaOf(tool, { type: "object", description: "x".repeat(CLIENT_TOOL_BOUNDS.schemaBytes) }))],
  ["timeout_ms 999", (tools) => withFirst(tools, (tool) => ({ ...tool, timeout_ms: CLIENT_TOOL_BOUNDS.timeoutMin - 1 }))],
  ["timeout_ms 600,001", (tools) => withFirst(tools, (tool) => ({ ...tool, timeout_ms: CLIENT_TOOL_BOUNDS.timeoutMax + 1 }))],
  ["a fractional timeout_ms", (tools) => withFirst(tools, (tool) => ({ ...tool, timeout_ms: 1_500.5 }))],
];

/** A valid registry with one defect applied, labelled. */
export function invalidClientToolRegistry(): fc.Arbitrary<InvalidRegistry> {
  return fc.tuple(clientToolRegistry(), fc.constantFrom(...DEFECTS)).map(([tools, [label, apply]]) => ({ registry: apply(tools), label }));
}

/** `client.tool.result` params for `call` (ids of a call event), with any outcome and an output within the bound. */
export function clientToolResultParams(call: { readonly session_id: string; readonly run_id: string; readonly call_id: string }): fc.Arbitrary<Record<string, unknown>> {
  return fc.record({ ok: fc.boolean(), output: fc.string({ maxLength: 200 }) }).map(({ ok, output }) => ({ ...call, ok, output }));
}

/** `client.tool.result` params the contract refuses (`invalid_params` for a negotiating client), and why. */
export function invalidClientToolResultParams(): fc.Arbitrary<{ readonly params: unknown; readonly label: string }> {
  const base = { session_id: "s", run_id: "r", call_id: "ct1", ok: true, output: "" };
  const defects: readonly (readonly [string, unknown])[] = [
    ["an output of 61,441 bytes", { ...base, output: "x".repeat(CLIENT_TOOL_BOUNDS.outputBytes + 1) }],
    ["ok that is no boolean", { ...base, ok: "true" }],
    ["a missing output", { session_id: "s", run_id: "r", call_id: "ct1", ok: true }],
    ["an unknown field", { ...base, extra: 1 }],
    ["a session id with a dot", { ...base, session_id: "a.b" }],
    ["a call id of 65 bytes", { ...base, call_id: "c".repeat(65) }],
    ["params that are an array", []],
  ];
  return fc.constantFrom(...defects).map(([label, params]) => ({ params, label }));
}
