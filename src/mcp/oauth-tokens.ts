/**
 * `$MC_HOME/mcp-tokens.json`: the OAuth state `magi-code mcp login` leaves
 * for each HTTP server (the client registration and the tokens), keyed by
 * the server's settings name and bound to its URL. Secrets, so never in
 * settings, never printed, never logged. Like the approvals file it must be
 * an owner-only regular file (mode 0600, not a symlink); it is replaced
 * atomically (`util/replace-file.ts`) by `login`, `logout`, and a startup
 * that refreshed an expired token.
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
import { replaceFile } from "../util/replace-file.ts";
import { parseConfigText } from "../util/jsonc.ts";
import { joinPath } from "../util/paths.ts";

/** The tokens file name, inside `$MC_HOME`. */
export const MCP_TOKENS_FILE = "mcp-tokens.json";

/** Largest tokens file read, in bytes. */
const MAX_TOKENS_BYTES = 1_048_576;

/** Writes attempted before giving up on a file that keeps changing. */
const ATTEMPTS = 5;

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

function sameBytes(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

/**
 * Sets server `name`'s entry to what `change` makes of the current one
 * (null removes it) and writes the file (0600) if that changed it. The file
 * is renamed over the old one only if it still holds what was read; else the
 * change is applied again. Resolves with whether an entry was there before,
 * or `invalid` / `failed` (nothing is overwritten).
 */
export async function updateMcpTokens(
  runtime: Runtime,
  home: string,
  name: string,
  change: (current: StoredOAuth | null) => StoredOAuth | null,
): Promise<{ readonly ok: true; readonly existed: boolean } | { readonly ok: false; readonly reason: "invalid" | "failed" }> {
  const path = mcpTokensPath(home);
  try {
    await runtime.fs.mkdir(home, 0o700);
  } catch {
    return { ok: false, reason: "failed" };
  }
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await readMcpTokens(runtime, home);
    if (!current.ok) return current;
    const before = Object.hasOwn(current.servers, name) ? current.servers[name]! : null;
    const after = change(before);
    const servers: Record<string, StoredOAuth> = { ...current.servers };
    if (after === null) delete servers[name];
    else servers[name] = after;
    if (before === null && after === null) return { ok: true, existed: false };
    const bytes = encoder.encode(`${JSON.stringify({ v: 1, servers }, null, 2)}\n`);
    const written = await replaceFile(runtime.fs, home, path, bytes, {
      temporary: joinPath(home, `.${MCP_TOKENS_FILE}.${runtime.randomUUID()}.tmp`),
      mode: 0o600,
      beforeRename: async () => {
        const now = await readOwnerOnlyFile(runtime.fs, path, MAX_TOKENS_BYTES);
        return now.ok && sameBytes(now.bytes, current.bytes);
      },
    });
    if (written) return { ok: true, existed: before !== null };
  }
  return { ok: false, reason: "failed" };
}
