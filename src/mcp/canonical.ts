/**
 * The canonical definition of an MCP server: what `magi-code mcp approve`
 * shows and what its digest, the one an approval stores, covers.
 *
 * stdio: the resolved absolute command, the arguments, the names of the
 * variables `env` sets and one digest of their values, the resolved working
 * directory. Streamable HTTP: the URL, the header names (lower case) and one
 * digest of their values, the name of the bearer-token variable. Values of
 * variables and headers are secrets more often than not, so only their
 * digest is shown or stored; a change to any of them still changes the
 * definition's digest and so voids its approval. The bearer token's value is
 * not covered: rotating a token needs no new approval, pointing at another
 * variable does. Timeouts, `enabled` and tool policies are settings of an
 * approved definition, not part of it.
 *
 * The digest is the SHA-256 of the canonical JSON text below (fields in this
 * order, no spaces). Changing that text voids every approval ever given, so
 * `tests/mcp-canonical.test.ts` pins a digest.
 *
 * @module
 */

import { lengthPrefixed, sha256Hex } from "../util/digest.ts";

/** The canonical definition of a stdio server. */
export interface CanonicalStdio {
  readonly v: 1;
  readonly transport: "stdio";
  readonly command: string;
  readonly args: readonly string[];
  readonly env_names: readonly string[];
  readonly env_values_sha256: string;
  readonly cwd: string;
}

/** The canonical definition of a Streamable HTTP server. */
export interface CanonicalHttp {
  readonly v: 1;
  readonly transport: "http";
  readonly url: string;
  readonly header_names: readonly string[];
  readonly header_values_sha256: string;
  readonly bearer_token_env: string | null;
}

/** Either canonical definition, with its digest. */
export interface CanonicalDefinition {
  readonly fields: CanonicalStdio | CanonicalHttp;
  /** Lowercase hex SHA-256 of {@link canonicalText}. */
  readonly digest: string;
}

/** One digest of a name → value map: names sorted (by UTF-16 code units), each pair length-prefixed. */
async function valuesDigest(values: Readonly<Record<string, string>>): Promise<{ names: string[]; digest: string }> {
  const names = Object.keys(values).sort();
  return { names, digest: await sha256Hex(lengthPrefixed(names.flatMap((name) => [name, values[name]!]))) };
}

/** The text the digest covers. */
export function canonicalText(fields: CanonicalStdio | CanonicalHttp): string {
  return JSON.stringify(fields);
}

async function withDigest(fields: CanonicalStdio | CanonicalHttp): Promise<CanonicalDefinition> {
  return { fields, digest: await sha256Hex(new TextEncoder().encode(canonicalText(fields))) };
}

/** The canonical definition of a resolved stdio server. */
export async function canonicalStdio(resolved: {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
}): Promise<CanonicalDefinition> {
  const env = await valuesDigest(resolved.env);
  return await withDigest({
    v: 1,
    transport: "stdio",
    command: resolved.command,
    args: [...resolved.args],
    env_names: env.names,
    env_values_sha256: env.digest,
    cwd: resolved.cwd,
  });
}

/** The canonical definition of a Streamable HTTP server; header names are compared in lower case. */
export async function canonicalHttp(settings: {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly bearerTokenEnv: string | null;
}): Promise<CanonicalDefinition> {
  const lower = Object.fromEntries(Object.entries(settings.headers).map(([name, value]) => [name.toLowerCase(), value]));
  const headers = await valuesDigest(lower);
  return await withDigest({
    v: 1,
    transport: "http",
    url: settings.url,
    header_names: headers.names,
    header_values_sha256: headers.digest,
    bearer_token_env: settings.bearerTokenEnv,
  });
}
