/**
 * What every startup needs of agents: the vocabulary settings and profile
 * files share (profile names and modes, the bound on model steps), the
 * settings' `agent` section (`max_steps`, `primary`, `disabled_subagents`),
 * the shape of a profile, the four built-in profiles, and one bounded
 * listing of each profiles directory. Everything else (reading and
 * layering profile files, `profiles.ts` and `profile-files.ts`, with the
 * `yaml` package) loads only when a directory holds a `.md` entry or the
 * settings choose something the built-ins alone cannot answer. Documented in
 * docs/settings.md ("agent") and docs/features/runner.md ("Profiles").
 *
 * @module
 */

import * as v from "valibot";
import type { ErrorCode } from "../protocol/errors.ts";
import { type DirEntry, type FileSystem, isRuntimeError, RuntimeErrorCode } from "../host/runtime.ts";
import { exactObject } from "../util/exact-object.ts";
import { joinPath } from "../util/paths.ts";
import type { ApprovalPolicy } from "../policy/tool-policies.ts";
import type { Effort } from "../policy/efforts.ts";
import { type CompactionSettings, CompactionSettingsSchema, mergeCompaction } from "./compaction-settings.ts";
import { type TitleSettings, TitleSettingsSchema } from "./title-settings.ts";

/** Model requests per turn when neither `agent.max_steps` nor the profile says. */
export const DEFAULT_MAX_STEPS = 50;
/** Largest `max_steps` accepted, in settings and in a profile. */
export const MAX_STEPS_LIMIT = 200;

/** The primary profile when `agent.primary` is unset. */
export const DEFAULT_PRIMARY = "build";

/**
 * Profile names, which are also their file names without `.md`: 1-64 of
 * `a-z`, `0-9` and single hyphens between them, the Agent Skills name rule,
 * so a name is the same on every filesystem, needs no quoting and cannot
 * reach outside its directory.
 */
