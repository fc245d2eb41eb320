/**
 * POSIX path helpers for the core, which cannot import `node:path`. The
 * transport only runs on Unix (see `docs/protocol.md`), so `/` is the only
 * separator handled.
 *
 * @module
 */

/** Returns whether `path` is absolute. */
export function isAbsolute(path: string): boolean {
  return path.startsWith("/");
}

/** Joins `base` with `segments`, normalising `.`, `..` and repeated slashes. */
export function joinPath(base: string, ...segments: string[]): string {
  return normalizePath([base, ...segments].join("/"));
}

/** Normalises an absolute or relative POSIX path lexically (no symlink resolution). */
export function normalizePath(path: string): string {
  const absolute = isAbsolute(path);
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
      continue;
    }
    out.push(part);
  }
  const joined = out.join("/");
  if (absolute) return `/${joined}`;
  return joined === "" ? "." : joined;
}

/** The parent directory of an absolute `path` (`/` for `/`). */
export function dirname(path: string): string {
  const normal = normalizePath(path);
  const slash = normal.lastIndexOf("/");
  return slash <= 0 ? "/" : normal.slice(0, slash);
}

/** Whether `path` is `root` or inside it; both absolute and normalised. */
export function isWithin(root: string, path: string): boolean {
  if (root === "/") return path.startsWith("/");
  return path === root || path.startsWith(`${root}/`);
}

// Characters some filesystems drop when comparing names (HFS+ ignores zero-width and bidi marks).
const IGNORED_IN_NAMES = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * `name` (or a whole path) in the form a case-insensitive,
 * normalisation-insensitive filesystem compares: decomposed, without
 * default-ignorable characters, lower-cased. Two names with equal folds may
 * be one directory entry; protected names are compared in this form.
 */
export function foldName(name: string): string {
  return name.normalize("NFD").replace(IGNORED_IN_NAMES, "").toLowerCase();
}

/** Whether canonical `path` is `MC_HOME` or inside it, compared case-insensitively ({@link foldName}). */
export function isWithinHome(home: string, path: string): boolean {
  return isWithin(foldName(home), foldName(path));
}
