/**
 * The single startup task behind `initialize`: resolve and create `MC_HOME`,
 * capture the context identity, load the credentials file and settings,
 * choose the primary agent profile, decide the effective provider and model,
 * read the `AGENTS.md` instructions and, when a skill directory exists, the
 * skills, all locally. No network request is ever made here, and no
 * provider SDK is loaded.
 *
 * @module
 */

import { ErrorCode, type StartupErrorCode } from "../protocol/errors.ts";
import { isRuntimeError, type Runtime } from "../host/runtime.ts";
import { lengthPrefixed, sha256Hex } from "../util/digest.ts";
import { isAbsolute, joinPath } from "../util/paths.ts";
import { CREDENTIALS_FILE, type Credentials, loadCredentials } from "../config/credentials.ts";
import { canonicalUserHome, type Instruction, loadInstructions, projectRoot } from "../config/instructions.ts";
import { resolveInstructionPaths } from "../config/instructions-settings.ts";
import { resolveSelection, type Selection } from "../config/providers.ts";
import { GLOBAL_SETTINGS_FILE, PROJECT_SETTINGS_PATH, type Settings } from "../config/settings.ts";
import { loadSettings } from "../config/settings-load.ts";
import { type Profiles, startupProfiles } from "../config/agent-settings.ts";
import type { SkillRoot, SkillSet } from "../config/skills.ts";
import type { McpServerDefinition } from "../mcp/definition.ts";
import type { McpManager } from "../mcp/manager.ts";
import type { ReasoningHint } from "../policy/effort-policy.ts";
import { cachedHint } from "../catalog/selection-hint.ts";

/** Directories created under `MC_HOME` at startup, with owner-only permissions. */
export const HOME_DIRECTORIES = ["sessions"] as const;

/** Everything a successful startup admitted: one snapshot per child. */
export interface StartupSnapshot {
  /** Canonical storage root (`MC_HOME` after creation and realpath). */
  readonly home: string;
  /** Canonical working directory. */
  readonly cwd: string;
  /** Opaque SHA-256 context identity of `cwd` and `home`. */
  readonly contextId: string;
  /** The merged, validated settings. */
  readonly settings: Settings;
  /** The effective provider, model and effort. */
  readonly selection: Selection;
  /** Provider name to key, from `$MC_HOME/credentials.json`; empty without one. Never logged or sent. */
  readonly credentials: Credentials;
  /** The primary agent profile and every valid one (`config/agent-settings.ts`, `config/profiles.ts`). */
  readonly profiles: Profiles;
  /**
   * The instructions chain in prompt order: `$MC_HOME/AGENTS.md`, the
   * project's `AGENTS.md` files from its root down to the cwd, then
   * `instructions.paths`; later text wins on conflicts (`config/instructions.ts`).
   */
  readonly instructions: readonly Instruction[];
  /** What the selected provider's cached model list says about the model's reasoning controls (null: nothing). */
  readonly selectionHint?: ReasoningHint;
  /**
   * The MCP servers to connect: the enabled and approved ones (`src/mcp/servers.ts`);
   * absent when the settings configure none. The others are skipped: never started, never failing startup.
   */
  readonly mcpServers?: readonly McpServerDefinition[];
  /**
   * The enabled skills and what was skipped (`src/config/skills.ts`);
   * absent when no skill directory exists, so none of the skills code loads.
   */
  readonly skills?: SkillSet;
  /** The connected MCP servers, for the child's lifetime; absent when none was started. */
  readonly mcp?: McpManager;
  /** The hooks that run (global ones, approved project ones: `src/hooks/`); absent when none does. */
  readonly hooks?: import("../runner/hooks-port.ts").TurnHooks;
  /** What `agent.info` shows of the configured MCP servers not started and of every configured hook (absent: none configured). */
  readonly skippedMcp?: readonly import("../mcp/servers.ts").SkippedMcpServer[];
  readonly hookStates?: readonly import("../hooks/startup.ts").HookState[];
}

