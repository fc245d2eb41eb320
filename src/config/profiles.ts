/**
 * Agent profiles: the catalog of every profile a child can use and the
 * choice of the primary one. Which profile is which, and why a project's
 * file never loosens anything, is documented in docs/features/runner.md
 * ("Profiles").
 *
 * The profile directories are `$MC_HOME/agents` and
 * `<cwd>/.magi-code/agents`, listed by `agent-settings.ts`. Startup loads
 * this module only when the built-ins alone cannot decide
 * (`startupProfiles`); the file reader (`profile-files.ts`, and with it the
 * `yaml` package) only when a directory holds a `.md` entry. A child
 * without profile files pays two failed listings and loads neither.
 *
 * Names resolve in layers. A global file replaces the built-in of its name:
 * both are the user's. A project file is layered onto the profile of its
 * name (global or built-in) and can only tighten it (its tool policies and
 * step bound combine with the base's, the stricter winning; its mode may
 * only narrow `all`); a project name no one else uses is taken as written.
 * Whatever a profile says, its tool policies only ever tighten the ones
 * settings give (`policy/tool-policies.ts`).
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import type { FileSystem } from "../host/runtime.ts";
import { combineTools } from "../policy/tool-policies.ts";
import {
  type AgentProfile,
  BUILTIN_PROFILES,
  byName,
  DEFAULT_PRIMARY,
  type LoadProfilesResult,
  type PrimarySelection,
  type ProfileListing,
  type ProfileLocations,
  type ProfileProblem,
} from "./agent-settings.ts";
import type { ProfileFile, ProfileFiles } from "./profile-files.ts";

/** Every profile, valid or not, and what is wrong with the invalid ones. */
export interface ProfileCatalog {
  /** Built-ins and global files: what the user gets without the project's files (null: invalid). */
  readonly user: ReadonlyMap<string, AgentProfile | null>;
  /** The same with the project's files layered on: what this child uses (null: invalid). */
  readonly effective: ReadonlyMap<string, AgentProfile | null>;
  /** Every profile file read, global then project, each as it stands alone. */
  readonly files: readonly ProfileFile[];
  /** Every problem, in the order met. */
  readonly problems: readonly ProfileProblem[];
  /** A directory could not be listed whole, so any name may be missing a file. */
  readonly incomplete: boolean;
}

/** `profile` with `by`'s restrictions added: per tool the stricter policy (a `*` entry included), the smaller step bound. */
export function tightenProfile(profile: AgentProfile, by: AgentProfile): AgentProfile {
  const { tools } = combineTools(profile.tools, by.tools);
  const bounds = [profile.maxSteps, by.maxSteps].filter((bound) => bound !== undefined);
  const { maxSteps: _, ...rest } = profile;
  return { ...rest, tools, ...(bounds.length === 0 ? {} : { maxSteps: Math.min(...bounds) }), files: [...profile.files, ...by.files] };
}

/**
 * A project file layered onto the profile of its name: restrictions
 * combined, the project's model and effort (a project may choose those in
 * its settings too), the base's description, both bodies; null when it
 * would widen the base's mode.
 */
export function layerProfile(base: AgentProfile, project: AgentProfile): AgentProfile | null {
  if (project.mode !== base.mode && base.mode !== "all") return null;
  const tightened = tightenProfile({ ...base, mode: project.mode }, project);
  return {
    ...tightened,
    ...(project.model === undefined ? {} : { model: project.model }),
    ...(project.effort === undefined ? {} : { effort: project.effort }),
    body: [base.body, project.body].filter((body) => body !== "").join("\n\n"),
  };
}

/**
 * Reads the listed profile directories (`listProfileDirectories`) into a
 * catalog. Stops reading once `signal` is aborted; the caller checks it.
 */
