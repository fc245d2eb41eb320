/**
 * The `client_tools` section of `settings.jsonc`: the approval policy of
 * each tool a client lends with the `client.tools` extension, by its
 * registered name (docs/features/local-agent-client-tools.md, "Settings").
 * The one policy key of a client tool; default `ask`. A project file may
 * only tighten an entry against the global file's, else `ask`.
 *
 * Startup loads this module only when a settings file has a `client_tools`
 * key (`settings-load.ts`); `config check` and the published JSON Schema
 * take the complete schema from `mcp-settings.ts`. Documented in
 * docs/settings.md, "Which key governs which tool".
 *
 * @module
 */

import * as v from "valibot";
import { type ApprovalPolicy, ApprovalPolicySchema, isAtLeastAsStrict } from "../policy/tool-policies.ts";
import { notArray } from "../util/exact-object.ts";
import { ownValue } from "../util/own.ts";

/** The section: registered tool name → policy. Names no registered tool has are accepted and have no effect. */
export type ClientToolsSettings = Readonly<Record<string, ApprovalPolicy>>;

/** A client tool's registered name, as `client-tool-registry.ts` spells the rule (kept apart so settings load no protocol module). */
const CLIENT_TOOL_NAME = /^[a-z][a-z0-9_]{0,47}$/;

/** The valibot schema of the `client_tools` section. */
export const ClientToolsSettingsSchema = v.pipe(
  notArray,
  v.record(
    v.pipe(v.string(), v.regex(CLIENT_TOOL_NAME)),
    v.pipe(ApprovalPolicySchema, v.description("allow: run without asking; ask: ask the user first; deny: refuse.")),
  ),
  v.description("Approval policy per client tool (`client.tools`), by the name the client registered it with; default ask. A project file may only make a policy stricter."),
);

/** Checks a file's `client_tools` section; null when it is invalid. */
export function parseClientToolsSettings(raw: unknown): ClientToolsSettings | null {
  const parsed = v.safeParse(ClientToolsSettingsSchema, raw);
  return parsed.success ? parsed.output : null;
}

/** The policy of client tool `name`: its settings entry, else `ask`. */
export function clientToolPolicy(name: string, settings: ClientToolsSettings | undefined): ApprovalPolicy {
  return ownValue(settings, name) ?? "ask";
}

/** Whether every `client_tools` entry of `project` is at least as strict as what the user would otherwise get. */
export function projectClientToolsTrusted(global: ClientToolsSettings | undefined, project: ClientToolsSettings | undefined): boolean {
  return Object.entries(project ?? {}).every(([name, policy]) => isAtLeastAsStrict(policy, clientToolPolicy(name, global)));
}