/** The outcome of {@link runStartup}. */
export type StartupOutcome =
  | { readonly ok: true; readonly snapshot: StartupSnapshot }
  | { readonly ok: false; readonly code: StartupErrorCode; readonly contextId: string | null };

/** What startup knows when it decides which MCP servers to start. */
export interface McpStartupContext {
  readonly runtime: Runtime;
  /** Canonical `MC_HOME`, where the global approvals are. */
  readonly home: string;
  /** Canonical workspace. */
  readonly cwd: string;
  /** The admitted settings. */
  readonly settings: Settings;
}

/**
 * Which MCP servers a startup connects in place of the settings' enabled
 * and approved ones: what in-process tests use to start real servers on
 * the memory runtime (whose filesystem holds no commands to resolve). The
 * served child never has one.
 */
export type McpServerSource = (context: McpStartupContext, signal: AbortSignal) => Promise<readonly McpServerDefinition[]>;

/**
 * Connects `definitions` through `src/mcp/start.ts` (which spawns the stdio
 * servers, then loads the MCP chunk with the SDK while they start), imported
 * only when there is one, so a child with none loads no MCP code and no SDK.
 * A failed server is `mcp_unavailable` on the wire (the code alone); a
 * startup cancelled meanwhile is `startup_cancelled`. Either way every
 * server started is closed before this resolves.
 */
async function startMcp(
  runtime: Runtime,
  home: string,
  definitions: readonly McpServerDefinition[],
  signal: AbortSignal,
): Promise<{ readonly ok: true; readonly manager: McpManager | null } | { readonly ok: false; readonly code: StartupErrorCode }> {
  if (definitions.length === 0) return { ok: true, manager: null };
  let result: Awaited<ReturnType<typeof import("../mcp/start.ts").startMcpServers>>;
  try {
    result = await (await import("../mcp/start.ts")).startMcpServers(runtime, home, definitions, signal);
  } catch {
    // A damaged installation (a chunk is missing); start.ts stopped what it spawned.
    return { ok: false, code: ErrorCode.startupFailed };
  }
  if (result.ok) return { ok: true, manager: result.manager };
  return { ok: false, code: result.failure.reason === "cancelled" || signal.aborted ? ErrorCode.startupCancelled : ErrorCode.mcpUnavailable };
}

/** The context identity: SHA-256 over the canonical cwd and storage root. */
export async function contextIdentity(cwd: string, home: string): Promise<string> {
  return await sha256Hex(lengthPrefixed(["magi-code.context.v1", cwd, home]));
}

/**
 * Resolves the storage root from `MC_HOME`, else `$HOME/.magi-code`. A relative
 * `MC_HOME` is refused rather than resolved against a cwd the client chose for
 * another purpose. The path is kept as given (trailing slashes aside): `..`
 * after a symlink means the symlink target's parent, which only the
 * filesystem can resolve, so no lexical normalisation happens here.
 */
export function resolveHome(env: (name: string) => string | undefined): string | null {
  const trimSlashes = (path: string) => path.replace(/\/+$/, "") || "/";
  const configured = env("MC_HOME");
  if (configured !== undefined && configured !== "") return isAbsolute(configured) ? trimSlashes(configured) : null;
  const home = env("HOME");
  return home === undefined || !isAbsolute(home) ? null : `${trimSlashes(home)}/.magi-code`;
}

/**
 * Decides the code for a storage root that could not be created, from what is
 * on disk rather than from each platform's errno for a recursive mkdir: a
 * path that exists but is no directory (a file, a dangling or looping
 * symlink, a file in its parent chain) is a configuration mistake; anything
 * else (permissions, I/O, a pseudo filesystem) is `startup_failed`.
 */
async function homeFailure(runtime: Runtime, path: string): Promise<StartupErrorCode> {
  try {
    await runtime.fs.lstat(path);
  } catch (error) {
    return isRuntimeError(error, "not_directory") ? ErrorCode.configurationInvalid : ErrorCode.startupFailed;
  }
  const target = await runtime.fs.stat(path).catch(() => null);
  return target?.kind === "directory" ? ErrorCode.startupFailed : ErrorCode.configurationInvalid;
}