export async function readProfileCatalog(
  fs: FileSystem,
  locations: ProfileLocations,
  listings: readonly ProfileListing[],
  signal: AbortSignal,
): Promise<ProfileCatalog> {
  const problems: ProfileProblem[] = listings.flatMap((listing) => listing.problem === null ? [] : [{ file: listing.dir, path: "$", message: listing.problem }]);
  const read: ProfileFiles[] = [];
  if (listings.some((listing) => listing.entries.length > 0)) {
    // The reader and `yaml` load only now: a profile file exists.
    const { readProfileFiles } = await import("./profile-files.ts");
    const confine = { within: locations.cwd, outside: locations.home };
    for (const [index, listing] of listings.entries()) {
      read.push(listing.entries.length === 0 ? { files: [], problems: [] } : await readProfileFiles(fs, listing.dir, listing.entries, index === 0 ? null : confine, signal));
    }
  }
  problems.push(...read.flatMap((directory) => directory.problems));
  const user = new Map<string, AgentProfile | null>(BUILTIN_PROFILES);
  for (const file of read[0]?.files ?? []) user.set(file.name, file.profile);
  const effective = new Map(user);
  for (const file of read[1]?.files ?? []) {
    const base = user.get(file.name);
    const layered = file.profile === null || base === null ? null : base === undefined ? file.profile : layerProfile(base, file.profile);
    if (file.profile !== null && base !== undefined && base !== null && layered === null) {
      problems.push({ file: file.file, path: "$.mode", message: `may only narrow the mode "${base.mode}" of the profile it layers onto; a project cannot widen what a profile may be used as` });
    }
    effective.set(file.name, layered);
  }
  return { user, effective, files: read.flatMap((directory) => directory.files), problems, incomplete: listings.some((listing) => listing.problem !== null) };
}

/**
 * Why the primary profile cannot run: no such profile, a subagent-only one,
 * an invalid one (its files' problems say why), or a global selection naming
 * no profile of the user's own (a built-in or a global file).
 */
export type PrimaryProblem = "missing" | "subagent" | "invalid" | "user_missing";

/**
 * The primary profile: `primary` from the effective catalog, tightened by
 * `userPrimary` (what the global settings select, {@link DEFAULT_PRIMARY}
 * when they select none) when a project chose another one, so choosing a
 * profile is no way around the user's own. A catalog with an unlistable
 * directory has no primary: the missing file might have tightened it.
 */
export function primaryProfile(
  catalog: ProfileCatalog,
  primary: string | undefined,
  userPrimary: string | undefined,
): { readonly ok: true; readonly profile: AgentProfile } | { readonly ok: false; readonly problem: PrimaryProblem; readonly name: string } {
  primary ??= DEFAULT_PRIMARY;
  userPrimary ??= DEFAULT_PRIMARY;
  if (catalog.incomplete) return { ok: false, problem: "invalid", name: primary };
  const profile = catalog.effective.get(primary);
  if (profile === undefined) return { ok: false, problem: "missing", name: primary };
  if (profile === null) return { ok: false, problem: "invalid", name: primary };
  if (profile.mode === "subagent") return { ok: false, problem: "subagent", name: primary };
  // The user's selection must name a profile of the user's own, even when the project's choice is the same
  // name: a project file cannot supply the profile the user's settings rely on, nor stand in for a missing one.
  const user = catalog.user.get(userPrimary);
  if (user === undefined) return { ok: false, problem: "user_missing", name: userPrimary };
  if (user === null) return { ok: false, problem: "invalid", name: userPrimary };
  return { ok: true, profile: userPrimary === primary ? profile : tightenProfile(profile, user) };
}

/**
 * Startup's profile step: reads the catalog and chooses the primary
 * profile. A missing, subagent-only or invalid primary is
 * `profile_invalid`; every other invalid profile is skipped (`magi-code
 * config check` reports it).
 */
export async function loadProfiles(
  fs: FileSystem,
  locations: ProfileLocations,
  listings: readonly ProfileListing[],
  selection: PrimarySelection,
  signal: AbortSignal,
): Promise<LoadProfilesResult> {
  const catalog = await readProfileCatalog(fs, locations, listings, signal);
  if (signal.aborted) return { ok: false, code: ErrorCode.startupCancelled };
  const primary = primaryProfile(catalog, selection.primary, selection.userPrimary);
  if (!primary.ok) return { ok: false, code: ErrorCode.profileInvalid };
  const all = [...catalog.effective.values()].filter((profile) => profile !== null).sort(byName);
  return { ok: true, profiles: { primary: primary.profile, all } };
}

