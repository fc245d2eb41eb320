/**
 * MCP servers from the global and the project settings file, merged into one
 * list in which every definition keeps the file it came from: approval binds
 * a definition to that file (`src/trust/`), so a project can never approve
 * itself.
 *
 * The rule for a name both files use: the global definition stands. A
 * project file may define servers of its own, and on a server the global
 * file defines it may only set `enabled` (either way) and make tool
 * policies stricter; it may not restate or change the command, URL or any
 * other field. Project tool policies never loosen what the user would get
 * without the project file (the global entry's policy, else `ask`), on any
 * server, since approving a definition says nothing about its policies.
 * Every broken rule is a problem at its JSON path; any problem fails startup
 * with `configuration_invalid`, and `config check` prints them all.
 *
 * @module
 */

import { type ApprovalPolicy, isAtLeastAsStrict } from "../policy/tool-policies.ts";
import { jsonPath } from "../util/json-path.ts";
import { ownValue } from "../util/own.ts";
import {
  DEFAULT_STARTUP_TIMEOUT_MS,
  DEFAULT_TOOL_TIMEOUT_MS,
  type McpServerSettings,
  type McpSettings,
} from "./mcp-settings.ts";

/** One settings file's `mcp` section and the file's path. */
export interface McpLayer {
  readonly file: string;
  readonly mcp: McpSettings | undefined;
}

/** A broken rule, where a person fixes it. The message never quotes a value. */
export interface McpSettingsProblem {
  readonly file: string;
  readonly path: string;
  readonly message: string;
}

/** How a server is reached, as settings state it (before any path is resolved). */
export type McpTransportSettings =
  | {
    readonly transport: "stdio";
    readonly command: string;
    readonly args: readonly string[];
    readonly env: Readonly<Record<string, string>>;
    /** As written: absolute, or relative to the workspace; null for the workspace. */
    readonly cwd: string | null;
  }
  | {
    readonly transport: "http";
    readonly url: string;
    readonly headers: Readonly<Record<string, string>>;
    readonly bearerTokenEnv: string | null;
  };

/** One configured server after the merge. */
export interface ConfiguredMcpServer {
  readonly name: string;
  /** The settings file holding the definition: what an approval is bound to. */
  readonly source: string;
  readonly transport: McpTransportSettings;
  readonly enabled: boolean;
  /** By the server's own tool name; tools not named are `ask`. */
  readonly toolPolicies: Readonly<Record<string, ApprovalPolicy>>;
  readonly startupTimeoutMs: number;
  readonly toolTimeoutMs: number;
}

/** What {@link mergeMcpServers} found: the servers, by name, and every broken rule. */
export interface McpMerge {
  readonly servers: readonly ConfiguredMcpServer[];
  readonly problems: readonly McpSettingsProblem[];
}

const STDIO_FIELDS = ["args", "env", "cwd"] as const;
const HTTP_FIELDS = ["headers", "bearer_token_env"] as const;
const OVERLAY_FIELDS: ReadonlySet<string> = new Set(["enabled", "tools"]);
/** Headers the Streamable HTTP transport sets itself. */
const TRANSPORT_HEADERS: ReadonlySet<string> = new Set([
  "accept",
  "connection",
  "content-length",
  "content-type",
  "host",
  "last-event-id",
  "mcp-protocol-version",
  "mcp-session-id",
  "transfer-encoding",
]);

const SEE = "see docs/settings.md";

/** Whether `entry` defines a server (rather than only adjusting one). */
function defines(entry: McpServerSettings): boolean {
  return entry.command !== undefined || entry.url !== undefined;
}

