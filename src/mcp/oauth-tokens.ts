/**
 * `$MC_HOME/mcp-tokens.json`: the OAuth state `magi-code mcp login` leaves
 * for each HTTP server (the client registration and the tokens), keyed by
 * the server's settings name and bound to its URL. Secrets, so never in
 * settings, never printed, never logged. Like the approvals file it must be
 * an owner-only regular file (mode 0600, not a symlink); it is replaced
 * atomically, never losing a concurrent change (`trust/owner-file-update.ts`,
 * as the approvals file), by `login`, `logout`, and a child that refreshed
 * an expired token.
 *
 * Format (strict JSON): `{ "v": 1, "servers": { "<name>": { "url": "…",
 * "client": { "client_id": "…", … }, "tokens": { "access_token": "…",
 * "token_type": "Bearer", "refresh_token": "…", … } } } }`.
 *
 * @module
 */

import * as v from "valibot";
import { ErrorCode } from "../protocol/errors.ts";
import type { Runtime } from "../host/runtime.ts";
import { readOwnerOnlyFile } from "../config/credentials.ts";
import { sameBytes, updateOwnerFile } from "../trust/owner-file-update.ts";
import { parseConfigText } from "../util/jsonc.ts";
import { joinPath } from "../util/paths.ts";

/** The tokens file name, inside `$MC_HOME`. */
export const MCP_TOKENS_FILE = "mcp-tokens.json";

/** Largest tokens file read, in bytes. */
const MAX_TOKENS_BYTES = 1_048_576;

const Secret = v.pipe(v.string(), v.minLength(1), v.maxLength(16_384));
const StoredSchema = v.object({
  url: v.pipe(v.string(), v.maxLength(4096)),
  client: v.looseObject({ client_id: Secret }),
  tokens: v.nullable(v.looseObject({ access_token: Secret, token_type: v.pipe(v.string(), v.maxLength(64)) })),
});
const FileSchema = v.object({ v: v.literal(1), servers: v.record(v.pipe(v.string(), v.maxLength(128)), StoredSchema) });

/** One server's OAuth state: its client registration and, after a login, its tokens. */
export type StoredOAuth = v.InferOutput<typeof StoredSchema>;

/** The tokens file of the storage root `home`. */
export function mcpTokensPath(home: string): string {
  return joinPath(home, MCP_TOKENS_FILE);
}

/** What {@link readMcpTokens} found: the servers, or `invalid` / `failed`. */
export type ReadMcpTokens =
  | { readonly ok: true; readonly servers: Readonly<Record<string, StoredOAuth>>; readonly bytes: Uint8Array | null }
  | { readonly ok: false; readonly reason: "invalid" | "failed" };

const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** Reads the tokens file of `home`; a missing file holds no server. */
export async function readMcpTokens(runtime: Runtime, home: string): Promise<ReadMcpTokens> {
  const read = await readOwnerOnlyFile(runtime.fs, mcpTokensPath(home), MAX_TOKENS_BYTES);
  if (!read.ok) return { ok: false, reason: read.code === ErrorCode.configurationInvalid ? "invalid" : "failed" };
  if (read.bytes === null) return { ok: true, servers: {}, bytes: null };
  let value: unknown;
  try {
    value = parseConfigText(decoder.decode(read.bytes), { jsonc: false });
  } catch {
    return { ok: false, reason: "invalid" };
  }
  const parsed = v.safeParse(FileSchema, value);
  return parsed.success ? { ok: true, servers: parsed.output.servers, bytes: read.bytes } : { ok: false, reason: "invalid" };
}

/** The stored state of server `name` if it was stored for `url`, else null. */
export function storedFor(servers: Readonly<Record<string, StoredOAuth>>, name: string, url: string): StoredOAuth | null {
  const stored = Object.hasOwn(servers, name) ? servers[name]! : null;
  return stored !== null && stored.url === url ? stored : null;
}

/** What {@link updateMcpTokens} resolves with. */
export type UpdateMcpTokensResult = { readonly ok: true; readonly existed: boolean } | { readonly ok: false; readonly reason: "invalid" | "failed" };

/**
 * Sets server `name`'s entry to what `change` makes of the current one
 * (null removes it) and writes the file (0600) if that changed it, without
 * losing a concurrent change (`trust/owner-file-update.ts`). Resolves with
 * whether an entry was there before, or `invalid` / `failed` (nothing is
 * overwritten).
 */
export async function updateMcpTokens(
  runtime: Runtime,
  home: string,
  name: string,
  change: (current: StoredOAuth | null) => StoredOAuth | null,
): Promise<UpdateMcpTokensResult> {
  const outcome = await updateOwnerFile<UpdateMcpTokensResult>(runtime, { home, name: MCP_TOKENS_FILE, maxBytes: MAX_TOKENS_BYTES }, async () => {
    const current = await readMcpTokens(runtime, home);
    if (!current.ok) return { done: current };
    const before = Object.hasOwn(current.servers, name) ? current.servers[name]! : null;
    const servers: Record<string, StoredOAuth> = { ...current.servers };
    const after = change(before);
    if (after === null) delete servers[name];
    else servers[name] = after;
    const bytes = serialize(servers);
    const existed = before !== null;
    if (sameBytes(bytes, serialize(current.servers))) return { done: { ok: true, existed } };
    return { read: current.bytes, bytes, result: { ok: true, existed } };
  });
  return typeof outcome === "string" ? { ok: false, reason: "failed" } : outcome;
}

/** The file's bytes for `servers`. */
function serialize(servers: Readonly<Record<string, StoredOAuth>>): Uint8Array {
  return encoder.encode(`${JSON.stringify({ v: 1, servers }, null, 2)}\n`);
}
