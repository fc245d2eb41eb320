/**
 * The `mcp` section of `settings.jsonc`: one entry per MCP server under
 * `mcp.servers.<name>`, field by field. Which fields an entry may combine
 * (stdio or HTTP), and what a project file may do to a server the global file
 * defines, are the merge's rules (`mcp-merge.ts`), reported per field.
 *
 * Startup loads this module only when a settings file has an `mcp` key
 * (`settings-load.ts`), so a child without MCP servers never builds these
 * schemas. Documented in docs/settings.md and docs/features/mcp.md.
 *
 * @module
 */

import { ClientToolsSettingsSchema } from "./client-tools-settings.ts";
import * as v from "valibot";
import { ApprovalPolicySchema, type ApprovalPolicy } from "../policy/tool-policies.ts";
import { exactObject, notArray } from "../util/exact-object.ts";
import { hasLoneSurrogate } from "../util/utf8.ts";
import { isCredentialFreeHttpUrl, settingsSchema } from "./settings.ts";
import { SkillsSettingsSchema } from "./skills-settings.ts";
import { CodeModeSettingsSchema } from "./code-mode-settings.ts";
import { HooksSettingsSchema } from "./hooks-settings.ts";

/** Longest server name: with `mcp__` and `__` it leaves a tool name 25 of the 64 bytes providers accept. */
export const MAX_MCP_SERVER_NAME = 32;

/**
 * Server names: letters, digits, `-` and single `_` between them, starting
 * with a letter or digit. No `__` and no trailing `_`, so in
 * `mcp__<server>__<tool>` the first `__` after the prefix always ends the
 * server name, and two servers never expose the same tool name.
 */
export const MCP_SERVER_NAME: RegExp = /^[A-Za-z0-9](?:_?[A-Za-z0-9-])*$/;

/** `startup_timeout_ms` when unset: a cold `npx -y` start downloads the package first (15-45 s). */
export const DEFAULT_STARTUP_TIMEOUT_MS = 60_000;
/** `tool_timeout_ms` when unset: long enough for a build or a browser step, short enough to notice a hang. */
export const DEFAULT_TOOL_TIMEOUT_MS = 300_000;
/** Bounds of `startup_timeout_ms`: `initialize` waits this long at most. */
export const STARTUP_TIMEOUT_BOUNDS = { min: 1_000, max: 600_000 } as const;
/** Bounds of `tool_timeout_ms`. */
export const TOOL_TIMEOUT_BOUNDS = { min: 1_000, max: 3_600_000 } as const;

/** One server entry as a file states it; every field is optional here, the merge checks the combination. */
export interface McpServerSettings {
  readonly command?: string;
  readonly args?: readonly string[];
  /** Variable name to value, set in the server's environment. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly url?: string;
  /** Header name to value, sent with every request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The name of the variable holding the bearer token, never the token. */
  readonly bearer_token_env?: string;
  readonly enabled?: boolean;
  /** Approval policy per tool, by the server's own tool name. */
  readonly tools?: Readonly<Record<string, ApprovalPolicy>>;
  readonly startup_timeout_ms?: number;
  readonly tool_timeout_ms?: number;
}

/** The `mcp` section of one file. */
export interface McpSettings {
  readonly servers?: Readonly<Record<string, McpServerSettings>>;
}

const described = v.description;
const wellFormed = v.check((text: string) => !hasLoneSurrogate(text));
// deno-lint-ignore no-control-regex -- matching controls is the point
const NO_CONTROLS = /^[^\u0000-\u001F\u007F-\u009F]+$/;
// deno-lint-ignore no-control-regex -- a NUL cannot pass through argv or the environment
const NO_NUL = /^[^\u0000]*$/;

const PathSchema = v.pipe(v.string(), v.maxLength(4096), v.regex(NO_CONTROLS), wellFormed);
const ProcessTextSchema = v.pipe(v.string(), v.maxLength(32_768), v.maxBytes(32_768), v.regex(NO_NUL), wellFormed);
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

