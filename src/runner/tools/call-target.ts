/**
 * The path a prepared tool call acts on. Preparing resolves the model's path
 * once, through the workspace policy, and records what is there; running
 * checks again, just before acting, that the path still resolves to the same
 * canonical path and the same object. A parent directory swapped for a
 * symlink changes the canonical path; a file replaced by another changes its
 * identity: either way the call fails rather than act on something the user
 * was not shown.
 *
 * @module
 */

import { type FileInfo, isRuntimeError } from "../../host/runtime.ts";
import { isWithin, type PathAccess, type PathRefusal, type PathScope, refusalText, relativeTo, resolveWorkspacePath } from "../../policy/workspace-paths.ts";
import { describeError, finishResult, showExactly } from "./tool-text.ts";
import { scopeOf, type ToolContext, type ToolResult } from "./tool.ts";

/** A resolved path, as a prepared call holds it. */
export interface CallTarget {
  /** The path as the model wrote it. */
  readonly input: string;
  /** Whether it was resolved for reading or writing. */
  readonly access: PathAccess;
  /** The canonical absolute path acted on. */
  readonly path: string;
  /** The canonical workspace-relative path, escaped for display ({@link showExactly}), never cut. */
  readonly shown: string;
  /** What `lstat` found there when the call was prepared; null when nothing was. */
  readonly info: FileInfo | null;
}

/** What {@link resolveTarget} answers: the target, a policy refusal, or the phrase of a failed `lstat`. */
export type TargetResolution =
  | { readonly ok: true; readonly target: CallTarget }
  | { readonly ok: false; readonly refusal: PathRefusal }
  | { readonly ok: false; readonly failure: unknown };

/** Fixed sentence for a target that changed between preparing and running. */
export const TARGET_CHANGED =
  "The target changed after the call was prepared (a file was replaced, or a directory was moved or swapped for a link), so nothing was done. Check the path and call again.";

/** Short form of {@link TARGET_CHANGED} for summaries. */
export const TARGET_CHANGED_SUMMARY = "target changed after it was prepared";

/** Why a call whose path (or pattern) is too long to show was refused, for the model. */
export const PATH_TOO_LONG = "The path (with the pattern, if any) is too long to show whole in the approval prompt (1,024 bytes), " +
  "so the call was not offered for approval. Use a shorter path or pattern.";

/** `lstat` of `path`, null when nothing is there. */
async function lstatOrNull(context: ToolContext, path: string): Promise<FileInfo | null> {
  try {
    return await context.runtime.fs.lstat(path);
  } catch (error) {
    if (isRuntimeError(error, "not_found")) return null;
    throw error;
  }
}

/**
 * Canonical `path` as people and the model see it: workspace-relative, or
 * for a file of a skill outside the workspace `skill <name>: <path in it>`.
 */
export function shownPath(context: ToolContext, path: string): string {
  if (isWithin(context.workspace, path)) return relativeTo(context.workspace, path);
  const skill = context.skills?.find((item) => isWithin(item.directory, path));
  return skill === undefined ? relativeTo(context.workspace, path) : `skill ${skill.name}: ${relativeTo(skill.directory, path)}`;
}

/**
 * The prepared call's canonical arguments, as hooks receive them
 * (docs/features/runner.md, "Hooks"): the parameters the tool's schema
 * produced, with `path` the canonical path acted on ({@link shownPath}), so
 * a hook about `.env` sees `.env` however the model spelt it.
 */
export function resolvedArguments(params: object, context: ToolContext, target: CallTarget): Readonly<Record<string, unknown>> {
  return { ...params, path: shownPath(context, target.path) };
}

/** Resolves the model's `input` for `access` in `scope` (default: the workspace's) and records what is at it. */
export async function resolveTarget(context: ToolContext, input: string, access: PathAccess, scope: PathScope = scopeOf(context)): Promise<TargetResolution> {
  const decision = await resolveWorkspacePath(scope, input, access);
  if (!decision.ok) return { ok: false, refusal: decision.reason };
  let info: FileInfo | null;
  try {
    info = await lstatOrNull(context, decision.path);
  } catch (failure) {
    return { ok: false, failure };
  }
  const shown = showExactly(shownPath(context, decision.path));
  return { ok: true, target: { input, access, path: decision.path, shown, info } };
}

/** Whether `a` and `b` are the same object, or both absent. */
export function sameObject(a: FileInfo | null, b: FileInfo | null): boolean {
  if (a === null || b === null) return a === b;
  return a.kind === b.kind && a.dev === b.dev && a.ino === b.ino;
}

/**
 * Whether `target` no longer resolves to the same canonical path and the
 * same object (or still to nothing) as when it was prepared. Any doubt
 * (an error while checking) counts as changed.
 */
export async function targetChanged(context: ToolContext, target: CallTarget): Promise<boolean> {
  const again = await resolveWorkspacePath(scopeOf(context), target.input, target.access);
  if (!again.ok || again.path !== target.path) return true;
  try {
    return !sameObject(target.info, await lstatOrNull(context, target.path));
  } catch {
    return true;
  }
}

/** The result of a path that cannot be used, for any tool; `label` starts its summary. */
export function targetFailure(resolution: Exclude<TargetResolution, { ok: true }>, label: string, secrets: readonly string[]): ToolResult {
  if ("refusal" in resolution) {
    return finishResult(false, `Refused: ${refusalText(resolution.refusal)}.`, `${label}: refused (${resolution.refusal})`, secrets);
  }
  const reason = describeError(resolution.failure);
  return finishResult(false, `Cannot use the path: ${reason}.`, `${label}: ${reason}`, secrets);
}
