/**
 * The name an MCP tool is offered to the model under: `mcp__<server>__<tool>`,
 * valid for every provider API (at most 64 bytes of `[A-Za-z0-9_-]`).
 *
 * A minimal version written by the connection layer so it could be built
 * first; the settings side owns the grammar and the documented hash, and
 * replaces this file (same export) when both land.
 *
 * @module
 */

/** Longest tool name every provider API accepts. */
export const MAX_EXPOSED_NAME_BYTES = 64;

const INVALID = /[^A-Za-z0-9_-]/g;

/** FNV-1a over the UTF-16 code units of `text`, as 8 hex digits: short, deterministic, synchronous. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/**
 * `mcp__<server>__<tool>` with every character outside `[A-Za-z0-9_-]`
 * replaced by `_`; a name over 64 bytes keeps its first 55 characters and
 * ends in `_` and a hash of the whole unsanitised pair. Distinct tools can
 * still meet on one name (`a.b` and `a_b`): startup fails on a collision.
 */
export function exposedToolName(server: string, tool: string): string {
  const name = `mcp__${server}__${tool}`.replace(INVALID, "_");
  if (name.length <= MAX_EXPOSED_NAME_BYTES) return name;
  return `${name.slice(0, MAX_EXPOSED_NAME_BYTES - 9)}_${shortHash(`${server}\u0000${tool}`)}`;
}