/** Creates `path` and its subdirectories; on failure, the code for the first one that failed. */
async function createHome(runtime: Runtime, path: string): Promise<StartupErrorCode | null> {
  for (const directory of [path, ...HOME_DIRECTORIES.map((name) => `${path}/${name}`)]) {
    try {
      await runtime.fs.mkdir(directory, 0o700);
    } catch {
      return await homeFailure(runtime, directory);
    }
  }
  return null;
}

/**
 * The project settings path, or null when `<cwd>/.magi-code` is the storage
 * root itself (a client started in `$HOME`): the user's own global file must
 * not be read a second time as untrusted project settings.
 */
export async function projectSettingsPath(runtime: Runtime, cwd: string, home: string): Promise<string | null> {
  const directory = joinPath(cwd, PROJECT_SETTINGS_PATH[0]!);
  const canonical = await runtime.fs.realpath(directory).catch(() => null);
  return canonical === home ? null : joinPath(cwd, ...PROJECT_SETTINGS_PATH);
}

/**
 * The project root of the canonical `cwd` (`config/instructions.ts`): the
 * nearest directory from it up holding a `.git` file or directory, never
 * above the user's home directory, else `cwd` itself.
 */
export async function findProjectRoot(runtime: Runtime, cwd: string): Promise<string> {
  return await projectRoot(runtime.fs, cwd, await canonicalUserHome(runtime));
}

/**
 * The skill roots that exist, in precedence order (docs/features/runner.md,
 * "Skills"), `root` being the cwd's project root: one `stat` each, so a
 * child without any never loads the skills code or the YAML parser.
 */
export async function existingSkillRoots(runtime: Runtime, home: string, cwd: string, root: string): Promise<SkillRoot[]> {
  const userHome = runtime.env("HOME");
  const candidates: SkillRoot[] = [
    { path: joinPath(cwd, ".magi-code", "skills"), scope: "project", within: cwd },
    { path: joinPath(root, ".agents", "skills"), scope: "project", within: root },
    { path: joinPath(home, "skills"), scope: "user" },
    ...(userHome !== undefined && isAbsolute(userHome) ? [{ path: joinPath(userHome, ".agents", "skills"), scope: "user" } as const] : []),
  ];
  const found = await Promise.all(candidates.map((root) => runtime.fs.stat(root.path).then((info) => info.kind === "directory", () => false)));
  return candidates.filter((_, index) => found[index]);
}

/**
 * Runs startup once; honours `signal` between steps. The MCP servers (the
 * enabled and approved ones, or those `mcpSource` names) are connected
 * last, once everything local succeeded, so a configuration mistake never
 * starts one.
 */
