/**
 * The configuration every run of a child uses, derived once from the
 * admitted startup snapshot: one settings snapshot per child, as the spec
 * requires, so a run never rereads settings or credentials.
 *
 * @module
 */

import type { Runtime } from "../../host/runtime.ts";
import { apiKeyFor } from "../../config/providers.ts";
import { DEFAULT_MAX_STEPS } from "../../config/settings.ts";
import { compactionPolicy } from "../../config/compaction-settings.ts";
import { contextWindow } from "../../config/compaction-settings.ts";
import type { StartupSnapshot } from "../../admission/startup.ts";
import { systemPrompt } from "../../runner/system-prompt.ts";
import type { RunConfig } from "../../runner/run-config.ts";

/** Builds the run configuration from `snapshot`; `secrets` are the values to redact everywhere. */
export function runConfig(runtime: Runtime, snapshot: StartupSnapshot, secrets: readonly string[]): RunConfig {
  const { selection } = snapshot;
  return {
    runtime,
    endpoint: selection.endpoint,
    model: selection.model,
    effort: selection.effort,
    apiKey: apiKeyFor(selection.endpoint, (name) => runtime.env(name), snapshot.credentials),
    instructions: systemPrompt(snapshot.instructions, snapshot.cwd),
    policies: snapshot.settings.tools ?? {},
    maxSteps: snapshot.settings.agent?.max_steps ?? DEFAULT_MAX_STEPS,
    // The selection's run configuration replaces this with what the turn's catalog observation read.
    contextWindow: contextWindow({ provider: selection.provider, model: selection.model, cached: null, configured: selection.endpoint.contextWindow ?? null }),
    compaction: compactionPolicy(snapshot.settings.agent?.compaction),
    secrets,
    workspace: snapshot.cwd,
    home: snapshot.home,
  };
}
