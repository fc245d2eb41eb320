/**
 * Named provider endpoints and local readiness.
 *
 * Readiness is decided from settings, the environment and the credentials
 * file alone: no request is
 * ever made here, so `ready` means "configured", not "reachable". The spec
 * forbids provider generation, catalog fetches and OAuth exchanges during
 * initialization, and a local check keeps startup fast and offline-safe.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import type { Credentials } from "./credentials.ts";
import { BUILTIN_PROVIDER_NAMES, type BuiltinProviderName, type ProviderApi, type Settings } from "./settings.ts";
import type { Effort } from "../policy/efforts.ts";

/** A resolved provider endpoint. Carries the key's variable name, never its value. */
export interface Endpoint {
  /** Provider name, as settings and the wire spell it. */
  readonly name: string;
  readonly api: ProviderApi;
  /** Absolute http(s) base URL. */
  readonly baseUrl: string;
  /**
   * Environment variable holding the key, or `null` when none is needed. A
   * credentials-file entry under {@link Endpoint.name} stands in for it.
   */
  readonly apiKeyEnv: string | null;
  /** Model used when settings name none; custom endpoints have none. */
  readonly defaultModel: string | null;
  /** The `context_window` setting: tokens the endpoint's models hold, when their list does not say. */
  readonly contextWindow?: number;
}

/** The built-in endpoints, before any settings override. */
export const BUILTIN_PROVIDERS: Readonly<Record<BuiltinProviderName, Endpoint>> = Object.freeze({
  openai: Object.freeze({
    name: "openai",
    api: "openai-responses",
    baseUrl: "https://api.openai.com/v1",
    apiKeyEnv: "OPENAI_API_KEY",
    defaultModel: "gpt-5-mini",
  }),
  anthropic: Object.freeze({
    name: "anthropic",
    api: "anthropic-messages",
    baseUrl: "https://api.anthropic.com/v1",
    apiKeyEnv: "ANTHROPIC_API_KEY",
    defaultModel: "claude-sonnet-4-5",
  }),
  ollama: Object.freeze({
    name: "ollama",
    api: "openai-chat",
    baseUrl: "http://127.0.0.1:11434/v1",
    apiKeyEnv: null,
    defaultModel: "qwen2.5-coder:7b",
  }),
} satisfies Record<BuiltinProviderName, Endpoint>);

/**
 * The provider used when settings name none. A local, keyless server, so a
 * fresh install with no settings and no keys starts `ready`.
 */
export const DEFAULT_PROVIDER: BuiltinProviderName = "ollama";

/** The effective startup selection. */
export interface Selection {
  readonly provider: string;
  readonly model: string;
  /** Requested effort. */
  readonly effort: Effort;
  readonly endpoint: Endpoint;
}

/** Outcome of {@link resolveSelection}. */
export type SelectionResult =
  | { ok: true; selection: Selection }
  | { ok: false; code: typeof ErrorCode.configurationInvalid | typeof ErrorCode.providerUnavailable };

function isBuiltin(name: string): name is BuiltinProviderName {
  return (BUILTIN_PROVIDER_NAMES as readonly string[]).includes(name);
}

/**
 * Resolves every named endpoint: built-ins overridden field by field, then
 * custom endpoints in settings order (with no default model). A custom entry
 * lacking `api` or `base_url` can only come from unvalidated input; it is
 * left out, so selecting it fails as an unknown provider.
 */
export function resolveEndpoints(settings: Settings): Map<string, Endpoint> {
  const endpoints = new Map<string, Endpoint>();
  for (const name of BUILTIN_PROVIDER_NAMES) endpoints.set(name, BUILTIN_PROVIDERS[name]);
  for (const [name, entry] of Object.entries(settings.providers?.endpoints ?? {})) {
    const base = isBuiltin(name) ? BUILTIN_PROVIDERS[name] : undefined;
    const api = entry.api ?? base?.api;
    const baseUrl = entry.base_url ?? base?.baseUrl;
    if (api === undefined || baseUrl === undefined) continue;
    endpoints.set(name, {
      name,
      api,
      baseUrl,
      apiKeyEnv: entry.api_key_env ?? base?.apiKeyEnv ?? null,
      defaultModel: base?.defaultModel ?? null,
      ...(entry.context_window === undefined ? {} : { contextWindow: entry.context_window }),
    });
  }
  return endpoints;
}