export async function runStartup(runtime: Runtime, signal: AbortSignal, mcpSource?: McpServerSource): Promise<StartupOutcome> {
  const cancelled = { ok: false, code: ErrorCode.startupCancelled, contextId: null } as const;
  const configured = resolveHome((name) => runtime.env(name));
  if (configured === null) return { ok: false, code: ErrorCode.configurationInvalid, contextId: null };

  const created = await createHome(runtime, configured);
  if (created !== null) return { ok: false, code: created, contextId: null };
  let home: string;
  let cwd: string;
  try {
    home = await runtime.fs.realpath(configured);
    cwd = await runtime.fs.realpath(runtime.cwd());
  } catch {
    return { ok: false, code: ErrorCode.startupFailed, contextId: null };
  }
  if (signal.aborted) return cancelled;
  const contextId = await contextIdentity(cwd, home);
  const stored = await loadCredentials(runtime.fs, joinPath(home, CREDENTIALS_FILE), signal);
  if (signal.aborted) return cancelled;
  if (!stored.ok) return { ok: false, code: stored.code, contextId };
  const credentials = stored.credentials;
  const projectSettings = await projectSettingsPath(runtime, cwd, home);
  const loaded = await loadSettings(runtime.fs, { global: joinPath(home, GLOBAL_SETTINGS_FILE), project: projectSettings }, signal);
  if (signal.aborted) return cancelled;
  if (!loaded.ok) return { ok: false, code: loaded.code, contextId };
  const catalog = async () => (await import("../config/profiles.ts")).loadProfiles;
  const agents = await startupProfiles(runtime.fs, { home, cwd, project: projectSettings !== null }, loaded, signal, catalog);
  if (!agents.ok) return agents.code === ErrorCode.startupCancelled ? cancelled : { ok: false, code: agents.code, contextId };

  const selected = resolveSelection(loaded.settings, (name) => runtime.env(name), credentials, agents.profiles.primary);
  if (!selected.ok) return { ok: false, code: selected.code, contextId };
  const userHome = await canonicalUserHome(runtime);
  const root = await projectRoot(runtime.fs, cwd, userHome);
  const paths = resolveInstructionPaths(loaded.settings.instructions?.paths, { cwd, home: userHome });
  const instructions = (await loadInstructions(runtime.fs, { home, userHome, cwd, root, paths }, signal)).files;
  if (signal.aborted) return cancelled;
  const skillRoots = await existingSkillRoots(runtime, home, cwd, root);
  let skills: SkillSet | undefined;
  if (skillRoots.length > 0) {
    const { loadSkills } = await import("../config/skills.ts");
    skills = await loadSkills(runtime.fs, { roots: skillRoots, home, disabled: loaded.settings.skills?.disabled ?? [] }, signal);
    if (signal.aborted) return cancelled;
  }
  const selectionHint = await cachedHint(runtime, home, selected.selection.endpoint, selected.selection.model);
  // Loaded only when a settings file lists a hook; reads the approvals file when a project hook needs it.
  const hooks = loaded.hooks === undefined ? null : await (await import("../hooks/startup.ts")).startupHooks(runtime, { home, cwd, hooks: loaded.hooks }, signal);
  if (hooks?.ok === false || signal.aborted) return hooks?.ok === false && hooks.code !== ErrorCode.startupCancelled ? { ok: false, code: hooks.code, contextId } : cancelled;
  let mcpServers: readonly McpServerDefinition[] | undefined;
  let skippedMcp: StartupSnapshot["skippedMcp"];
  if (mcpSource !== undefined) mcpServers = await mcpSource({ runtime, home, cwd, settings: loaded.settings }, signal);
  else if (loaded.mcpServers !== undefined) {
    // Loaded only when a server is configured: reads the approvals file, once.
    const { startableMcpServers } = await import("../mcp/servers.ts");
    const startable = await startableMcpServers(runtime, { home, cwd, servers: loaded.mcpServers }, signal);
    if (!startable.ok) return startable.code === ErrorCode.startupCancelled ? cancelled : { ok: false, code: startable.code, contextId };
    ({ servers: mcpServers, skipped: skippedMcp } = startable);
  }
  if (signal.aborted) return cancelled;
  const mcp = await startMcp(runtime, home, mcpServers ?? [], signal);
  if (!mcp.ok) return { ok: false, code: mcp.code, contextId: mcp.code === ErrorCode.startupCancelled ? null : contextId };
  const snapshot = {
    home,
    cwd,
    contextId,
    settings: loaded.settings,
    selection: selected.selection,
    credentials,
    profiles: agents.profiles,
    instructions,
    selectionHint,
    ...(mcpServers === undefined ? {} : { mcpServers }),
    ...(skills === undefined ? {} : { skills }),
    ...(mcp.manager === null ? {} : { mcp: mcp.manager }),
    ...(hooks?.ok && hooks.hooks !== null ? { hooks: hooks.hooks } : {}),
    ...(skippedMcp === undefined ? {} : { skippedMcp }), ...(hooks?.ok ? { hookStates: hooks.states } : {}),
  };
  // Cancelled while the last server connected: nothing may outlive the answer.
  if (signal.aborted) {
    await mcp.manager?.close();
    return cancelled;
  }
  return { ok: true, snapshot };
}
