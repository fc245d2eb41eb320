/**
 * Bounded loading of the two settings files and their merge into one admitted
 * snapshot. Every failure is a wire code that never carries file content or a
 * path, because startup errors reach the client verbatim.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { type FileSystem, isRuntimeError, RuntimeErrorCode } from "../host/runtime.ts";
import { projectEndpointsTrusted, projectToolsTrusted } from "./project-trust.ts";
import { projectCatalogNarrows, unknownCatalogProviders } from "./catalog-settings.ts";
import { resolveEndpoints } from "./providers.ts";
import { instructionPathsFollowRules } from "./instructions-settings.ts";
import type { ConfiguredMcpServer } from "./mcp-merge.ts";
import type { McpSettings } from "./mcp-settings.ts";
import type { ConfiguredHook, HooksSettings } from "./hooks-settings.ts";
import {
  MAX_SETTINGS_BYTES,
  mergeSettings,
  parseSettingsText,
  type Settings,
} from "./settings.ts";

const INVALID = { ok: false, code: ErrorCode.configurationInvalid } as const;
const EMPTY: LoadOneResult = { ok: true, settings: {} };

type LoadFailure = { ok: false; code: typeof ErrorCode.configurationInvalid | typeof ErrorCode.startupFailed | typeof ErrorCode.startupCancelled };

/**
 * Outcome of {@link loadSettings}. `mcpServers` is present only when a file
 * configures at least one MCP server: each with the file its definition came
 * from (`mcp-merge.ts`), enabled or not, approved or not. `userPrimary` is
 * the global file's `agent.primary`, which a project's choice of primary
 * profile may only tighten (`profiles.ts`). `hooks` is present only when a
 * file lists at least one hook, each with its file (`hooks-settings.ts`).
 */
export type LoadSettingsResult =
  | { ok: true; settings: Settings; userPrimary?: string; mcpServers?: readonly ConfiguredMcpServer[]; hooks?: readonly ConfiguredHook[] }
  | LoadFailure;

/** One file, its `mcp` and `hooks` sections checked. */
type LoadOneResult = { ok: true; settings: Settings; mcp?: McpSettings; hooks?: HooksSettings } | LoadFailure;

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads one settings file. A missing path is `{}`. A symlink is followed on
 * purpose (dotfile managers such as stow or chezmoi link config files), but
 * only to a regular file: the real path is read through `fs.readFile`, which
 * still refuses a final symlink and enforces the 1 MiB bound, and FIFOs or
 * devices are never opened because a read could block startup forever.
 */
async function loadOne(fs: FileSystem, path: string): Promise<LoadOneResult> {
  let bytes: Uint8Array;
  try {
    const link = await fs.lstat(path);
    const target = link.kind === "symlink" ? await fs.realpath(path) : path;
    const info = link.kind === "symlink" ? await fs.stat(target) : link;
    if (info.kind !== "file" || info.size > MAX_SETTINGS_BYTES) return INVALID;
    bytes = await fs.readFile(target, MAX_SETTINGS_BYTES);
  } catch (error) {
    // Only the path itself missing means "no settings"; a dangling link is a broken setup.
    if (isRuntimeError(error, RuntimeErrorCode.notFound)) {
      const link = await fs.lstat(path).then((info) => info.kind === "symlink", () => false);
      if (!link) return EMPTY;
    }
    // Too large, or swapped for a FIFO or device between lstat and open: not a settings file.
    if (isRuntimeError(error, RuntimeErrorCode.tooLarge) || isRuntimeError(error, RuntimeErrorCode.notFile)) return INVALID;
    return { ok: false, code: ErrorCode.startupFailed };
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return INVALID;
  }
  const parsed = parseSettingsText(text);
  if (!parsed.ok) return parsed;
  let settings = parsed.settings;
  if (parsed.skills !== undefined) {
    // Loaded only when a file has a `skills` key, like the `mcp` section below.
    const skills = (await import("./skills-settings.ts")).parseSkillsSettings(parsed.skills);
    if (skills === null) return INVALID;
    settings = { ...settings, skills };
  }
  if (parsed.clientTools !== undefined) {
    // Loaded only when a file has a `client_tools` key.
    const clientTools = (await import("./client-tools-settings.ts")).parseClientToolsSettings(parsed.clientTools);
    if (clientTools === null) return INVALID;
    settings = { ...settings, client_tools: clientTools };
  }
  if (parsed.codeMode !== undefined) {
    // Loaded only when a file has a `code_mode` key: Code Mode is off by default.
    const codeMode = (await import("./code-mode-settings.ts")).parseCodeModeSettings(parsed.codeMode);
    if (codeMode === null) return INVALID;
    settings = { ...settings, code_mode: codeMode };
  }
  let hooks: HooksSettings | undefined;
  if (parsed.hooks !== undefined) {
    // Loaded only when a file has a `hooks` key, like the `mcp` section below.
    const checked = (await import("./hooks-settings.ts")).parseHooksSettings(parsed.hooks);
    if (checked === null) return INVALID;
    hooks = checked;
  }
  const withHooks = hooks === undefined ? { ok: true, settings } as const : { ok: true, settings, hooks } as const;
  if (parsed.mcp === undefined) return withHooks;
  // Loaded only when a file has an `mcp` key: a child without MCP servers never builds their schemas.
  const mcp = (await import("./mcp-settings.ts")).parseMcpSettings(parsed.mcp);
  return mcp === null ? INVALID : { ...withHooks, mcp };
}

