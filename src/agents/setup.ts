/**
 * What delegation is set up with, once per child process, from the admitted
 * startup snapshot (`operations/turns/configure-run.ts`).
 *
 * @module
 */

import type { AgentProfile } from "../config/agent-settings.ts";
import type { RunJournal } from "../runner/journal-port.ts";
import type { TurnContextParts } from "../store/records.ts";

/** What delegation is set up with. */
export interface SubagentSetup {
  /** The profiles that may be delegated to: mode `subagent` or `all`, not in `agent.disabled_subagents`; in name order. */
  readonly profiles: readonly AgentProfile[];
  /** The system prompt of a child running as `profile`: the same instructions and skills, then its body. */
  instructions(profile: AgentProfile): string;
  /** What a child's `turn_started` records of its setup. */
  context(profile: AgentProfile): TurnContextParts;
  /** The settings' step bound (`agent.max_steps`, default applied). */
  readonly maxSteps: number;
  /** Opens the history of a new child, under `sessions/subagents/` (`store/child-journal.ts`). */
  journal(childId: string): RunJournal;
}

/**
 * The profiles the `task` tool may delegate to, which `agent.info` lists:
 * mode `subagent` or `all`, not named in `agent.disabled_subagents`, in the
 * order of `all` (by name).
 */
export function delegableProfiles(all: readonly AgentProfile[], disabled: readonly string[] = []): AgentProfile[] {
  return all.filter((profile) => profile.mode !== "primary" && !disabled.includes(profile.name));
}
