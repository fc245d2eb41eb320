/**
 * The workspace path policy: which model-supplied paths a tool may read or
 * write.
 *
 * A path is resolved lexically first (`..` and `.` are collapsed against the
 * workspace, as `path.resolve` does), then the deepest ancestor that exists
 * is canonicalised with `realpath`, and the missing rest is appended. The
 * decision is made on that canonical form, and the canonical form is what
 * the tool then operates on, so a symlink inside the workspace that points
 * outside is caught, and the kernel never re-interprets `..` after a
 * symlink. A dangling symlink anywhere on the path is refused: its target is
 * unknown without `readlink`, and creating through it could land anywhere.
 *
 * Reads must stay inside the workspace and outside `MC_HOME` (which holds
 * the credentials file when the workspace is the home directory), or inside
 * one of the scope's extra readable directories (`read_file` passes the
 * enabled skills' directories, which may be anywhere, `$MC_HOME/skills`
 * included; their canonical form is checked, so a link inside one that
 * leads out of it is refused like any other). Writes
 * are refused additionally inside any `.git` directory (or onto a `.git`
 * file, which can redirect git elsewhere) and inside the workspace's
 * `.magi-code/` project settings, which could otherwise widen the approval
 * policies that guard the writes themselves. These names and `MC_HOME` are
 * compared as a case-insensitive filesystem would ({@link foldName}): on
 * macOS `.MAGI-CODE/settings.jsonc` is the project settings file, and HFS+
 * ignores zero-width characters in names, so `.git\u200C` is `.git`. On a
 * case-sensitive filesystem this refuses a few more names than it must.
 *
 * The tools re-check a prepared path just before acting on it
 * (`call-target.ts`, `atomic-write.ts`); what race remains is described in
 * `docs/security.md`.
 *
 * @module
 */

import { type FileSystem, isRuntimeError } from "../host/runtime.ts";
import { dirname, foldName, isAbsolute, isWithin, isWithinHome, joinPath, normalizePath } from "../util/paths.ts";

/** Whether a path will be read or written. */
export type PathAccess = "read" | "write";

/** Why a path was refused. */
export type PathRefusal = "outside_workspace" | "protected" | "invalid";

/** The policy's answer: the canonical absolute path to operate on, or why not. */
export type PathDecision =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly reason: PathRefusal };

/** Where paths are resolved. */
export interface PathScope {
  /** The filesystem to canonicalise against. */
  readonly fs: FileSystem;
  /** The canonical workspace root. */
  readonly workspace: string;
  /** The canonical `MC_HOME`. */
  readonly home: string;
  /** Canonical directories a read may reach besides the workspace (enabled skills'); never written. */
  readonly readable?: readonly string[];
}

/** Longest accepted path, in UTF-8 bytes (Linux's `PATH_MAX`). */
export const MAX_PATH_BYTES = 4096;

/** The workspace directory that holds project settings; the model may not rewrite them. */
export const PROJECT_SETTINGS_DIRECTORY = ".magi-code";


/** Whether `name` is `.git` as a case-insensitive filesystem sees it (`.GIT`, `.git\u200B`). */
export function isGitName(name: string): boolean {
  return foldName(name) === ".git";
}

// Pure path logic, in util so startup's instructions reader shares it without loading this policy module.
export { foldName, isWithin, isWithinHome };

/** `path` relative to `root` (`.` for the root itself); `path` must be within it. */
export function relativeTo(root: string, path: string): string {
  if (path === root) return ".";
  return path.slice(root === "/" ? 1 : root.length + 1);
}

/** Whether a write to canonical `path` is refused as protected. */
export function isProtectedWrite(scope: Pick<PathScope, "workspace" | "home">, path: string): boolean {
  if (isWithinHome(scope.home, path)) return true;
  const parts = relativeTo(scope.workspace, path).split("/");
  // Any component: a nested repository's `.git` (or a submodule's) runs hooks just the same.
  if (parts.some(isGitName)) return true;
  return foldName(parts[0]!) === PROJECT_SETTINGS_DIRECTORY;
}

/**
 * Canonicalises `lexical` (absolute, normalised): realpath of the deepest
 * existing ancestor plus the missing rest. Null when a component is a
 * dangling symlink, a loop, not a directory, or unreadable.
 */
export async function canonicalize(fs: FileSystem, lexical: string): Promise<string | null> {
  const missing: string[] = [];
  let candidate = lexical;
  for (;;) {
    try {
      const real = await fs.realpath(candidate);
      return missing.length === 0 ? real : joinPath(real, ...missing);
    } catch (error) {
      if (!isRuntimeError(error, "not_found")) return null;
    }
    // realpath says "not found" both for a missing name and a dangling symlink; lstat tells them apart.
    try {
      await fs.lstat(candidate);
      return null;
    } catch (error) {
      if (!isRuntimeError(error, "not_found")) return null;
    }
    if (candidate === "/") return null;
    missing.unshift(candidate.slice(candidate.lastIndexOf("/") + 1));
    candidate = dirname(candidate);
  }
}

/** Whether `input` is a string a path can be made of. */
function wellFormed(input: string): boolean {
  if (input.length === 0 || input.includes("\0")) return false;
  return new TextEncoder().encode(input).length <= MAX_PATH_BYTES;
}

/**
 * Applies the policy to a model-supplied `input` (workspace-relative, or
 * absolute inside the workspace) for `access`.
 */
export async function resolveWorkspacePath(scope: PathScope, input: string, access: PathAccess): Promise<PathDecision> {
  if (typeof input !== "string" || !wellFormed(input)) return { ok: false, reason: "invalid" };
  const lexical = isAbsolute(input) ? normalizePath(input) : joinPath(scope.workspace, input);
  const canonical = await canonicalize(scope.fs, lexical);
  if (canonical === null) return { ok: false, reason: "invalid" };
  if (access === "read" && scope.readable?.some((directory) => isWithin(directory, canonical))) return { ok: true, path: canonical };
  if (!isWithin(scope.workspace, canonical)) return { ok: false, reason: "outside_workspace" };
  if (isWithinHome(scope.home, canonical)) return { ok: false, reason: "protected" };
  if (access === "write" && isProtectedWrite(scope, canonical)) return { ok: false, reason: "protected" };
  return { ok: true, path: canonical };
}

/** A sentence for the model saying why a path was refused. */
export function refusalText(reason: PathRefusal): string {
  switch (reason) {
    case "outside_workspace":
      return "the path is outside the workspace";
    case "protected":
      return "the path is protected (inside .git, the project's .magi-code settings, or magi-code's home directory)";
    default:
      return "the path cannot be used (empty, too long, through a dangling symlink or a file, or unreadable)";
  }
}
