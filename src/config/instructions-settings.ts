/**
 * The `instructions` settings section: `instructions.paths`, further
 * Markdown files appended to the instructions chain
 * (`docs/settings.md#instructions`).
 *
 * Where a path may point depends on the file that names it. The global file
 * is the user's own: its paths are absolute or start with `~/`, and may name
 * any file. A project file arrives with a cloned repository: its paths are
 * relative to the workspace and may not leave it (no `..`, nothing absolute,
 * no `~`), and what they name is read under the same confinement as the
 * workspace's `AGENTS.md` files, so a repository cannot send `~/.ssh` to the
 * model. Each form belongs to one file, so a path of the merged list says by
 * its form which rule it came under. A path breaking its file's rule fails
 * startup with `configuration_invalid`, and `config check` names it.
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../util/exact-object.ts";
import { joinPath } from "../util/paths.ts";

/** Most entries of `instructions.paths` in one settings file. */
export const MAX_INSTRUCTION_PATHS = 32;

const described = v.description;

const PathSchema = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(4096),
  v.maxBytes(4096),
  // deno-lint-ignore no-control-regex -- matching controls is the point
  v.regex(/^[^\u0000-\u001F\u007F-\u009F]*$/),
  described("A Markdown file: in the global file absolute or ~/-relative; in a project file relative to the workspace, without '..'."),
);

/** The `instructions` section's schema. */
export const InstructionsSettingsSchema = v.pipe(
  exactObject({
    paths: v.exactOptional(v.pipe(
      v.array(PathSchema),
      v.maxLength(MAX_INSTRUCTION_PATHS),
      described(`Further instruction files, read after the AGENTS.md chain in this order; at most ${MAX_INSTRUCTION_PATHS} per file. A project list is added after the global one.`),
    )),
  }),
  described("Instructions for the model besides the AGENTS.md chain."),
);

/** The `instructions` section. */
export interface InstructionsSettings {
  readonly paths?: readonly string[];
}

/** Which settings file a path may be named in. */
export type InstructionPathScope = "global" | "project";

/** The scope whose rule `path`'s form follows, or null for a form neither file may use. */
function scopeOf(path: string): InstructionPathScope | null {
  if (path.startsWith("/") || path.startsWith("~/")) return "global";
  if (path.startsWith("~") || path.split("/").includes("..")) return null;
  return "project";
}

/** What a path of `scope`'s file must look like, for `config check`. */
export function pathRule(scope: InstructionPathScope): string {
  return scope === "global"
    ? "a path in the global file must be absolute or start with ~/"
    : "a path in a project file must be relative to the workspace and stay inside it (no '..', no absolute path, no ~)";
}

/** The indices of `paths` (one file's list) that break `scope`'s rule. */
export function pathsBreakingRule(paths: readonly string[] | undefined, scope: InstructionPathScope): number[] {
  return (paths ?? []).flatMap((path, index) => (scopeOf(path) === scope ? [] : [index]));
}

/** Whether both files' paths follow their file's rule; startup fails with `configuration_invalid` otherwise. */
export function instructionPathsFollowRules(global: InstructionsSettings | undefined, project: InstructionsSettings | undefined): boolean {
  return pathsBreakingRule(global?.paths, "global").length === 0 && pathsBreakingRule(project?.paths, "project").length === 0;
}

/** One `instructions.paths` entry, resolved. */
export interface InstructionPath {
  /** The rule it came under, by its form. */
  readonly scope: InstructionPathScope;
  /** The absolute path to read, or null for a `~/` path without a home directory. */
  readonly path: string | null;
}

/**
 * Resolves the merged `paths` (each file's already checked): a project path
 * against the canonical `cwd`, `~/` against the user's `home` (null when
 * unknown), an absolute path as written, since a `..` after a symlink is for
 * the filesystem to resolve, not for a lexical rule.
 */
export function resolveInstructionPaths(
  paths: readonly string[] | undefined,
  where: { readonly cwd: string; readonly home: string | null },
): InstructionPath[] {
  return (paths ?? []).map((path) => {
    if (path.startsWith("/")) return { scope: "global", path };
    if (path.startsWith("~/")) return { scope: "global", path: where.home === null ? null : `${where.home.replace(/\/$/, "")}/${path.slice(2)}` };
    return { scope: "project", path: joinPath(where.cwd, path) };
  });
}
