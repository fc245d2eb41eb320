/**
 * The names MCP tools are exposed to the model under:
 * `mcp__<server>__<tool>`, valid for every provider API magi-code speaks
 * (OpenAI Chat Completions and Responses, Anthropic Messages all accept
 * `^[a-zA-Z0-9_-]{1,64}$`).
 *
 * The server name's grammar (`config/mcp-settings.ts`) keeps it within
 * those characters, 32 long at most and free of `__` and a trailing `_`, so
 * the first `__` after `mcp__` always ends it and two servers never expose
 * the same name. A tool name is the server's choice: each character outside
 * `[A-Za-z0-9_-]` becomes `_`, and a name still longer than 64 bytes is cut
 * to 55 and ends in `_` and the first 8 hex digits of the SHA-256 of the
 * tool's own name (UTF-8), so long names sharing a prefix stay apart. Two
 * tools of one server can still meet (`a.b` and `a_b`); that collision is
 * reported, naming both, and fails startup. Documented in
 * docs/features/mcp.md.
 *
 * @module
 */

import { sha256HexSync } from "../util/digest.ts";

/** What every provider API accepts as a tool name. */
export const PROVIDER_TOOL_NAME: RegExp = /^[A-Za-z0-9_-]{1,64}$/;

/** Longest exposed name, in bytes (all ASCII). */
const MAX_NAME = 64;
/** Hex digits of the hash that ends a shortened name. */
const HASH_DIGITS = 8;

const encoder = new TextEncoder();

/** The name `server`'s tool `tool` is exposed under; `server` must follow the server-name grammar. */
export function exposedToolName(server: string, tool: string): string {
  const full = `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/gu, "_")}`;
  if (full.length <= MAX_NAME) return full;
  const hash = sha256HexSync(encoder.encode(tool)).slice(0, HASH_DIGITS);
  return `${full.slice(0, MAX_NAME - HASH_DIGITS - 1)}_${hash}`;
}

/** One server's tool, by the server's own names. */
export interface ServerTool {
  readonly server: string;
  readonly tool: string;
}

/**
 * Every exposed name with the tool behind it, or the first two tools that
 * would share one (a server listing one name twice counts: both are named).
 */
export type ExposedNames =
  | { readonly ok: true; readonly names: ReadonlyMap<string, ServerTool> }
  | { readonly ok: false; readonly collision: { readonly exposed: string; readonly first: ServerTool; readonly second: ServerTool } };

/** Exposes the tools of every server at once, so a collision across servers would be caught too. */
export function exposeToolNames(servers: readonly { readonly server: string; readonly tools: readonly string[] }[]): ExposedNames {
  const names = new Map<string, ServerTool>();
  for (const { server, tools } of servers) {
    for (const tool of tools) {
      const exposed = exposedToolName(server, tool);
      const first = names.get(exposed);
      if (first !== undefined) return { ok: false, collision: { exposed, first, second: { server, tool } } };
      names.set(exposed, { server, tool });
    }
  }
  return { ok: true, names };
}
