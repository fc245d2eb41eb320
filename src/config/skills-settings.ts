/**
 * The `skills` section of `settings.jsonc` and the Agent Skills name rule it
 * shares with the skill reader (`skills.ts`): `skills.disabled` lists skill
 * names the child must not offer. A project file's list is added to the
 * global one (`mergeSettings`): a project can disable more, never re-enable.
 *
 * Startup loads this module only when a settings file has a `skills` key
 * (`settings-load.ts`), or when a skill directory exists; `config check` and
 * the published JSON Schema take the complete schema from `mcp-settings.ts`.
 * Documented in docs/settings.md, "Skills".
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../util/exact-object.ts";

/** Longest skill name, in characters (all ASCII, so also bytes). */
export const MAX_SKILL_NAME = 64;

/**
 * A skill name per the Agent Skills specification: lowercase ASCII letters,
 * digits and single hyphens between them (no leading, trailing or double
 * hyphen). Narrower than the specification's "Unicode lowercase
 * alphanumerics" on purpose: a name is a directory name and a tool argument,
 * and ASCII means one spelling on every filesystem.
 */
export const SKILL_NAME: RegExp = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** Most names one `skills.disabled` list may hold. */
export const MAX_DISABLED_SKILLS = 256;

/** Whether `name` is a valid skill name ({@link SKILL_NAME}, 1–{@link MAX_SKILL_NAME} characters). */
export function isSkillName(name: string): boolean {
  return name.length <= MAX_SKILL_NAME && SKILL_NAME.test(name);
}

/** The `skills` section of one file. */
export interface SkillsSettings {
  /** Names of skills that are not offered; unknown names are allowed (a skill may be installed later). */
  readonly disabled?: readonly string[];
}

const SkillNameSchema = v.pipe(
  v.string(),
  v.maxLength(MAX_SKILL_NAME),
  v.regex(SKILL_NAME),
  v.description("A skill name: 1-64 of a-z, 0-9 and single hyphens between them."),
);

/** The valibot schema of the `skills` section. */
export const SkillsSettingsSchema = v.pipe(
  exactObject({
    disabled: v.exactOptional(v.pipe(
      v.array(SkillNameSchema),
      v.maxLength(MAX_DISABLED_SKILLS),
      v.description(`Skills not offered to the model, by name (at most ${MAX_DISABLED_SKILLS}). A project list adds to the global one.`),
    )),
  }),
  v.description("Agent Skills (SKILL.md directories): which ones are not offered."),
);

/** Checks a file's `skills` section; null when it is invalid. */
export function parseSkillsSettings(raw: unknown): SkillsSettings | null {
  const parsed = v.safeParse(SkillsSettingsSchema, raw);
  return parsed.success ? parsed.output satisfies SkillsSettings : null;
}
