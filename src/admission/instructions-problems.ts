/**
 * `magi-code config check`'s view of the instructions chain: each
 * `instructions.paths` entry that breaks its file's rule (a problem: startup
 * fails with `configuration_invalid`), and, once the settings are valid,
 * each file of the chain that exists but will not be used, and each named
 * path that will not (notes: startup skips them, so they do not change the
 * exit code). The chain is read with startup's own reader, so a note says
 * exactly what startup will skip.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { canonicalUserHome, loadInstructions, projectRoot, type SkippedInstruction, type SkipReason } from "../config/instructions.ts";
import { type InstructionPathScope, pathRule, pathsBreakingRule, resolveInstructionPaths } from "../config/instructions-settings.ts";
import type { Settings } from "../config/settings.ts";
import { jsonPath } from "../util/json-path.ts";

/** A problem or note in one file at one JSON path. */
export interface InstructionsProblem {
  readonly file: string;
  readonly path: string;
  readonly message: string;
}

const SEE = "see docs/settings.md";

const at = (index: number): string => jsonPath(["instructions", "paths", index]);

/** The entries of one settings file's `instructions.paths` that break the rule of its `scope`. */
export function instructionPathProblems(file: string, settings: Settings, scope: InstructionPathScope): InstructionsProblem[] {
  return pathsBreakingRule(settings.instructions?.paths, scope).map((index) => ({ file, path: at(index), message: `${pathRule(scope)}; ${SEE}` }));
}

const REASONS: Readonly<Record<SkipReason, string>> = {
  missing: "names no file",
  not_regular: "is not a regular file (a directory, FIFO or device)",
  outside: "resolves outside its root (the project root for AGENTS.md, or its own directory when that root is your home or above it; the workspace for a project path) or inside MC_HOME",
  hard_link: "has more than one hard link, whose other names may be outside the project",
  unreadable: "cannot be read",
};

/** A note for one skipped file, located where a person fixes it. */
function note(skipped: SkippedInstruction, files: { readonly global: string; readonly project: string | null; readonly globalCount: number }): InstructionsProblem {
  const reason = skipped.path === null ? "starts with ~/ but HOME is unset or unresolvable" : REASONS[skipped.reason];
  const message = `${reason}: skipped, the model will not see it; see docs/features/runner.md`;
  if (skipped.index === undefined) return { file: skipped.path ?? files.global, path: "$", message };
  const fromProject = skipped.index >= files.globalCount && files.project !== null;
  return fromProject
    ? { file: files.project!, path: at(skipped.index - files.globalCount), message }
    : { file: files.global, path: at(skipped.index), message };
}

/** Reads the chain as startup would (for valid, merged `settings`) and returns a note per file it skips. */
export async function instructionNotes(
  runtime: Runtime,
  where: { readonly home: string; readonly cwd: string; readonly global: string; readonly project: string | null; readonly globalCount: number },
  settings: Settings,
): Promise<InstructionsProblem[]> {
  const userHome = await canonicalUserHome(runtime);
  const paths = resolveInstructionPaths(settings.instructions?.paths, { cwd: where.cwd, home: userHome });
  const root = await projectRoot(runtime.fs, where.cwd, userHome);
  const loaded = await loadInstructions(runtime.fs, { home: where.home, userHome, cwd: where.cwd, root, paths }, new AbortController().signal);
  return loaded.skipped.map((skipped) => note(skipped, where));
}
