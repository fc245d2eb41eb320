/**
 * The single startup task behind `initialize`: resolve and create `MC_HOME`,
 * capture the context identity, load settings and decide the effective
 * provider and model, all locally. No network request is ever made here, and
 * no provider SDK is loaded.
 *
 * @module
 */

import { ErrorCode, type StartupErrorCode } from "../protocol/errors.ts";
import { isRuntimeError, type Runtime } from "../runtime.ts";
import { lengthPrefixed, sha256Hex } from "../util/digest.ts";
import { isAbsolute, joinPath, normalizePath } from "../util/paths.ts";
import { resolveSelection, type Selection } from "./providers.ts";
import { GLOBAL_SETTINGS_FILE, loadSettings, PROJECT_SETTINGS_PATH, type Settings } from "./settings.ts";

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
}

/** The outcome of {@link runStartup}. */
export type StartupOutcome =
  | { readonly ok: true; readonly snapshot: StartupSnapshot }
  | { readonly ok: false; readonly code: StartupErrorCode; readonly contextId: string | null };

/** The context identity: SHA-256 over the canonical cwd and storage root. */
export async function contextIdentity(cwd: string, home: string): Promise<string> {
  return await sha256Hex(lengthPrefixed(["magi-code.context.v1", cwd, home]));
}

/**
 * Resolves the storage root from `MC_HOME`, else `$HOME/.magi-code`. A relative
 * `MC_HOME` is refused rather than resolved against a cwd the client chose for
 * another purpose.
 */
export function resolveHome(env: (name: string) => string | undefined): string | null {
  const configured = env("MC_HOME");
  if (configured !== undefined && configured !== "") {
    return isAbsolute(configured) ? normalizePath(configured) : null;
  }
  const home = env("HOME");
  if (home === undefined || !isAbsolute(home)) return null;
  return joinPath(home, ".magi-code");
}

function startupError(error: unknown): StartupErrorCode {
  return isRuntimeError(error) && (error.code === "not_directory" || error.code === "exists")
    ? ErrorCode.configurationInvalid
    : ErrorCode.startupFailed;
}

/** Runs startup once; honours `signal` between steps. */
export async function runStartup(runtime: Runtime, signal: AbortSignal): Promise<StartupOutcome> {
  const cancelled = { ok: false, code: ErrorCode.startupCancelled, contextId: null } as const;
  const configured = resolveHome((name) => runtime.env(name));
  if (configured === null) return { ok: false, code: ErrorCode.configurationInvalid, contextId: null };

  let home: string;
  let cwd: string;
  try {
    await runtime.fs.mkdir(configured, 0o700);
    for (const directory of HOME_DIRECTORIES) await runtime.fs.mkdir(joinPath(configured, directory), 0o700);
    home = await runtime.fs.realpath(configured);
    cwd = await runtime.fs.realpath(runtime.cwd());
  } catch (error) {
    return { ok: false, code: startupError(error), contextId: null };
  }
  if (signal.aborted) return cancelled;
  const contextId = await contextIdentity(cwd, home);

  const loaded = await loadSettings(runtime.fs, {
    global: joinPath(home, GLOBAL_SETTINGS_FILE),
    project: joinPath(cwd, ...PROJECT_SETTINGS_PATH),
  }, signal);
  if (signal.aborted) return cancelled;
  if (!loaded.ok) return { ok: false, code: loaded.code, contextId };

  const selected = resolveSelection(loaded.settings, (name) => runtime.env(name));
  if (!selected.ok) return { ok: false, code: selected.code, contextId };
  return { ok: true, snapshot: { home, cwd, contextId, settings: loaded.settings, selection: selected.selection } };
}
