/**
 * Admitting a server's `tools/list` answer: every tool must have a name and
 * an input schema that is a JSON Schema object within the bounds of
 * `limits.ts`; the list as a whole must fit too. One bad tool refuses the
 * whole list, naming that tool, so startup fails rather than offer the
 * model a server with tools silently missing. Descriptions are only cut.
 *
 * @module
 */

import { clampUtf8, utf8ByteCount } from "../util/utf8.ts";
import {
  MAX_DESCRIPTION_BYTES,
  MAX_INPUT_SCHEMA_BYTES,
  MAX_INPUT_SCHEMA_DEPTH,
  MAX_SERVER_SCHEMA_BYTES,
  MAX_TOOLS_PER_SERVER,
} from "./limits.ts";
import { exposedToolName, exposeToolNames } from "./names.ts";

/** Longest tool name a server may use, in UTF-8 bytes. */
export const MAX_TOOL_NAME_BYTES = 256;

/** One admitted tool of one server. */
export interface ListedTool {
  /** The server's own name for it: what `tools/call` and the tool policies use. */
  readonly name: string;
  /** The name the model calls it by. */
  readonly exposed: string;
  /** The server's description, cut to {@link MAX_DESCRIPTION_BYTES}. */
  readonly description: string;
  /** The input schema as the server sent it (a JSON object with `type: "object"`). */
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** Why a list was refused: the list itself (`list_failed`) or one tool in it (`invalid_schema`, naming it when it has a usable name). */
export type ListRefusal =
  | { readonly reason: "list_failed" }
  | { readonly reason: "invalid_schema"; readonly tool: string | null };

/** What {@link admitTools} decides. */
export type ListAdmission = { readonly ok: true; readonly tools: readonly ListedTool[] } | ({ readonly ok: false } & ListRefusal);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether `value` nests deeper than `limit` containers. */
function deeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (limit === 0) return true;
  const children = Array.isArray(value) ? value : Object.values(value);
  return children.some((child) => deeperThan(child, limit - 1));
}

function usableName(name: unknown): name is string {
  return typeof name === "string" && name !== "" && utf8ByteCount(name) <= MAX_TOOL_NAME_BYTES;
}

/** Checks one tool; returns it admitted, or null when its schema or name is refused. */
function admitTool(server: string, raw: unknown): { tool: ListedTool; bytes: number } | null {
  if (!isRecord(raw) || !usableName(raw.name)) return null;
  const schema = raw.inputSchema;
  if (!isRecord(schema) || schema.type !== "object" || deeperThan(schema, MAX_INPUT_SCHEMA_DEPTH)) return null;
  const bytes = utf8ByteCount(JSON.stringify(schema));
  if (bytes > MAX_INPUT_SCHEMA_BYTES) return null;
  const description = typeof raw.description === "string" ? clampUtf8(raw.description, MAX_DESCRIPTION_BYTES) : "";
  return { tool: { name: raw.name, exposed: exposedToolName(server, raw.name), description, parameters: schema }, bytes };
}

/** Admits the tools `raw` lists (every page's, in order) for `server`. */
export function admitTools(server: string, raw: readonly unknown[]): ListAdmission {
  if (raw.length > MAX_TOOLS_PER_SERVER) return { ok: false, reason: "list_failed" };
  const tools: ListedTool[] = [];
  let total = 0;
  for (const entry of raw) {
    const admitted = admitTool(server, entry);
    if (admitted === null) {
      const name = isRecord(entry) && usableName(entry.name) ? entry.name : null;
      return { ok: false, reason: "invalid_schema", tool: name };
    }
    total += admitted.bytes;
    if (total > MAX_SERVER_SCHEMA_BYTES) return { ok: false, reason: "invalid_schema", tool: admitted.tool.name };
    tools.push(admitted.tool);
  }
  return { ok: true, tools };
}

/**
 * The second of the first two tools that share an exposed name across
 * `lists` (one server listing a name twice included), or null.
 */
export function firstCollision(lists: readonly { readonly server: string; readonly tools: readonly ListedTool[] }[]): { server: string; tool: string } | null {
  const exposed = exposeToolNames(lists.map(({ server, tools }) => ({ server, tools: tools.map((tool) => tool.name) })));
  return exposed.ok ? null : { server: exposed.collision.second.server, tool: exposed.collision.second.tool };
}
