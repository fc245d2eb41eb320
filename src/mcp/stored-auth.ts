/**
 * Which starting HTTP servers have a login: the tokens file
 * (`oauth-tokens.ts`) is read once, only when an HTTP server starts, and the
 * OAuth provider (`oauth-provider.ts`) is loaded only for a server with
 * stored tokens for its URL. A tokens file that is not a valid owner-only
 * file counts as no login: such a server then fails with `auth_required`
 * if it asks for one, and `mcp list` names the file.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import type { McpServerDefinition } from "./definition.ts";
import type { McpAuth } from "./connection.ts";

/** For each of `definitions`, its startup OAuth provider, or undefined when it has no login. */
export async function startupAuthProviders(
  runtime: Runtime,
  home: string | null,
  definitions: readonly McpServerDefinition[],
): Promise<(McpAuth | undefined)[]> {
  const none = definitions.map(() => undefined);
  if (home === null || !definitions.some((definition) => definition.transport === "http")) return none;
  const { readMcpTokens, storedFor } = await import("./oauth-tokens.ts");
  const read = await readMcpTokens(runtime, home);
  if (!read.ok) return none;
  const stored = definitions.map((definition) => definition.transport === "http" ? storedFor(read.servers, definition.name, definition.url) : null);
  if (stored.every((entry) => entry === null || entry.tokens === null)) return none;
  const { StoredOAuthProvider } = await import("./oauth-provider.ts");
  return definitions.map((definition, index) => {
    const entry = stored[index];
    if (definition.transport !== "http" || entry === null || entry === undefined || entry.tokens === null) return undefined;
    return new StoredOAuthProvider(runtime, home, { name: definition.name, url: definition.url }, entry, { kind: "startup" });
  });
}
