/**
 * What a project's `.magi-code/settings.jsonc` may not do. A project file
 * arrives with whatever repository the user cloned, so it must not be able to
 * send a user's provider key somewhere else: it may neither name a key
 * variable nor change where (or how) an endpoint the user configured, or a
 * built-in one, is reached. It may add new keyless endpoints (a local vLLM or
 * Ollama server) and choose the model. Documented in `docs/settings.md`.
 *
 * @module
 */

import type { Settings } from "./settings.ts";

/**
 * Returns whether `project`'s endpoints respect the trust rule, given the
 * user's `global` settings and the built-in provider names.
 */
export function projectEndpointsTrusted(global: Settings, project: Settings, builtins: readonly string[]): boolean {
  const userEndpoints = global.providers?.endpoints ?? {};
  for (const [name, endpoint] of Object.entries(project.providers?.endpoints ?? {})) {
    if (endpoint.api_key_env !== undefined) return false;
    const userOwned = builtins.includes(name) || Object.prototype.hasOwnProperty.call(userEndpoints, name);
    if (userOwned && (endpoint.base_url !== undefined || endpoint.api !== undefined)) return false;
  }
  return true;
}
