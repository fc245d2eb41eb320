/**
 * Agent profile files: `<name>.md` in a profiles directory, YAML
 * frontmatter (`config/frontmatter.ts`) then a Markdown body that is
 * appended to the system prompt. Frontmatter keys: `description` and `mode`
 * (required), `model`, `effort`, `tools`, `max_steps` (optional); any other
 * key is an error, so a typo never silently does nothing.
 *
 * A file is read like instructions are: never a FIFO or device, at most
 * {@link MAX_PROFILE_BYTES}. A global file may be a symlink (dotfile
 * managers); a project file comes with the repository, so its directory and
 * any symlink must resolve inside the workspace and outside `MC_HOME`, and a
 * file with a second hard link is refused, or a repository could carry any
 * file of the user's to the model. Problems are data with the file and the
 * JSON path, never the file's text.
 *
 * Loaded only when a profiles directory holds a `.md` entry (`profiles.ts`).
 *
 * @module
 */

import * as v from "valibot";
import type { DirEntry, FileSystem } from "../host/runtime.ts";
import { isRuntimeError, RuntimeErrorCode } from "../host/runtime.ts";
import { EFFORTS } from "../policy/efforts.ts";
import { ApprovalPolicySchema } from "../policy/tool-policies.ts";
import { isWithin } from "../policy/workspace-paths.ts";
import { exactObject, notArray } from "../util/exact-object.ts";
import { jsonPath } from "../util/json-path.ts";
import { joinPath } from "../util/paths.ts";
import { readUpTo } from "../util/read-up-to.ts";
import { hasLoneSurrogate } from "../util/utf8.ts";
import { sha256Hex } from "../util/digest.ts";
import {
  type AgentProfile,
  MAX_STEPS_LIMIT,
  MaxStepsSchema,
  PROFILE_MODES,
  PROFILE_NAME,
  type ProfileFileDigest,
  type ProfileProblem,
} from "./agent-settings.ts";
import { FRONTMATTER_MAX_BYTES, type FrontmatterProblem, parseFrontmatter } from "./frontmatter.ts";
import { ModelIdSchema } from "./settings.ts";

/** Largest profile file read, frontmatter and body together, in bytes. */
export const MAX_PROFILE_BYTES = 65_536;

/** Longest `description`, in characters. */
const MAX_DESCRIPTION = 1024;

// The names the model sees: a built-in's, or an MCP tool's exposed `mcp__<server>__<tool>`, which
// every provider API accepts (src/mcp/names.ts) and settings' `tools` keys cannot spell; or `*`, every tool not named.
const TOOL_NAME = /^(?:[A-Za-z0-9_-]{1,64}|\*)$/;

const ProfileSchema = exactObject({
  description: v.pipe(
    v.string(),
    v.check((text) => /\S/.test(text) && [...text].length <= MAX_DESCRIPTION && !hasLoneSurrogate(text)),
  ),
  mode: v.picklist(PROFILE_MODES),
  model: v.exactOptional(ModelIdSchema),
  effort: v.exactOptional(v.picklist(EFFORTS)),
  tools: v.exactOptional(v.pipe(notArray, v.record(v.pipe(v.string(), v.regex(TOOL_NAME)), ApprovalPolicySchema))),
  max_steps: v.exactOptional(MaxStepsSchema),
});

/** What each key must be, for messages: built from the schema's rules, never from the value. */
const RULES: Readonly<Record<string, string>> = {
  description: `must be text of 1-${MAX_DESCRIPTION} characters, not blank`,
  mode: `must be ${PROFILE_MODES.join(", ")}`,
  model: "must be a model id: 1-256 UTF-8 bytes without control characters",
  effort: `must be ${EFFORTS.join(", ")}`,
  tools: "must map tool names as the model sees them (1-64 of A-Z, a-z, 0-9, _ and -), or * for every tool not named, to allow, ask or deny",
  max_steps: `must be an integer from 1 to ${MAX_STEPS_LIMIT}`,
};

const FRONTMATTER_TEXT: Readonly<Record<FrontmatterProblem, string>> = {
  frontmatter_missing: "must start with a line --- opening the YAML frontmatter",
  frontmatter_unterminated: "the frontmatter has no closing line ---",
  frontmatter_too_large: `the frontmatter is larger than ${FRONTMATTER_MAX_BYTES} bytes`,
  frontmatter_invalid: "the frontmatter is not YAML this reader accepts (a syntax error, a duplicate key, a tag, too many aliases or too deep)",
  frontmatter_not_mapping: "the frontmatter must be a mapping of keys to values",
};

/** One file of a profiles directory: its profile, or null when it is invalid (the problems say why). */
export interface ProfileFile {
  readonly name: string;
  readonly file: string;
  readonly profile: AgentProfile | null;
}