export const PROFILE_NAME: RegExp = /^(?=.{1,64}$)[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** What a profile may be used as: the window's agent, a delegate, or both. */
export const PROFILE_MODES = ["primary", "subagent", "all"] as const;
/** One of {@link PROFILE_MODES}. */
export type ProfileMode = typeof PROFILE_MODES[number];

/** Most entries one file's `agent.disabled_subagents` may list. */
const MAX_DISABLED_SUBAGENTS = 64;

const described = v.description;

/** A profile name; JSON Schema gets the pattern and the length. */
export const ProfileNameSchema = v.pipe(
  v.string(),
  v.maxLength(64),
  v.regex(PROFILE_NAME),
  described("Profile name: 1-64 of a-z, 0-9 and single hyphens between them."),
);

/** `max_steps`, in settings and in a profile's frontmatter. */
export const MaxStepsSchema = v.pipe(
  v.number(),
  v.integer(),
  v.minValue(1),
  v.maxValue(MAX_STEPS_LIMIT),
  described(`Model requests per turn, 1-${MAX_STEPS_LIMIT}; default ${DEFAULT_MAX_STEPS}.`),
);

/** The settings' `agent` section. */
export const AgentSchema = v.pipe(
  exactObject({
    max_steps: v.exactOptional(MaxStepsSchema),
    primary: v.exactOptional(v.pipe(ProfileNameSchema, described(`The window's agent profile; default ${DEFAULT_PRIMARY}.`))),
    disabled_subagents: v.exactOptional(v.pipe(
      v.array(ProfileNameSchema),
      v.maxLength(MAX_DISABLED_SUBAGENTS),
      described("Profiles that may not be delegated to. A project list adds to the global one."),
    )),
    compaction: v.exactOptional(CompactionSettingsSchema),
    titles: v.exactOptional(TitleSettingsSchema),
  }),
  described("The agent profile, the limits of one turn, session titles."),
);

/** The `agent` section of one file, or of the merge of two. */
export interface AgentSettings {
  /** Model requests per turn; the runner applies {@link DEFAULT_MAX_STEPS} when unset. */
  readonly max_steps?: number;
  /** The primary profile's name; {@link DEFAULT_PRIMARY} when unset. */
  readonly primary?: string;
  /** Profiles that may not be delegated to. */
  readonly disabled_subagents?: readonly string[];
  /** Automatic compaction (`compaction-settings.ts`). */
  readonly compaction?: CompactionSettings;
  /** Session titles (`title-settings.ts`); a project's replaces the global one whole. */
  readonly titles?: TitleSettings;
}

/**
 * Merges the two files' `agent` sections: the project wins field by field,
 * within `compaction` too, except `disabled_subagents`, where a project list
 * adds to the global one (a project can disable more, never re-enable).
 */
export function mergeAgentSettings(global: AgentSettings | undefined, project: AgentSettings | undefined): AgentSettings {
  const merged: { -readonly [K in keyof AgentSettings]: AgentSettings[K] } = { ...global, ...project, ...mergeCompaction(global, project) };
  if (global?.disabled_subagents !== undefined || project?.disabled_subagents !== undefined) {
    merged.disabled_subagents = [...new Set([...global?.disabled_subagents ?? [], ...project?.disabled_subagents ?? []])];
  }
  return merged;
}

/** A profile as the runner uses it: a built-in, a file, or a file layered onto another. */
export interface AgentProfile {
  readonly name: string;
  /** What it is for, in a sentence. */
  readonly description: string;
  readonly mode: ProfileMode;
  /** The model a new session starts with, for the selected provider; the settings' when absent. */
  readonly model?: string;
  /** The effort a new session starts with; the settings' when absent. */
  readonly effort?: Effort;
  /** Policies by tool name, each only ever tightening the effective one. */
  readonly tools: Readonly<Record<string, ApprovalPolicy>>;
  /** At most this many model requests per turn (never more than the settings allow). */
  readonly maxSteps?: number;
  /** Markdown appended to the system prompt; empty for none. */
  readonly body: string;
  /** The files it was read from, in layering order, each with the SHA-256 and size of its bytes; empty for a built-in. */
  readonly files: readonly ProfileFileDigest[];
}

/** One profile file as read: its path (a symlink's own path) and the SHA-256 and length of its bytes. */
export interface ProfileFileDigest {
  readonly path: string;
  readonly sha256: string;
  readonly bytes: number;
}

/** One problem of a profile file or directory, for `magi-code config check`. */
export interface ProfileProblem {
  readonly file: string;
  /** JSON path into the frontmatter, `$` for the file itself. */
  readonly path: string;
  /** What is wrong, never quoting the file. */
  readonly message: string;
}

// An allowlist (docs/features/runner.md): no MCP, client or later tool; `allow` only means "not tightened".
const READ_ONLY: Readonly<Record<string, ApprovalPolicy>> = Object.freeze({ "*": "deny", write_file: "deny", edit_file: "deny", shell: "deny",
  read_file: "allow", list_directory: "allow", glob: "allow", grep: "allow", skill: "allow", task: "allow", code: "allow" });

const builtin = (profile: Omit<AgentProfile, "files">): AgentProfile => Object.freeze({ ...profile, files: Object.freeze([]) });

/** The built-in profiles, by name. `build` is today's agent: nothing added, nothing restricted. */
export const BUILTIN_PROFILES: ReadonlyMap<string, AgentProfile> = new Map([
  builtin({
    name: "build",
    description: "The default agent: reads, changes and runs things in the workspace, asking where the tool policies say so.",
    mode: "primary",
    tools: {},
    body: "",
  }),
  builtin({
    name: "plan",
    description: "Plans without changing anything: reads and searches the workspace; write_file, edit_file and shell are denied.",
    mode: "primary",
    tools: READ_ONLY,
    body: "You are running as the plan agent, which is read-only: you may read, list and search the workspace, " +
      "but write_file, edit_file and shell are denied, so do not call them. Work out what the task needs, then answer " +
      "with a plan: which files to change and how, in which order, and how to check the result. Name risks and open " +
      "questions rather than guessing.",
  }),
  builtin({
    name: "general",
    description: "General-purpose agent for a self-contained task delegated by another agent: research or multi-step changes.",
    mode: "subagent",
    tools: {},
    body: "You are a subagent working on one task delegated by another agent. Do the task, then answer with a concise " +
      "report of what you found or changed: the agent that delegated reads only your final answer.",
  }),
  builtin({
    name: "explore",
    description: "Read-only exploration: finds files, searches code and answers questions about the workspace without changing it.",
    mode: "subagent",
    tools: READ_ONLY,
    body: "You are a read-only subagent exploring the workspace for another agent: search and read; write_file, edit_file " +
      "and shell are denied. Answer with what you found, citing file paths, concisely: the agent that delegated reads " +
      "only your final answer.",
  }),
].map((profile) => [profile.name, profile]));

/** The profiles directory's name, in `$MC_HOME` and in `<cwd>/.magi-code`. */
export const PROFILES_DIRECTORY = "agents";

/** Most entries a profiles directory may hold; past it, the directory is refused. */
export const MAX_PROFILE_DIRECTORY_ENTRIES = 128;

/** Where the profile files are, and what confines the project's. */
export interface ProfileLocations {
  /** Canonical `MC_HOME`. */
  readonly home: string;
  /** Canonical cwd. */
  readonly cwd: string;
  /** Whether `<cwd>/.magi-code` is a project directory (false when it is `MC_HOME` itself). */
  readonly project: boolean;
}

/** One profiles directory as listed: its `.md` entries, or why it could not be listed whole. */
export interface ProfileListing {
  readonly dir: string;
  readonly entries: readonly DirEntry[];
  readonly problem: string | null;
}

/**
 * Lists the global, then the project profiles directory, one bounded call
 * each: an absent directory is empty, anything else that is not a readable
 * directory of at most {@link MAX_PROFILE_DIRECTORY_ENTRIES} entries is a
 * problem. Only `.md` entries are kept.
 */
export async function listProfileDirectories(fs: FileSystem, locations: ProfileLocations): Promise<ProfileListing[]> {
  const dirs = [joinPath(locations.home, PROFILES_DIRECTORY), ...locations.project ? [joinPath(locations.cwd, ".magi-code", PROFILES_DIRECTORY)] : []];
  const listings: ProfileListing[] = [];
  for (const dir of dirs) {
    try {
      const entries = await fs.readDir(dir, MAX_PROFILE_DIRECTORY_ENTRIES);
      const problem = entries.length > MAX_PROFILE_DIRECTORY_ENTRIES ? `holds more than ${MAX_PROFILE_DIRECTORY_ENTRIES} entries` : null;
      listings.push({ dir, entries: problem === null ? entries.filter((entry) => entry.name.endsWith(".md")) : [], problem });
    } catch (error) {
      const problem = isRuntimeError(error, RuntimeErrorCode.notFound)
        ? null
        : isRuntimeError(error, RuntimeErrorCode.notDirectory) ? "is not a directory" : "cannot be listed";
      listings.push({ dir, entries: [], problem });
    }
  }
  return listings;
}

/** The primary agent profile's name as the merged settings and the global file alone choose it. */
export interface PrimarySelection {
  readonly primary: string | undefined;
  readonly userPrimary: string | undefined;
}

/** What startup keeps of profiles. */
export interface Profiles {
  /** The primary profile: the agent the window runs as. */
  readonly primary: AgentProfile;
  /** Every valid profile, built-ins included, by name; invalid ones are skipped. */
  readonly all: readonly AgentProfile[];
}

/** The startup's profiles, or why there are none. */
export type LoadProfilesResult =
  | { readonly ok: true; readonly profiles: Profiles }
  | { readonly ok: false; readonly code: typeof ErrorCode.profileInvalid | typeof ErrorCode.startupCancelled };

/** `profiles.ts`'s `loadProfiles`, handed in so this module does not import the catalog it only loads on demand. */
export type ProfileCatalogLoader = (
  fs: FileSystem,
  locations: ProfileLocations,
  listings: readonly ProfileListing[],
  selection: PrimarySelection,
  signal: AbortSignal,
) => Promise<LoadProfilesResult>;

/** Profiles in name order. */
export const byName = (a: AgentProfile, b: AgentProfile): number => a.name < b.name ? -1 : 1;

/**
 * The profiles when the built-ins alone decide: no directory holds a
 * profile file or failed to list, and the project chose no primary other
 * than the global one, which is a primary built-in. Null when `profiles.ts`
 * must decide.
 */
export function builtinProfiles(listings: readonly ProfileListing[], selection: PrimarySelection): LoadProfilesResult | null {
  const primary = selection.primary ?? DEFAULT_PRIMARY;
  if (primary !== (selection.userPrimary ?? DEFAULT_PRIMARY)) return null;
  if (listings.some((listing) => listing.entries.length > 0 || listing.problem !== null)) return null;
  const profile = BUILTIN_PROFILES.get(primary);
  if (profile === undefined || profile.mode === "subagent") return null;
  return { ok: true, profiles: { primary: profile, all: [...BUILTIN_PROFILES.values()].sort(byName) } };
}

/**
 * Startup's profile step: lists both directories, then answers from the
 * built-ins when they alone decide, else through `catalog` (which imports
 * `profiles.ts`, and so the file reader, only then). `loaded` is what
 * `settings-load.ts` admitted.
 */
export async function startupProfiles(
  fs: FileSystem,
  locations: ProfileLocations,
  loaded: { readonly settings: { readonly agent?: AgentSettings }; readonly userPrimary?: string },
  signal: AbortSignal,
  catalog: () => Promise<ProfileCatalogLoader>,
): Promise<LoadProfilesResult> {
  const listings = await listProfileDirectories(fs, locations);
  const selection = { primary: loaded.settings.agent?.primary, userPrimary: loaded.userPrimary };
  return builtinProfiles(listings, selection) ?? await (await catalog())(fs, locations, listings, selection, signal);
}
