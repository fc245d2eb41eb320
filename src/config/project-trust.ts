/**
 * What a project's `.magi-code/settings.jsonc` may not do. A project file
 * arrives with whatever repository the user cloned, so it must not be able to
 * send a user's provider key somewhere else: it may neither name a key
 * variable nor change where (or how) an endpoint the user configured, or a
 * built-in one, is reached, nor claim a name the user's credentials file
 * holds a key for. It may add new keyless endpoints (a local vLLM or Ollama
 * server) and choose the model. Nor may it loosen a tool's approval policy:
 * the repository would otherwise approve its own commands. Documented in
 * `docs/settings.md`.
 *
 * @module
 */

import { isAtLeastAsStrict, resolvePolicy } from "../policy/tool-policies.ts";
import type { Settings } from "./settings.ts";

/**
 * Returns whether `project`'s endpoints respect the trust rule, given the
 * user's `global` settings, the built-in provider names and the provider
 * names of the user's credentials file. A new project endpoint under a
 * credential's name would receive that key at whatever URL the project chose,
 * so it is refused rather than silently left keyless.
 */
export function projectEndpointsTrusted(
  global: Settings,
  project: Settings,
  builtins: readonly string[],
  credentialNames: ReadonlySet<string>,
): boolean {
  const userEndpoints = global.providers?.endpoints ?? {};
  for (const [name, endpoint] of Object.entries(project.providers?.endpoints ?? {})) {
    if (endpoint.api_key_env !== undefined) return false;
    const userOwned = builtins.includes(name) || Object.hasOwn(userEndpoints, name);
    if (userOwned && (endpoint.base_url !== undefined || endpoint.api !== undefined)) return false;
    if (!userOwned && credentialNames.has(name)) return false;
  }
  return true;
}

/**
 * Returns whether every `tools` entry of `project` is at least as strict as
 * the policy the user would otherwise get: the global file's entry, else the
 * built-in default (reads `allow`, writes and `shell` `ask`, any other name
 * `ask`). Restating the same policy is allowed; loosening is not.
 */
export function projectToolsTrusted(global: Settings, project: Settings): boolean {
  for (const [name, policy] of Object.entries(project.tools ?? {})) {
    if (!isAtLeastAsStrict(policy, resolvePolicy(name, global.tools))) return false;
  }
  return true;
}
