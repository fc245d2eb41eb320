/**
 * `magi-code config check`'s view of skills: every skill startup would skip
 * (malformed, too large, not text, a symlink leaving its project) or shadow,
 * and every root it would not read, each with its file and the JSON path
 * into the frontmatter. Skills never fail startup, so these are notes,
 * printed without changing the exit code. Reads what startup reads, with
 * the same code (`config/skills.ts`).
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import type { SkillNote } from "../config/skills.ts";
import { existingSkillRoots, findProjectRoot } from "./startup.ts";

/** The notes about skills for a child in `cwd` with storage root `home` (both canonical) and `disabled` skills. */
export async function skillNotes(runtime: Runtime, paths: { readonly home: string; readonly cwd: string }, disabled: readonly string[]): Promise<readonly SkillNote[]> {
  const roots = await existingSkillRoots(runtime, paths.home, paths.cwd, await findProjectRoot(runtime, paths.cwd));
  if (roots.length === 0) return [];
  // Loaded only when a skill directory exists, as at startup: the YAML parser comes with it.
  const { loadSkills } = await import("../config/skills.ts");
  return (await loadSkills(runtime.fs, { roots, home: paths.home, disabled }, new AbortController().signal)).notes;
}
