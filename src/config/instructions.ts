/**
 * The instructions chain (`docs/features/runner.md#instructions`), read once
 * at startup: the user's `$MC_HOME/AGENTS.md`; then one `AGENTS.md` per
 * directory from the project root down to the cwd; then the files
 * `instructions.paths` names, the global file's before the project's. The
 * order is the prompt's: later text is nearer to the work and wins.
 *
 * The project root ({@link projectRoot}, which skills use too) is the
 * nearest directory from the cwd up holding a `.git` directory or file (a
 * worktree's or submodule's), never above the user's home when the cwd is
 * inside it, at most {@link MAX_PROJECT_DEPTH} directories up; without one
 * the cwd alone is the project. Finding it costs one `lstat` per directory
 * examined.
 *
 * They are prose for the model, so nothing about them fails startup: a file
 * that is missing, unreadable or not a regular file is skipped, and bad
 * UTF-8 is decoded with U+FFFD. FIFOs and devices are never opened, since a
 * read could block startup forever. A file from the project (the chain, a
 * project path) comes with whatever repository was cloned, so it is read
 * only when it resolves inside its root (the project root; the workspace for
 * a project path) and outside `MC_HOME`, and only with a single hard link:
 * as a link to `~/.ssh/id_ed25519` or the credentials file it would carry
 * that file to the model, past the tools' own confinement. A file reached
 * twice (the same device and inode) is used once, where first met.
 *
 * The bounds (`instructions-bounds.ts`) apply to the files in prompt order:
 * each file and the whole instructions section are bounded, the nearest
 * files served first, and the user's own files keep a share of the total
 * that the project's cannot use.
 *
 * @module
 */

import type { FileInfo, FileSystem, ReadHandle, Runtime } from "../host/runtime.ts";
import { dirname, isAbsolute, isWithin, isWithinHome, joinPath } from "../util/paths.ts";
import { bounded, type Candidate, type Instruction, MAX_INSTRUCTION_BYTES } from "./instructions-bounds.ts";
import type { InstructionSource } from "./instructions-section.ts";
import type { InstructionPath } from "./instructions-settings.ts";

/** The instructions file name, in `$MC_HOME` and in each directory of the chain. */
const INSTRUCTIONS_FILE = "AGENTS.md";

/** Most directories examined for a `.git` entry, the cwd included. */
export const MAX_PROJECT_DEPTH = 64;

export type { InstructionSource } from "./instructions-section.ts";
export { GLOBAL_INSTRUCTIONS_SHARE, type Instruction, MAX_INSTRUCTION_BYTES, MAX_INSTRUCTIONS_TOTAL_BYTES, omissionNotice, TRUNCATION_NOTICE } from "./instructions-bounds.ts";

/** Why a file that exists, or that `instructions.paths` names, was not used. */
export type SkipReason = "missing" | "not_regular" | "outside" | "hard_link" | "unreadable";

/** A skipped file, for `config check`; a chain directory without `AGENTS.md` is not one. */
export interface SkippedInstruction {
  readonly source: InstructionSource;
  /** The path, or null for a `~/` path without a home directory. */
  readonly path: string | null;
  readonly reason: SkipReason;
  /** For `path`: the index in `instructions.paths` of the merged settings. */
  readonly index?: number;
}

/** What {@link loadInstructions} found. */
export interface InstructionsLoad {
  /** The files in prompt order. */
  readonly files: readonly Instruction[];
  readonly skipped: readonly SkippedInstruction[];
}

/** Where a file may resolve: inside `within`, outside each of `outside`. */
interface Confinement {
  readonly within: string;
  readonly outside: readonly string[];
}

/**
 * The confinement of a project file whose root is `within`: outside
 * `MC_HOME`, and, when `within` holds the user's `userHome` without being
 * it (a root at `/home`), outside that home too, so a file of such a root
 * cannot name `~/.ssh/id_ed25519`.
 */
function confinement(within: string, mcHome: string, userHome: string | null): Confinement {
  const holdsHome = userHome !== null && within !== userHome && isWithin(within, userHome);
  return { within, outside: holdsHome ? [mcHome, userHome] : [mcHome] };
}

const decoder = new TextDecoder("utf-8", { fatal: false });

type ReadOutcome = { readonly ok: true; readonly bytes: Uint8Array; readonly info: FileInfo } | { readonly ok: false; readonly reason: SkipReason };

/** Reads up to one byte past the per-file bound: enough to tell whether the file goes on. */
async function readHead(handle: ReadHandle): Promise<Uint8Array> {
  const buffer = new Uint8Array(MAX_INSTRUCTION_BYTES + 1);
  let length = 0;
  while (length < buffer.length) {
    const count = await handle.read(buffer.subarray(length), length);
    if (count === 0) break;
    length += count;
  }
  return buffer.subarray(0, length);
}

/**
 * Reads one file, following a symlink only to a regular file and, when
 * `confine` is given, only to one inside `confine.within` and outside
 * `confine.outside`, with a single hard link (its other names are invisible
 * and can be outside, as `read_file`'s guard says). A confined path is
 * resolved whole, since any directory on it may be a symlink too.
 */
