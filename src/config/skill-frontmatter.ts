/**
 * One `SKILL.md`'s text checked against the Agent Skills specification: YAML
 * frontmatter (parsed by `frontmatter.ts`) with a `name` equal to the skill's
 * directory name and a `description`, optional `license`, `compatibility`,
 * `metadata` and `allowed-tools`, then the Markdown body. Fields the
 * specification does not define (`disable-model-invocation`, `argument-hint`
 * and the like, which other clients add) are ignored, so a skill written for
 * them still loads. A problem names the frontmatter field (as a JSON path) and
 * says what is wrong in a fixed phrase, never quoting the file.
 *
 * @module
 */

import { type FrontmatterProblem, parseFrontmatter } from "./frontmatter.ts";
import { isSkillName } from "./skills-settings.ts";

/** Longest `description`, in characters (code points). */
export const MAX_DESCRIPTION_CHARS = 1024;
/** Longest `compatibility`, in characters. */
export const MAX_COMPATIBILITY_CHARS = 500;
/** Longest `license`, in characters; the specification sets none, but it is a name or a file reference. */
export const MAX_LICENSE_CHARS = 1024;

/** What a valid `SKILL.md` says. */
export interface SkillFields {
  readonly name: string;
  /** The description on one line: each run of whitespace (newlines of a block scalar too) made one space. */
  readonly description: string;
  /** The Markdown body, trimmed. */
  readonly body: string;
  readonly license?: string;
  readonly compatibility?: string;
  /** `metadata`, each value as a string (as the reference implementation reads it). */
  readonly metadata?: Readonly<Record<string, string>>;
  /** `allowed-tools`, split on whitespace when written as one string. Recorded, never applied: see docs/features/runner.md. */
  readonly allowedTools?: readonly string[];
}

/** Where a `SKILL.md` is wrong: a JSON path into its frontmatter (`$` for the file) and why. */
export interface SkillProblem {
  readonly path: string;
  readonly message: string;
}

/** The outcome of {@link checkSkillText}. */
export type SkillCheck = { readonly ok: true; readonly skill: SkillFields } | ({ readonly ok: false } & SkillProblem);

const FRONTMATTER_MESSAGES: Readonly<Record<FrontmatterProblem, string>> = {
  frontmatter_missing: "SKILL.md must start with a --- line opening its YAML frontmatter",
  frontmatter_unterminated: "the frontmatter has no closing --- line",
  frontmatter_too_large: "the frontmatter is larger than 16,384 bytes",
  frontmatter_invalid: "the frontmatter is not valid YAML, or uses tags, duplicate keys, more than 8 aliases or more than 8 levels",
  frontmatter_not_mapping: "the frontmatter is not a mapping of fields",
};

const NAME_RULE = "must be 1-64 of a-z, 0-9 and single hyphens between them, without a leading or trailing hyphen";
// C0 and C1 controls left after whitespace is collapsed: no description needs them.
// deno-lint-ignore no-control-regex -- matching controls is the point
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

const characters = (text: string): number => [...text].length;
const problem = (path: string, message: string): SkillCheck => ({ ok: false, path, message });

/**
 * Checks `text` (a whole `SKILL.md`, decoded) of the skill in the directory
 * called `directoryName`; the first problem found, or the skill's fields.
 */
export function checkSkillText(text: string, directoryName: string): SkillCheck {
  const parsed = parseFrontmatter(text);
  if (!parsed.ok) return problem("$", FRONTMATTER_MESSAGES[parsed.code]);
  const data = parsed.data;
  const name = data.name;
  if (name === undefined) return problem("$.name", "is required");
  if (typeof name !== "string") return problem("$.name", "must be a string");
  if (!isSkillName(name)) return problem("$.name", NAME_RULE);
  if (name !== directoryName) return problem("$.name", "must equal the name of the skill's directory");
  const description = data.description;
  if (description === undefined) return problem("$.description", "is required");
  if (typeof description !== "string") return problem("$.description", "must be a string");
  const oneLine = description.replace(/\s+/g, " ").trim();
  if (oneLine === "" || characters(description) > MAX_DESCRIPTION_CHARS) {
    return problem("$.description", "must be 1-1,024 characters and not blank");
  }
  if (CONTROL.test(oneLine)) return problem("$.description", "must not contain control characters");
  const optional = optionalFields(data);
  if (!optional.ok) return optional;
  return { ok: true, skill: { name, description: oneLine, body: parsed.body.trim(), ...optional.fields } };
}

type OptionalFields = Pick<SkillFields, "license" | "compatibility" | "metadata" | "allowedTools">;

function optionalFields(data: Readonly<Record<string, unknown>>): { ok: true; fields: OptionalFields } | ({ ok: false } & SkillProblem) {
  const fields: { -readonly [K in keyof OptionalFields]: OptionalFields[K] } = {};
  const { license, compatibility, metadata } = data;
  const allowed = data["allowed-tools"];
  if (license !== undefined) {
    if (typeof license !== "string" || license.trim() === "" || characters(license) > MAX_LICENSE_CHARS) {
      return { ok: false, path: "$.license", message: "must be a string of 1-1,024 characters" };
    }
    fields.license = license;
  }
  if (compatibility !== undefined) {
    if (typeof compatibility !== "string" || compatibility.trim() === "" || characters(compatibility) > MAX_COMPATIBILITY_CHARS) {
      return { ok: false, path: "$.compatibility", message: `must be a string of 1-${MAX_COMPATIBILITY_CHARS} characters` };
    }
    fields.compatibility = compatibility;
  }
  if (metadata !== undefined) {
    const values = metadataValues(metadata);
    if (values === null) return { ok: false, path: "$.metadata", message: "must be a mapping from names to strings (numbers and booleans are read as strings)" };
    fields.metadata = values;
  }
  if (allowed !== undefined) {
    const tools = typeof allowed === "string"
      ? allowed.split(/\s+/).filter((item) => item !== "")
      : Array.isArray(allowed) && allowed.every((item) => typeof item === "string")
      ? allowed as string[]
      : null;
    if (tools === null) return { ok: false, path: "$.allowed-tools", message: "must be a space-separated string or a list of strings" };
    fields.allowedTools = tools;
  }
  return { ok: true, fields };
}

function metadataValues(value: unknown): Record<string, string> | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== "string" && typeof item !== "number" && typeof item !== "boolean") return null;
    out[key] = String(item);
  }
  return out;
}
