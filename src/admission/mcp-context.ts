/**
 * What `magi-code mcp …` works on: the storage root, the workspace, the two
 * settings files and the MCP servers they configure, read the way startup
 * reads them (`settings-load.ts`) but without creating anything.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import type { ConfiguredMcpServer } from "../config/mcp-merge.ts";
import type { ConfiguredHook } from "../config/hooks-settings.ts";
import { GLOBAL_SETTINGS_FILE } from "../config/settings.ts";
import { loadSettings } from "../config/settings-load.ts";
import { joinPath } from "../util/paths.ts";
import { projectSettingsPath, resolveHome } from "./startup.ts";

/** The storage root, workspace, settings files and configured servers of one `mcp` command. */
export interface McpContext {
  /** Canonical when it exists; `approve` creates it (0700) otherwise. */
  readonly home: string;
  /** The canonical workspace. */
  readonly cwd: string;
  /** The settings files as startup names them: the sources approvals are bound to. */
  readonly files: { readonly global: string; readonly project: string | null };
  readonly servers: readonly ConfiguredMcpServer[];
  /** The hooks both files list (`magi-code hooks` works on the same context). */
  readonly hooks: readonly ConfiguredHook[];
}

/** The outcome of {@link loadMcpContext}: the context, or a line saying what is wrong. */
export type LoadMcpContextResult = { readonly ok: true; readonly context: McpContext } | { readonly ok: false; readonly message: string };

/**
 * Finds the storage root and workspace and, with `settings`, loads the
 * settings; without, `servers` and `hooks` are empty (revoking needs only the paths).
 */
export async function loadMcpContext(runtime: Runtime, options: { readonly settings: boolean }): Promise<LoadMcpContextResult> {
  const configured = resolveHome((name) => runtime.env(name));
  if (configured === null) return { ok: false, message: "MC_HOME must be an absolute path (or HOME must be set)" };
  const home = await runtime.fs.realpath(configured).catch(() => configured);
  let cwd: string;
  try {
    cwd = await runtime.fs.realpath(runtime.cwd());
  } catch {
    return { ok: false, message: "the working directory cannot be resolved" };
  }
  const files = { global: joinPath(home, GLOBAL_SETTINGS_FILE), project: await projectSettingsPath(runtime, cwd, home) };
  if (!options.settings) return { ok: true, context: { home, cwd, files, servers: [], hooks: [] } };
  const loaded = await loadSettings(runtime.fs, files, new AbortController().signal);
  if (!loaded.ok) return { ok: false, message: "the settings are invalid or cannot be read; run 'magi-code config check' to see why" };
  return { ok: true, context: { home, cwd, files, servers: loaded.mcpServers ?? [], hooks: loaded.hooks ?? [] } };
}