async function readOne(fs: FileSystem, path: string, confine: Confinement | null): Promise<ReadOutcome> {
  let link: FileInfo;
  try {
    link = await fs.lstat(path);
  } catch {
    return { ok: false, reason: "missing" };
  }
  try {
    const target = confine !== null || link.kind === "symlink" ? await fs.realpath(path) : path;
    // MC_HOME is compared as a case-insensitive filesystem would, as the tools compare it.
    if (confine !== null && (!isWithin(confine.within, target) || confine.outside.some((home) => isWithinHome(home, target)))) {
      return { ok: false, reason: "outside" };
    }
    const info = target === path ? link : await fs.stat(target);
    if (info.kind !== "file") return { ok: false, reason: "not_regular" };
    if (confine !== null && info.nlink > 1) return { ok: false, reason: "hard_link" };
    const handle = await fs.openRead(target);
    try {
      const opened = await handle.stat();
      if (opened.dev !== info.dev || opened.ino !== info.ino) return { ok: false, reason: "unreadable" };
      return { ok: true, bytes: await readHead(handle), info: opened };
    } finally {
      await handle.close().catch(() => undefined);
    }
  } catch {
    return { ok: false, reason: link.kind === "symlink" ? "missing" : "unreadable" };
  }
}

/**
 * The user's home directory (`HOME`), canonical, or null when it is unset,
 * relative or cannot be resolved: the ceiling of {@link projectRoot} and
 * what `~/` in `instructions.paths` means.
 */
export async function canonicalUserHome(runtime: Runtime): Promise<string | null> {
  const home = runtime.env("HOME");
  if (home === undefined || !isAbsolute(home)) return null;
  return await runtime.fs.realpath(home).catch(() => null);
}

/**
 * The project root for the canonical `cwd`: the nearest directory from it
 * up holding a `.git` entry, up to the user's `home` (canonical, or null
 * when unknown) when the cwd is inside it, else up to `/`; the cwd itself
 * when none is found within {@link MAX_PROJECT_DEPTH} directories.
 */
export async function projectRoot(fs: FileSystem, cwd: string, home: string | null): Promise<string> {
  const ceiling = home !== null && isWithin(home, cwd) ? home : "/";
  let directory = cwd;
  for (let examined = 0; examined < MAX_PROJECT_DEPTH; examined++) {
    const git = await fs.lstat(joinPath(directory, ".git")).catch(() => null);
    if (git?.kind === "directory" || git?.kind === "file") return directory;
    if (directory === ceiling) break;
    directory = dirname(directory);
  }
  return cwd;
}

/** The directories from `root` down to `cwd` (which is inside it), root first. */
function chainDirectories(root: string, cwd: string): string[] {
  const out = [cwd];
  for (let directory = cwd; directory !== root;) out.unshift(directory = dirname(directory));
  return out;
}

/**
 * Loads the chain for canonical `home` (`MC_HOME`), `cwd` and its project
 * `root` ({@link projectRoot}), then the resolved `paths` of
 * `instructions.paths`. `userHome` is the user's canonical home directory
 * ({@link canonicalUserHome}), or null when unknown: when the root is that
 * home or above it (a dotfiles repository at `~`), "inside the root" would
 * take in `~/.ssh`, so each `AGENTS.md` of the chain must then resolve
 * inside the directory holding it. Stops early, returning what it has, once
 * `signal` is aborted; the caller checks the signal.
 */
export async function loadInstructions(
  fs: FileSystem,
  where: {
    readonly home: string;
    readonly userHome: string | null;
    readonly cwd: string;
    readonly root: string;
    readonly paths: readonly InstructionPath[];
  },
  signal: AbortSignal,
): Promise<InstructionsLoad> {
  const { root, userHome } = where;
  const rootHoldsHome = userHome !== null && isWithin(root, userHome);
  const candidates: Candidate[] = [];
  const skipped: SkippedInstruction[] = [];
  const seen = new Set<string>();
  const globalFile = joinPath(where.home, INSTRUCTIONS_FILE);
  const add = async (source: InstructionSource, path: string, confine: Confinement | null, index?: number) => {
    const global = confine === null;
    const read = await readOne(fs, path, confine);
    if (!read.ok) {
      // A directory without AGENTS.md is the usual case, not a finding; a named path that is missing is.
      if (read.reason !== "missing" || source === "path") skipped.push({ source, path, reason: read.reason, ...(index === undefined ? {} : { index }) });
      return;
    }
    const identity = `${read.info.dev}:${read.info.ino}`;
    if (seen.has(identity) || !/\S/.test(decoder.decode(read.bytes))) return;
    seen.add(identity);
    candidates.push({ source, path, bytes: read.bytes, global });
  };
  if (!signal.aborted) await add("global", globalFile, null);
  for (const directory of chainDirectories(root, where.cwd)) {
    const path = joinPath(directory, INSTRUCTIONS_FILE);
    // A workspace that is MC_HOME itself: its AGENTS.md is the global one, read above.
    if (signal.aborted || path === globalFile) continue;
    await add("project", path, confinement(rootHoldsHome ? directory : root, where.home, userHome));
  }
  for (const [index, entry] of where.paths.entries()) {
    if (signal.aborted) break;
    if (entry.path === null) skipped.push({ source: "path", path: null, reason: "missing", index });
    else await add("path", entry.path, entry.scope === "global" ? null : confinement(where.cwd, where.home, userHome), index);
  }
  return { files: await bounded(candidates), skipped };
}