/** Both files' hooks, or undefined when neither lists one. */
async function loadHooks(
  global: { file: string; hooks?: HooksSettings },
  project: { file: string; hooks?: HooksSettings } | null,
): Promise<readonly ConfiguredHook[] | undefined> {
  if (global.hooks === undefined && project?.hooks === undefined) return undefined;
  const hooks = (await import("./hooks-settings.ts")).configuredHooks(global, project);
  return hooks.length === 0 ? undefined : hooks;
}

/** The MCP servers both files configure, or a failure when they break a rule of `mcp-merge.ts`. */
async function loadMcpServers(
  global: { file: string; mcp: McpSettings | undefined },
  project: { file: string; mcp: McpSettings | undefined } | null,
): Promise<{ ok: true; servers: readonly ConfiguredMcpServer[] } | typeof INVALID> {
  const { mergeMcpServers } = await import("./mcp-merge.ts");
  const merged = mergeMcpServers(global, project);
  return merged.problems.length > 0 ? INVALID : { ok: true, servers: merged.servers };
}

/** `merged` with both files' `code_mode` merged in, or null when the project's would loosen the user's (`code-mode-settings.ts`). */
async function withCodeMode(merged: Settings, global: Settings, project: Settings): Promise<Settings | null> {
  if (global.code_mode === undefined && project.code_mode === undefined) return merged;
  const { codeModeLoosenings, mergeCodeModeSettings } = await import("./code-mode-settings.ts");
  if (codeModeLoosenings(global.code_mode, project.code_mode).length > 0) return null;
  return { ...merged, code_mode: mergeCodeModeSettings(global.code_mode, project.code_mode) };
}

/**
 * Loads, validates and merges the global and project settings files (project
 * wins), after checking what the project file may not do (`project-trust.ts`,
 * and for MCP servers `mcp-merge.ts`). Cancellation is checked before each
 * file and before returning.
 */
export async function loadSettings(
  fs: FileSystem,
  paths: { readonly global: string; readonly project: string | null },
  signal: AbortSignal,
): Promise<LoadSettingsResult> {
  const cancelled = { ok: false, code: ErrorCode.startupCancelled } as const;
  if (signal.aborted) return cancelled;
  const global = await loadOne(fs, paths.global);
  if (!global.ok) return global;
  if (signal.aborted) return cancelled;
  const project = paths.project === null ? EMPTY : await loadOne(fs, paths.project);
  if (!project.ok) return project;
  if (signal.aborted) return cancelled;
  if (!projectEndpointsTrusted(project.settings)) return INVALID;
  if (!projectToolsTrusted(global.settings, project.settings)) return INVALID;
  if (!instructionPathsFollowRules(global.settings.instructions, project.settings.instructions)) return INVALID;
  if (project.settings.client_tools !== undefined) {
    const { projectClientToolsTrusted } = await import("./client-tools-settings.ts");
    if (!projectClientToolsTrusted(global.settings.client_tools, project.settings.client_tools)) return INVALID;
  }
  const projectSettings: Settings = project.settings;
  if (!projectCatalogNarrows(global.settings.providers?.catalog, projectSettings.providers?.catalog)) return INVALID;
  const merged = await withCodeMode(mergeSettings(global.settings, project.settings), global.settings, project.settings);
  if (merged === null) return INVALID;
  const userPrimary = global.settings.agent?.primary;
  const hooks = await loadHooks(
    { file: paths.global, ...(global.hooks === undefined ? {} : { hooks: global.hooks }) },
    paths.project === null ? null : { file: paths.project, ...(project.hooks === undefined ? {} : { hooks: project.hooks }) },
  );
  const admitted = {
    ok: true,
    settings: merged,
    ...(userPrimary === undefined ? {} : { userPrimary }),
    ...(hooks === undefined ? {} : { hooks }),
  } as const;
  // An enabled choice of a provider nobody configured can never be offered: a typo, refused like an unknown model.provider.
  const known = new Set(resolveEndpoints(merged).keys());
  if (unknownCatalogProviders(merged.providers?.catalog, known).length > 0) return INVALID;
  if (global.mcp === undefined && project.mcp === undefined) return admitted;
  const mcp = await loadMcpServers(
    { file: paths.global, mcp: global.mcp },
    paths.project === null ? null : { file: paths.project, mcp: project.mcp },
  );
  if (!mcp.ok) return mcp;
  if (signal.aborted) return cancelled;
  return mcp.servers.length === 0 ? admitted : { ...admitted, mcpServers: mcp.servers };
}
