/**
 * What a run is configured with, apart from the run function so the run
 * and its steps both depend on this shape and not on each other.
 *
 * @module
 */

import type { Endpoint } from "../config/providers.ts";
import type { Runtime } from "../host/runtime.ts";
import type { Effort } from "../policy/efforts.ts";
import type { ApprovalPolicy } from "../policy/tool-policies.ts";
import type { CompactionPolicy } from "../config/compaction-settings.ts";

/** The admitted configuration a run works with: one startup snapshot's worth. */
export interface RunConfig {
  readonly runtime: Runtime;
  readonly endpoint: Endpoint;
  readonly model: string;
  /** Requested effort. */
  readonly effort: Effort;
  /** The key, or null for a keyless endpoint. */
  readonly apiKey: string | null;
  /** The system prompt (base instructions and AGENTS.md files). */
  readonly instructions: string;
  /** Tool approval policies from settings. */
  readonly policies: Readonly<Record<string, ApprovalPolicy>>;
  /** Most model requests per turn. */
  readonly maxSteps: number;
  /** Tokens the model's context holds, or null when unknown (`config/compaction-settings.ts`). */
  readonly contextWindow: number | null;
  /** `agent.compaction`, defaults filled in. */
  readonly compaction: CompactionPolicy;
  /** Known secret values to redact. */
  readonly secrets: readonly string[];
  /** Canonical workspace (the child's cwd). */
  readonly workspace: string;
  /** Canonical `MC_HOME`. */
  readonly home: string;
}