const UrlSchema = v.pipe(
  v.string(),
  v.maxLength(2048),
  // deno-lint-ignore no-control-regex -- matching controls is the point
  v.regex(/^https?:\/\/[^\s\u0000-\u001F\u007F-\u009F#]+$/),
  // A query is kept (some servers take options there); credentials and a fragment are not.
  v.check(isCredentialFreeHttpUrl),
  described("Streamable HTTP endpoint: absolute http(s) URL without credentials or fragment."),
);

const timeout = (bounds: { min: number; max: number }, fallback: number, what: string) =>
  v.exactOptional(v.pipe(
    v.number(),
    v.integer(),
    v.minValue(bounds.min),
    v.maxValue(bounds.max),
    described(`${what}, ${bounds.min}-${bounds.max} ms; default ${fallback}.`),
  ));

const record = <TValue extends v.GenericSchema<unknown, unknown>>(key: RegExp, value: TValue) =>
  v.pipe(notArray, v.record(v.pipe(v.string(), v.regex(key)), value), v.metadata({ propertyNames: { type: "string", pattern: key.source } }));

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
// deno-lint-ignore no-control-regex -- controls other than tab would break the header
const HEADER_VALUE = /^[^\u0000-\u0008\u000A-\u001F\u007F]*$/;
// The server's own tool names: MCP allows 1-128 characters; controls would be unprintable.
// deno-lint-ignore no-control-regex -- matching controls is the point
const TOOL_NAME = /^[^\u0000-\u001F\u007F-\u009F]{1,128}$/;

const ServerSchema = v.pipe(
  exactObject({
    command: v.exactOptional(v.pipe(PathSchema, v.minLength(1), described("stdio: the program, an absolute path, a path relative to cwd, or a name looked up on PATH."))),
    args: v.exactOptional(v.pipe(v.array(ProcessTextSchema), v.maxLength(1024), described("stdio: the program's arguments."))),
    env: v.exactOptional(v.pipe(record(VARIABLE_NAME, ProcessTextSchema), described("stdio: variables set for the server."))),
    cwd: v.exactOptional(v.pipe(PathSchema, v.minLength(1), described("stdio: working directory, absolute or relative to the workspace; default the workspace."))),
    url: v.exactOptional(UrlSchema),
    headers: v.exactOptional(v.pipe(
      record(HEADER_NAME, v.pipe(v.string(), v.maxLength(8192), v.maxBytes(8192), v.regex(HEADER_VALUE), wellFormed)),
      described("HTTP: headers sent with every request."),
    )),
    bearer_token_env: v.exactOptional(v.pipe(v.string(), v.regex(VARIABLE_NAME), described("HTTP: name of the variable holding a bearer token (never the token)."))),
    enabled: v.exactOptional(v.pipe(v.boolean(), described("Whether the server starts (once approved); default true."))),
    tools: v.exactOptional(v.pipe(
      record(TOOL_NAME, ApprovalPolicySchema),
      described("Approval policy per tool, by the server's own tool name; default ask. A project file may only make one stricter."),
    )),
    startup_timeout_ms: timeout(STARTUP_TIMEOUT_BOUNDS, DEFAULT_STARTUP_TIMEOUT_MS, "Connect and list tools within"),
    tool_timeout_ms: timeout(TOOL_TIMEOUT_BOUNDS, DEFAULT_TOOL_TIMEOUT_MS, "One tool call within"),
  }),
  // What editors can be told of the combination rules (mcp-merge.ts checks them all).
  v.metadata({
    not: { required: ["command", "url"] },
    dependencies: { args: ["command"], env: ["command"], cwd: ["command"], headers: ["url"], bearer_token_env: ["url"] },
  }),
  described("A stdio server (command, args, env, cwd) or a Streamable HTTP one (url, headers, bearer_token_env)."),
);

/** The valibot schema of the `mcp` section. */
export const McpSettingsSchema = v.pipe(
  exactObject({
    servers: v.exactOptional(v.pipe(
      notArray,
      v.record(v.pipe(v.string(), v.maxLength(MAX_MCP_SERVER_NAME), v.regex(MCP_SERVER_NAME)), ServerSchema),
      v.metadata({ propertyNames: { type: "string", maxLength: MAX_MCP_SERVER_NAME, pattern: MCP_SERVER_NAME.source } }),
      described("MCP servers by name: 1-32 of [A-Za-z0-9_-], starting with a letter or digit, no double or trailing underscore."),
    )),
  }),
  described("MCP servers; each starts only once approved with `magi-code mcp approve <name>`."),
);

/** The whole schema of one settings file, `mcp`, `skills`, `code_mode`, `hooks` and `client_tools` included: for `config check` and the published JSON Schema. */
export const CompleteSettingsSchema = settingsSchema(McpSettingsSchema, SkillsSettingsSchema, CodeModeSettingsSchema, HooksSettingsSchema, ClientToolsSettingsSchema);

/** Checks a file's `mcp` section; null when it is invalid. */
export function parseMcpSettings(raw: unknown): McpSettings | null {
  const parsed = v.safeParse(McpSettingsSchema, raw);
  return parsed.success ? parsed.output satisfies McpSettings : null;
}
