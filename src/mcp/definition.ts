/**
 * The contract between the settings side of MCP (names, approval, which
 * servers may start: `servers.ts`) and the connection side (`connect`, the
 * tools in turns): a server definition after resolution, exactly what is
 * approved and what is started.
 *
 * @module
 */

/** A server definition after resolution: exactly what is approved and what is started. */
export type McpServerDefinition =
  | {
    readonly transport: "stdio";
    /** The settings key, already valid by the grammar (`config/mcp-settings.ts`). */
    readonly name: string;
    /** Resolved absolute path (the PATH lookup is done). */
    readonly command: string;
    readonly args: readonly string[];
    /** Only the variables the settings name; what else a server inherits is the connection's decision. */
    readonly env: Readonly<Record<string, string>>;
    /** Resolved absolute; by default the workspace. */
    readonly cwd: string;
    readonly startupTimeoutMs: number;
    readonly toolTimeoutMs: number;
    /** By the server's own tool name; merged global and project, the project only tightening. */
    readonly toolPolicies: Readonly<Record<string, "allow" | "ask" | "deny">>;
  }
  | {
    readonly transport: "http";
    readonly name: string;
    readonly url: string;
    /** Values resolved. */
    readonly headers: Readonly<Record<string, string>>;
    /** The value of `bearer_token_env`, if set. */
    readonly bearerToken: string | null;
    readonly startupTimeoutMs: number;
    readonly toolTimeoutMs: number;
    readonly toolPolicies: Readonly<Record<string, "allow" | "ask" | "deny">>;
  };

/**
 * The values in `definition` that are secrets for redaction: its `env` values
 * (a stdio server), its header values and bearer token (an HTTP server). A
 * server may echo any of them in a tool result, so each is redacted like a
 * provider key (`config/providers.ts`).
 */
export function definitionSecrets(definition: McpServerDefinition): string[] {
  if (definition.transport === "stdio") return Object.values(definition.env);
  return [...Object.values(definition.headers), ...(definition.bearerToken === null ? [] : [definition.bearerToken])];
}