/** The rules every entry that defines a server follows, whichever file holds it. */
function shapeProblems(file: string, name: string, entry: McpServerSettings): McpSettingsProblem[] {
  const at = (...rest: string[]) => jsonPath(["mcp", "servers", name, ...rest]);
  const out: McpSettingsProblem[] = [];
  if (entry.command !== undefined && entry.url !== undefined) {
    out.push({ file, path: at("url"), message: "a server has either command (stdio) or url (Streamable HTTP), not both" });
  }
  for (const field of STDIO_FIELDS) {
    if (entry[field] !== undefined && entry.command === undefined) out.push({ file, path: at(field), message: `only a stdio server (one with command) takes ${field}` });
  }
  for (const field of HTTP_FIELDS) {
    if (entry[field] !== undefined && entry.url === undefined) out.push({ file, path: at(field), message: `only an HTTP server (one with url) takes ${field}` });
  }
  const seen = new Set<string>();
  for (const header of Object.keys(entry.headers ?? {})) {
    const lower = header.toLowerCase();
    if (TRANSPORT_HEADERS.has(lower)) out.push({ file, path: at("headers", header), message: "the MCP transport sets this header itself" });
    else if (seen.has(lower)) out.push({ file, path: at("headers", header), message: "header names ignore case: name each header once" });
    else if (lower === "authorization" && entry.bearer_token_env !== undefined) {
      out.push({ file, path: at("headers", header), message: "use an Authorization header or bearer_token_env, not both" });
    }
    seen.add(lower);
  }
  return out;
}

/** Project tool policies that loosen what the user would get without the project file. */
function looserPolicies(file: string, name: string, project: McpServerSettings, global: McpServerSettings | undefined): McpSettingsProblem[] {
  return Object.entries(project.tools ?? {})
    .filter(([tool, policy]) => !isAtLeastAsStrict(policy, ownValue(global?.tools, tool) ?? "ask"))
    .map(([tool]) => ({
      file,
      path: jsonPath(["mcp", "servers", name, "tools", tool]),
      message: `a project file may only make a tool's policy stricter (allow < ask < deny) than the global file's, else ask; ${SEE}`,
    }));
}

function transportOf(entry: McpServerSettings): McpTransportSettings {
  if (entry.url !== undefined) {
    return { transport: "http", url: entry.url, headers: { ...entry.headers }, bearerTokenEnv: entry.bearer_token_env ?? null };
  }
  return { transport: "stdio", command: entry.command!, args: [...(entry.args ?? [])], env: { ...entry.env }, cwd: entry.cwd ?? null };
}

/**
 * Merges the servers of `global` and `project` (null when the project file
 * is not read, as when the workspace's `.magi-code` is `MC_HOME` itself).
 * Servers come back sorted by name; they are meaningful only when
 * `problems` is empty.
 */
export function mergeMcpServers(global: McpLayer, project: McpLayer | null): McpMerge {
  const problems: McpSettingsProblem[] = [];
  const servers: ConfiguredMcpServer[] = [];
  const globalServers = global.mcp?.servers ?? {};
  const projectServers = project?.mcp?.servers ?? {};
  const names = [...new Set([...Object.keys(globalServers), ...Object.keys(projectServers)])].sort();
  for (const name of names) {
    const base = ownValue(globalServers, name);
    const overlay = ownValue(projectServers, name);
    const at = (file: string, ...rest: string[]) => ({ file, path: jsonPath(["mcp", "servers", name, ...rest]) });
    if (base !== undefined) {
      problems.push(...shapeProblems(global.file, name, base));
      if (!defines(base)) problems.push({ ...at(global.file), message: "defines neither command (stdio) nor url (Streamable HTTP)" });
    }
    if (overlay !== undefined && project !== null) {
      if (base !== undefined) {
        for (const field of Object.keys(overlay).filter((key) => !OVERLAY_FIELDS.has(key))) {
          problems.push({ ...at(project.file, field), message: `a project file may only set enabled and tools on a server the global file defines; ${SEE}` });
        }
      } else {
        problems.push(...shapeProblems(project.file, name, overlay));
        if (!defines(overlay)) problems.push({ ...at(project.file), message: "defines neither command (stdio) nor url (Streamable HTTP), and the global file defines no server of this name" });
      }
      problems.push(...looserPolicies(project.file, name, overlay, base));
    }
    const [definition, source] = base !== undefined ? [base, global.file] : [overlay!, project!.file];
    if (!defines(definition)) continue;
    servers.push({
      name,
      source,
      transport: transportOf(definition),
      enabled: overlay?.enabled ?? base?.enabled ?? true,
      toolPolicies: Object.fromEntries([...Object.entries(base?.tools ?? {}), ...Object.entries(overlay?.tools ?? {})]),
      startupTimeoutMs: definition.startup_timeout_ms ?? DEFAULT_STARTUP_TIMEOUT_MS,
      toolTimeoutMs: definition.tool_timeout_ms ?? DEFAULT_TOOL_TIMEOUT_MS,
    });
  }
  return { servers, problems };
}
