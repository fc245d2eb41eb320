/**
 * `settings.jsonc`: its schema, parsing and precedence merge (loading is in
 * `settings-load.ts`).
 *
 * Two files feed one admitted snapshot per child: the global
 * `$MC_HOME/settings.jsonc` and the exact-cwd `<cwd>/.magi-code/settings.jsonc`.
 * Every failure is returned as a wire code and never carries file content or a
 * path, because startup errors reach the client verbatim.
 *
 * @module
 */

import * as v from "valibot";
import { ErrorCode } from "../protocol/errors.ts";
import { PROVIDER_NAME_PATTERN } from "../protocol/identity.ts";
import { exactObject, notArray } from "../util/exact-object.ts";
import { parseConfigText } from "../util/jsonc.ts";
import { ownValue } from "../util/own.ts";
import { hasLoneSurrogate } from "../util/utf8.ts";
import { type ApprovalPolicy, ApprovalPolicySchema } from "../policy/tool-policies.ts";
import { EFFORTS, type Effort } from "../policy/efforts.ts";
import { type CatalogSettings, CatalogSettingsSchema } from "./catalog-settings.ts";
import { AgentSchema, type AgentSettings, mergeAgentSettings } from "./agent-settings.ts";
import { type InstructionsSettings, InstructionsSettingsSchema } from "./instructions-settings.ts";
import type { SkillsSettings } from "./skills-settings.ts";
import type { ClientToolsSettings } from "./client-tools-settings.ts";
import { ContextWindowSchema } from "./compaction-settings.ts";
import type { CodeModeSettings } from "./code-mode-settings.ts";

/** The global settings file name, inside `$MC_HOME`. */
export const GLOBAL_SETTINGS_FILE = "settings.jsonc";

/** Path segments of the project settings file below the exact cwd. */
export const PROJECT_SETTINGS_PATH: readonly string[] = Object.freeze([".magi-code", "settings.jsonc"]);

/** Largest settings file read, in bytes. */
export const MAX_SETTINGS_BYTES = 1_048_576;

/** Wire dialects an endpoint can speak. */
export const PROVIDER_APIS = ["openai-chat", "openai-responses", "anthropic-messages"] as const;
/** One provider wire dialect. */
export type ProviderApi = typeof PROVIDER_APIS[number];

/** Names whose endpoint entries may be partial overrides of a built-in. */
export const BUILTIN_PROVIDER_NAMES = ["openai", "anthropic", "ollama"] as const;
/** One built-in provider name. */
export type BuiltinProviderName = typeof BUILTIN_PROVIDER_NAMES[number];

/** Tool names a `tools` entry may use: the built-ins' snake_case, and room for MCP tools. */
const TOOL_NAME: RegExp = /^[a-z][a-z0-9_]{0,63}$/;
const described = v.description;

// JSON Schema cannot count UTF-8 bytes or see lone surrogates, so it gets maxLength 256
// (implied: UTF-8 never needs fewer bytes than UTF-16 units) and the control pattern.
/** A model id, in settings and in an agent profile. */
export const ModelIdSchema = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(256),
  v.maxBytes(256),
  // deno-lint-ignore no-control-regex -- matching controls is the point
  v.regex(/^[^\u0000-\u001F\u007F-\u009F]*$/),
  v.check((id) => !hasLoneSurrogate(id)),
  described("Model id: 1-256 UTF-8 bytes, no control characters."),
);

const ProviderNameSchema = v.pipe(v.string(), v.regex(PROVIDER_NAME_PATTERN), described("Provider name: 1-64 of [A-Za-z0-9._-]."));

/**
 * Whether `raw` parses as an absolute http(s) URL with a host and without
 * credentials; whether a query or fragment may follow is each schema's
 * pattern's business (`base_url` here, an MCP server's `url`).
 */
