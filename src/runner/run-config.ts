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
import type { ApprovalBroker } from "./approvals.ts";
import type { ModelToolCall, ToolResultMessage, ToolSpec } from "./providers/conversation.ts";
import type { Usage } from "./providers/events.ts";
import type { RunIO } from "./run-output.ts";
import type { ContentBudget } from "./segment.ts";
import type { StepChannel } from "./event-channel.ts";
import type { TakeCheckpoint } from "./tools/tool.ts";
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
  /** Where the run may delegate with the `task` tool; absent or null: it offers no `task` (a subagent at the depth bound). */
  readonly delegation?: Delegation | null;
  /** Set on a subagent's run: which one it is, which its tool activities and approval prompts name; it is offered no tool its ceiling denies. */
  readonly subagent?: SubagentIdentity;
  /** The checkpoint taker of a turn's file writes (`session.rewind`); absent: none are taken. */
  readonly checkpoints?: (sessionId: string, turnId: string) => TakeCheckpoint;
  /** The merged `code_mode` section when Code Mode is on (`code` offered, docs/features/code-mode.md); absent or null when it is off. */
  readonly codeMode?: CodeModeSettings | null;
  /** The user's hooks (`hooks-port.ts`); absent when none runs. */
  readonly hooks?: TurnHooks;
}

/** What a task call needs of the step that made it. */
export interface DelegatingStep {
  /** The delegating run's configuration (the child's is derived from it). */
  readonly config: RunConfig;
  /** The delegating run's events and records. */
  readonly io: RunIO;
  /** The delegating step's channel, which a child's activities and approval prompts go out on. */
  readonly channel: StepChannel;
  /** The delegating run's approvals: a child's prompts are the run's own. */
  readonly broker: ApprovalBroker;
  /** The delegating run's cancellation. */
  readonly signal: AbortSignal;
  /** The delegating run's content budget, which the children's text and events share. */
  readonly budget: ContentBudget;
  /** Where a child's provider usage is counted (the delegating turn's totals). */
  usage(usage: Usage | null): void;
  /** Issues run-scoped activity ids. */
  nextActivityId(): string | null;
}

/** Where a run may delegate: the port `src/agents/` implements (`delegation.ts` there and here). */
export interface Delegation {
  /** The `task` tool as the model sees it: which profiles it may delegate to. */
  readonly spec: ToolSpec;
  /**
   * The starter of one step's task calls: each call starts at once (its
   * activity id taken before the call returns, so ids follow call order)
   * and runs when one of the step's slots is free; `index` is the call's
   * place among the step's calls, which the child's history link records. The promise resolves with
   * the call's result; it rejects only with `RunStop` (cancelled, output
   * lost).
   */
  forStep(step: DelegatingStep): (call: ModelToolCall, index: number) => Promise<ToolResultMessage>;
}

/** Which subagent a child run is, for what its tool calls show. */
export interface SubagentIdentity {
  /** The profile's name (1-64 of `a-z0-9-`). */
  readonly profile: string;
  /** The `subagent` activity of the task call. */
  readonly activityId: string;
  /** The task's description, already escaped, redacted and one line. */
  readonly description: string;
}