/** A directory's files and every problem met reading them. */
export interface ProfileFiles {
  readonly files: readonly ProfileFile[];
  readonly problems: readonly ProfileProblem[];
}

/** Where a project's files must resolve: inside `within`, outside `outside`. */
export interface Confinement {
  readonly within: string;
  readonly outside: string;
}

const decoder = new TextDecoder("utf-8", { fatal: true });
const escapes = (confine: Confinement, path: string) => !isWithin(confine.within, path) || isWithin(confine.outside, path);

/** Reads the `.md` `entries` of `dir`, in name order. Stops early once `signal` is aborted. */
export async function readProfileFiles(
  fs: FileSystem,
  dir: string,
  entries: readonly DirEntry[],
  confine: Confinement | null,
  signal: AbortSignal,
): Promise<ProfileFiles> {
  const problems: ProfileProblem[] = [];
  if (confine !== null) {
    const real = await fs.realpath(dir).catch(() => null);
    if (real === null || escapes(confine, real)) {
      return { files: [], problems: [{ file: dir, path: "$", message: "must resolve to a directory inside the workspace and outside magi-code's storage" }] };
    }
  }
  const files: ProfileFile[] = [];
  for (const entry of [...entries].sort((a, b) => a.name < b.name ? -1 : 1)) {
    if (signal.aborted) break;
    const file = joinPath(dir, entry.name);
    const name = entry.name.slice(0, -".md".length);
    if (!PROFILE_NAME.test(name)) {
      problems.push({ file, path: "$", message: "the file name must be <name>.md, <name> being 1-64 of a-z, 0-9 and single hyphens between them" });
      continue;
    }
    const read = await readText(fs, file, entry, confine);
    const parsed = typeof read === "string"
      ? { problems: [{ path: "$", message: read }] }
      : parseProfile(name, read.text, { path: file, sha256: await sha256Hex(read.bytes), bytes: read.bytes.length });
    problems.push(...(parsed.problems ?? []).map((problem) => ({ file, ...problem })));
    files.push({ name, file, profile: "profile" in parsed ? parsed.profile : null });
  }
  return { files, problems };
}

/** The profile `text` (the whole file `file` holds) defines, or its problems. */
export function parseProfile(name: string, text: string, file: ProfileFileDigest): { profile: AgentProfile; problems?: undefined } | { problems: { path: string; message: string }[] } {
  const split = parseFrontmatter(text);
  if (!split.ok) return { problems: [{ path: "$", message: FRONTMATTER_TEXT[split.code] }] };
  const parsed = v.safeParse(ProfileSchema, split.data, { abortEarly: false });
  if (!parsed.success) {
    return {
      problems: parsed.issues.map((issue) => {
        const segments = (issue.path ?? []).map((item) => item.key as string | number);
        const key = segments[0];
        const unknown = issue.type === "strict_object" && issue.expected === "never";
        const missing = !unknown && segments.length === 1 && issue.received === "undefined";
        const message = unknown ? "unknown key" : missing ? "is required" : RULES[String(key)] ?? "is not valid here";
        return { path: jsonPath(segments), message };
      }),
    };
  }
  const { description, mode, model, effort, tools, max_steps } = parsed.output;
  return {
    profile: {
      name,
      description,
      mode,
      ...(model === undefined ? {} : { model }),
      ...(effort === undefined ? {} : { effort }),
      tools: tools ?? {},
      ...(max_steps === undefined ? {} : { maxSteps: max_steps }),
      body: split.body.trim(),
      files: [file],
    },
  };
}

/** The file's text, or what is wrong with it. */
async function readText(fs: FileSystem, path: string, entry: DirEntry, confine: Confinement | null): Promise<{ text: string; bytes: Uint8Array } | string> {
  if (entry.kind !== "file" && entry.kind !== "symlink") return "is not a regular file";
  try {
    const target = entry.kind === "symlink" ? await fs.realpath(path) : path;
    if (confine !== null && escapes(confine, target)) return "is a symlink leading outside the workspace or into magi-code's storage";
    const handle = await fs.openRead(target);
    try {
      if (handle.info.kind !== "file") return "is not a regular file";
      if (confine !== null && handle.info.nlink > 1) return "has more than one hard link; a project's profile must be a file of its own";
      const bytes = await readUpTo(handle, MAX_PROFILE_BYTES + 1);
      if (bytes.length > MAX_PROFILE_BYTES) return `is larger than ${MAX_PROFILE_BYTES} bytes`;
      return { text: decoder.decode(bytes), bytes };
    } finally {
      await handle.close().catch(() => undefined);
    }
  } catch (error) {
    if (error instanceof TypeError) return "is not valid UTF-8";
    if (isRuntimeError(error, RuntimeErrorCode.notFile)) return "is not a regular file";
    return isRuntimeError(error, RuntimeErrorCode.notFound) ? "is a symlink to nothing, or vanished while read" : "cannot be read";
  }
}
