/**
 * Agent Skills: the skill directories under the four roots, read once at
 * startup. A skill is a directory `<root>/<name>/` holding `SKILL.md`
 * (`skill-frontmatter.ts` checks it); nested directories are not searched.
 *
 * Roots come in precedence order (`startup.ts` finds which exist): the
 * cwd's `.magi-code/skills`, the project root's `.agents/skills`,
 * `$MC_HOME/skills`, `~/.agents/skills`. The first valid skill of a name
 * wins; a later one of that name is shadowed and reported, never read. A root
 * that resolves to the same directory as another is read once, as the user's
 * when a user root is among them (a child started in `$HOME`).
 *
 * Nothing here fails startup: a malformed skill is skipped with a note that
 * `config check` prints. The user's roots and their entries may be symlinks to
 * anywhere (a dotfiles checkout, an installer's store); a project's come from
 * the repository, so they are followed only while they stay inside the
 * project (the root) or the root (a skill directory), never into `MC_HOME`,
 * and a project `SKILL.md` with another hard link is skipped, as the
 * workspace `AGENTS.md` is. Bounds: {@link MAX_ROOT_ENTRIES} entries per
 * root, {@link MAX_SKILLS} files read, {@link MAX_SKILL_FILE_BYTES} per file.
 *
 * @module
 */

import { type FileSystem, isRuntimeError, RuntimeErrorCode } from "../host/runtime.ts";
import { isWithin, isWithinHome } from "../policy/workspace-paths.ts";
import { joinPath } from "../util/paths.ts";
import { readUpTo } from "../util/read-up-to.ts";
import { checkSkillText, type SkillFields, type SkillProblem } from "./skill-frontmatter.ts";
import { isSkillName } from "./skills-settings.ts";

/** The file that makes a directory a skill. */
export const SKILL_FILE = "SKILL.md";
/** Entries of one root directory read at most. */
export const MAX_ROOT_ENTRIES = 256;
/** `SKILL.md` files read at most, over all roots. */
export const MAX_SKILLS = 128;
/** Largest `SKILL.md` read, in bytes: 48 KiB, about ten times the specification's recommended size. */
export const MAX_SKILL_FILE_BYTES = 49_152;

/** A directory skills are looked for in. */
export interface SkillRoot {
  /** The root as configured (`<cwd>/.magi-code/skills`), not resolved. */
  readonly path: string;
  /** `user` roots may link anywhere; `project` roots only inside {@link within}. */
  readonly scope: "user" | "project";
  /** For a project root: the canonical directory it must resolve inside (the project root, or the cwd). */
  readonly within?: string;
}

/** One enabled skill. */
export interface Skill extends SkillFields {
  /** Whose root it came from. */
  readonly scope: "user" | "project";
  /** The canonical skill directory: the `skill` tool lists it and `read_file` may read inside it. */
  readonly directory: string;
  /** The canonical path of its `SKILL.md`. */
  readonly file: string;
}

/** A skill (or root) that was skipped, shadowed or cut: where, and why, in a fixed phrase. */
export interface SkillNote {
  /** The path as found under its root (`<root>/<name>/SKILL.md`, or the root). */
  readonly file: string;
  /** JSON path into the frontmatter, `$` for the file. */
  readonly path: string;
  readonly message: string;
}

/** What {@link loadSkills} found. */
export interface SkillSet {
  /** The enabled skills, in name order. */
  readonly skills: readonly Skill[];
  /** Everything skipped, in the order met. */
  readonly notes: readonly SkillNote[];
}

const NAME_NOTE = "the directory name is not a skill name (1-64 of a-z, 0-9 and single hyphens between them)";
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Resolves the roots, dropping duplicates and project roots that leave their project; notes what it drops. */
async function resolveRoots(fs: FileSystem, roots: readonly SkillRoot[], home: string, notes: SkillNote[]) {
  const canonical = await Promise.all(roots.map((root) => fs.realpath(root.path).catch(() => null)));
  const userDirectories = new Set(roots.flatMap((root, index) => (root.scope === "user" && canonical[index] !== null ? [canonical[index]!] : [])));
  const seen = new Set<string>();
  const out: { root: SkillRoot; directory: string }[] = [];
  roots.forEach((root, index) => {
    const directory = canonical[index];
    if (directory === null || directory === undefined || seen.has(directory)) return;
    if (root.scope === "project" && userDirectories.has(directory)) return;
    seen.add(directory);
    if (root.scope === "project" && (!isWithin(root.within!, directory) || isWithinHome(home, directory))) {
      notes.push({ file: root.path, path: "$", message: "is a symlink leaving the project; its skills are not loaded" });
      return;
    }
    out.push({ root, directory });
  });
  return out;
}

/** The canonical skill directory an entry names, or a note, or null for an entry that is no skill at all. */
async function skillDirectory(
  fs: FileSystem,
  root: { root: SkillRoot; directory: string },
  entry: { name: string; kind: string },
  home: string,
): Promise<string | { note: string } | null> {
  let directory = joinPath(root.directory, entry.name);
  if (entry.kind === "symlink") {
    const target = await fs.realpath(directory).catch(() => null);
    if (target === null || (await fs.stat(target).catch(() => null))?.kind !== "directory") return null;
    if (root.root.scope === "project" && !isWithin(root.directory, target)) return { note: "is a symlink leaving its skills directory; not loaded" };
    directory = target;
  } else if (entry.kind !== "directory") {
    return null;
  }
  return isWithin(directory, home) ? { note: "contains magi-code's storage directory; not loaded" } : directory;
}

