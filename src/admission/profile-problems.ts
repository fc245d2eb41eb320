/**
 * `magi-code config check`'s view of agent profiles. What makes the primary
 * profile unusable fails startup with `profile_invalid`, so it is a
 * problem: the `agent.primary` entry that names a missing or subagent-only
 * profile, or the selected profile's own files and an unlistable profiles
 * directory. Every other profile file that is invalid is only skipped at
 * startup, so its problems are notes, as are entries that can have no
 * effect: a `disabled_subagents` name that is no subagent, and a profile
 * `tools` entry looser than what settings give (a profile only tightens).
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { type AgentProfile, DEFAULT_PRIMARY, listProfileDirectories, type ProfileProblem } from "../config/agent-settings.ts";
import { primaryProfile, readProfileCatalog } from "../config/profiles.ts";
import type { Settings } from "../config/settings.ts";
import { ANY_TOOL, DEFAULT_POLICIES, isAtLeastAsStrict, resolvePolicy } from "../policy/tool-policies.ts";
import { ownValue } from "../util/own.ts";
import { jsonPath } from "../util/json-path.ts";
import { joinPath } from "../util/paths.ts";

/** The two settings files, as config check read them. */
export interface ProfileSettings {
  readonly globalPath: string;
  /** Null when `<cwd>/.magi-code` is the storage root itself. */
  readonly projectPath: string | null;
  readonly global: Settings;
  readonly project: Settings;
  readonly merged: Settings;
}

const SEE = "see docs/features/runner.md";

/** The profile files read, their problems and notes, and the primary profile (for the selection check), as startup would meet them. */
export async function profileProblems(
  runtime: Runtime,
  paths: { readonly home: string; readonly cwd: string },
  settings: ProfileSettings,
): Promise<{ checked: string[]; problems: ProfileProblem[]; notes: ProfileProblem[]; primary: AgentProfile | null }> {
  const locations = { ...paths, project: settings.projectPath !== null };
  const listings = await listProfileDirectories(runtime.fs, locations);
  const catalog = await readProfileCatalog(runtime.fs, locations, listings, new AbortController().signal);
  const primaryName = settings.merged.agent?.primary ?? DEFAULT_PRIMARY;
  const userPrimary = settings.global.agent?.primary ?? DEFAULT_PRIMARY;
  const chosen = primaryProfile(catalog, primaryName, userPrimary);
  // The files and directories the primary depends on: their problems are why it fails.
  const selected = new Set([...listings.map((listing) => listing.dir), ...listings.flatMap((listing) => [primaryName, userPrimary].map((name) => joinPath(listing.dir, `${name}.md`)))]);
  const problems: ProfileProblem[] = [];
  const notes: ProfileProblem[] = [];
  for (const problem of catalog.problems) {
    if (!chosen.ok && selected.has(problem.file)) problems.push(problem);
    else notes.push({ ...problem, message: `${problem.message}; this profile is skipped` });
  }
  if (!chosen.ok) {
    const fromProject = chosen.problem !== "user_missing" && chosen.name === primaryName && settings.project.agent?.primary !== undefined &&
      settings.projectPath !== null;
    const file = fromProject ? settings.projectPath! : settings.globalPath;
    const message = chosen.problem === "missing"
      ? `names no profile: neither a built-in (build, plan) nor ${chosen.name}.md in a profiles directory; ${SEE}`
      : chosen.problem === "user_missing"
      ? `names no profile of yours: neither a built-in (build, plan) nor ${chosen.name}.md in $MC_HOME/agents; a project's profile cannot stand in for it; ${SEE}`
      : chosen.problem === "subagent"
      ? `names "${chosen.name}", a subagent profile; the primary profile's mode must be primary or all`
      : `the profile "${chosen.name}" is invalid (see the problems of its files)`;
    problems.push({ file, path: "$.agent.primary", message });
  }
  for (const [file, layer] of [[settings.globalPath, settings.global], [settings.projectPath, settings.project]] as const) {
    (layer.agent?.disabled_subagents ?? []).forEach((name, index) => {
      const profile = catalog.effective.get(name);
      if (file !== null && (profile === undefined || profile?.mode === "primary")) {
        notes.push({ file, path: jsonPath(["agent", "disabled_subagents", index]), message: "names no subagent profile; it disables nothing" });
      }
    });
  }
  for (const { file, profile } of catalog.files) {
    const others = ownValue(profile?.tools, ANY_TOOL);
    for (const [tool, policy] of Object.entries(profile?.tools ?? {})) {
      const given = resolvePolicy(tool, settings.merged.tools);
      // A looser entry still exempts its tool from a stricter `*`; only without one does it do nothing.
      const exempts = others !== undefined && !isAtLeastAsStrict(given, others);
      if (Object.hasOwn(DEFAULT_POLICIES, tool) && !isAtLeastAsStrict(policy, given) && !exempts) {
        notes.push({ file, path: jsonPath(["tools", tool]), message: `is looser than the policy settings give (${given}); a profile only tightens, so it has no effect` });
      }
    }
  }
  return { checked: catalog.files.map((entry) => entry.file), problems, notes, primary: chosen.ok ? chosen.profile : null };
}
