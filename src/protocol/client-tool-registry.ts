/**
 * The `client_tools` registry of `initialize` (the `client.tools`
 * extension, docs/features/local-agent-client-tools.md): each tool's exact
 * shape, its bounds, the name the model sees, and the descriptor a
 * negotiating client's `initialize` result carries. The server checks a
 * registry with it in preflight (`admission/initialize.ts`, which loads this
 * module only for an `initialize` that sends one), and the client library
 * checks what an author registers with the same rules before sending.
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../util/exact-object.ts";
import type { Exact, Pattern, Str } from "../util/schema-types.ts";
import { isSubsetSchema } from "./json-subset.ts";

/** Most tools one registry holds. */
export const MAX_CLIENT_TOOLS = 32;

/** Largest `description`, in UTF-8 bytes. */
export const MAX_DESCRIPTION_BYTES = 2_048;

/** Largest `input_schema`, as compact JSON, in UTF-8 bytes. */
export const MAX_INPUT_SCHEMA_BYTES = 8_192;

/** The `timeout_ms` of a tool that sets none. */
export const DEFAULT_TIMEOUT_MS = 120_000;

/** Smallest and largest `timeout_ms`. */
export const TIMEOUT_BOUNDS = { min: 1_000, max: 600_000 } as const;

/** Largest `output` of a `client.tool.result`, in UTF-8 bytes: the input frame's 64 KiB less room for the envelope. */
export const MAX_RESULT_OUTPUT_BYTES = 61_440;

/** A registered name: lowercase, digits and `_`, 1–48 characters, starting with a letter. */
export const CLIENT_TOOL_NAME: RegExp = /^[a-z][a-z0-9_]{0,47}$/;

/** What the model sees before a client tool's registered name; no built-in or MCP tool name starts with it. */
export const MODEL_NAME_PREFIX = "client__";

const encoder = new TextEncoder();

type DescriptionSchema = v.SchemaWithPipe<readonly [Str, v.MinBytesAction<string, 1, undefined>, v.MaxBytesAction<string, typeof MAX_DESCRIPTION_BYTES, undefined>, v.CheckAction<string, undefined>]>;
type InputSchemaSchema = v.SchemaWithPipe<readonly [v.UnknownSchema, v.CheckAction<unknown, undefined>]>;
type TimeoutSchema = v.ExactOptionalSchema<
  v.SchemaWithPipe<readonly [v.NumberSchema<undefined>, v.IntegerAction<number, undefined>, v.MinValueAction<number, 1_000, undefined>, v.MaxValueAction<number, 600_000, undefined>]>,
  undefined
>;

/** One registered tool: exactly `{ name, description, input_schema, timeout_ms? }`. */
export const ClientToolSchema: Exact<{ name: Pattern; description: DescriptionSchema; input_schema: InputSchemaSchema; timeout_ms: TimeoutSchema }> = exactObject({
  name: v.pipe(v.string(), v.regex(CLIENT_TOOL_NAME)),
  description: v.pipe(v.string(), v.minBytes(1), v.maxBytes(MAX_DESCRIPTION_BYTES), v.check((text) => /\P{White_Space}/u.test(text))),
  input_schema: v.pipe(
    v.unknown(),
    v.check((schema) =>
      isSubsetSchema(schema) && (schema as { type: unknown }).type === "object" && encoder.encode(JSON.stringify(schema)).length <= MAX_INPUT_SCHEMA_BYTES
    ),
  ),
  timeout_ms: v.exactOptional(v.pipe(v.number(), v.integer(), v.minValue(TIMEOUT_BOUNDS.min), v.maxValue(TIMEOUT_BOUNDS.max))),
});

/** One tool as registered. */
export type ClientToolSpec = v.InferOutput<typeof ClientToolSchema>;

/** The `client_tools` array: 1–32 tools with distinct names. */
export const ClientToolRegistrySchema: v.SchemaWithPipe<
  readonly [
    v.ArraySchema<typeof ClientToolSchema, undefined>,
    v.MinLengthAction<ClientToolSpec[], 1, undefined>,
    v.MaxLengthAction<ClientToolSpec[], typeof MAX_CLIENT_TOOLS, undefined>,
    v.CheckAction<ClientToolSpec[], undefined>,
  ]
> = v.pipe(
  v.array(ClientToolSchema),
  v.minLength(1),
  v.maxLength(MAX_CLIENT_TOOLS),
  v.check((tools) => new Set(tools.map((tool) => tool.name)).size === tools.length),
);

/** The registry a client sends, or null when it breaks any rule (the caller's `invalid_params`). */
export function parseClientToolRegistry(value: unknown): readonly ClientToolSpec[] | null {
  const parsed = v.safeParse(ClientToolRegistrySchema, value);
  return parsed.success ? Object.freeze(parsed.output) : null;
}

/** The name the model calls registered tool `name` by. */
export function modelName(name: string): string {
  return MODEL_NAME_PREFIX + name;
}

/** A tool's timeout: its own `timeout_ms`, else the default. */
export function timeoutOf(tool: ClientToolSpec): number {
  return tool.timeout_ms ?? DEFAULT_TIMEOUT_MS;
}

/** The `client.tools` descriptor of `initialize`'s result for `registry`. */
export function clientToolsDescriptor(registry: readonly ClientToolSpec[]): ClientToolsDescriptor {
  return {
    tools: registry.map((tool) => ({ name: tool.name, model_name: modelName(tool.name), timeout_ms: timeoutOf(tool) })),
    max_output_bytes: MAX_RESULT_OUTPUT_BYTES,
  };
}

/** The `client.tools` entry of `initialize`'s `extensions`. */
export type ClientToolsDescriptor = {
  readonly tools: readonly { readonly name: string; readonly model_name: string; readonly timeout_ms: number }[];
  readonly max_output_bytes: number;
};