/** Reads and checks the skill `name` in `directory`. */
async function readSkill(fs: FileSystem, directory: string, name: string, scope: Skill["scope"]): Promise<Skill | SkillProblem> {
  const read = await readSkillFile(fs, directory, scope === "project");
  if ("note" in read) return { path: "$", message: `skipped: ${read.note}` };
  const checked = checkSkillText(read.text, name);
  if (!checked.ok) return { path: checked.path, message: `skipped: ${checked.message}` };
  return { ...checked.skill, scope, directory, file: joinPath(directory, SKILL_FILE) };
}

/** Reads one `SKILL.md`: its text, or why it cannot be used. */
async function readSkillFile(fs: FileSystem, directory: string, project: boolean): Promise<{ text: string } | { note: string }> {
  const path = joinPath(directory, SKILL_FILE);
  try {
    const link = await fs.lstat(path);
    const target = link.kind === "symlink" ? await fs.realpath(path) : path;
    if (!isWithin(directory, target)) return { note: "SKILL.md is a symlink leaving the skill directory" };
    const info = link.kind === "symlink" ? await fs.stat(target) : link;
    // FIFOs and devices are refused here, before any open: a read could block startup forever.
    if (info.kind !== "file") return { note: "SKILL.md is not a regular file" };
    if (info.size > MAX_SKILL_FILE_BYTES) return { note: "SKILL.md is larger than 49,152 bytes" };
    if (project && info.nlink > 1) return { note: "SKILL.md has more than one hard link (its other names may be outside the project)" };
    const handle = await fs.openRead(target);
    let bytes: Uint8Array;
    try {
      if (handle.info.dev !== info.dev || handle.info.ino !== info.ino) return { note: "SKILL.md changed while it was read" };
      bytes = await readUpTo(handle, MAX_SKILL_FILE_BYTES + 1);
    } finally {
      await handle.close().catch(() => undefined);
    }
    if (bytes.length > MAX_SKILL_FILE_BYTES) return { note: "SKILL.md is larger than 49,152 bytes" };
    const text = decoder.decode(bytes);
    return text.includes("\0") ? { note: "SKILL.md is binary, not text" } : { text };
  } catch (error) {
    if (error instanceof TypeError) return { note: "SKILL.md is not UTF-8 text" };
    return { note: isRuntimeError(error, RuntimeErrorCode.notFound) ? "there is no SKILL.md" : "SKILL.md cannot be read" };
  }
}

/**
 * Loads the skills under `roots` (precedence order; each one existed when
 * startup looked), leaving out the names in `disabled`. `home` is the
 * canonical `MC_HOME`. Stops early, returning what it has, once `signal` is
 * aborted; the caller checks the signal.
 */
export async function loadSkills(
  fs: FileSystem,
  options: { readonly roots: readonly SkillRoot[]; readonly home: string; readonly disabled: readonly string[] },
  signal: AbortSignal,
): Promise<SkillSet> {
  const notes: SkillNote[] = [];
  const skills: Skill[] = [];
  const winners = new Map<string, string>();
  const disabled = new Set(options.disabled);
  let reads = 0;
  for (const root of await resolveRoots(fs, options.roots, options.home, notes)) {
    if (signal.aborted) break;
    let entries = await fs.readDir(root.directory, MAX_ROOT_ENTRIES).catch(() => null);
    if (entries === null) {
      notes.push({ file: root.root.path, path: "$", message: "the skills directory cannot be read" });
      continue;
    }
    if (entries.length > MAX_ROOT_ENTRIES) {
      notes.push({ file: root.root.path, path: "$", message: `has more than ${MAX_ROOT_ENTRIES} entries; only ${MAX_ROOT_ENTRIES} were read` });
      entries = entries.slice(0, MAX_ROOT_ENTRIES);
    }
    // Code-unit order, not localeCompare: the same on every host and locale.
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (signal.aborted) break;
      // Hidden entries are an installer's bookkeeping (`.system`, `.DS_Store`), not skills.
      if (entry.name.startsWith(".") || disabled.has(entry.name)) continue;
      const shown = joinPath(root.root.path, entry.name, SKILL_FILE);
      const directory = await skillDirectory(fs, root, entry, options.home);
      if (directory === null) continue;
      const winner = winners.get(entry.name);
      let outcome: Skill | SkillProblem;
      if (typeof directory !== "string") outcome = { path: "$", message: `skipped: ${directory.note}` };
      else if (!isSkillName(entry.name)) outcome = { path: "$", message: `skipped: ${NAME_NOTE}` };
      else if (winner !== undefined) outcome = { path: "$.name", message: `shadowed by ${winner}, which comes first` };
      else if (reads >= MAX_SKILLS) outcome = { path: "$", message: `not read: more than ${MAX_SKILLS} skills were found` };
      else {
        reads++;
        outcome = await readSkill(fs, directory, entry.name, root.root.scope);
      }
      if ("path" in outcome) notes.push({ file: shown, ...outcome });
      else {
        winners.set(entry.name, shown);
        skills.push(outcome);
      }
    }
  }
  skills.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { skills, notes };
}
