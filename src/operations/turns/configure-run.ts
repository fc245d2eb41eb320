/**
 * The configuration every run of a child uses, derived once from the
 * admitted startup snapshot: one settings snapshot per child, as the spec
 * requires, so a run never rereads settings or credentials.
 *
 * @module
 */

import type { Runtime } from "../../host/runtime.ts";
import { apiKeyFor } from "../../config/providers.ts";
import { type AgentProfile, DEFAULT_MAX_STEPS } from "../../config/agent-settings.ts";
import { createDelegation } from "../../agents/delegation.ts";
import { delegableProfiles } from "../../agents/setup.ts";
import type { RunJournal } from "../../runner/journal-port.ts";
import { compactionPolicy, contextWindow } from "../../config/compaction-settings.ts";
import { titlesEnabled } from "../../config/title-settings.ts";
import { generatedTitle } from "../../store/discovery/title.ts";
import type { StartupSnapshot } from "../../admission/startup.ts";
import { systemPrompt } from "../../runner/system-prompt.ts";
import type { RunConfig } from "../../runner/run-config.ts";
import { boundTurnContext } from "../../store/turn-context.ts";
import type { ExternalTools } from "../../runner/tools/external.ts";
import { joinExternalTools } from "../../runner/tools/external-union.ts";
import { codeModeEnabled } from "../../config/code-mode-settings.ts";
import { enabledChoices } from "../../config/catalog-settings.ts";

/**
 * Builds the run configuration from `snapshot`; `secrets` are the values to
 * redact everywhere, `clientTools` the client's registered tools (if any),
 * `childJournal` opens a subagent's history.
 */
export function runConfig(
  runtime: Runtime,
  snapshot: StartupSnapshot,
  secrets: readonly string[],
  clientTools: ExternalTools | null = null,
  childJournal?: (childId: string) => RunJournal,
): RunConfig {
  const { selection } = snapshot;
  const skills = snapshot.skills?.skills ?? [];
  const profile = snapshot.profiles.primary;
  const maxSteps = snapshot.settings.agent?.max_steps ?? DEFAULT_MAX_STEPS;
  const context = (chosen: AgentProfile) => boundTurnContext({
    instructions: snapshot.instructions.map(({ path, sha256, bytes }) => ({ path, sha256, bytes })),
    ...(skills.length === 0 ? {} : { skills: skills.map(({ name, file }) => ({ name, path: file })) }),
    profile: { name: chosen.name, ...(chosen.files.length === 0 ? {} : { files: [...chosen.files] }) },
  });
  const delegation = childJournal === undefined ? null : createDelegation({
    profiles: delegableProfiles(snapshot.profiles.all, snapshot.settings.agent?.disabled_subagents),
    instructions: (chosen) => systemPrompt(snapshot.instructions, snapshot.cwd, skills, chosen),
    context,
    enabled: enabledChoices(snapshot.settings.providers?.catalog),
    maxSteps,
    journal: childJournal,
  });
  return {
    runtime,
    endpoint: selection.endpoint,
    model: selection.model,
    effort: selection.effort,
    apiKey: apiKeyFor(selection.endpoint, (name) => runtime.env(name), snapshot.credentials),
    instructions: systemPrompt(snapshot.instructions, snapshot.cwd, skills, profile),
    skills,
    context: context(profile),
    policies: snapshot.settings.tools ?? {},
    profile: { name: profile.name, tools: profile.tools },
    // A profile's bound can only shorten a turn: the settings' bound is the user's cap on spend.
    maxSteps: Math.min(maxSteps, profile.maxSteps ?? Infinity),
    // The selection's run configuration replaces this with what the turn's catalog observation read.
    contextWindow: contextWindow({ provider: selection.provider, model: selection.model, cached: null, configured: selection.endpoint.contextWindow ?? null }),
    compaction: compactionPolicy(snapshot.settings.agent?.compaction),
    compactionTitle: titlesEnabled(snapshot.settings.agent?.titles) ? (title) => generatedTitle(title, secrets) : null,
    secrets,
    workspace: snapshot.cwd,
    home: snapshot.home,
    external: joinExternalTools(snapshot.mcp ?? null, clientTools),
    delegation,
    codeMode: codeModeEnabled(snapshot.settings.code_mode) ? snapshot.settings.code_mode ?? {} : null,
    ...(snapshot.hooks === undefined ? {} : { hooks: snapshot.hooks }),
  };
}