export function isCredentialFreeHttpUrl(raw: string): boolean {
  // Any "@" in the authority is refused, which also catches empty credentials ("http://:@h").
  if ((raw.slice(raw.indexOf("//") + 2).split(/[/?#]/)[0] ?? "").includes("@")) return false;
  try {
    const url = new URL(raw);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

// The pattern is what JSON Schema can show; `new URL` and the credential rule are runtime-only.
const BaseUrlSchema = v.pipe(
  v.string(),
  v.maxLength(2048),
  // deno-lint-ignore no-control-regex -- matching controls is the point
  v.regex(/^https?:\/\/[^\s\u0000-\u001F\u007F-\u009F?#]+$/),
  v.check(isCredentialFreeHttpUrl),
  described("Absolute http(s) URL without credentials, query or fragment."),
);

const ApiKeyEnvSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/),
  described("Name of the environment variable holding the API key (never the key itself)."),
);

const ApiSchema = v.pipe(v.picklist(PROVIDER_APIS), described("Wire dialect the endpoint speaks."));

const EndpointOverrideSchema = exactObject({
  api: v.exactOptional(ApiSchema),
  base_url: v.exactOptional(BaseUrlSchema),
  api_key_env: v.exactOptional(ApiKeyEnvSchema),
  context_window: v.exactOptional(ContextWindowSchema),
});

const CustomEndpointSchema = exactObject({
  api: ApiSchema,
  base_url: BaseUrlSchema,
  api_key_env: v.exactOptional(ApiKeyEnvSchema),
  context_window: v.exactOptional(ContextWindowSchema),
});

// objectWithRest states the partial-override rule structurally (built-in
// names take any subset of fields, other names need `api` and `base_url`), so
// editors flag an incomplete custom endpoint too. The rule holds per file: a
// project file restating a global custom endpoint repeats both fields.
const EndpointsSchema = v.pipe(
  notArray,
  v.objectWithRest(
    {
      openai: v.exactOptional(EndpointOverrideSchema),
      anthropic: v.exactOptional(EndpointOverrideSchema),
      ollama: v.exactOptional(EndpointOverrideSchema),
    } satisfies Record<BuiltinProviderName, unknown>,
    CustomEndpointSchema,
  ),
  v.check((endpoints) => Object.keys(endpoints).every((name) => PROVIDER_NAME_PATTERN.test(name))),
  v.metadata({ propertyNames: { type: "string", pattern: PROVIDER_NAME_PATTERN.source } }),
  described("Named endpoints: partial overrides of openai/anthropic/ollama, or complete custom ones."),
);

// A record keyed by pattern; names that match no tool are accepted (MCP tools
// are named at run time) and have no effect.
const ToolsSchema = v.pipe(
  notArray,
  v.record(
    v.pipe(v.string(), v.regex(TOOL_NAME)),
    v.pipe(ApprovalPolicySchema, described("allow: run without asking; ask: ask the user first; deny: refuse.")),
  ),
  described("Approval policy per tool name. A project file may only make a policy stricter (allow < ask < deny)."),
);

const SECTIONS = {
  $schema: v.exactOptional(v.pipe(v.string(), described("JSON Schema URL for editors; ignored at runtime."))),
  model: v.exactOptional(v.pipe(
    exactObject({
      provider: v.exactOptional(ProviderNameSchema),
      model: v.exactOptional(ModelIdSchema),
      effort: v.exactOptional(v.pipe(v.picklist(EFFORTS), described("Requested effort; default = no override."))),
    }),
    described("Startup selection; omitted fields use the provider's defaults."),
  )),
  providers: v.exactOptional(exactObject({
    endpoints: v.exactOptional(EndpointsSchema),
    catalog: v.exactOptional(CatalogSettingsSchema),
  })),
  tools: v.exactOptional(ToolsSchema),
  agent: v.exactOptional(AgentSchema),
  instructions: v.exactOptional(InstructionsSettingsSchema),
} as const;

/**
 * The valibot schema of one `settings.jsonc` file, its `mcp` section checked
 * by `mcp`, its `skills` section by `skills`, its `code_mode` section by
 * `codeMode` and its `hooks` by `hooks`. Unknown keys are errors at every level.
 */
export function settingsSchema<const M extends v.GenericSchema, const S extends v.GenericSchema, const C extends v.GenericSchema, const H extends v.GenericSchema, const T extends v.GenericSchema>(mcp: M, skills: S, codeMode: C, hooks: H, clientTools: T) {
  return exactObject({
    ...SECTIONS,
    mcp: v.exactOptional(mcp),
    skills: v.exactOptional(skills),
    code_mode: v.exactOptional(codeMode),
    hooks: v.exactOptional(hooks),
    client_tools: v.exactOptional(clientTools),
  });
}

/**
 * The schema startup parses with: the `mcp`, `skills`, `code_mode` and
 * `hooks` sections are only taken apart here. `settings-load.ts` checks them
 * with `mcp-settings.ts`, `skills-settings.ts`, `code-mode-settings.ts` and
 * `hooks-settings.ts`, each loaded only when a file has the key, so a child
 * without MCP servers or skill settings never builds their schemas;
 * `config check` and the published JSON Schema use the complete schema
 * (`mcp-settings.ts`).
 */
export const SettingsSchema = settingsSchema(v.unknown(), v.unknown(), v.unknown(), v.unknown(), v.unknown());

/** One `providers.endpoints` entry; which fields are required depends on the name (see the schema). */
export interface EndpointSettings {
  readonly api?: ProviderApi;
  readonly base_url?: string;
  /** The variable's name, never the key. */
  readonly api_key_env?: string;
  /** Tokens the endpoint's models hold, when their list does not say. */
  readonly context_window?: number;
}

/** The `model` section; omitted fields fall back to the provider defaults. */
export interface ModelSettings {
  readonly provider?: string;
  readonly model?: string;
  readonly effort?: Effort;
}

/** A validated settings file, or the merge of two. `$schema` is an editor hint, ignored at runtime. */
export interface Settings {
  readonly $schema?: string;
  readonly model?: ModelSettings;
  readonly providers?: {
    readonly endpoints?: Readonly<Record<string, EndpointSettings>>;
    readonly catalog?: CatalogSettings;
  };
  /** Approval policy per tool name; tools not named keep their built-in default. */
  readonly tools?: Readonly<Record<string, ApprovalPolicy>>;
  readonly agent?: AgentSettings;
  /** `instructions.paths`: the global list, then the project's (`instructions-settings.ts`). */
  readonly instructions?: InstructionsSettings;
  /** Which skills are not offered (`skills-settings.ts`). */
  readonly skills?: SkillsSettings;
  /** Code Mode and its nested calls' policies (`code-mode-settings.ts`). */
  readonly code_mode?: CodeModeSettings;
  /** Approval policy per client tool, by registered name (`client-tools-settings.ts`). */
  readonly client_tools?: ClientToolsSettings;
}

/** Outcome of parsing one settings text; `mcp`, `skills`, `codeMode` (`code_mode`) and `hooks` are the file's sections of those names, present and still unchecked. */
export type ParseSettingsResult =
  | { ok: true; settings: Settings; mcp?: unknown; skills?: unknown; codeMode?: unknown; hooks?: unknown; clientTools?: unknown }
  | { ok: false; code: typeof ErrorCode.configurationInvalid };

const INVALID = { ok: false, code: ErrorCode.configurationInvalid } as const;
/**
 * Parses and validates one `settings.jsonc` text. Comments and trailing commas
 * are allowed; an empty, whitespace-only or comment-only text is `{}`. Any
 * syntax error, duplicate key, non-object top level or schema violation is
 * `configuration_invalid`. The `mcp`, `skills` and `code_mode` sections come back apart,
 * unchecked: `settings-load.ts` checks them. Never throws.
 */
export function parseSettingsText(text: string): ParseSettingsResult {
  const value = parseConfigText(text, { jsonc: true });
  if (value === null) return INVALID;
  if (value === undefined) return { ok: true, settings: {} };
  const parsed = v.safeParse(SettingsSchema, value);
  if (!parsed.success) return INVALID;
  const { mcp, skills, code_mode: codeMode, hooks, client_tools: clientTools, ...settings } = parsed.output;
  const sections = { ...(mcp === undefined ? {} : { mcp }), ...(skills === undefined ? {} : { skills }), ...(codeMode === undefined ? {} : { codeMode }) };
  return { ok: true, settings: settings satisfies Settings, ...sections, ...(hooks === undefined ? {} : { hooks }), ...(clientTools === undefined ? {} : { clientTools }) };
}

/** `a`'s entries, then `b`'s: own entries only, through fromEntries, for the same prototype reason as endpoints. */
const byName = <T>(a?: Readonly<Record<string, T>>, b?: Readonly<Record<string, T>>) => Object.fromEntries([...Object.entries(a ?? {}), ...Object.entries(b ?? {})]);

/**
 * Merges global and project settings; the project wins. `model` and `agent`
 * merge field by field (but a project's `agent.disabled_subagents` adds to
 * the global list), `tools` per tool name, `providers.endpoints` per name
 * and, within a name, field by field; `instructions.paths` is the global
 * list then the project's; `skills.disabled` is the union of both lists;
 * `code_mode` is merged apart, by `settings-load.ts` with
 * `code-mode-settings.ts` (loaded only when a file has the section). A
 * section present on either side is present in the result. Whether the
 * project may win is decided before this, in `project-trust.ts`. MCP servers are merged apart (`mcp-merge.ts`): each
 * definition keeps the file it came from, which its approval binds to.
 */
export function mergeSettings(global: Settings, project: Settings): Settings {
  const out: { -readonly [K in keyof Settings]: Settings[K] } = {};
  const schema = project.$schema ?? global.$schema;
  if (schema !== undefined) out.$schema = schema;
  if (global.model !== undefined || project.model !== undefined) out.model = { ...global.model, ...project.model };
  if (global.providers !== undefined || project.providers !== undefined) {
    const g = global.providers?.endpoints;
    const p = project.providers?.endpoints;
    const names = [...new Set([...Object.keys(g ?? {}), ...Object.keys(p ?? {})])];
    // fromEntries defines own properties, so no provider name can reach a prototype.
    const endpoints = Object.fromEntries(names.map((name) => [name, { ...ownValue(g, name), ...ownValue(p, name) }]));
    const catalog = project.providers?.catalog ?? global.providers?.catalog;
    out.providers = {
      ...(g === undefined && p === undefined ? {} : { endpoints }),
      // A project list replaces the global one; settings-load.ts admits it only when it narrows.
      ...(catalog === undefined ? {} : { catalog }),
    };
  }
  // Per name; settings-load.ts admits a project entry of either only when it tightens.
  if (global.tools !== undefined || project.tools !== undefined) out.tools = byName(global.tools, project.tools);
  if (global.client_tools !== undefined || project.client_tools !== undefined) out.client_tools = byName(global.client_tools, project.client_tools);
  if (global.agent !== undefined || project.agent !== undefined) out.agent = mergeAgentSettings(global.agent, project.agent);
  if (global.instructions !== undefined || project.instructions !== undefined) {
    out.instructions = { paths: [...(global.instructions?.paths ?? []), ...(project.instructions?.paths ?? [])] };
  }
  if (global.skills !== undefined || project.skills !== undefined) {
    // A project list adds to the global one: a repository can disable more skills, never re-enable one.
    out.skills = { disabled: [...new Set([...global.skills?.disabled ?? [], ...project.skills?.disabled ?? []])] };
  }
  return out;
}
