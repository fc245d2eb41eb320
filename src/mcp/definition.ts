/**
 * The contract between settings and the MCP connection layer: a server
 * definition after resolution.
 *
 * @module
 */

/** A server definition after resolution: exactly what is approved and what is started. */
export type McpServerDefinition =
  | {
      readonly transport: "stdio";
      readonly name: string;            // the settings key, already valid by the grammar
      readonly command: string;         // resolved absolute path (PATH lookup done by M1)
      readonly args: readonly string[];
      readonly env: Readonly<Record<string, string>>; // only the variables the settings name (merged over nothing: M2 decides what else a server inherits, and documents it)
      readonly cwd: string;             // resolved absolute; default the workspace cwd
      readonly startupTimeoutMs: number;
      readonly toolTimeoutMs: number;
      readonly toolPolicies: Readonly<Record<string, "allow" | "ask" | "deny">>; // by the server's own tool name; merged global+project with project only tightening
    }
  | {
      readonly transport: "http";
      readonly name: string;
      readonly url: string;
      readonly headers: Readonly<Record<string, string>>; // values resolved
      readonly bearerToken: string | null;                 // value of bearer_token_env, if set
      readonly startupTimeoutMs: number;
      readonly toolTimeoutMs: number;
      readonly toolPolicies: Readonly<Record<string, "allow" | "ask" | "deny">>;
    };
