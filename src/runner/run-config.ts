/**
 * What a run is configured with, apart from the run function so the run
 * and its steps both depend on this shape and not on each other.
 *
 * @module
 */

import type { Endpoint } from "../config/providers.ts";
import type { Skill } from "../config/skills.ts";
import type { Runtime } from "../host/runtime.ts";
import type { Effort } from "../policy/efforts.ts";
import type { ApprovalPolicy, ProfilePolicies } from "../policy/tool-policies.ts";
import type { TurnContextParts } from "../store/records.ts";
import type { ExternalTools } from "./tools/external.ts";
import type { CompactionPolicy } from "../config/compaction-settings.ts";
import type { CodeModeSettings } from "../config/code-mode-settings.ts";
import type { TurnHooks } from "./hooks-port.ts";

/** The admitted configuration a run works with: one startup snapshot's worth. */
export interface RunConfig {
  readonly runtime: Runtime;
  readonly endpoint: Endpoint;
  readonly model: string;
  /** Requested effort. */
  readonly effort: Effort;
  /** The key, or null for a keyless endpoint. */
  readonly apiKey: string | null;
  /** The system prompt (base instructions, AGENTS.md files, the skills' names and descriptions). */
  readonly instructions: string;
  /** Which files went into {@link instructions}, already bounded, recorded on every `turn_started` with the prompt's digest (`store/turn-context.ts`). */
  readonly context: TurnContextParts;
  /** The enabled skills, for the `skill` tool and `read_file`; empty when there are none. */
  readonly skills: readonly Skill[];
  /** Tool approval policies from settings. */
  readonly policies: Readonly<Record<string, ApprovalPolicy>>;
  /** The agent profile's policies, which only tighten `policies` (and an MCP tool's own). */
  readonly profile: ProfilePolicies;
  /** Most model requests per turn: the settings' bound, or the profile's when smaller. */
  readonly maxSteps: number;
  /** Tokens the model's context holds, or null when unknown (`config/compaction-settings.ts`). */
  readonly contextWindow: number | null;
  /** `agent.compaction`, defaults filled in. */
  readonly compaction: CompactionPolicy;
  /**
   * Makes the title a compaction's summary begins with into the title its
   * record stores, by the spec's title rule (`store/discovery/title.ts`),
   * or null when it is not usable; itself null when `agent.titles` turns
   * titles off.
   */
  readonly compactionTitle: ((title: string) => string | null) | null;
  /** Known secret values to redact. */
  readonly secrets: readonly string[];
  /** Canonical workspace (the child's cwd). */
  readonly workspace: string;
  /** Canonical `MC_HOME`. */
  readonly home: string;
  /** Tools from outside the runner (the connected MCP servers'), or null when there are none. */
  readonly external: ExternalTools | null;
  /** The merged `code_mode` section when Code Mode is on (`code` offered, docs/features/code-mode.md); absent or null when it is off. */
  readonly codeMode?: CodeModeSettings | null;
  /** The user's hooks (`hooks-port.ts`); absent when none runs. */
  readonly hooks?: TurnHooks;
}