/**
 * The API key for `endpoint`: the variable its `apiKeyEnv` names when that is
 * set and not blank (so a key exported for one shell session overrides the
 * stored one), else the credentials-file entry under the endpoint's name,
 * else `null`. A stored key is used even when `apiKeyEnv` is `null`: a local
 * server started with `--api-key` needs no variable. Project files cannot
 * claim a credential's name for a new endpoint (`project-trust.ts`), so a
 * stored key only reaches endpoints the user configured.
 */
export function apiKeyFor(
  endpoint: Endpoint,
  env: (name: string) => string | undefined,
  credentials: Credentials,
): string | null {
  const exported = endpoint.apiKeyEnv === null ? undefined : env(endpoint.apiKeyEnv);
  if (exported !== undefined && /\S/.test(exported)) return exported;
  const stored = credentials.get(endpoint.name);
  return stored !== undefined && /\S/.test(stored) ? stored : null;
}

/**
 * Resolves the startup selection and decides readiness locally. The agent
 * `profile`'s model and effort, when it names them, come before the
 * settings' `model.model` and `model.effort` (the provider is always the
 * settings' choice): they are the default a new session starts with. An
 * unknown provider, or a custom one without a model, is
 * `configuration_invalid`; an endpoint with a key variable is
 * `provider_unavailable` unless {@link apiKeyFor} finds a key in the
 * variable or in `credentials`. The key is only tested for presence and is
 * never kept or returned.
 */
export function resolveSelection(
  settings: Settings,
  env: (name: string) => string | undefined,
  credentials: Credentials,
  profile: { readonly model?: string; readonly effort?: Effort } = {},
): SelectionResult {
  const provider = settings.model?.provider ?? DEFAULT_PROVIDER;
  const endpoint = resolveEndpoints(settings).get(provider);
  if (endpoint === undefined) return { ok: false, code: ErrorCode.configurationInvalid };
  const model = profile.model ?? settings.model?.model ?? endpoint.defaultModel;
  if (model === null) return { ok: false, code: ErrorCode.configurationInvalid };
  if (endpoint.apiKeyEnv !== null && !hasKey(endpoint, env, credentials)) {
    return { ok: false, code: ErrorCode.providerUnavailable };
  }
  return { ok: true, selection: { provider, model, effort: profile.effort ?? settings.model?.effort ?? "default", endpoint } };
}

// Kept separate so the key never shares a scope with anything returned.
function hasKey(endpoint: Endpoint, env: (name: string) => string | undefined, credentials: Credentials): boolean {
  return apiKeyFor(endpoint, env, credentials) !== null;
}

/**
 * The values of every configured key variable that is set, and of every
 * credentials-file entry (used or not), and `more` (the started MCP
 * servers' secrets), for redaction: whatever a provider,
 * a tool or a stored history echoes back, these strings never reach the
 * client. Values shorter than the redactor's minimum are still returned;
 * `redactSecrets` decides what it can safely match.
 */
export function configuredSecrets(
  settings: Settings,
  env: (name: string) => string | undefined,
  credentials: Credentials,
  more: readonly string[] = [],
): string[] {
  const values = [...resolveEndpoints(settings).values()].map((endpoint) =>
    endpoint.apiKeyEnv === null ? undefined : env(endpoint.apiKeyEnv)
  );
  const secrets: string[] = [];
  addSecrets(secrets, [...values, ...credentials.values(), ...more]);
  return secrets;
}

/**
 * Adds each of `values` that is not blank to `into`, with its trimmed form,
 * each once: how the redaction list of {@link configuredSecrets} is built,
 * and grows when an MCP login's tokens are refreshed.
 */
export function addSecrets(into: string[], values: readonly (string | undefined)[]): void {
  for (const value of values) {
    if (value === undefined || !/\S/.test(value)) continue;
    // HTTP clients trim header values, so the trimmed key is what a provider may echo back.
    for (const form of [value, value.trim()]) if (!into.includes(form)) into.push(form);
  }
}
