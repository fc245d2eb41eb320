/**
 * `AGENTS.md` instructions: the user's global `$MC_HOME/AGENTS.md` and the
 * workspace's `<cwd>/AGENTS.md`, read once at startup.
 *
 * They are prose for the model, so nothing about them fails startup: a file
 * that is missing, unreadable, not a regular file, or (for the workspace) a
 * symlink leaving the workspace is skipped, and bad UTF-8 is decoded with
 * U+FFFD. FIFOs and devices are never opened, since a read could block
 * startup forever. Each file is bounded to {@link MAX_INSTRUCTION_BYTES}; a
 * longer one keeps its first bytes, cut at a character boundary, followed by
 * {@link TRUNCATION_NOTICE}, so the model knows the text is incomplete.
 *
 * @module
 */

import type { FileInfo, FileSystem, ReadHandle } from "../host/runtime.ts";
import { isWithin } from "../policy/workspace-paths.ts";
import { joinPath } from "../util/paths.ts";

/** The instructions file name, in `$MC_HOME` and in the workspace root. */
const INSTRUCTIONS_FILE = "AGENTS.md";

/** Largest part of one instructions file used, in bytes. */
export const MAX_INSTRUCTION_BYTES = 65_536;

/** The line appended to a file cut at {@link MAX_INSTRUCTION_BYTES}. */
export const TRUNCATION_NOTICE = `\n[magi-code: this AGENTS.md is longer than ${MAX_INSTRUCTION_BYTES} bytes; the rest was not read]\n`;

/** One instructions file's text and where it came from. */
export interface Instruction {
  /** `global` is `$MC_HOME/AGENTS.md`; `workspace` is `<cwd>/AGENTS.md`. */
  readonly source: "global" | "workspace";
  /** The decoded text, possibly truncated; never empty or blank. */
  readonly text: string;
}

const decoder = new TextDecoder("utf-8", { fatal: false });

/** Reads up to one byte past the bound: enough to tell whether the file goes on. */
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

/** Decodes `bytes`; past the bound, cuts before a split character and appends the notice. */
function decodeBounded(bytes: Uint8Array): string {
  if (bytes.length <= MAX_INSTRUCTION_BYTES) return decoder.decode(bytes);
  let cut = MAX_INSTRUCTION_BYTES;
  // A UTF-8 character is at most 4 bytes, so at most 3 continuation bytes can follow the cut.
  for (let back = 0; back < 3 && (bytes[cut]! & 0xc0) === 0x80; back++) cut--;
  if ((bytes[cut]! & 0xc0) === 0x80) cut = MAX_INSTRUCTION_BYTES;
  return decoder.decode(bytes.subarray(0, cut)) + TRUNCATION_NOTICE;
}

/**
 * Reads one file, following a symlink only to a regular file and, when
 * `confine` is given, only to one inside `confine.within` and outside
 * `confine.outside`. A workspace's AGENTS.md comes from the repository: as a
 * link to `~/.ssh/id_ed25519` or the credentials file it would otherwise
 * carry that file to the model, past the tools' own workspace confinement,
 * and so could a hard link to it, so a confined file with more than one
 * hard link is skipped.
 */
async function readOne(
  fs: FileSystem,
  path: string,
  confine: { readonly within: string; readonly outside: string } | null,
): Promise<{ text: string; info: FileInfo } | null> {
  try {
    const link = await fs.lstat(path);
    const target = link.kind === "symlink" ? await fs.realpath(path) : path;
    if (confine !== null && (!isWithin(confine.within, target) || isWithin(confine.outside, target))) return null;
    const info = link.kind === "symlink" ? await fs.stat(target) : link;
    if (info.kind !== "file") return null;
    // A hard link's other names are invisible and can be outside the workspace, as read_file's guard says.
    if (confine !== null && info.nlink > 1) return null;
    const handle = await fs.openRead(target);
    try {
      const opened = await handle.stat();
      if (opened.dev !== info.dev || opened.ino !== info.ino) return null;
      const text = decodeBounded(await readHead(handle));
      return /\S/.test(text) ? { text, info: opened } : null;
    } finally {
      await handle.close().catch(() => undefined);
    }
  } catch {
    return null;
  }
}

/**
 * Loads the global, then the workspace instructions, so the workspace comes
 * last and wins where the two conflict. `home` and `cwd` are canonical; when
 * they are the same directory, or the two paths are the same file, it is
 * read once, as `global`. Stops early, returning what it has, once `signal`
 * is aborted; the caller checks the signal.
 */
export async function loadInstructions(
  fs: FileSystem,
  paths: { readonly home: string; readonly cwd: string },
  signal: AbortSignal,
): Promise<readonly Instruction[]> {
  const out: Instruction[] = [];
  if (signal.aborted) return out;
  const global = await readOne(fs, joinPath(paths.home, INSTRUCTIONS_FILE), null);
  if (global !== null) out.push({ source: "global", text: global.text });
  if (signal.aborted || paths.cwd === paths.home) return out;
  const confine = { within: paths.cwd, outside: paths.home };
  const workspace = await readOne(fs, joinPath(paths.cwd, INSTRUCTIONS_FILE), confine);
  if (workspace === null || (global !== null && global.info.dev === workspace.info.dev && global.info.ino === workspace.info.ino)) {
    return out;
  }
  out.push({ source: "workspace", text: workspace.text });
  return out;
}
