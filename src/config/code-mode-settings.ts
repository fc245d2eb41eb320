/**
 * The `code_mode` section (`docs/settings.md#code-mode`): whether the
 * model is offered the `code` tool, and the approval policy of each tool
 * when a Code Mode program calls it. Direct and Code Mode permissions stay
 * independent (the spec's runner): `code_mode.tools.<name>` alone governs
 * nested calls, as `tools.<name>` alone governs direct ones, and a tool the
 * section does not name gets its built-in default (reads `allow`, anything
 * else `ask`), never its direct setting. Off by default: a new way to run
 * tools is opt-in. A project file may only tighten: turn Code Mode off, or
 * make a nested policy stricter than the user's (or the default); it may
 * not turn Code Mode on where the global file does not. Startup loads this
 * module only when a settings file has a `code_mode` key.
 *
 * @module
 */

import * as v from "valibot";
import { type ApprovalPolicy, ApprovalPolicySchema, isAtLeastAsStrict, resolvePolicy } from "../policy/tool-policies.ts";
import { exactObject, notArray } from "../util/exact-object.ts";

/** Whether Code Mode is on when settings say nothing. */
export const CODE_MODE_BY_DEFAULT = false;

// Exposed tool names: the built-ins' and MCP tools' as the model sees them (mcp/names.ts).
const EXPOSED_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The `code_mode` section's schema. */
export const CodeModeSettingsSchema = v.pipe(
  exactObject({
    enabled: v.exactOptional(v.pipe(
      v.boolean(),
      v.description(`Offer the model the \`code\` tool (programs that call tools in a sandbox); default ${CODE_MODE_BY_DEFAULT}.`),
    )),
    tools: v.exactOptional(v.pipe(
      notArray,
      v.record(
        v.pipe(v.string(), v.regex(EXPOSED_TOOL_NAME)),
        v.pipe(ApprovalPolicySchema, v.description("allow: run without asking; ask: ask the user first; deny: refuse.")),
      ),
      v.description(
        "Approval policy per tool name for calls a Code Mode program makes; independent of `tools`. A tool not named gets its built-in default (reads allow, others ask).",
      ),
    )),
  }),
  v.description("Code Mode: the `code` tool and the policies of the tool calls its programs make. A project file may only tighten it."),
);

/** A file's `code_mode` section checked; null when it is invalid. */
export function parseCodeModeSettings(section: unknown): CodeModeSettings | null {
  const parsed = v.safeParse(CodeModeSettingsSchema, section);
  return parsed.success ? parsed.output : null;
}

/** The `code_mode` section, validated. */
export interface CodeModeSettings {
  readonly enabled?: boolean;
  readonly tools?: Readonly<Record<string, ApprovalPolicy>>;
}

/** Whether the merged section turns Code Mode on. */
export function codeModeEnabled(settings: CodeModeSettings | undefined): boolean {
  return settings?.enabled ?? CODE_MODE_BY_DEFAULT;
}

/** The policy of a nested call to `name`: the section's entry, else the tool's built-in default. */
export function codeModePolicy(name: string, settings: CodeModeSettings | undefined): ApprovalPolicy {
  return resolvePolicy(name, settings?.tools);
}

/** The merge of both files' sections: `enabled` the project's when it has one, `tools` per name. */
export function mergeCodeModeSettings(global: CodeModeSettings | undefined, project: CodeModeSettings | undefined): CodeModeSettings {
  const enabled = project?.enabled ?? global?.enabled;
  const tools = global?.tools === undefined && project?.tools === undefined
    ? undefined
    // Own entries only, through fromEntries: no tool name can reach a prototype.
    : Object.fromEntries([...Object.entries(global?.tools ?? {}), ...Object.entries(project?.tools ?? {})]);
  return { ...(enabled === undefined ? {} : { enabled }), ...(tools === undefined ? {} : { tools }) };
}

/** The JSON paths (below `$.code_mode`) of the project entries that would loosen what the user gets. */
export function codeModeLoosenings(global: CodeModeSettings | undefined, project: CodeModeSettings | undefined): string[] {
  const out: string[] = [];
  if (project?.enabled === true && !codeModeEnabled(global)) out.push("enabled");
  for (const [name, policy] of Object.entries(project?.tools ?? {})) {
    if (!isAtLeastAsStrict(policy, codeModePolicy(name, global))) out.push(`tools.${name}`);
  }
  return out;
}

/**
 * The tools a direct `deny` refuses whose Code Mode policy would still run
 * them (`config check` warns: the two are independent, so denying a tool
 * directly does not deny it to programs).
 */
export function directDeniesOpenToCode(direct: Readonly<Record<string, ApprovalPolicy>> | undefined, settings: CodeModeSettings | undefined): string[] {
  return Object.entries(direct ?? {}).filter(([name, policy]) => policy === "deny" && codeModePolicy(name, settings) !== "deny").map(([name]) => name);
}
