/**
 * TypeScript declarations of the `tools` object a Code Mode program sees,
 * generated from the offered tools' JSON Schemas for the `code` tool's
 * description. Bounded: a schema is followed to a fixed depth (deeper parts
 * are `unknown`), each tool's comment is its description's first line cut
 * short, and once the text reaches its byte bound the remaining tools are
 * listed with untyped arguments, so an MCP server with a huge schema cannot
 * blow up every request.
 *
 * @module
 */

import { clampUtf8, utf8ByteCount } from "../../util/utf8.ts";
import type { ToolSpec } from "../providers/conversation.ts";

/** Largest declarations text, in UTF-8 bytes. */
export const MAX_DECLARATION_BYTES = 16_384;

const MAX_DEPTH = 4;
const MAX_COMMENT_BYTES = 200;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

type Schema = Readonly<Record<string, unknown>>;

const isSchema = (value: unknown): value is Schema => typeof value === "object" && value !== null && !Array.isArray(value);
const key = (name: string) => IDENTIFIER.test(name) ? name : JSON.stringify(name);

/** The TypeScript type of JSON Schema `schema`, `unknown` past the depth bound or for what it cannot say. */
function typeOf(schema: unknown, depth: number): string {
  if (!isSchema(schema) || depth > MAX_DEPTH) return "unknown";
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum.map((item) => JSON.stringify(item) ?? "unknown").join(" | ");
  if ("const" in schema) return JSON.stringify(schema.const) ?? "unknown";
  const union = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : null;
  if (union !== null) return union.map((item) => typeOf(item, depth + 1)).join(" | ") || "unknown";
  const type = schema.type;
  if (Array.isArray(type)) return type.map((item) => typeOf({ ...schema, type: item }, depth)).join(" | ") || "unknown";
  switch (type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      return `Array<${typeOf(schema.items, depth + 1)}>`;
    case "object":
      return objectType(schema, depth);
    default:
      return "unknown";
  }
}

function objectType(schema: Schema, depth: number): string {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((item) => typeof item === "string") : []);
  const fields = Object.entries(properties).map(([name, property]) => `${key(name)}${required.has(name) ? "" : "?"}: ${typeOf(property, depth + 1)}`);
  if (fields.length === 0) return "Record<string, unknown>";
  return `{ ${fields.join("; ")} }`;
}

/** One line of comment from `description`: its first line, cut, with no comment terminator in it. */
function comment(description: string): string {
  const first = description.split("\n", 1)[0]!.replaceAll("*/", "* /").trim();
  return clampUtf8(first, MAX_COMMENT_BYTES);
}

/** The declaration of `tools` for `specs`, within {@link MAX_DECLARATION_BYTES}. */
export function toolDeclarations(specs: readonly ToolSpec[]): string {
  const head = "declare const tools: {\n";
  const tail = "};";
  let used = utf8ByteCount(head) + utf8ByteCount(tail);
  const lines: string[] = [];
  let full = true;
  for (const spec of specs) {
    const detailed = `  /** ${comment(spec.description)} */\n  ${key(spec.name)}(args: ${typeOf(spec.parameters, 0)}): Promise<string>;\n`;
    const bare = `  ${key(spec.name)}(args: Record<string, unknown>): Promise<string>;\n`;
    const line = full && used + utf8ByteCount(detailed) <= MAX_DECLARATION_BYTES ? detailed : bare;
    if (line === bare) full = false;
    if (used + utf8ByteCount(line) > MAX_DECLARATION_BYTES) break;
    used += utf8ByteCount(line);
    lines.push(line);
  }
  return `${head}${lines.join("")}${tail}`;
}
