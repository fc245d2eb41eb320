/**
 * What a project's `.magi-code/settings.jsonc` may not do. A project file
 * arrives with whatever repository the user cloned, so it must not decide
 * where the conversation goes: every prompt, and everything the read tools
 * return without asking, is sent to the selected endpoint. A project may
 * select among the endpoints the user declared globally and the built-ins,
 * choose the model and effort, and tighten tool policies; it may not declare
 * an endpoint at all, so it can neither add one (a keyless one at its own
 * URL would receive the whole session) nor change `base_url`, `api` or
 * `api_key_env` of any. Nor may it loosen a tool's approval policy: the
 * repository would otherwise approve its own commands. The same principle
 * (a project cannot approve itself) governs MCP servers. Documented in
 * `docs/settings.md`.
 *
 * @module
 */

import { isAtLeastAsStrict, resolvePolicy } from "../policy/tool-policies.ts";
import type { Settings } from "./settings.ts";

/**
 * Returns whether `project` leaves endpoints alone: it declares none. An
 * empty `providers.endpoints` object is harmless and accepted.
 */
export function projectEndpointsTrusted(project: Settings): boolean {
  return Object.keys(project.providers?.endpoints ?? {}).length === 0;
}

/**
 * Returns whether every `tools` entry of `project` is at least as strict as
 * the policy the user would otherwise get: the global file's entry, else the
 * built-in default (reads `allow`, writes and `shell` `ask`, any other name
 * `ask`). Restating the same policy is allowed; loosening is not. The same
 * holds for `code_mode`, checked where it is loaded (`code-mode-settings.ts`).
 */
export function projectToolsTrusted(global: Settings, project: Settings): boolean {
  for (const [name, policy] of Object.entries(project.tools ?? {})) {
    if (!isAtLeastAsStrict(policy, resolvePolicy(name, global.tools))) return false;
  }
  return true;
}
