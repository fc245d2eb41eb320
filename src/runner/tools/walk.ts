/**
 * The bounded directory walk behind glob and grep. It never enters `.git`
 * (any case), `MC_HOME`, or a symlinked directory: symlinks are reported as
 * entries but not followed, so every path the walk produces below its
 * canonical root is itself canonical and inside the workspace, with no
 * further realpath calls. Each directory's entries are visited in name order,
 * then its subdirectories, so output is deterministic on every platform.
 *
 * @module
 */

import type { FileKind, FileSystem } from "../../host/runtime.ts";
import { joinPath } from "../../util/paths.ts";
import { isGitName, isWithinHome, relativeTo } from "../../policy/workspace-paths.ts";

/** One entry the walk met. */
export interface WalkEntry {
  /** Absolute canonical path. */
  readonly path: string;
  /** Path relative to the workspace, as shown to the model. */
  readonly relative: string;
  /** The entry's name. */
  readonly name: string;
  /** Its kind, symlinks not followed. */
  readonly kind: FileKind;
}

/** What the visitor wants next: descend into this directory with a state, move on, or end the walk. */
export type WalkStep<S> = { readonly descend: S } | "next" | "stop";

/** Options of {@link walkTree}. */
export interface WalkOptions<S> {
  readonly fs: FileSystem;
  /** The canonical directory to start in. */
  readonly root: string;
  /** The canonical workspace, for relative paths. */
  readonly workspace: string;
  /** The canonical `MC_HOME`, never entered. */
  readonly home: string;
  /** Ends the walk early when aborted. */
  readonly signal: AbortSignal;
  /** Most entries visited before the walk gives up. */
  readonly maxEntries: number;
  /** The visitor's state for `root`. */
  readonly initial: S;
  /** Called once per entry; only a directory's `descend` is followed. */
  visit(entry: WalkEntry, state: S): WalkStep<S> | Promise<WalkStep<S>>;
}

/** How the walk went. */
export interface WalkStats {
  /** Entries visited. */
  readonly entries: number;
  /** Directories that could not be listed. */
  readonly unreadable: number;
  /** Whether it stopped at `maxEntries`. */
  readonly truncated: boolean;
  /** Whether the signal ended it. */
  readonly cancelled: boolean;
}

/** Deepest directory level entered; far beyond real trees, short of a pathological one. */
export const MAX_WALK_DEPTH = 128;

/** Whether the walk must never enter or report `name` at `path`. */
function skipped(name: string, path: string, home: string): boolean {
  return isGitName(name) || isWithinHome(home, path);
}

/** Walks `options.root`; see the module notes for what is skipped. */
export async function walkTree<S>(options: WalkOptions<S>): Promise<WalkStats> {
  const { fs, workspace, home, signal } = options;
  const stack: { path: string; state: S; depth: number }[] = [{ path: options.root, state: options.initial, depth: 0 }];
  let entries = 0;
  let unreadable = 0;
  while (stack.length > 0) {
    if (signal.aborted) return { entries, unreadable, truncated: false, cancelled: true };
    const directory = stack.pop()!;
    let listing;
    try {
      listing = await fs.readDir(directory.path);
    } catch {
      unreadable++;
      continue;
    }
    // Code-unit order, not localeCompare: the same on every host and locale.
    listing.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const below: { path: string; state: S; depth: number }[] = [];
    for (const { name, kind } of listing) {
      // Checked per entry too: grep may spend a while on each file of one large directory.
      if (signal.aborted) return { entries, unreadable, truncated: false, cancelled: true };
      const path = joinPath(directory.path, name);
      if (skipped(name, path, home)) continue;
      if (entries >= options.maxEntries) return { entries, unreadable, truncated: true, cancelled: false };
      entries++;
      const step = await options.visit({ path, relative: relativeTo(workspace, path), name, kind }, directory.state);
      if (step === "stop") return { entries, unreadable, truncated: false, cancelled: false };
      if (step !== "next" && kind === "directory" && directory.depth < MAX_WALK_DEPTH) {
        below.push({ path, state: step.descend, depth: directory.depth + 1 });
      }
    }
    for (let index = below.length - 1; index >= 0; index--) stack.push(below[index]!);
  }
  return { entries, unreadable, truncated: false, cancelled: false };
}
